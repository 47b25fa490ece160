import {execFileSync, spawn} from 'node:child_process'
import {existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import CountyExport from '../../src/commands/county-export.js'
import Lookup from '../../src/commands/lookup.js'
import {runCommand} from '../helpers/run-command.js'

/**
 * The record pipeline against a server that misbehaves the ways real ones do (issue 20): pagination cut
 * off or looping, envelopes that are not the spec's, records JSON.parse would refuse, records that break
 * the spec's rules, a record answered twice, the key echoed, and outputs that are not regular files. Each
 * case asserts the exit code, what the output holds, and that nothing outside it changed.
 */
type Answer = {status?: number; headers?: Record<string, string>; body: string | Buffer}
let answer: (url: URL, n: number) => Answer = () => ({body: ''})
let requests: string[] = []
let server: Server
let base = ''
const KEY = 'test-key-sk_live_0123456789'
const dirs: string[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    requests.push(`${url.pathname}${url.search}`)
    const a = answer(url, requests.length)
    res.writeHead(a.status ?? 200, {
      'content-type': 'application/json',
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '900',
      ...a.headers,
    })
    res.end(a.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
afterEach(() => {
  requests = []
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'sfl-pipeline-'))
  dirs.push(d)
  return d
}

/** A record that conforms to spec 2.1 (the checks stage finds nothing in it). */
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
    FinalValue: 300000,
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
const body = (data: unknown, status = 'success') => JSON.stringify({status, data})
const page = (records: unknown[], next?: string): Answer => ({
  body: body(records),
  ...(next ? {headers: {link: `<${next}>; rel="next"`}} : {}),
})

const env = () => ({SFL_BASE_URL: base, SFL_API_KEY: KEY})
const exportTo = (args: string[]) => runCommand(CountyExport, ['--fips', '06067', ...args], env())
const lines = (path: string) => readFileSync(path, 'utf8').trimEnd().split('\n')

describe('pagination: a cut-off or looping county is never taken as complete', () => {
  it('a 404 on page 2 fails the county (not empty, nothing written, exit 6); the rerun continues from page 2', async () => {
    const out = join(tmp(), 'c.ndjson')
    writeFileSync(out, 'the earlier export\n')
    answer = (url) =>
      url.searchParams.get('page') === '2'
        ? {status: 404, body: JSON.stringify({status: 'error', code: 404, message: 'No property matches'})}
        : page([rec(1), rec(2)], `${base}/special-financing?fips=06067&page=2`)
    const r = await exportTo(['-o', 'ndjson', '--out', out])
    expect(r.exitCode).toBe(6)
    expect(r.stderr).toMatch(/failed 06067: a later page answered HTTP 404: the pagination was cut off/)
    expect(r.stderr).not.toMatch(/1 empty/)
    expect(readFileSync(out, 'utf8')).toBe('the earlier export\n')
    // the service is well again: the rerun asks page 2 only and writes the county whole
    answer = (url) => (url.searchParams.get('page') === '2' ? page([rec(3)]) : page([rec(9)]))
    requests = []
    const again = await exportTo(['-o', 'ndjson', '--out', out])
    expect(again.exitCode).toBe(0)
    expect(requests).toEqual(['/v1/special-financing?fips=06067&page=2'])
    expect(lines(out).map((l) => JSON.parse(l).ServicePropertyID)).toEqual([1, 2, 3])
  })

  it('a next link back to page 1 under a reordered query with a cache buster is a loop after one request', async () => {
    answer = () => page([rec(1)], `${base}/special-financing?_=1700000000&fips=06067`)
    const r = await exportTo(['-o', 'ndjson'])
    expect(r.exitCode).toBe(6)
    expect(requests).toHaveLength(1)
    expect(r.stderr).toMatch(
      /malformed 06067: the next-page link after page 1 leads back to a page already fetched/,
    )
  })

  it('page 1 served again under another page number is a loop by its records, after two requests', async () => {
    answer = (url) =>
      page(
        [rec(1), rec(2)],
        `${base}/special-financing?fips=06067&page=${Number(url.searchParams.get('page') ?? 1) + 1}`,
      )
    const out = join(tmp(), 'c.csv')
    const r = await exportTo(['--out', out])
    expect(r.exitCode).toBe(6)
    expect(requests).toHaveLength(2)
    expect(r.stderr).toMatch(
      /malformed 06067: page 2 holds only records already taken from earlier pages \(2 of them\)/,
    )
    expect(existsSync(out)).toBe(false)
  })

  it('a record repeated on a later page is written once, and the summary counts it', async () => {
    answer = (url) =>
      url.searchParams.get('page') === '2'
        ? page([rec(2), rec(3)])
        : page([rec(1), rec(2)], `${base}/special-financing?fips=06067&page=2`)
    const out = join(tmp(), 'c.ndjson')
    const r = await exportTo(['-o', 'ndjson', '--out', out])
    expect(r.exitCode).toBe(0)
    expect(lines(out).map((l) => JSON.parse(l).ServicePropertyID)).toEqual([1, 2, 3])
    expect(r.stderr).toMatch(
      /3 records written, .*1 duplicate record across pages dropped \(the first kept\)/,
    )
  })
})

describe('one envelope rule: anything but {status: "success", data} and nothing after is a malformed county', () => {
  it.each([
    ['status "error" with an empty list', body([], 'error'), /status "error" instead of "success"/],
    ['no status', JSON.stringify({data: [rec(1)]}), /has no `status` field/],
    ['bytes after the body', `${body([rec(1)])} <html>`, /goes on after its JSON object/],
    [
      'data named twice',
      `{"status":"success","data":[],"data":[${JSON.stringify(rec(1))}]}`,
      /names `data` twice/,
    ],
  ])('%s: exit 6, the output untouched', async (_name, text, why) => {
    answer = () => ({body: text})
    const out = join(tmp(), 'c.csv')
    writeFileSync(out, 'before')
    const r = await exportTo(['--out', out])
    expect(r.exitCode).toBe(6)
    expect(r.stderr).toMatch(new RegExp(`malformed 06067: .*${why.source}`))
    expect(readFileSync(out, 'utf8')).toBe('before')
  })
})

describe('one JSON grammar for every format: a record JSON.parse would refuse is rejected the same way', () => {
  const broken = [
    [
      'a number JSON does not allow (080)',
      '{"Fips":"06067","ServicePropertyID":080}',
      /a number JSON does not allow/,
    ],
    ['a broken literal (tru)', '{"Fips":"06067","FHAEligible":tru}', /a literal JSON does not allow/],
    [
      'invalid UTF-8',
      Buffer.concat([Buffer.from('{"Fips":"06067","City":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
      /not valid UTF-8/,
    ],
  ] as const
  for (const format of ['csv', 'ndjson', 'json', 'parquet'] as const)
    it.each(broken)(
      `${format}: %s is skipped and listed, the rest written, exit 7`,
      async (_name, bad, why) => {
        answer = () => ({
          body: Buffer.concat([
            Buffer.from(`{"status":"success","data":[${JSON.stringify(rec(1))},`),
            Buffer.from(bad),
            Buffer.from(`,${JSON.stringify(rec(3))}]}`),
          ]),
        })
        const out = join(tmp(), `c.${format}`)
        const r = await exportTo(['-o', format, '--out', out])
        expect(r.exitCode).toBe(7)
        expect(r.stderr).toMatch(/skipped 06067 page 1 record 2: /)
        const rejects = lines(`${out}.rejects.ndjson`).map((l) => JSON.parse(l))
        expect(rejects).toEqual([{fips: '06067', page: 1, record: 2, reason: expect.stringMatching(why)}])
        if (format === 'ndjson')
          expect(lines(out).map((l) => JSON.parse(l).ServicePropertyID)).toEqual([1, 3])
        if (format === 'json')
          expect(
            (JSON.parse(readFileSync(out, 'utf8')) as Array<{ServicePropertyID: number}>).map(
              (x) => x.ServicePropertyID,
            ),
          ).toEqual([1, 3])
        if (format === 'csv') expect(lines(out)).toHaveLength(3)
        if (format === 'parquet') expect(readFileSync(out).subarray(0, 4).toString()).toBe('PAR1')
      },
    )
})

describe("the spec's rules on every exported record", () => {
  const bad = () => page([rec(1, {ConfidenceScore: 150}), rec(2, {CRAEligible: 'Very High'}), rec(3)])

  it('records that break them are written as sent and counted by field; exit 0', async () => {
    answer = bad
    const out = join(tmp(), 'c.ndjson')
    const r = await exportTo(['-o', 'ndjson', '--out', out])
    expect(r.exitCode).toBe(0)
    expect(lines(out)).toHaveLength(3)
    expect(r.stderr).toMatch(
      /records that break the spec's rules \(written as sent; --strict skips them\):\n {4}(ConfidenceScore 1, CRAEligible 1|CRAEligible 1, ConfidenceScore 1)\n/,
    )
  })

  it('--strict skips them into the rejects file with their problems; exit 7', async () => {
    answer = bad
    const out = join(tmp(), 'c.csv')
    const r = await exportTo(['--out', out, '--strict'])
    expect(r.exitCode).toBe(7)
    expect(lines(out)).toHaveLength(2) // the header and record 3
    const rejects = lines(`${out}.rejects.ndjson`).map(
      (l) => JSON.parse(l) as {record: number; reason: string},
    )
    expect(rejects.map((x) => x.record)).toEqual([1, 2])
    expect(rejects[0]!.reason).toMatch(/ConfidenceScore: 150 is over the maximum 100/)
    expect(rejects[1]!.reason).toMatch(
      /CRAEligible: "Very High" is not one of Low, Middle, Moderate, Upper, Not Available/,
    )
  })
})

describe('the key a server echoes never reaches a file or the terminal', () => {
  it('export: masked in every record of the output, said once', async () => {
    answer = () => page([rec(1, {APN: `x${KEY}`}), rec(2, {City: KEY})])
    for (const format of ['csv', 'ndjson'] as const) {
      const out = join(tmp(), `c.${format}`)
      const r = await exportTo(['-o', format, '--out', out])
      expect(r.exitCode).toBe(0)
      expect(readFileSync(out, 'utf8')).not.toContain(KEY)
      expect(readFileSync(out, 'utf8')).toContain(`x${'*'.repeat(KEY.length)}`)
      expect(
        r.stderr.match(/echoed your API key \(whole, or 8 or more of its characters\) 2 times/g),
      ).toHaveLength(1)
      expect(r.stderr).not.toContain(KEY)
    }
  })
})

describe('an --out that is not a regular file is written into, never replaced', () => {
  it('a FIFO: the reader gets every record; it is still a FIFO; nothing is made beside it', async () => {
    answer = () => page([rec(1), rec(2)])
    const d = tmp()
    const fifo = join(d, 'pipe')
    execFileSync('mkfifo', [fifo])
    const got = join(d, 'got')
    // a reader on the other end (cat to a file), as a shell pipeline would have
    const child = spawn('sh', ['-c', `cat "${fifo}" > "${got}"`])
    const exited = new Promise((resolve) => child.once('exit', resolve))
    const r = await exportTo(['-o', 'ndjson', '--out', fifo])
    await exited
    expect(r.exitCode).toBe(0)
    expect(lstatSync(fifo).isFIFO()).toBe(true)
    expect(lines(got).map((l) => JSON.parse(l).ServicePropertyID)).toEqual([1, 2])
    expect(readdirSync(d).sort()).toEqual(['got', 'pipe'])
  })

  it.skipIf(process.getuid?.() !== 0)(
    'a character device (mknod c 1 3, /dev/null made here; needs root): written into, still a device, nothing beside it',
    async () => {
      answer = () => page([rec(1)])
      const d = tmp()
      const dev = join(d, 'null')
      execFileSync('mknod', [dev, 'c', '1', '3'])
      const r = await exportTo(['--out', dev])
      expect(r.exitCode).toBe(0)
      expect(lstatSync(dev).isCharacterDevice()).toBe(true)
      expect(readdirSync(d)).toEqual(['null'])
    },
  )

  it('a block device or a folder is refused before any request (exit 2)', async () => {
    const d = tmp()
    const r = await exportTo(['--out', d])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/is a folder; give a file name/)
    expect(requests).toHaveLength(0)
  })
})

describe('a checkpoint edited to name a file outside the run', () => {
  it('a part file named ../x is refused (exit 2, naming --restart) and the file is untouched', async () => {
    const d = tmp()
    const out = join(d, 'c.ndjson')
    const victim = join(d, 'victim.txt')
    writeFileSync(victim, 'precious')
    // a run stopped by --max-requests after page 1 keeps its checkpoint
    answer = (url) =>
      page([rec(Number(url.searchParams.get('page') ?? 1))], `${base}/special-financing?fips=06067&page=2`)
    const first = await exportTo(['-o', 'ndjson', '--out', out, '--max-requests', '1'])
    expect(first.exitCode).toBe(7)
    const cp = `${out}.sfl-checkpoint`
    const edited = readFileSync(cp, 'utf8').replace(/"file":"06067-00001\.ndjson"/, '"file":"../victim.txt"')
    expect(edited).toContain('../victim.txt')
    writeFileSync(cp, edited)
    requests = []
    const r = await exportTo(['-o', 'ndjson', '--out', out])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/holds an event this version of sfl does not write .*--restart/)
    expect(requests).toHaveLength(0)
    expect(readFileSync(victim, 'utf8')).toBe('precious')
    expect(existsSync(out)).toBe(false)
  })
})

describe('a Date header hours off is not trusted over X-RateLimit-Reset', () => {
  it.each([
    ['five hours behind', -5],
    ['five hours ahead', 5],
  ])('%s: the lookup goes through, and the notice is said once', async (_name, hours) => {
    answer = () => ({
      body: body(rec(1)),
      headers: {
        date: new Date(Date.now() + hours * 3_600_000).toUTCString(),
        'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 4),
      },
    })
    const r = await runCommand(Lookup, ['--fips', '06067', '--apn', '078-1', '-o', 'json'], env())
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout).ServicePropertyID).toBe(1)
    expect(r.stderr.match(/Date header is 5 h (behind|ahead of) this machine's clock/g)).toHaveLength(1)
  })
})

describe('a batch row', () => {
  it('answered by several records: one row for the input row (records 2, the other id named), or a row per record with --several rows', async () => {
    answer = () => page([rec(1), rec(2)])
    const d = tmp()
    const input = join(d, 'in.csv')
    writeFileSync(input, 'apn,name\n078-1,Ann\n')
    const out = join(d, 'out.csv')
    // per-row lookups: this server answers a county's form too, which the planner might scan instead
    const r = await runCommand(
      Lookup,
      ['--input', input, '--fips', '06067', '--out', out, '--plan', 'lookups'],
      env(),
    )
    expect(r.exitCode).toBe(0)
    // apn, name, sfl_row, status, error, note, source, records, other_ids, then the record's columns
    const rows = lines(out).map((l) => l.split(','))
    expect(rows).toHaveLength(2)
    expect(rows[1]!.slice(0, 9)).toEqual([
      '078-1',
      'Ann',
      '1',
      'ok',
      '',
      'several_records',
      'lookup',
      '2',
      '2',
    ])
    expect(r.stderr).toMatch(/1 row answered by several records/)
    const each = join(d, 'each.csv')
    const r2 = await runCommand(
      Lookup,
      ['--input', input, '--fips', '06067', '--out', each, '--plan', 'lookups', '--several', 'rows'],
      env(),
    )
    expect(r2.exitCode).toBe(0)
    const perRecord = lines(each).map((l) => l.split(','))
    expect(perRecord).toHaveLength(3)
    expect(perRecord.slice(1).map((c) => [c[0], c[1], c[2], c[3], c[5]])).toEqual([
      ['078-1', 'Ann', '1', 'ok', 'several_records'],
      ['078-1', 'Ann', '1', 'ok', 'several_records'],
    ])
  })

  it('whose record echoes the key: masked in the output and in the checkpoint of a stopped run', async () => {
    answer = (url) =>
      url.searchParams.get('apn') === '078-2' ? {status: 500, body: '{}'} : page([rec(1, {APN: KEY})])
    const d = tmp()
    const input = join(d, 'in.csv')
    writeFileSync(input, 'apn\n078-1\n078-2\n')
    const out = join(d, 'out.ndjson')
    const r = await runCommand(
      Lookup,
      ['--input', input, '--fips', '06067', '--out', out, '--retries', '0'],
      env(),
    )
    expect(r.exitCode).toBe(7) // the 500 row is an error a rerun asks again: the checkpoint is kept
    expect(readFileSync(out, 'utf8')).not.toContain(KEY)
    expect(readFileSync(`${out}.sfl-checkpoint`, 'utf8')).not.toContain(KEY)
    expect(readFileSync(`${out}.sfl-checkpoint`, 'utf8')).toContain('*'.repeat(KEY.length))
    expect(r.stderr.match(/echoed your API key/g)).toHaveLength(1)
  })
})

describe('for any server bytes, every NDJSON line sfl writes is JSON', () => {
  it('bodies cut, flipped and spliced anywhere: the output parses line by line, or the county is not written', async () => {
    const {default: fc} = await import('fast-check')
    const good = Buffer.from(body([rec(1), rec(2, {City: 'Ñandú "q" \\ 🏠'}), rec(3)]))
    const mutated = fc.tuple(
      fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({min: 0, max: 255})), {maxLength: 4}),
      fc.option(fc.nat(good.length), {nil: undefined}),
    )
    let written = 0
    await fc.assert(
      fc.asyncProperty(mutated, async ([flips, cut]) => {
        const bytes = Buffer.from(good)
        for (const [at, b] of flips) bytes[at] = b
        answer = () => ({body: cut === undefined ? bytes : bytes.subarray(0, cut)})
        const out = join(tmp(), 'c.ndjson')
        const r = await exportTo(['-o', 'ndjson', '--out', out, '--retries', '0', '--no-stats'])
        expect([0, 6, 7]).toContain(r.exitCode)
        if (!existsSync(out)) return
        written++
        for (const l of lines(out).filter((x) => x !== '')) expect(() => JSON.parse(l)).not.toThrow()
      }),
      {numRuns: 40},
    )
    expect(written).toBeGreaterThan(0)
  })
})
