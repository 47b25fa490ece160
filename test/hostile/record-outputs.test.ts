import {mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import CountyExport from '../../src/commands/county-export.js'
import Lookup from '../../src/commands/lookup.js'
import {readParquetRecords} from '../../src/io/parquet-reader.js'
import {sfl} from '../helpers/cli.js'
import {runCommand} from '../helpers/run-command.js'
import {expectOneErrorLine, leakedRun} from './expect.js'

/**
 * What leaves sfl from the server's data (issue 29), against a loopback server scripted per test: a record
 * carrying 10 characters of the key (not the whole key) is masked in every output (lookup formats,
 * --explain, batch and export files, the rejects file, the statistics, the checkpoint), said once; a record
 * that names ServicePropertyID twice is rejected and never displaces the genuine record; a number no double
 * holds is a counted violation, never infinity, left out of the statistics; the batch counts problems by
 * their field as data.
 */
const KEY = 'sk_live_HOSTILE_0123456789abcdef'
/** 10 characters of the key: not the key, but every run of 8 of it must never be printed. */
const PART = KEY.slice(9, 19)
const STARS = '*'.repeat(PART.length)

type Answer = {status?: number; body: string}
let answer: (url: URL) => Answer = () => ({body: ''})
let server: Server
let base = ''
const dirs: string[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    const a = answer(new URL(req.url ?? '/', 'http://x'))
    res.writeHead(a.status ?? 200, {
      'content-type': 'application/json',
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '900',
    })
    res.end(a.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'sfl-outputs-'))
  dirs.push(d)
  return d
}

function filesUnder(d: string): string[] {
  return readdirSync(d).flatMap((n) => {
    const p = join(d, n)
    return statSync(p).isDirectory() ? filesUnder(p) : [p]
  })
}

/** A record that conforms to spec 2.1. */
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
const body = (texts: string[]) => `{"status":"success","data":[${texts.join(',')}]}`
const page = (...records: Array<Record<string, unknown>>): Answer => ({
  body: body(records.map((r) => JSON.stringify(r))),
})
/** Record 2, naming ServicePropertyID twice: first its own id, then record 1's. */
const TWICE = JSON.stringify(rec(2)).replace(
  '"ServicePropertyID":2',
  '"ServicePropertyID":2,"ServicePropertyID":1',
)
const REPEATED_REASON =
  'names ServicePropertyID twice (RFC 8259 section 4: names should be unique; readers differ on which value counts)'
/** Record 1 with a FinalValue no double holds. */
const HUGE = JSON.stringify(rec(1)).replace('"FinalValue":300001', '"FinalValue":1e400')

const env = () => ({SFL_BASE_URL: base, SFL_API_KEY: KEY})
const lines = (path: string) => readFileSync(path, 'utf8').trimEnd().split('\n')
const ids = (path: string) =>
  lines(path).map((l) => (JSON.parse(l) as {ServicePropertyID: number}).ServicePropertyID)
const echoWarnings = (stderr: string) => stderr.split('\n').filter((l) => l.includes('echoed your API key'))

async function parquetRows(path: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = []
  for await (const r of readParquetRecords(path)) out.push(r)
  return out
}

/** Nothing the run printed or left holds 8 characters of the key in a row, in any case. */
function expectNoKey(r: {stdout: string; stderr: string}, dir?: string): void {
  expect(leakedRun(r.stdout, KEY), 'stdout').toBeUndefined()
  expect(leakedRun(r.stderr, KEY), 'stderr').toBeUndefined()
  for (const f of dir ? filesUnder(dir) : [])
    expect(leakedRun(readFileSync(f, 'latin1'), KEY), f).toBeUndefined()
}

describe('a record that carries 10 characters of the key: masked in every output, said once', () => {
  const partial = () => page(rec(1, {APN: `x${PART}y`, City: PART.toUpperCase()}))
  const lookup = (format: string, extra: string[] = []) =>
    runCommand(Lookup, ['--fips', '06067', '--property-id', '1', '-o', format, ...extra], env())

  it('lookup json and ndjson: the run is * of its length, the rest as sent, one warning', async () => {
    answer = partial
    for (const format of ['json', 'ndjson']) {
      const r = await lookup(format)
      expect(r.exitCode).toBe(0)
      const got = JSON.parse(r.stdout) as Record<string, unknown>
      expect(got).toEqual(rec(1, {APN: `x${STARS}y`, City: STARS}))
      expect(echoWarnings(r.stderr)).toEqual([
        'Warning: the service echoed your API key (whole, or 8 or more of its characters) 2 times in its answers; it is masked with * in the output. Rotate the key and tell the provider',
      ])
      expectNoKey(r)
    }
  })

  it('lookup --explain (json): the record and the verdicts beside it hold no run', async () => {
    answer = partial
    const r = await lookup('json', ['--explain'])
    expect(r.exitCode).toBe(0)
    const got = JSON.parse(r.stdout) as {data: Record<string, unknown>; explain: {verdicts: unknown[]}}
    expect(got.data['APN']).toBe(`x${STARS}y`)
    expect(got.explain.verdicts.length).toBeGreaterThan(0)
    expectNoKey(r)
  })

  it('lookup csv: the cells masked', async () => {
    answer = partial
    const r = await lookup('csv')
    expect(r.exitCode).toBe(0)
    const [header, row] = r.stdout.trimEnd().split('\r\n')
    const cells = row!.split(',')
    expect(cells[header!.split(',').indexOf('APN')]).toBe(`x${STARS}y`)
    expect(cells[header!.split(',').indexOf('City')]).toBe(STARS)
    expect(echoWarnings(r.stderr)).toHaveLength(1)
    expectNoKey(r)
  })

  it('lookup table, in-process and through the real binary (its own fast entry): masked', async () => {
    answer = partial
    const r = await lookup('table')
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain(`x${STARS}y`)
    expectNoKey(r)
    for (const format of ['table', 'json']) {
      const spawned = await sfl(['lookup', '--fips', '06067', '--property-id', '1', '-o', format], {
        env: env(),
      })
      expect(spawned.code).toBe(0)
      expect(spawned.stdout).toContain(`x${STARS}y`)
      expect(echoWarnings(spawned.stderr)).toHaveLength(1)
      expectNoKey(spawned)
    }
  })

  it('county-export csv, ndjson, json, parquet, --stats-json, the rejects file and the checkpoint: masked, every record written', async () => {
    // county 06001 fails (500): the run keeps its checkpoint, which must hold no run either; a broken
    // record makes a rejects file
    answer = (url) =>
      url.searchParams.get('fips') === '06001'
        ? {status: 500, body: '{}'}
        : {
            body: body([
              JSON.stringify(rec(1, {APN: `x${PART}y`})),
              JSON.stringify(rec(2, {City: PART.toUpperCase(), [`Note${PART}`]: PART})),
              '{"Fips":"06067","ServicePropertyID":080}',
              JSON.stringify(rec(3)),
            ]),
          }
    for (const format of ['csv', 'ndjson', 'json', 'parquet'] as const) {
      const d = tmp()
      const out = join(d, `c.${format}`)
      const r = await runCommand(
        CountyExport,
        ['--fips', '06067', '--fips', '06001', '-o', format, '--out', out, '--retries', '0'],
        env(),
      )
      expect(r.exitCode, r.stderr).toBe(7)
      expect(echoWarnings(r.stderr), format).toHaveLength(1)
      expect(readdirSync(d).sort()).toEqual(
        [
          `c.${format}`,
          `c.${format}.rejects.ndjson`,
          `c.${format}.sfl-checkpoint`,
          `c.${format}.sfl-parts`,
        ].sort(),
      )
      expectNoKey(r, d)
      if (format === 'ndjson') {
        expect(ids(out)).toEqual([1, 2, 3])
        expect(JSON.parse(lines(out)[1]!)).toMatchObject({City: STARS, [`Note${STARS}`]: STARS})
      }
      if (format === 'csv') {
        const [header, ...rows] = readFileSync(out, 'utf8').trimEnd().split('\r\n')
        expect(header!.split(',')).toContain(`Note${STARS}`)
        expect(rows).toHaveLength(3)
        expect(rows[0]).toContain(`x${STARS}y`)
      }
      if (format === 'json')
        expect((JSON.parse(readFileSync(out, 'utf8')) as Array<{APN: string}>).map((x) => x.APN)).toEqual([
          `x${STARS}y`,
          '078-2',
          '078-3',
        ])
      if (format === 'parquet') {
        const rows = await parquetRows(out)
        expect(rows.map((x) => [x['ServicePropertyID'], x['APN'], x['City']])).toEqual([
          [1, `x${STARS}y`, 'SACRAMENTO'],
          [2, '078-2', STARS],
          [3, '078-3', 'SACRAMENTO'],
        ])
      }
    }
  })

  it('county-export --out-dir and its statistics: masked; the key can also not hide behind escapes', async () => {
    const escaped = [...PART].map((c) => `\\u00${c.charCodeAt(0).toString(16)}`).join('')
    answer = () => ({
      body: body([
        JSON.stringify(rec(1, {CRAEligible: PART})),
        `{"Fips":"06067","ServicePropertyID":2,"APN":"${escaped}"}`,
      ]),
    })
    const d = tmp()
    const r = await runCommand(
      CountyExport,
      ['--fips', '06067', '-o', 'ndjson', '--out-dir', join(d, 'x'), '--stats-json', join(d, 's.json')],
      env(),
    )
    expect(r.exitCode, r.stderr).toBe(0)
    expectNoKey(r, d)
    const stats = readFileSync(join(d, 's.json'), 'utf8')
    expect(stats).toContain(STARS) // the CRA level the record gave, masked
    const written = filesUnder(join(d, 'x')).find((f) => f.endsWith('.ndjson'))!
    expect(lines(written).map((l) => (JSON.parse(l) as {APN: string}).APN)).toEqual(['078-1', STARS])
  })

  it('lookup --input: the output file and the checkpoint masked, said once', async () => {
    answer = (url) =>
      url.searchParams.get('apn') === '078-2'
        ? {status: 500, body: '{}'}
        : page(rec(1, {APN: `078-1`, City: `x${PART}`}))
    for (const format of ['ndjson', 'csv']) {
      const d = tmp()
      const input = join(d, 'in.csv')
      writeFileSync(input, 'apn\n078-1\n078-2\n')
      const out = join(d, `out.${format}`)
      const r = await runCommand(
        Lookup,
        ['--input', input, '--fips', '06067', '-o', format, '--out', out, '--retries', '0'],
        env(),
      )
      expect(r.exitCode).toBe(7) // the 500 row is retried by a rerun: the checkpoint is kept
      expect(readFileSync(out, 'utf8')).toContain(`x${STARS}`)
      expect(readFileSync(`${out}.sfl-checkpoint`, 'utf8')).toContain(`x${STARS}`)
      expect(echoWarnings(r.stderr)).toHaveLength(1)
      expectNoKey(r, d)
    }
  })
})

describe('a record that names ServicePropertyID twice is rejected and never displaces the genuine record', () => {
  const repeated = () => ({body: body([TWICE, JSON.stringify(rec(1)), JSON.stringify(rec(3))])})

  for (const format of ['csv', 'ndjson', 'json', 'parquet'] as const)
    it(`county-export ${format}: exit 7, listed in the rejects file with its reason, records 1 and 3 written`, async () => {
      answer = repeated
      const d = tmp()
      const out = join(d, `c.${format}`)
      const r = await runCommand(CountyExport, ['--fips', '06067', '-o', format, '--out', out], env())
      expect(r.exitCode).toBe(7)
      expect(lines(`${out}.rejects.ndjson`).map((l) => JSON.parse(l) as unknown)).toEqual([
        {fips: '06067', page: 1, record: 1, reason: REPEATED_REASON},
      ])
      expect(r.stderr).toContain(`skipped 06067 page 1 record 1: ${REPEATED_REASON}`)
      expect(r.stderr).not.toMatch(/duplicate/)
      const written =
        format === 'ndjson'
          ? ids(out)
          : format === 'json'
            ? (JSON.parse(readFileSync(out, 'utf8')) as Array<{ServicePropertyID: number}>).map(
                (x) => x.ServicePropertyID,
              )
            : format === 'parquet'
              ? (await parquetRows(out)).map((x) => x['ServicePropertyID'])
              : readFileSync(out, 'utf8')
                  .trimEnd()
                  .split('\r\n')
                  .slice(1)
                  .map((l) => Number(l.split(',')[1]))
      expect(written).toEqual([1, 3])
      if (format === 'ndjson') expect(JSON.parse(lines(out)[0]!)).toEqual(rec(1))
    })

  it('a single lookup answered with it: exit 6, one line naming the repeated name', async () => {
    answer = () => ({body: body([TWICE])})
    const r = await sfl(['lookup', '--fips', '06067', '--property-id', '1', '-o', 'json'], {env: env()})
    expectOneErrorLine(r, 6, /a record that cannot be read: names ServicePropertyID twice/)
    expect(r.stdout).toBe('')
  })

  it('lookup --input: that row is malformed with the reason (exit 7), the other row keeps its record', async () => {
    answer = (url) => (url.searchParams.get('apn') === '078-2' ? {body: body([TWICE])} : page(rec(1)))
    const d = tmp()
    const input = join(d, 'in.csv')
    writeFileSync(input, 'apn\n078-1\n078-2\n')
    const out = join(d, 'out.ndjson')
    const r = await runCommand(Lookup, ['--input', input, '--fips', '06067', '--out', out], env())
    expect(r.exitCode).toBe(7)
    const rows = lines(out).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(rows.map((x) => [x['apn'], x['status']])).toEqual([
      ['078-1', 'ok'],
      ['078-2', 'malformed'],
    ])
    expect(rows[0]!['data']).toEqual(rec(1))
    expect(rows[1]!['error']).toBe(
      `the service answered 200 with a record that cannot be read: ${REPEATED_REASON}`,
    )
  })
})

describe('a number no double holds: a violation counted by field, never infinity, not in the statistics', () => {
  const huge = () => ({body: body([HUGE, JSON.stringify(rec(2)), JSON.stringify(rec(3))])})

  it('parquet: stored as null and counted; the statistics over the two other values; exit 0 (warned)', async () => {
    answer = huge
    const d = tmp()
    const out = join(d, 'c.parquet')
    const r = await runCommand(
      CountyExport,
      ['--fips', '06067', '-o', 'parquet', '--out', out, '--stats-json', join(d, 's.json')],
      env(),
    )
    expect(r.exitCode).toBe(0)
    expect((await parquetRows(out)).map((x) => x['FinalValue'])).toEqual([null, 300002, 300003])
    expect(r.stderr).toContain("1 FinalValue value not of the spec's type, written as null")
    expect(r.stderr).toMatch(
      /records that break the spec's rules \(written as sent; --strict skips them\):\n {4}FinalValue 1\n/,
    )
    const stats = JSON.parse(readFileSync(join(d, 's.json'), 'utf8')) as {
      run: {FinalValue: {count: number; p25: number; median: number; p75: number}}
    }
    expect(stats.run.FinalValue).toMatchObject({count: 2, p25: 300002.25, median: 300002.5, p75: 300002.75})
    // no figure of hundreds of digits in the printed table
    expect(r.stderr).not.toMatch(/\d{16}/)
  })

  it('csv and ndjson keep the number as sent (it is the data); --strict skips the record into the rejects file, exit 7', async () => {
    answer = huge
    const d = tmp()
    const out = join(d, 'c.ndjson')
    const r = await runCommand(CountyExport, ['--fips', '06067', '-o', 'ndjson', '--out', out], env())
    expect(r.exitCode).toBe(0)
    expect(lines(out)[0]).toBe(HUGE)
    const strict = join(d, 's.csv')
    const s = await runCommand(CountyExport, ['--fips', '06067', '--out', strict, '--strict'], env())
    expect(s.exitCode).toBe(7)
    expect(lines(`${strict}.rejects.ndjson`).map((l) => JSON.parse(l) as unknown)).toEqual([
      {
        fips: '06067',
        page: 1,
        record: 1,
        reason:
          "breaks the spec's rules: FinalValue: 1e400 is outside the range of a double (about ±1.8e308)",
      },
    ])
    expect(readFileSync(strict, 'utf8').trimEnd().split('\r\n')).toHaveLength(3)
  })
})

describe('problems are data: the batch counts each by the field the check names', () => {
  it('rows whose records break rules are counted by field in the summary, however the problem reads', async () => {
    answer = (url) => {
      const apn = url.searchParams.get('apn')
      if (apn === '078-1') return page(rec(1, {ConfidenceScore: 150}))
      if (apn === '078-2') return {body: body([HUGE.replace('"APN":"078-1"', '"APN":"078-2"')])}
      // a problem whose text holds a colon before the field would be cut wrong: a datetime shape
      return page(rec(3, {ValuationDate: '2026-01-02', ConfidenceScore: 101}))
    }
    const d = tmp()
    const input = join(d, 'in.csv')
    writeFileSync(input, 'apn\n078-1\n078-2\n078-3\n')
    const r = await runCommand(
      Lookup,
      // per-row lookups: this server answers a county's form too, which the planner might scan instead
      ['--input', input, '--fips', '06067', '--out', join(d, 'o.ndjson'), '--no-stats', '--plan', 'lookups'],
      env(),
    )
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toMatch(
      /records that break the spec's rules \(written as sent; --strict skips them\):\n {4}ConfidenceScore 2, FinalValue 1, ValuationDate 1\n/,
    )
  })
})
