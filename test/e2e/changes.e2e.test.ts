import {spawn} from 'node:child_process'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs'
import {basename, join} from 'node:path'

import {parse} from 'csv-parse/sync'
import {afterEach, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {BIN, withSandbox} from '../helpers/sandbox.js'
import {
  record,
  records,
  startScenario,
  type Reply,
  type Scenario,
  type ScenarioRequest,
} from '../helpers/scenario-server.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * Deltas end to end (issue 14): two exports of a scripted server a month apart, compared by
 * `county-export --changes-since` and by `sfl changes`, with the built CLI.
 */
const tmp = () => tempDir('sfl-e2e-changes-')
/** The worker thread's path for files of any size (small ones are scanned on the main thread alone). */
const onWorker = {SFL_SCAN_WORKER_BYTES: '1'}
let server: Scenario | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})
const serve = async (answer: (r: ScenarioRequest) => Reply) => (server = await startScenario(answer))
const env = (s: Scenario) => ({SFL_BASE_URL: s.baseUrl, SFL_API_KEY: 'test-key-123'})
const id = (fips: string, i: number) => String(record(fips, i)['ServicePropertyID'])

/** `a.ndjson` and `b.ndjson` in `d`: 40,000 records each, every one revalued (40,000 change rows). */
function bigSides(d: string): void {
  const side = (v: number) =>
    Array.from(
      {length: 40_000},
      (_, i) => `{"Fips":"06067","ServicePropertyID":${i},"FinalValue":${v + i}}\n`,
    ).join('')
  writeFileSync(join(d, 'a.ndjson'), side(1))
  writeFileSync(join(d, 'b.ndjson'), side(2))
}

/** October: Sacramento 0-4, Harris 0-2. */
const october = (r: ScenarioRequest): Reply =>
  r.fips === '06067' ? {page: {records: records('06067', 0, 5)}} : {page: {records: records(r.fips, 0, 3)}}

/** November: Sacramento lost 0, gained 5, record 2 revalued; Cook is new; Harris fails. */
const november = (r: ScenarioRequest): Reply => {
  if (r.fips === '48201') return {status: 503}
  if (r.fips === '17031') return {page: {records: records('17031', 0, 2)}}
  const recs = records('06067', 1, 5)
  recs[1] = {...recs[1], FinalValue: 650_000}
  return {page: {records: recs}}
}

async function octoberExport(d: string): Promise<string> {
  const s = await serve(october)
  const prev = join(d, 'october.csv')
  const r = await sfl(['county-export', '--fips', '06067', '--fips', '48201', '--out', prev], {env: env(s)})
  expect(r.code).toBe(0)
  await s.close()
  server = undefined
  return prev
}

describe('county-export --changes-since', () => {
  it('compares per-county folders: --out-dir against an earlier --out-dir, change file in the folder', async () => {
    const d = tmp()
    const s1 = await serve(october)
    const r1 = await sfl(
      ['county-export', '--fips', '06067', '--fips', '48201', '--out-dir', join(d, 'oct')],
      {
        env: env(s1),
      },
    )
    expect(r1.code).toBe(0)
    await s1.close()
    const s2 = await serve(november)
    const args = ['county-export', '--fips', '06067', '--fips', '48201', '--out-dir', join(d, 'nov')]
    const r2 = await sfl([...args, '--changes-since', join(d, 'oct'), '--retries', '0'], {env: env(s2)})
    expect(r2.code).toBe(7) // Harris fails in November: not compared, so not deleted
    const changes = join(d, 'nov', '_sfl', 'changes.csv')
    expect(r2.stderr).toContain(`1 added, 1 updated, 1 deleted, 3 unchanged in 1 county -> ${changes}`)
    const rows = parse(readFileSync(changes, 'utf8'), {columns: true}) as Array<Record<string, string>>
    expect(rows.map((x) => [x['Change'], x['ServicePropertyID'], x['ChangedFields']])).toEqual([
      ['added', id('06067', 5), ''],
      ['deleted', id('06067', 0), ''],
      ['updated', id('06067', 2), 'FinalValue'],
    ])
    // the folder this run rewrites cannot be its own previous export
    const sent = s2.requests.length
    const r3 = await sfl([...args, '--changes-since', join(d, 'nov')], {env: env(s2)})
    expect(r3.code).toBe(2)
    expect(r3.stderr).toMatch(/is the folder this export rewrites; copy it aside first/)
    expect(s2.requests).toHaveLength(sent)
  })

  it('writes exactly the added, updated and deleted rows of the counties that finished', async () => {
    const d = tmp()
    const prev = await octoberExport(d)
    const s = await serve(november)
    const out = join(d, 'november.ndjson')
    const r = await sfl(
      ['county-export', '--fips', '06067', '--fips', '17031', '--fips', '48201', '--output', 'ndjson'].concat(
        ['--out', out, '--changes-since', prev, '--retries', '0'],
      ),
      {env: env(s)},
    )
    // Harris failed: the export is partial (exit 7) and Harris is not compared, so not deleted
    expect(r.code).toBe(7)
    const changes = join(d, 'november.changes.ndjson')
    expect(r.stderr).toContain(
      `sfl county-export --changes-since: 3 added, 1 updated, 1 deleted, 3 unchanged in 2 counties -> ${changes}`,
    )
    const rows = readFileSync(changes, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(
      rows.map((x) => [x['Change'], x['Fips'], String(x['ServicePropertyID']), x['ChangedFields']]),
    ).toEqual([
      ['added', '06067', id('06067', 5), []],
      ['deleted', '06067', id('06067', 0), []],
      ['updated', '06067', id('06067', 2), ['FinalValue']],
      ['added', '17031', id('17031', 0), []],
      ['added', '17031', id('17031', 1), []],
    ])
    // the previous values come back typed, though the previous export was CSV
    expect(rows[2]).toMatchObject({FinalValue: 650_000, Previous: {FinalValue: 300_002}})
    expect(rows[1]).toMatchObject({APN: '06067-0', FinalValue: 300_000, FHAEligible: true})
  })

  it('--changes-out and --ignore-fields: a CSV change file without the ignored field compared', async () => {
    const d = tmp()
    const prev = await octoberExport(d)
    const s = await serve(november)
    const changes = join(d, 'delta.csv')
    const r = await sfl(
      ['county-export', '--fips', '06067', '--out', join(d, 'nov.csv'), '--changes-since', prev].concat([
        '--changes-out',
        changes,
        '--ignore-fields',
        'finalvalue',
      ]),
      {env: env(s)},
    )
    expect(r.code).toBe(0)
    const table = parse(readFileSync(changes, 'utf8')) as string[][]
    expect(table[0]!.slice(0, 4)).toEqual(['Change', 'ServicePropertyID', 'Fips', 'ChangedFields'])
    expect(table.slice(1).map((x) => `${x[0]} ${x[1]}`)).toEqual([
      `added ${id('06067', 5)}`,
      `deleted ${id('06067', 0)}`,
    ])
    expect(r.stderr).toContain('1 added, 0 updated, 1 deleted, 4 unchanged in 1 county')
  })

  it.each([
    [['--changes-since', 'PREV'], /--changes-since needs --out FILE/],
    [['--out', 'OUT', '--changes-since', 'MISSING'], /missing\.csv: no such file or folder/],
    [['--out', 'OUT', '--changes-since', 'DIR'], /is a folder without _sfl\/manifest.json/],
    [['--out', 'OUT', '--changes-out', 'X.csv'], /--changes-out needs --changes-since PREVIOUS/],
    [
      ['--out', 'OUT', '--changes-since', 'PREV', '--ignore-fields', 'Nope'],
      /--ignore-fields: unknown column "Nope"/,
    ],
    [
      ['--out', 'OUT', '--changes-since', 'PREV', '--changes-out', 'OUT'],
      /is the export's own output; give another file/,
    ],
    [['--out', 'PREV', '--changes-since', 'PREV'], /is the file this export replaces; copy it aside first/],
  ])('usage error %j: exit 2, one line, no request', async (flags, message) => {
    const d = tmp()
    const prev = join(d, 'prev.csv')
    writeFileSync(prev, 'Fips,ServicePropertyID\r\n06067,1\r\n')
    const s = await serve(october)
    const args = flags.map((a) =>
      a === 'PREV'
        ? prev
        : a === 'OUT'
          ? join(d, 'out.csv')
          : a === 'MISSING'
            ? join(d, 'missing.csv')
            : a === 'DIR'
              ? d
              : a,
    )
    const r = await sfl(['county-export', '--fips', '06067', ...args], {env: env(s)})
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(message)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(s.requests).toHaveLength(0)
    expect(existsSync(join(d, 'out.csv'))).toBe(false)
    expect(readFileSync(prev, 'utf8')).toBe('Fips,ServicePropertyID\r\n06067,1\r\n')
  })
})

describe('sfl changes', () => {
  it('a CSV export and an NDJSON export of the same counties show no change (exit 0 with --exit-code)', async () => {
    const d = tmp()
    const s = await serve(october)
    const fips = ['--fips', '06067', '--fips', '48201']
    expect((await sfl(['county-export', ...fips, '--out', join(d, 'a.csv')], {env: env(s)})).code).toBe(0)
    expect(
      (
        await sfl(['county-export', ...fips, '--output', 'ndjson', '--out', join(d, 'b.ndjson')], {
          env: env(s),
        })
      ).code,
    ).toBe(0)
    const r = await sfl(['changes', join(d, 'a.csv'), join(d, 'b.ndjson'), '--exit-code'])
    expect(r.code).toBe(0)
    expect(r.stdout.split('\r\n')[0]).toMatch(/^Change,ServicePropertyID,Fips,ChangedFields,APN,/)
    expect(r.stdout.trimEnd().split('\r\n')).toHaveLength(1)
    expect(r.stderr).toBe('sfl changes: 0 added, 0 updated, 0 deleted, 8 unchanged in 2 counties\n')
  })

  it('two exports a month apart: every county of either side compared, exit 1 with --exit-code', async () => {
    const d = tmp()
    const prev = await octoberExport(d)
    const s = await serve(november)
    const cur = join(d, 'nov.ndjson')
    await sfl(['county-export', '--fips', '06067', '--fips', '17031', '--output', 'ndjson', '--out', cur], {
      env: env(s),
    })
    const r = await sfl(['changes', prev, cur, '--exit-code', '--out', join(d, 'delta.json')])
    expect(r.code).toBe(1)
    // Harris is in October only: compared as a whole county gone
    expect(r.stderr).toContain('3 added, 1 updated, 4 deleted, 3 unchanged in 3 counties')
    const rows = JSON.parse(readFileSync(join(d, 'delta.json'), 'utf8')) as Array<Record<string, unknown>>
    expect(rows.filter((x) => x['Fips'] === '48201').map((x) => x['Change'])).toEqual([
      'deleted',
      'deleted',
      'deleted',
    ])
  })
  it("--fips on a state folder reads only that county's file: another county file, damaged, is never read", async () => {
    const d = tmp()
    const s = await serve(october)
    const folder = join(d, 'oct')
    const fips = ['--fips', '06067', '--fips', '48201']
    expect((await sfl(['county-export', ...fips, '--out-dir', folder], {env: env(s)})).code).toBe(0)
    const one = join(d, 'sac.csv')
    expect((await sfl(['county-export', '--fips', '06067', '--out', one], {env: env(s)})).code).toBe(0)
    const harris = readdirSync(folder, {recursive: true})
      .map(String)
      .find((f) => f.includes('48201') && f.endsWith('.csv'))!
    writeFileSync(join(folder, harris), 'not,an\nexport\n')
    const r = await sfl(['changes', folder, one, '--fips', '06067'])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('sfl changes: 0 added, 0 updated, 0 deleted, 5 unchanged in 1 county\n')
    // every county compared: the damaged file is read, and named
    const all = await sfl(['changes', folder, one])
    expect(all.code).toBe(2)
    expect(all.stderr).toContain(basename(harris))
  })
})

describe('against the sandbox', () => {
  const exportHarris = async (opts: {records: number; seed: number}, args: string[]) =>
    withSandbox(opts, (sb) =>
      sfl(['county-export', '--fips', '48201', ...args], {
        env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
      }),
    )

  it('a grown county: exactly the new records added, in order, and every other one unchanged', async () => {
    const d = tmp()
    const prev = join(d, 'oct.csv')
    expect((await exportHarris({records: 1000, seed: 1}, ['--out', prev])).code).toBe(0)
    const cur = join(d, 'nov.ndjson')
    const r = await exportHarris({records: 1200, seed: 1}, [
      '--output',
      'ndjson',
      '--out',
      cur,
      '--changes-since',
      prev,
    ])
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('200 added, 0 updated, 0 deleted, 1,000 unchanged in 1 county')
    const idsOf = (path: string) =>
      readFileSync(path, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as {ServicePropertyID: number}).ServicePropertyID)
    expect(idsOf(join(d, 'nov.changes.ndjson'))).toEqual(idsOf(cur).slice(1000))
  })
  it('Parquet exports (read by column, one on a worker): the change file of their CSV exports, row for row', async () => {
    const d = tmp()
    for (const [name, seed, records] of [
      ['a', 1, 300],
      ['b', 2, 250],
    ] as const)
      for (const format of ['csv', 'parquet'])
        expect(
          (await exportHarris({records, seed}, ['--output', format, '--out', join(d, `${name}.${format}`)]))
            .code,
        ).toBe(0)
    const fromCsv = await sfl(['changes', join(d, 'a.csv'), join(d, 'b.csv'), '--output', 'ndjson'])
    const fromParquet = await sfl(
      ['changes', join(d, 'a.parquet'), join(d, 'b.parquet'), '--output', 'ndjson', '--debug'],
      {env: onWorker},
    )
    expect(fromParquet.code, fromParquet.stderr).toBe(0)
    expect(fromParquet.stderr).toContain(
      '[debug] sfl changes: one side on a worker thread, the other on this one',
    )
    // nothing more on stderr than for CSV: V8's budget raised for a Parquet run (src/cli/jit-budget.ts, at
    // the entry and again once the sides are found) is a flag this Node knows (V8 would print a line for one
    // it does not: Node 24's, where none is set)
    expect(fromParquet.stderr.split('\n').filter((l) => !l.startsWith('[debug]'))).toEqual(
      fromCsv.stderr.split('\n'),
    )
    // the same rows and fields; each value the same number (a Parquet double has no text as sent)
    const rows = (out: string) =>
      out
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    const a = rows(fromCsv.stdout)
    const b = rows(fromParquet.stdout)
    expect(b.map((r) => [r['Change'], r['ServicePropertyID'], r['ChangedFields']])).toEqual(
      a.map((r) => [r['Change'], r['ServicePropertyID'], r['ChangedFields']]),
    )
    expect(b.length).toBeGreaterThan(200)
    for (const [i, r] of b.entries())
      for (const [k, v] of Object.entries(r)) expect(v, k).toEqual(a[i]![k] ?? null)
  })
  it('a current Parquet side whose footer is damaged: one line naming it, exit 2, no change file (the worker told of it ahead says nothing)', async () => {
    const d = tmp()
    for (const [name, seed] of [
      ['a', 1],
      ['b', 2],
    ] as const)
      expect(
        (
          await exportHarris({records: 50, seed}, [
            '--output',
            'parquet',
            '--out',
            join(d, `${name}.parquet`),
          ])
        ).code,
      ).toBe(0)
    const whole = readFileSync(join(d, 'b.parquet'))
    // the footer's length says more bytes than the file has
    whole.writeUInt32LE(whole.length * 4, whole.length - 8)
    writeFileSync(join(d, 'b.parquet'), whole)
    const r = await sfl(['changes', join(d, 'a.parquet'), join(d, 'b.parquet'), '--out', join(d, 'c.csv')], {
      env: onWorker,
    })
    expect(r.code).toBe(2)
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^Error: .*b\.parquet: not a readable Parquet file/),
    ])
    expect(existsSync(join(d, 'c.csv'))).toBe(false)
  })

  it('another seed: the same ids with other values, each updated row naming fields that really differ', async () => {
    const d = tmp()
    const prev = join(d, 'a.csv')
    const cur = join(d, 'b.csv')
    expect((await exportHarris({records: 300, seed: 1}, ['--out', prev])).code).toBe(0)
    expect((await exportHarris({records: 250, seed: 2}, ['--out', cur])).code).toBe(0)
    const r = await sfl(['changes', prev, cur, '--output', 'json'])
    expect(r.code).toBe(0)
    const rows = JSON.parse(r.stdout) as Array<Record<string, unknown> & {Previous?: Record<string, unknown>}>
    expect(rows.filter((x) => x['Change'] === 'deleted')).toHaveLength(50)
    expect(rows.filter((x) => x['Change'] === 'added')).toHaveLength(0)
    const updated = rows.filter((x) => x['Change'] === 'updated')
    const m = /0 added, (\d+) updated, 50 deleted, (\d+) unchanged/.exec(r.stderr)!
    expect(Number(m[1]) + Number(m[2])).toBe(250)
    expect(updated).toHaveLength(Number(m[1]))
    expect(updated.length).toBeGreaterThan(200)
    for (const u of updated) {
      const changed = u['ChangedFields'] as string[]
      expect(changed.length).toBeGreaterThan(0)
      expect(changed).not.toContain('ValuationDate')
      for (const f of changed) expect(String(u.Previous![f])).not.toBe(String(u[f]))
    }
  })
})

describe('the built CLI', () => {
  it('scans the current side on a worker thread, the previous on the main one: the change file exact, CSV and NDJSON sides', async () => {
    const d = tmp()
    const a = join(d, 'a.csv')
    const b = join(d, 'b.ndjson')
    writeFileSync(a, 'Fips,ServicePropertyID,FinalValue\r\n06067,1,100.0\r\n06067,2,200\r\n06067,3,300\r\n')
    writeFileSync(
      b,
      [
        '{"Fips":"06067","ServicePropertyID":1,"FinalValue":100}',
        '{"Fips":"06067","ServicePropertyID":2,"FinalValue":250}',
      ].join('\n'),
    )
    const r = await sfl(['changes', a, b, '--debug'], {env: onWorker})
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('[debug] sfl changes: one side on a worker thread, the other on this one')
    // the same two files below the bound: both on this thread, the same change file
    const alone = await sfl(['changes', a, b, '--debug'])
    expect(alone.stderr).toContain('[debug] sfl changes: both sides on the main thread')
    expect(alone.stdout).toBe(r.stdout)
    expect(r.stdout).toBe(
      'Change,ServicePropertyID,Fips,ChangedFields,FinalValue,Previous.FinalValue\r\nupdated,2,06067,FinalValue,250,200\r\ndeleted,3,06067,,300,\r\n',
    )
  })

  it('a file broken after its first record fails in its worker: one line naming it, exit 2, no change file', async () => {
    const d = tmp()
    const a = join(d, 'a.ndjson')
    writeFileSync(a, '{"Fips":"06067","ServicePropertyID":1}\n{"Fips":"06067","ServicePropertyID":tru}\n')
    const r = await sfl(['changes', a, a, '--out', join(d, 'c.csv')], {env: onWorker})
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`Error: ${a} line 2: not a JSON record\n`)
    expect(readdirSync(d)).toEqual(['a.ndjson'])
  })

  it.each([
    ['current', 'the worker thread'],
    ['previous', 'the main thread'],
  ])(
    'only the %s side broken after its first record (scanned on %s): one line naming it, exit 2, no change file',
    async (side) => {
      const d = tmp()
      const good = join(d, 'good.csv')
      const bad = join(d, 'bad.csv')
      writeFileSync(good, 'Fips,ServicePropertyID,FinalValue\r\n06067,1,100\r\n06067,2,200\r\n')
      writeFileSync(bad, 'Fips,ServicePropertyID,FinalValue\r\n06067,1,100\r\n06067,2,"20"0\r\n')
      const [previous, current] = side === 'current' ? [good, bad] : [bad, good]
      const r = await sfl(['changes', previous, current, '--out', join(d, 'c.csv')], {env: onWorker})
      expect(r.code).toBe(2)
      expect(r.stderr).toBe(
        `Error: ${bad} line 3: not a readable CSV export (Invalid Closing Quote: got "0" after a quoted field instead of a comma or a line end)\n`,
      )
      expect(readdirSync(d).sort()).toEqual(['bad.csv', 'good.csv'])
    },
  )

  it('| head: the reader of stdout goes away, the comparison stops quietly with exit 141', async () => {
    const d = tmp()
    const scratch = join(d, 'tmp')
    mkdirSync(scratch)
    bigSides(d)
    const child = spawn(process.execPath, [BIN, 'changes', join(d, 'a.ndjson'), join(d, 'b.ndjson')], {
      env: {...process.env, TMPDIR: scratch},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
    // like `| head -1`: read the first line, then close the pipe (40,000 rows are far more than a pipe holds)
    const first = await new Promise<string>((resolve) => {
      let buf = ''
      child.stdout.on('data', (b: Buffer) => {
        buf += b.toString()
        if (buf.includes('\n')) {
          child.stdout.destroy()
          resolve(buf.split('\n')[0]!)
        }
      })
    })
    const code = await new Promise<number | null>((r) => child.once('exit', r))
    expect(first).toMatch(/^Change,ServicePropertyID,Fips,ChangedFields,FinalValue,Previous.FinalValue/)
    expect(code).toBe(141)
    expect(stderr).toBe('')
    expect(readdirSync(scratch).filter((f) => f !== 'node-compile-cache')).toEqual([])
  })
})

describe("a server that sends fields named as Object.prototype's own", () => {
  it('exports keep __proto__ and constructor, and sfl changes finds the one that changed, in every format', async () => {
    // JSON.parse makes `__proto__` a member (an object literal would make it the prototype)
    const hostile = (rec: Record<string, unknown>, proto: string) =>
      JSON.parse(JSON.stringify(rec).replace('{', `{"__proto__":"${proto}","constructor":"K",`)) as unknown
    const month =
      (changed: string) =>
      (r: ScenarioRequest): Reply => ({
        page: {records: records(r.fips, 0, 3).map((rec, i) => hostile(rec, i === 1 ? changed : 'P'))},
      })
    const d = tmp()
    for (const [name, proto] of [
      ['october', 'P'],
      ['november', 'CHANGED'],
    ] as const) {
      const s = await serve(month(proto))
      for (const format of ['csv', 'ndjson', 'parquet']) {
        const r = await sfl(['county-export', '--fips', '06067', '--out', join(d, `${name}.${format}`)], {
          env: env(s),
        })
        expect(r.code, r.stderr).toBe(0)
      }
      await server!.close()
      server = undefined
    }
    for (const format of ['csv', 'ndjson', 'parquet']) {
      const r = await sfl(['changes', join(d, `october.${format}`), join(d, `november.${format}`)])
      expect(r.code, r.stderr).toBe(0)
      const rows = parse(r.stdout, {columns: true}) as Array<Record<string, string>>
      expect(
        rows.map((x) => [x['Change'], x['ServicePropertyID'], x['ChangedFields']]),
        format,
      ).toEqual([['updated', id('06067', 1), '__proto__']])
      expect(rows[0]!['Previous.__proto__'], format).toBe('P')
      expect(rows[0]!['constructor'], format).toBe('K')
    }
  })
})

describe('a full disk under the change file', () => {
  it.runIf(existsSync('/dev/full'))(
    '--out /dev/full and stdout on it: one line naming it, exit 8, no scratch folder left',
    async () => {
      const d = tmp()
      const scratch = join(d, 'tmp')
      mkdirSync(scratch)
      bigSides(d) // far more than one 64 KiB write of the gathered change rows
      const sides = ['changes', join(d, 'a.ndjson'), join(d, 'b.ndjson')]
      const run = (stdout: 'pipe' | number, extra: string[]) =>
        new Promise<{code: number | null; stderr: string}>((resolve) => {
          const child = spawn(process.execPath, [BIN, ...sides, ...extra], {
            env: {...process.env, TMPDIR: scratch},
            stdio: ['ignore', stdout, 'pipe'],
          })
          let stderr = ''
          child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()))
          child.once('exit', (code) => resolve({code, stderr}))
        })
      const toOut = await run('pipe', ['--out', '/dev/full'])
      expect(toOut.code).toBe(8)
      expect(toOut.stderr).toBe(
        'Error: the disk is full (ENOSPC) while writing /dev/full; free some space or write elsewhere\n',
      )
      const fd = openSync('/dev/full', 'w')
      try {
        const toStdout = await run(fd, [])
        expect(toStdout.code).toBe(8)
        expect(toStdout.stderr).toBe(
          'Error: the disk is full (ENOSPC) while writing to stdout; free some space or write elsewhere\n',
        )
      } finally {
        closeSync(fd)
      }
      expect(readdirSync(scratch).filter((f) => f !== 'node-compile-cache')).toEqual([])
    },
  )
})

describe('Ctrl-C during a comparison', () => {
  it('exits 130 leaving neither the scratch folder nor a temp file beside --out', async () => {
    const d = tmp()
    const scratch = mkdtempSync(join(d, 'tmp-'))
    const big = (v: number) =>
      Array.from(
        {length: 300_000},
        (_, i) => `{"Fips":"06067","ServicePropertyID":${i},"FinalValue":${v + i}}\n`,
      ).join('')
    writeFileSync(join(d, 'a.ndjson'), big(1))
    writeFileSync(join(d, 'b.ndjson'), big(2))
    const child = spawn(
      process.execPath,
      [BIN, 'changes', join(d, 'a.ndjson'), join(d, 'b.ndjson'), '--out', join(d, 'c.csv')],
      {
        env: {...process.env, TMPDIR: scratch},
        stdio: 'ignore',
      },
    )
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    // Node 24 keeps its compile cache in TMPDIR too (node-compile-cache): only sfl's own folder counts
    const ours = () => readdirSync(scratch).filter((f) => f !== 'node-compile-cache')
    // wait until the comparison is under way (its scratch folder exists), then interrupt it
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (ours().some((f) => f.startsWith('sfl-changes-')) || child.exitCode !== null) {
          clearInterval(t)
          resolve()
        }
      }, 5)
    })
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    expect(ours()).toEqual([])
    // no change file, and no hidden temp file beside where it would have gone
    expect(
      readdirSync(d)
        .filter((f) => f !== basename(scratch))
        .sort(),
    ).toEqual(['a.ndjson', 'b.ndjson'])
  })
})
