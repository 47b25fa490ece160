import {execFileSync, spawn} from 'node:child_process'
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {readParquetRecords} from '../../src/io/parquet-reader.js'
import {XlsxWorkbook} from '../../src/io/xlsx-reader.js'
import {ZipArchive} from '../../src/io/zip-reader.js'
import {FORMATS, formatsWrittenBy, type FileFormat} from '../../src/model/formats.js'
import CountyExport from '../../src/commands/county-export.js'
import Lookup from '../../src/commands/lookup.js'
import {sfl, type CliResult} from '../helpers/cli.js'
import {runCommand} from '../helpers/run-command.js'
import {spawnSandbox} from '../helpers/sandbox.js'
import {startScenario, type Reply, type Scenario, type ScenarioRequest} from '../helpers/scenario-server.js'
import {tempDir} from '../helpers/tmp.js'
import {leakedRun} from '../hostile/expect.js'

/**
 * The cells of the promise x path matrix (test/matrix/coverage.ts) that no other test covered: each test
 * is one promise of the README ("Security", "For analysts") on one command and output flag, run through
 * the built CLI against a loopback server of this file (a few small records), asserting the exit code,
 * what the output holds, and that nothing beside it changed. Cells covered elsewhere are named in the
 * coverage table, which checks that the test it names exists.
 */
const KEY = 'sk_live_MATRIX_0123456789abcdef'
/** 10 characters of the key: not the key, but every run of 8 of them must never be printed or written. */
const PART = KEY.slice(9, 19)
const VICTIM = 'a file of the user outside the output\n'

const servers: Scenario[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close()
})

async function serve(answer: (r: ScenarioRequest) => Reply): Promise<Scenario> {
  const s = await startScenario(answer)
  servers.push(s)
  return s
}

/** A record that conforms to spec 2.1, with `extra` over it. */
function rec(id: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Fips: '06067',
    ServicePropertyID: id,
    APN: `078-${id}`,
    CompleteStreetAddress: `${id} Main St`,
    StandardizeStreetAddress: `${id} MAIN ST`,
    City: 'SACRAMENTO',
    State: 'CA',
    Zip: '95838',
    FinalValue: 300000 + id,
    HighValue: 330000,
    LowValue: 270000,
    ConfidenceScore: 80,
    StandardDeviation: 0.1,
    ValuationDate: '2026-01-02T00:00:00',
    CRAEligible: 'Middle',
    FHAEligible: true,
    FHALoanLimit: 667000,
    FHACondoEligible: null,
    USDAAreaEligible: false,
    VAEligible: true,
    Assumable: false,
    TractIncomeLevel: 'Middle',
    TractMinorityPopulationPercent: 40.5,
    ...extra,
  }
}

/** Text cells a spreadsheet would run as formulas, and a field whose very name is one. */
const FORMULAS = {
  APN: '+1',
  City: '=cmd|"/c calc"!A1',
  CompleteStreetAddress: '@SUM(1+1)',
  StandardizeStreetAddress: '-2+3',
  '=HYPERLINK("http://x")': 'y',
}
/** The key's 10 characters, where a statistic lists a text value too (CRAEligible's unknown levels). */
const ECHO = {City: `x${PART}y`, CRAEligible: PART}

const one = (...records: Array<Record<string, unknown>>): Reply => ({page: {records}})
const env = (s: Scenario) => ({SFL_BASE_URL: s.baseUrl, SFL_API_KEY: KEY})
const tmp = () => tempDir('sfl-matrix-')

/** RFC 4180 cells of a CSV text (quoted cells unquoted), row by row. */
function csvRows(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  const endCell = () => {
    row.push(cell)
    cell = ''
  }
  const endRow = () => {
    endCell()
    rows.push(row)
    row = []
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted && c === '"' && text[i + 1] === '"') {
      cell += '"'
      i++
    } else if (c === '"') quoted = !quoted
    else if (quoted) cell += c
    else if (c === ',') endCell()
    else if (c === '\r' || c === '\n') {
      if (c === '\r' && text[i + 1] === '\n') i++
      endRow()
    } else cell += c
  }
  if (cell !== '' || row.length > 0) endRow()
  return rows
}

/**
 * Every cell of `text` (headers too) that a spreadsheet would run as a formula: one starting with = + @,
 * a tab or CR, or a - that is not a number. The guarded forms ('=...) start with a quote and pass.
 */
function formulaCells(text: string): string[] {
  return csvRows(text.replace(/^\uFEFF/, ''))
    .flat()
    .filter((c) => /^[=+@\t\r]/.test(c) || (c.startsWith('-') && !/^-\d+(\.\d+)?(e[+-]?\d+)?$/i.test(c)))
}

/** The guarded cells that FORMULAS must have become, each found as a whole cell. */
function expectGuarded(text: string, which: string[] = Object.values(FORMULAS).slice(0, 4)): void {
  expect(formulaCells(text)).toEqual([])
  const cells = new Set(csvRows(text).flat())
  for (const v of which) expect(cells, v).toContain(`'${v}`)
}

/** Nothing the run printed or left under `dir` holds 8 characters of the key in a row, in any case. */
function expectNoKey(r: CliResult, dir?: string): void {
  expect(leakedRun(r.stdout, KEY), 'stdout').toBeUndefined()
  expect(leakedRun(r.stderr, KEY), 'stderr').toBeUndefined()
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((n) => {
      const p = join(d, n)
      const st = lstatSync(p)
      return st.isDirectory() ? walk(p) : st.isFile() ? [p] : []
    })
  for (const f of dir ? walk(dir) : []) expect(leakedRun(readFileSync(f, 'latin1'), KEY), f).toBeUndefined()
}

/** A symlink at `at` to a file of the user's, outside the output; returns the victim's path. */
function plantLink(d: string, at: string): string {
  const victim = join(d, 'victim.txt')
  writeFileSync(victim, VICTIM)
  symlinkSync(victim, at)
  return victim
}

/** The link was not written through: its target is as it was, and `at` is no longer a link to it, or refused. */
function expectNotFollowed(r: CliResult, at: string, victim: string): void {
  expect(readFileSync(victim, 'utf8')).toBe(VICTIM)
  if (r.code === 0) expect(lstatSync(at).isFile(), `${at} replaced by a regular file`).toBe(true)
  else {
    expect(r.code, r.stderr).toBe(2)
    expect(readlinkSync(at)).toBe(victim)
  }
}

/** A reader at the other end of a FIFO (cat into a file), as a shell pipeline would have. */
function readFifo(fifo: string, into: string): {done: (r: CliResult) => Promise<unknown>} {
  const child = spawn('sh', ['-c', `exec cat "${fifo}" > "${into}"`])
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return {
    done: (r) => {
      // a failed run or a FIFO replaced (what this guards against) never opens it: let the reader go
      if (r.code !== 0 || !lstatSync(fifo).isFIFO()) child.kill()
      return exited
    },
  }
}

/** Write `into` a FIFO made at `at` while `run` runs; what the reader got, and the run. */
async function throughFifo(at: string, run: () => Promise<CliResult>): Promise<{r: CliResult; got: string}> {
  execFileSync('mkfifo', [at])
  const got = `${at}.got`
  const read = readFifo(at, got)
  const r = await run()
  await read.done(r)
  expect(lstatSync(at).isFIFO(), 'still a FIFO').toBe(true)
  return {r, got: readFileSync(got, 'utf8')}
}

const listing = (d: string) => readdirSync(d).sort()

/** A batch input of two rows, by APN in county 06067. */
function batchInput(d: string): string {
  const input = join(d, 'in.csv')
  writeFileSync(input, 'apn\n078-1\n078-2\n')
  return input
}
const batchServer = (extra: Record<string, unknown> = {}) =>
  serve((r) => one(rec(r.query.get('apn') === '078-2' ? 2 : 1, extra)))
const batch = (s: Scenario, input: string, more: string[]) =>
  sfl(['lookup', '--input', input, '--fips', '06067', '--retries', '0', ...more], {env: env(s)})

describe('lookup, a single property on stdout', () => {
  it('lookup -o csv guards every formula cell, the header of a field named as a formula too', async () => {
    const s = await serve(() => one(rec(1, FORMULAS)))
    const r = await sfl(['lookup', '--fips', '06067', '--property-id', '1', '-o', 'csv'], {env: env(s)})
    expect(r.code, r.stderr).toBe(0)
    expectGuarded(r.stdout)
    expect(csvRows(r.stdout)[0]).toContain(`'=HYPERLINK("http://x")`)
  })
})

describe('lookup --input --out', () => {
  it('lookup --input --out into a FIFO: the reader gets the rows, the FIFO stays, nothing beside it', async () => {
    const s = await batchServer()
    const d = tmp()
    const input = batchInput(d)
    const {r, got} = await throughFifo(join(d, 'pipe'), () =>
      batch(s, input, ['--out', join(d, 'pipe'), '-o', 'csv']),
    )
    expect(r.code, r.stderr).toBe(0)
    expect(csvRows(got).map((row) => row[0])).toEqual(['apn', '078-1', '078-2'])
    expect(listing(d)).toEqual(['in.csv', 'pipe', 'pipe.got'])
  })

  it('lookup --input --out over a symlink: the link is replaced, its target unchanged', async () => {
    const s = await batchServer()
    const d = tmp()
    const out = join(d, 'out.csv')
    const victim = plantLink(d, out)
    const r = await batch(s, batchInput(d), ['--out', out])
    expectNotFollowed(r, out, victim)
    expect(r.code).toBe(0)
    expect(csvRows(readFileSync(out, 'utf8')).map((row) => row[0])).toEqual(['apn', '078-1', '078-2'])
  })

  it('lookup --input --out x.csv guards the formula cells of the records, headers too', async () => {
    const s = await batchServer(FORMULAS)
    const d = tmp()
    const out = join(d, 'out.csv')
    const r = await batch(s, batchInput(d), ['--out', out])
    expect(r.code, r.stderr).toBe(0)
    const text = readFileSync(out, 'utf8')
    expectGuarded(text)
    expect(csvRows(text)[0]).toContain(`'=HYPERLINK("http://x")`)
  })
})

describe('lookup --input --stats-json', () => {
  it('lookup --stats-json into a FIFO: the reader gets the statistics document, the FIFO stays', async () => {
    const s = await batchServer()
    const d = tmp()
    const input = batchInput(d)
    const {r, got} = await throughFifo(join(d, 'pipe'), () =>
      batch(s, input, ['--out', join(d, 'out.csv'), '--stats-json', join(d, 'pipe')]),
    )
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(got)).toMatchObject({version: 1, run: {records: 2}})
    expect(listing(d)).toEqual(['in.csv', 'out.csv', 'pipe', 'pipe.got'])
  })

  it('lookup --stats-json over a symlink: the link is replaced, its target unchanged', async () => {
    const s = await batchServer()
    const d = tmp()
    const stats = join(d, 'stats.json')
    const victim = plantLink(d, stats)
    const r = await batch(s, batchInput(d), ['--out', join(d, 'out.csv'), '--stats-json', stats])
    expectNotFollowed(r, stats, victim)
    expect(JSON.parse(readFileSync(stats, 'utf8'))).toMatchObject({version: 1, run: {records: 2}})
  })

  it('lookup --stats-json: a key part the server put in a listed value is masked in the statistics', async () => {
    const s = await batchServer(ECHO)
    const d = tmp()
    const stats = join(d, 'stats.json')
    const r = await batch(s, batchInput(d), ['--out', join(d, 'out.csv'), '--stats-json', stats])
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(stats, 'utf8')).toContain('*'.repeat(PART.length))
    expectNoKey(r, d)
  })
})

/** A county of two pages; page 2 repeats record 2 of page 1. */
const countyServer = (extra: Record<string, unknown> = {}) =>
  serve((r) =>
    r.page === 1
      ? {page: {records: [rec(1, extra), rec(2, extra)], next: 2}}
      : {page: {records: [rec(2, extra), rec(3, extra)]}},
  )
const exportArgs = (...more: string[]) => ['county-export', '--fips', '06067', '--retries', '0', ...more]

describe('county-export on stdout', () => {
  it('county-export on stdout: a key part the server echoed is masked in every record, csv and ndjson', async () => {
    const s = await countyServer(ECHO)
    for (const format of ['csv', 'ndjson']) {
      const r = await sfl(exportArgs('-o', format), {env: env(s)})
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain(`x${'*'.repeat(PART.length)}y`)
      expectNoKey(r)
    }
  })

  it('county-export on stdout: a record the service repeats on a later page is printed once', async () => {
    const s = await countyServer()
    const r = await sfl(exportArgs('-o', 'ndjson'), {env: env(s)})
    expect(r.code, r.stderr).toBe(0)
    const ids = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as {ServicePropertyID: number}).ServicePropertyID)
    expect(ids).toEqual([1, 2, 3])
  })
})

describe('county-export --out', () => {
  it('county-export --out over a symlink: the link is replaced, its target unchanged', async () => {
    const s = await countyServer()
    const d = tmp()
    const out = join(d, 'sac.csv')
    const victim = plantLink(d, out)
    const r = await sfl(exportArgs('--out', out), {env: env(s)})
    expectNotFollowed(r, out, victim)
    expect(r.code).toBe(0)
    expect(csvRows(readFileSync(out, 'utf8')).map((row) => row[1])).toEqual([
      'ServicePropertyID',
      '1',
      '2',
      '3',
    ])
  })
})

describe('county-export --out-dir', () => {
  it('county-export --out-dir naming a FIFO: refused (exit 2) before any request, the FIFO untouched', async () => {
    const s = await countyServer()
    const d = tmp()
    execFileSync('mkfifo', [join(d, 'pipe')])
    const r = await sfl(exportArgs('--out-dir', join(d, 'pipe')), {env: env(s)})
    expect(r.code, r.stderr).toBe(2)
    expect(lstatSync(join(d, 'pipe')).isFIFO()).toBe(true)
    expect(s.requests).toHaveLength(0)
    expect(listing(d)).toEqual(['pipe'])
  })

  it('county-export --out-dir with a partition folder planted as a symlink: refused (exit 2), nothing written through it', async () => {
    const s = await countyServer()
    const d = tmp()
    const dir = join(d, 'exports')
    const elsewhere = join(d, 'elsewhere')
    mkdirSync(dir)
    mkdirSync(elsewhere)
    writeFileSync(join(elsewhere, 'data.csv'), VICTIM)
    mkdirSync(join(dir, 'state=CA'))
    symlinkSync(elsewhere, join(dir, 'state=CA', 'fips=06067'))
    const r = await sfl(exportArgs('--out-dir', dir), {env: env(s)})
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain('fips=06067')
    expect(listing(elsewhere)).toEqual(['data.csv'])
    expect(readFileSync(join(elsewhere, 'data.csv'), 'utf8')).toBe(VICTIM)
    expect(readlinkSync(join(dir, 'state=CA', 'fips=06067'))).toBe(elsewhere)
  })

  it('county-export --out-dir -o csv guards the formula cells of every county file, headers too', async () => {
    const s = await countyServer(FORMULAS)
    const dir = join(tmp(), 'exports')
    const r = await sfl(exportArgs('--out-dir', dir), {env: env(s)})
    expect(r.code, r.stderr).toBe(0)
    const text = readFileSync(join(dir, 'state=CA/fips=06067/data.csv'), 'utf8')
    expectGuarded(text)
    expect(csvRows(text)[0]).toContain(`'=HYPERLINK("http://x")`)
  })

  it('county-export --out-dir: a record the service repeats on a later page is in the county file once', async () => {
    const s = await countyServer()
    const dir = join(tmp(), 'exports')
    const r = await sfl(exportArgs('--out-dir', dir, '-o', 'ndjson'), {env: env(s)})
    expect(r.code, r.stderr).toBe(0)
    const ids = readFileSync(join(dir, 'state=CA/fips=06067/data.ndjson'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as {ServicePropertyID: number}).ServicePropertyID)
    expect(ids).toEqual([1, 2, 3])
    expect(s.requests).toHaveLength(2)
  })
})

describe('county-export --stats-json', () => {
  it('county-export --stats-json over a symlink: the link is replaced, its target unchanged', async () => {
    const s = await countyServer()
    const d = tmp()
    const stats = join(d, 'stats.json')
    const victim = plantLink(d, stats)
    const r = await sfl(exportArgs('--out', join(d, 'sac.csv'), '--stats-json', stats), {env: env(s)})
    expectNotFollowed(r, stats, victim)
    expect(JSON.parse(readFileSync(stats, 'utf8'))).toMatchObject({version: 1, run: {records: 3}})
  })
})

/** An earlier export of the county (NDJSON): record 1 as now, record 2 revalued, record 3 absent, 9 gone. */
function earlier(d: string, extra: Record<string, unknown> = {}): string {
  const prev = join(d, 'prev.ndjson')
  const recs = [rec(1, extra), rec(2, {...extra, FinalValue: 1}), rec(9, extra)]
  writeFileSync(prev, recs.map((x) => `${JSON.stringify(x)}\n`).join(''))
  return prev
}

describe('county-export --changes-since and --changes-out', () => {
  it('county-export --changes-since over a symlink planted at the default change file: not written through', async () => {
    const s = await countyServer()
    const d = tmp()
    const prev = earlier(d)
    const out = join(d, 'sac.csv')
    const changes = join(d, 'sac.changes.csv')
    const victim = plantLink(d, changes)
    const r = await sfl(exportArgs('--out', out, '--changes-since', prev), {env: env(s)})
    expectNotFollowed(r, changes, victim)
    expect(r.code).toBe(0)
    expect(csvRows(readFileSync(changes, 'utf8')).map((row) => `${row[0]} ${row[1]}`)).toEqual([
      'Change ServicePropertyID',
      'added 3',
      'updated 2',
      'deleted 9',
    ])
  })

  it('county-export --changes-out into a FIFO: the reader gets the change file, the FIFO stays', async () => {
    const s = await countyServer()
    const d = tmp()
    const prev = earlier(d)
    const fifo = join(d, 'pipe')
    const {r, got} = await throughFifo(fifo, () =>
      sfl(
        exportArgs('--out', join(d, 'sac.csv'), '--changes-since', prev, '--changes-out', fifo, '-o', 'csv'),
        {
          env: env(s),
        },
      ),
    )
    expect(r.code, r.stderr).toBe(0)
    expect(csvRows(got).map((row) => row[1])).toEqual(['ServicePropertyID', '3', '2', '9'])
    expect(listing(d)).toEqual(['pipe', 'pipe.got', 'prev.ndjson', 'sac.csv'])
  })

  it('county-export --changes-out over a symlink: the link is replaced, its target unchanged', async () => {
    const s = await countyServer()
    const d = tmp()
    const prev = earlier(d)
    const changes = join(d, 'changes.csv')
    const victim = plantLink(d, changes)
    const r = await sfl(
      exportArgs('--out', join(d, 'sac.csv'), '--changes-since', prev, '--changes-out', changes),
      {
        env: env(s),
      },
    )
    expectNotFollowed(r, changes, victim)
    expect(r.code).toBe(0)
    expect(csvRows(readFileSync(changes, 'utf8')).map((row) => row[1])).toEqual([
      'ServicePropertyID',
      '3',
      '2',
      '9',
    ])
  })

  it('county-export --changes-out: a key part the server echoed is masked in the change file', async () => {
    const s = await countyServer(ECHO)
    const d = tmp()
    const prev = earlier(d)
    const changes = join(d, 'changes.ndjson')
    const r = await sfl(
      exportArgs('--out', join(d, 'sac.csv'), '--changes-since', prev, '--changes-out', changes),
      {
        env: env(s),
      },
    )
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(changes, 'utf8')).toContain(`x${'*'.repeat(PART.length)}y`)
    expectNoKey(r, d)
  })

  it('county-export --changes-out x.csv guards the formula cells of the change file, headers too', async () => {
    const s = await countyServer(FORMULAS)
    const d = tmp()
    const prev = earlier(d, FORMULAS)
    const changes = join(d, 'changes.csv')
    const r = await sfl(
      exportArgs('--out', join(d, 'sac.csv'), '--changes-since', prev, '--changes-out', changes),
      {
        env: env(s),
      },
    )
    expect(r.code, r.stderr).toBe(0)
    const text = readFileSync(changes, 'utf8')
    expectGuarded(text)
    expect(csvRows(text)[0]).toContain(`'=HYPERLINK("http://x")`)
  })
})

/** Two exports a month apart on disk, with formula cells and a field named as a formula. */
function sides(d: string): [string, string] {
  const prev = earlier(d, FORMULAS)
  const cur = join(d, 'cur.ndjson')
  const recs = [rec(1, FORMULAS), rec(2, FORMULAS), rec(3, FORMULAS)]
  writeFileSync(cur, recs.map((x) => `${JSON.stringify(x)}\n`).join(''))
  return [prev, cur]
}

describe('sfl changes', () => {
  it('sfl changes -o csv on stdout guards the formula cells, headers too', async () => {
    const d = tmp()
    const [prev, cur] = sides(d)
    const r = await sfl(['changes', prev, cur, '-o', 'csv'])
    expect(r.code, r.stderr).toBe(0)
    expectGuarded(r.stdout)
    expect(csvRows(r.stdout)[0]).toContain(`'=HYPERLINK("http://x")`)
    expect(listing(d)).toEqual(['cur.ndjson', 'prev.ndjson'])
  })

  it('sfl changes --out over a symlink: the link is replaced, its target unchanged', async () => {
    const d = tmp()
    const [prev, cur] = sides(d)
    const out = join(d, 'changes.csv')
    const victim = plantLink(d, out)
    const r = await sfl(['changes', prev, cur, '--out', out])
    expectNotFollowed(r, out, victim)
    expect(r.code).toBe(0)
    expect(csvRows(readFileSync(out, 'utf8')).map((row) => row[0])).toEqual([
      'Change',
      'added',
      'updated',
      'deleted',
    ])
  })

  it('sfl changes --out x.csv guards the formula cells as an export does (APN +1 as the text +1), headers too', async () => {
    const d = tmp()
    const [prev, cur] = sides(d)
    const out = join(d, 'changes.csv')
    const r = await sfl(['changes', prev, cur, '--out', out])
    expect(r.code, r.stderr).toBe(0)
    const text = readFileSync(out, 'utf8')
    expectGuarded(text)
    expect(csvRows(text)[0]).toContain(`'=HYPERLINK("http://x")`)
  })
})

describe('sfl keys', () => {
  /** A config folder of the user's (0700), with the key stored under the default profile. */
  async function stored(s: Scenario): Promise<{configDir: string; set: CliResult}> {
    const configDir = join(tmp(), 'config')
    mkdirSync(configDir, {mode: 0o700})
    const set = await sfl(['keys', 'set', '--profile', 'work', '--base-url', s.baseUrl], {
      configDir,
      input: `${KEY}\n`,
    })
    return {configDir, set}
  }

  it('keys check: the key the server echoes in a record, an error body and a header is never printed, --debug included', async () => {
    let fail = false
    const s = await serve(() =>
      fail
        ? {
            status: 403,
            body: {status: 'error', message: `key ${KEY} (${PART}) refused`},
            headers: {'x-echo': KEY},
          }
        : {page: {records: [rec(1, ECHO)]}, headers: {'x-echo': `${PART}`}},
    )
    for (const output of ['table', 'json']) {
      const ok = await sfl(['keys', 'check', '--fips', '06067', '-o', output, '--debug'], {env: env(s)})
      expect(ok.code, ok.stderr).toBe(0)
      expectNoKey(ok)
    }
    fail = true
    const refused = await sfl(['keys', 'check', '--fips', '06067', '--debug', '--json'], {env: env(s)})
    expect(refused.code, refused.stderr).toBe(4)
    expectNoKey(refused)
  })

  it('keys set: storing the key prints no run of it', async () => {
    const s = await serve(() => one(rec(1)))
    const {configDir, set} = await stored(s)
    expect(set.code, set.stderr).toBe(0)
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).toContain(KEY)
    expectNoKey(set)
  })

  it('keys list: the stored key is shown masked, table and json', async () => {
    const s = await serve(() => one(rec(1)))
    const {configDir} = await stored(s)
    for (const args of [
      ['keys', 'list', '-o', 'table'],
      ['keys', 'list', '--json'],
    ]) {
      const r = await sfl(args, {configDir})
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain('work')
      expectNoKey(r)
    }
  })

  it('keys remove: removing the stored key prints no run of it', async () => {
    const s = await serve(() => one(rec(1)))
    const {configDir} = await stored(s)
    const r = await sfl(['keys', 'remove', '--profile', 'work'], {configDir})
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).not.toContain(KEY.slice(0, 8))
    expectNoKey(r)
  })
})

describe('sfl sandbox --log', () => {
  /** Start the sandbox logging to `log`, send one lookup with the key, stop it. */
  async function oneLoggedRequest(log: string): Promise<CliResult> {
    const sb = await spawnSandbox(['--log', log])
    try {
      return await sfl(['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json'], {
        env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY},
      })
    } finally {
      await sb.stop()
    }
  }

  it('sandbox --log into a FIFO: the reader gets a line per request, the FIFO stays', async () => {
    const d = tmp()
    const {got} = await throughFifo(join(d, 'pipe'), async () => {
      await oneLoggedRequest(join(d, 'pipe'))
      return {code: 0, stdout: '', stderr: ''}
    })
    expect(got.trimEnd().split('\n')).toHaveLength(1)
    expect(JSON.parse(got)).toMatchObject({query: {fips: '06067'}})
  })

  // BUG (issue 29, found by this matrix): src/sandbox/server.ts appends its log with appendFileSync, which
  // follows a symlink planted at --log and writes into its target; the sandbox may not import the output
  // gate (src/sandbox imports nothing of the client), so the fix is outside the gate's files
  it('sandbox --log over a symlink: the link is not written through, its target unchanged, and the sandbox says so once', async () => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    const victim = plantLink(d, log)
    await oneLoggedRequest(log)
    expect(readFileSync(victim, 'utf8')).toBe(VICTIM)
  })

  it('sandbox --log: the key each request carried is masked in the log', async () => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    const r = await oneLoggedRequest(log)
    expect(r.code, r.stderr).toBe(4) // the sandbox knows its own keys only: a 401, logged as any request
    const text = readFileSync(log, 'utf8')
    expect(text.trimEnd().split('\n')).toHaveLength(1)
    expect(leakedRun(text, KEY)).toBeUndefined()
    expectNoKey(r, d)
  })
})

/**
 * The format x path dimension (test/matrix/coverage.ts FORMAT_MATRIX): the record outputs in every format
 * the registry (src/model/formats.ts) says the path writes, plain and filtered with --where. `READ` has a
 * reader per format, typed by the registry, so a format added there fails to compile here until its
 * outputs are read back and held to the promises: the key masked in every cell, every record once (the
 * filter's rows only, with it), and no cell a spreadsheet runs as a formula (CSV guarded, xlsx inline
 * strings only; NDJSON, JSON and Parquet carry values, not cells).
 */
type Rows = Array<Record<string, string>>
const text = (v: unknown): string =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v as string)
/** A batch row's record is under `data` in NDJSON and JSON: its fields as the row's, the rest kept. */
const flatRow = (o: Record<string, unknown>): Record<string, string> => {
  const {data, ...rest} = o
  const fields = data !== null && typeof data === 'object' ? (data as Record<string, unknown>) : {}
  return Object.fromEntries(Object.entries({...rest, ...fields}).map(([k, v]) => [k, text(v)]))
}
const byHeader = ([header, ...rows]: string[][]): Rows =>
  rows.map((cells) => Object.fromEntries(header!.map((h, i) => [h, cells[i] ?? ''])))

const READ: {[F in FileFormat]: (path: string) => Promise<Rows>} = {
  csv: async (p) => byHeader(csvRows(readFileSync(p, 'utf8').replace(/^\uFEFF/, ''))),
  ndjson: async (p) =>
    readFileSync(p, 'utf8')
      .trimEnd()
      .split('\n')
      .filter(Boolean)
      .map((l) => flatRow(JSON.parse(l) as Record<string, unknown>)),
  json: async (p) => (JSON.parse(readFileSync(p, 'utf8')) as Array<Record<string, unknown>>).map(flatRow),
  parquet: async (p) => {
    const rows: Rows = []
    for await (const r of readParquetRecords(p)) rows.push(flatRow(r as Record<string, unknown>))
    return rows
  },
  xlsx: async (p) => {
    const wb = await XlsxWorkbook.open(p)
    const cells: string[][] = []
    for await (const r of wb.rows(wb.pick())) cells.push(r.cells)
    return byHeader(cells)
  },
}

/** The formula-shaped values of the records below, as the server sends them. */
const SHAPED = {APN: '+1', CompleteStreetAddress: '@SUM(1+1)'}
const CALC = '=cmd|"/c calc"!A1'
/**
 * Three records: 1 and 2 FHA-eligible, 2 repeated on the next page, 3 not eligible; the key's 10
 * characters in 1's and 3's City. The filter keeps FHA-eligible records or a City that starts with x and
 * the first two of those characters: a filter that saw the key (not its masked form, x***) would keep 3
 * as well. It names only two of them: the filter is the user's text, recorded as typed in the checkpoint
 * and the manifest.
 */
const FILTER = `FHAEligible = true or City like 'x${PART.slice(0, 2)}%'`
const filterServer = () =>
  serve((r) => {
    const all = [
      rec(1, {...SHAPED, City: `x${PART}y`}),
      rec(2, {City: CALC}),
      rec(3, {FHAEligible: false, City: `x${PART}y`}),
    ]
    const apn = r.query.get('apn')
    if (apn) return one(all.find((x) => x['APN'] === apn || `078-${String(x['ServicePropertyID'])}` === apn)!)
    return r.page === 1 ? {page: {records: all.slice(0, 2), next: 2}} : {page: {records: [all[1]!, all[2]!]}}
  })

/** Every promise of a record output in `format`, read back; `ids` the ServicePropertyIDs it must hold, in order. */
async function expectPromisesKept(
  format: FileFormat,
  out: string,
  r: CliResult,
  ids: string[],
): Promise<void> {
  expect(r.code, r.stderr).toBe(0)
  const rows = await READ[format](out)
  expect(rows.map((x) => x['ServicePropertyID'] ?? '')).toEqual(ids)
  // key: not a run of 8 of its characters in any cell, nor printed; City of record 1 masked to its length
  for (const row of rows) for (const v of Object.values(row)) expect(leakedRun(v, KEY), v).toBeUndefined()
  expectNoKey(r)
  const first = rows.find((x) => x['ServicePropertyID'] === '1')
  if (first) expect(first['City']).toBe(`x${'*'.repeat(PART.length)}y`)
  // formula: CSV guards the cells; a workbook has no formula element and holds the text as sent
  const second = rows.find((x) => x['ServicePropertyID'] === '2')!
  if (format === 'csv') {
    expect(formulaCells(readFileSync(out, 'utf8'))).toEqual([])
    expect(second['City']).toBe(`'${CALC}`)
  } else {
    expect(second['City']).toBe(CALC)
    if (format === 'xlsx')
      for await (const chunk of (await ZipArchive.open(out)).read('xl/worksheets/sheet1.xml'))
        expect(chunk.toString('utf8')).not.toMatch(/<f[ >]/)
  }
}

/** A command run in process, its result as the spawned CLI's (`args` as given to sfl: the id first). */
async function inProcess(
  command: Parameters<typeof runCommand>[0],
  args: string[],
  s: Scenario,
): Promise<CliResult> {
  const r = await runCommand(command, args.slice(1), env(s))
  return {code: r.exitCode, stdout: r.stdout, stderr: r.stderr}
}

/**
 * Each format `writer` writes (the registry's) to a file, plain and with the filter, and filtered on
 * stdout each format that can go there.
 */
const variants = (writer: 'county-export' | 'lookup --input') =>
  formatsWrittenBy(writer).flatMap((format) => [
    {format, where: [] as string[], to: 'file'},
    {format, where: ['--where', FILTER], to: 'file'},
    ...(FORMATS[format].stdout ? [{format, where: ['--where', FILTER], to: 'stdout'}] : []),
  ])

/** The statistics document describes the rows written (the filter's), and holds no run of the key. */
function expectStats(path: string, records: number): void {
  const doc = readFileSync(path, 'utf8')
  expect((JSON.parse(doc) as {run: {records: number}}).run.records).toBe(records)
  expect(leakedRun(doc, KEY)).toBeUndefined()
}

describe('every format a record output writes, plain and --where', () => {
  it('county-export --out in every format county-export writes: the key masked, every record once, no formula cell; --where keeps the filter rows, on stdout and in --stats-json too', async () => {
    const s = await filterServer()
    const d = tmp()
    // in process (oclif's Command.run, test/helpers/run-command.ts): no node start per run, so the
    // dimension costs a second or two of the suite, not one process a cell
    for (const {format, where, to} of variants('county-export')) {
      const out = join(d, `c${where.length}-${to}.${FORMATS[format].extensions[0]!}`)
      const stats = join(d, `c${where.length}-${to}-${format}.json`)
      const r = await inProcess(
        CountyExport,
        exportArgs('-o', format, ...(to === 'file' ? ['--out', out] : []), '--stats-json', stats, ...where),
        s,
      )
      if (to === 'stdout') writeFileSync(out, r.stdout)
      await expectPromisesKept(format, out, r, where.length ? ['1', '2'] : ['1', '2', '3'])
      expectStats(stats, where.length ? 2 : 3)
      if (where.length) expect(r.stderr).toContain('3 records fetched, 2 kept by --where')
    }
  })

  it('lookup --input --out in every format a batch writes: the key masked, a row per input row, no formula cell; --where leaves the filtered row without its record, on stdout and in --stats-json too', async () => {
    const s = await filterServer()
    const d = tmp()
    const input = join(d, 'in.csv')
    writeFileSync(input, 'apn\n078-1\n078-2\n078-3\n')
    const batchArgs = ['lookup', '--input', input, '--fips', '06067', '--retries', '0', '--plan', 'lookups']
    for (const {format, where, to} of variants('lookup --input')) {
      const out = join(d, `r${where.length}-${to}.${FORMATS[format].extensions[0]!}`)
      const stats = join(d, `r${where.length}-${to}-${format}.json`)
      const target = to === 'file' ? ['--out', out] : ['-o', format]
      const r = await inProcess(Lookup, [...batchArgs, ...target, '--stats-json', stats, ...where], s)
      if (to === 'stdout') writeFileSync(out, r.stdout)
      await expectPromisesKept(format, out, r, where.length ? ['1', '2', ''] : ['1', '2', '3'])
      expectStats(stats, where.length ? 2 : 3)
      const statuses = (await READ[format](out)).map((x) => x['status'])
      expect(statuses).toEqual(where.length ? ['ok', 'ok', 'filtered'] : ['ok', 'ok', 'ok'])
    }
  })

  it('county-export --out-dir --where: the filter rows once, masked and guarded; every county file keeps the unfiltered columns, a rerun narrows nothing', async () => {
    const s = await filterServer()
    const d = tmp()
    const dir = join(d, 'out')
    const args = exportArgs('--out-dir', dir, '-o', 'csv', '--no-stats', '--where', FILTER)
    const first = await inProcess(CountyExport, args, s)
    expect(first.code, first.stderr).toBe(0)
    expectNoKey(first, dir)
    const [file] = readdirSync(join(dir, 'state=CA'), {recursive: true})
      .map(String)
      .filter((f) => f.endsWith('.csv'))
    const path = join(dir, 'state=CA', file!)
    const header = csvRows(readFileSync(path, 'utf8'))[0]
    // the filter's rows once each, their formula cells guarded as in any county file
    expect((await READ.csv(path)).map((x) => x['ServicePropertyID'])).toEqual(['1', '2'])
    expect(formulaCells(readFileSync(path, 'utf8'))).toEqual([])
    expect(header).toEqual(expect.arrayContaining(['ServicePropertyID', 'City', 'FHAEligible', 'APN']))
    // a filter no record passes: the file has the same columns and no row
    const none = await inProcess(CountyExport, [...args.slice(0, -1), 'FinalValue < 0'], s)
    expect(none.code, none.stderr).toBe(0)
    expect(csvRows(readFileSync(path, 'utf8'))).toEqual([header])
    expectNoKey(none, dir)
  })
})
