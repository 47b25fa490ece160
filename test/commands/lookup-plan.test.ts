import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {parse} from 'csv-parse/sync'
import {afterEach, describe, expect, it} from 'vitest'

import CountyExport from '../../src/commands/county-export.js'
import Lookup from '../../src/commands/lookup.js'
import {countyRecords, startCountyServer, type CountyServer, type Rec} from '../helpers/county-server.js'
import {runCommand} from '../helpers/run-command.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * `lookup --input` with a plan (issue 33), against a loopback service of our own (test/helpers/
 * county-server.ts): every test runs the batch twice, with per-row lookups and with the plan under test,
 * asserts what each sent, and that every output row is the same cell by cell but for the source column.
 */
let server: CountyServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

type Row = Record<string, string>

function readCsv(path: string): Row[] {
  return parse(readFileSync(path, 'utf8'), {columns: true, bom: true}) as Row[]
}

/** Run `lookup --input` with `args`; returns the output rows and what the server saw for this run. */
async function batch(
  csv: string,
  args: string[],
  ext: 'csv' | 'ndjson' = 'csv',
): Promise<{rows: Row[]; county: number; lookups: number; code: number; stderr: string}> {
  const d = tempDir('sfl-plan-')
  writeFileSync(join(d, 'in.csv'), csv)
  const before = {county: server!.count('county'), lookups: server!.count('lookup')}
  const out = join(d, `out.${ext}`)
  const r = await runCommand(Lookup, ['--input', join(d, 'in.csv'), '--out', out, '--quiet', ...args], {
    SFL_BASE_URL: server!.baseUrl,
    SFL_API_KEY: 'test-key-123456',
  })
  return {
    rows: r.exitCode !== 0 && r.exitCode !== 7 ? [] : ext === 'csv' ? readCsv(out) : readNdjson(out),
    county: server!.count('county') - before.county,
    lookups: server!.count('lookup') - before.lookups,
    code: r.exitCode,
    stderr: r.stderr,
  }
}

function readNdjson(path: string): Row[] {
  return readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Row)
}

/** The two outputs agree cell by cell, the source column aside. */
function sameAnswers(a: Row[], b: Row[]): void {
  const strip = (rows: Row[]) => rows.map(({source: _source, ...rest}) => rest)
  expect(strip(a)).toEqual(strip(b))
  expect(a.length).toBeGreaterThan(0)
}

const header = 'id,fips,address,apn,property_id'

/** Input rows naming records of `recs` by address (several typings), APN and id, plus misses. */
function inputOf(fips: string, recs: Rec[], picks: number[]): string {
  const lines = [header]
  for (const [j, i] of picks.entries()) {
    const r = recs[i]!
    const line = String(r['StandardizeStreetAddress'])
    const kind = j % 5
    if (kind === 0) lines.push(`${j},${fips},"${line}, ${String(r['City'])}, CA ${String(r['Zip'])}",,`)
    else if (kind === 1)
      lines.push(`${j},${fips},"${line.toLowerCase()}, ${String(r['City']).toLowerCase()}",,`)
    else if (kind === 2) lines.push(`${j},${fips},,${String(r['APN'])},`)
    else if (kind === 3) lines.push(`${j},${fips},,,${String(r['ServicePropertyID'])}`)
    else lines.push(`${j},${fips},"${line}, CA ${String(r['Zip'])}",,`)
  }
  return `${lines.join('\n')}\n`
}

describe('lookup --input --plan auto against per-row lookups', () => {
  it('a county the service sends in one body: a large batch costs one request plus the rows only the service can answer', async () => {
    const recs = countyRecords('06067', 300)
    server = await startCountyServer({counties: {'06067': recs}})
    const picks = Array.from({length: 200}, (_, j) => (j * 7) % 300)
    const csv = `${inputOf('06067', recs, picks).trimEnd()}\n900,06067,"1 NOWHERE RD, SACRAMENTO",,\n901,06067,"${String(recs[3]!['StandardizeStreetAddress'])}",,\n`
    const lookups = await batch(csv, ['--plan', 'lookups'])
    const auto = await batch(csv, [])
    // per row: each distinct row once (a repeat of an earlier row is the same lookup)
    expect(lookups).toMatchObject({county: 0, code: 0})
    expect(lookups.lookups).toBe(lookups.rows.length)
    // auto: the county once, then only the row that matches nothing and the street line without a town
    expect(auto).toMatchObject({county: 1, lookups: 2, code: 0})
    sameAnswers(auto.rows, lookups.rows)
    expect(auto.rows.filter((r) => r['source'] === 'scan')).toHaveLength(200)
    expect(auto.rows.slice(-2).map((r) => [r['status'], r['source']])).toEqual([
      ['not_found', 'lookup'],
      ['ok', 'lookup'],
    ])
  })

  it('a paged county with a small batch: no scan, one probe more than per-row lookups', async () => {
    const recs = countyRecords('06067', 2000)
    server = await startCountyServer({counties: {'06067': recs}, pageSize: 100})
    const csv = inputOf('06067', recs, [5, 900, 1500, 1999, 10, 77, 1234, 42])
    const lookups = await batch(csv, ['--plan', 'lookups'])
    const auto = await batch(csv, [])
    expect(lookups).toMatchObject({county: 0, lookups: 8})
    // the probe said 20 pages (X-Total-Count): 19 more pages cost more than the 8 lookups
    expect(auto).toMatchObject({county: 1, lookups: 8})
    sameAnswers(auto.rows, lookups.rows)
    expect(new Set(auto.rows.map((r) => r['source']))).toEqual(new Set(['lookup']))
  })

  it('a paged county with a large batch costs about its pages', async () => {
    const recs = countyRecords('06067', 2000)
    server = await startCountyServer({counties: {'06067': recs}, pageSize: 100})
    const picks = Array.from({length: 300}, (_, j) => (j * 13) % 2000)
    const csv = inputOf('06067', recs, picks)
    const lookups = await batch(csv, ['--plan', 'lookups'])
    const auto = await batch(csv, [])
    expect(lookups).toMatchObject({county: 0, lookups: 300})
    expect(auto).toMatchObject({county: 20, lookups: 0})
    sameAnswers(auto.rows, lookups.rows)
  })

  it('a paged county that does not say its size: the scan goes on while its pages stay below the lookups they replace', async () => {
    const recs = countyRecords('06067', 2000)
    server = await startCountyServer({counties: {'06067': recs}, pageSize: 100, total: false})
    // a large batch: the 20 pages stay below the 600 lookups all along
    const big = inputOf(
      '06067',
      recs,
      Array.from({length: 600}, (_, j) => (j * 13) % 2000),
    )
    const bigAuto = await batch(big, [])
    expect(bigAuto).toMatchObject({county: 20, lookups: 0})
    // a small batch: 8 pages (the price of its 8 lookups), then the lookups: twice per-row lookups at most
    const small = inputOf('06067', recs, [1990, 1991, 1992, 1993, 1994, 1995, 1996, 1997])
    const smallAuto = await batch(small, [])
    const smallLookups = await batch(small, ['--plan', 'lookups'])
    expect(smallAuto).toMatchObject({county: 8, lookups: 8})
    expect(smallAuto.county + smallAuto.lookups).toBeLessThanOrEqual(2 * smallLookups.lookups + 1)
    sameAnswers(smallAuto.rows, smallLookups.rows)
  })

  it('a county the service does not send whole: the rows missing from the scan are looked up', async () => {
    const recs = countyRecords('06067', 300)
    // the county-wide form holds only the FHA-eligible records (spec 1: "all eligible records")
    server = await startCountyServer({counties: {'06067': recs}, scanHolds: (r) => r['FHAEligible'] === true})
    const picks = Array.from({length: 90}, (_, j) => j * 2 + 1)
    const csv = inputOf('06067', recs, picks)
    const lookups = await batch(csv, ['--plan', 'lookups'])
    const auto = await batch(csv, [])
    const missing = picks.filter((i) => recs[i]!['FHAEligible'] !== true).length
    expect(missing).toBeGreaterThan(10)
    expect(auto).toMatchObject({county: 1, lookups: missing})
    sameAnswers(auto.rows, lookups.rows)
    expect(auto.rows.filter((r) => r['source'] === 'lookup')).toHaveLength(missing)
  })

  it('several records for one APN, units and typed variants answer as the lookups do', async () => {
    const recs = countyRecords('06067', 50)
    // two parcels recorded under one APN; one written with spaces by the county
    recs[10]!['APN'] = '078-0123-045'
    recs[11]!['APN'] = '078-0123-045'
    recs[12]!['APN'] = '078 0999 001'
    server = await startCountyServer({counties: {'06067': recs}})
    const unit = String(recs[4]!['StandardizeStreetAddress']) // "1004 N MAIN ST UNIT 104", ELK GROVE
    expect(unit).toBe('1004 N MAIN ST UNIT 104')
    expect(recs[6]!['StandardizeStreetAddress']).toBe('1006 HIGH ST')
    expect([recs[9]!['StandardizeStreetAddress'], recs[9]!['City']]).toEqual([
      '1009 ELM CT UNIT 109',
      'SACRAMENTO',
    ])
    const csv = [
      header,
      '1,06067,,078-0123-045,',
      '2,06067,,0780123045,', // typed without dashes: the two parcels still
      '3,06067,,078-0999-001,', // typed with dashes, written with spaces
      '4,06067,"1004 North Main Street #104, Elk Grove",,', // "#104" is UNIT 104
      '5,06067,"1009 Elm Ct Apt 109, Sacramento",,', // another designator: left to the service
      '6,06067,"1004 N Main St, Elk Grove",,', // no unit asked: not the unit's record
      '7,06067,"1006 High Street, sacramento, CA 95806",,',
    ].join('\n')
    const lookups = await batch(`${csv}\n`, ['--plan', 'lookups'])
    const auto = await batch(`${csv}\n`, [])
    sameAnswers(auto.rows, lookups.rows)
    expect(auto.rows.map((r) => [r['status'], r['source'], r['records'], r['note']])).toEqual([
      ['ok', 'scan', '2', 'several_records'],
      ['ok', 'scan', '2', 'several_records'],
      ['ok', 'scan', '1', ''],
      ['ok', 'scan', '1', ''],
      ['ok', 'lookup', '1', ''],
      ['not_found', 'lookup', '0', ''],
      ['ok', 'scan', '1', ''],
    ])
    expect(auto.rows[0]!['other_ids']).toBe(String(recs[11]!['ServicePropertyID']))
    expect(auto).toMatchObject({county: 1, lookups: 2})
  })
})

describe('lookup --input --from an export on disk', () => {
  /** `county-export --out-dir` of the server's counties, in `format`. */
  async function exportTo(dir: string, fips: string[], format: 'csv' | 'ndjson' | 'parquet'): Promise<void> {
    const r = await runCommand(
      CountyExport,
      ['--fips', fips.join(','), '--out-dir', dir, '-o', format, '--quiet', '--no-stats'],
      {SFL_BASE_URL: server!.baseUrl, SFL_API_KEY: 'test-key-123456'},
    )
    expect(r.exitCode).toBe(0)
  }

  it.each(['ndjson', 'csv', 'parquet'] as const)(
    'a fresh %s export answers every row it can, with its date, and only the others are sent',
    async (format) => {
      const recs = countyRecords('06067', 300)
      server = await startCountyServer({
        counties: {'06067': recs},
        scanHolds: (r) => r['FHAEligible'] === true,
      })
      const dir = join(tempDir('sfl-from-'), 'exports')
      await exportTo(dir, ['06067'], format)
      const manifest = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as {
        counties: Array<{finishedAt: string}>
      }
      const csv = inputOf(
        '06067',
        recs,
        Array.from({length: 60}, (_, j) => j * 5),
      )
      const lookups = await batch(csv, ['--plan', 'lookups'])
      const from = await batch(csv, ['--from', dir, '--max-age', '1d'])
      // as JSON too: the records themselves, values typed as the service sent them
      const lookupsJson = await batch(csv, ['--plan', 'lookups'], 'ndjson')
      const fromJson = await batch(csv, ['--from', dir], 'ndjson')
      sameAnswers(fromJson.rows, lookupsJson.rows)
      expect(fromJson.rows.filter((r) => String(r['source']).startsWith('export')).length).toBeGreaterThan(20)
      const notHeld = Array.from({length: 60}, (_, j) => j * 5).filter(
        (i) => recs[i]!['FHAEligible'] !== true,
      )
      // nothing scanned (the export was the scan); the rows the export does not hold were looked up
      expect(from).toMatchObject({county: 0, lookups: notHeld.length, code: 0})
      sameAnswers(from.rows, lookups.rows)
      const sources = new Set(from.rows.map((r) => r['source']))
      expect(sources).toEqual(new Set([`export ${manifest.counties[0]!.finishedAt}`, 'lookup']))
    },
  )

  it('a county older than --max-age is not used; the pages it took tell the plan its length', async () => {
    const recs = countyRecords('06067', 300)
    server = await startCountyServer({counties: {'06067': recs}})
    const dir = join(tempDir('sfl-from-'), 'exports')
    await exportTo(dir, ['06067'], 'ndjson')
    const path = join(dir, '_sfl', 'manifest.json')
    const m = JSON.parse(readFileSync(path, 'utf8')) as {counties: Array<{finishedAt: string; pages: number}>}
    m.counties[0]!.finishedAt = new Date(Date.now() - 10 * 86_400_000).toISOString()
    writeFileSync(path, JSON.stringify(m))
    const csv = inputOf('06067', recs, [1, 2, 3, 4, 5, 6])
    const lookups = await batch(csv, ['--plan', 'lookups'])
    const from = await batch(csv, ['--from', dir, '--max-age', '7d'])
    // one page (the manifest) against six lookups: the county is fetched again, once
    expect(from).toMatchObject({county: 1, lookups: 0})
    sameAnswers(from.rows, lookups.rows)
    expect(new Set(from.rows.map((r) => r['source']))).toEqual(new Set(['scan']))
  })
})

describe('a planned batch that stops and is run again', () => {
  it('continues its scan where the checkpoint left it: no page fetched twice, no row written twice', async () => {
    const recs = countyRecords('06067', 2000)
    server = await startCountyServer({counties: {'06067': recs}, pageSize: 100})
    const picks = Array.from({length: 300}, (_, j) => (j * 13) % 2000)
    const d = tempDir('sfl-plan-resume-')
    writeFileSync(join(d, 'in.csv'), inputOf('06067', recs, picks))
    const out = join(d, 'out.csv')
    const env = {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'test-key-123456'}
    const args = ['--input', join(d, 'in.csv'), '--out', out, '--quiet']
    const first = await runCommand(Lookup, [...args, '--max-requests', '8'], env)
    // stopped by --max-requests (exit 7) mid-scan: no row answered yet, so no output; the checkpoint holds the pages
    expect(first.exitCode).toBe(7)
    expect(existsSync(out)).toBe(false)
    expect(existsSync(`${out}.sfl-checkpoint`)).toBe(true)
    expect(server.log.map((l) => l.page)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    const second = await runCommand(Lookup, args, env)
    expect(second.exitCode).toBe(0)
    // the rest of the county, from page 9; nothing looked up
    expect(server.log.slice(8).map((l) => l.page)).toEqual(Array.from({length: 12}, (_, i) => 9 + i))
    const rows = readCsv(out)
    expect(rows.map((r) => r['sfl_row'])).toEqual(picks.map((_, i) => String(i + 1)))
    expect(new Set(rows.map((r) => r['source']))).toEqual(new Set(['scan']))
    expect(existsSync(`${out}.sfl-checkpoint`)).toBe(false)
    const lookups = await batch(inputOf('06067', recs, picks), ['--plan', 'lookups'])
    sameAnswers(rows, lookups.rows)
  })
})

describe('lookup --input --dry-run', () => {
  async function dryRun(
    csv: string,
    args: string[],
  ): Promise<{stdout: string; code: number; stderr: string}> {
    const d = tempDir('sfl-plan-dry-')
    writeFileSync(join(d, 'in.csv'), csv)
    const r = await runCommand(Lookup, ['--input', join(d, 'in.csv'), '--dry-run', ...args], {
      SFL_BASE_URL: server!.baseUrl,
      SFL_API_KEY: 'test-key-123456',
    })
    return {stdout: r.stdout, code: r.exitCode, stderr: r.stderr}
  }

  it('sends one probe, to the county a scan matters most for, and prints each county with its plan and range', async () => {
    const big = countyRecords('06067', 2000)
    const small = countyRecords('48201', 50)
    server = await startCountyServer({counties: {'06067': big, '48201': small}, pageSize: 100})
    const rows = inputOf(
      '06067',
      big,
      Array.from({length: 300}, (_, j) => (j * 13) % 2000),
    )
    const more = inputOf('48201', small, [1, 2, 3]).split('\n').slice(1).join('\n')
    const csv = `${rows}${more}`
    const r = await dryRun(csv, [])
    expect(r.code).toBe(0)
    expect(server.log.map((l) => [l.kind, l.fips, l.page])).toEqual([['county', '06067', 1]])
    expect(r.stdout).toBe(
      [
        '2 counties, 303 rows (303 lookups to answer), --plan auto: 21 to 326 requests',
        "Time       at the key's limit (now 99,999 of 100,000 left): within the current window",
        "County     Sacramento County, CA (06067): 300 rows, 300 lookups: scan, 20 to 320 requests (20 pages: X-Total-Count 2,000 over the probe's 100 records a page; the fewest if every other row matches a record exactly, the most if none does)",
        'County     Harris County, TX (48201): 3 rows, 3 lookups: scan if its first page says so, 1 to 6 requests (length unknown: its first page decides; a scan goes on only while its pages stay below the lookups they replace (at most twice the cheaper plan); the fewest if every other row matches a record exactly, the most if none does)',
        'Budget     99,999 of 100,000 left this window (from one probe request to 06067)',
        'Sent       1 request (the probe of 06067; counted in the budget above); nothing was looked up',
        '',
      ].join('\n'),
    )
    const json = JSON.parse((await dryRun(csv, ['--json'])).stdout) as Record<string, unknown>
    expect(json).toMatchObject({
      plan: 'auto',
      rows: 303,
      requestsMin: 21,
      requestsMax: 326,
      probeRequests: 1,
      probeFips: '06067',
      budget: {source: 'probe', limit: 100000, remaining: 99999},
    })
    expect(
      (json['counties'] as Array<Record<string, unknown>>).map((c) => [
        c['fips'],
        c['plan'],
        c['pages'],
        c['pagesFrom'],
      ]),
    ).toEqual([
      ['06067', 'scan', 20, 'probe'],
      ['48201', 'probe', null, null],
    ])
  })

  it('--plan lookups sends nothing; a small batch in a county the probe finds large keeps to lookups', async () => {
    const recs = countyRecords('06067', 2000)
    server = await startCountyServer({counties: {'06067': recs}, pageSize: 100})
    const csv = inputOf('06067', recs, [1, 2, 3, 4])
    const lookups = await dryRun(csv, ['--plan', 'lookups', '--json'])
    expect(server.log).toHaveLength(0)
    expect(JSON.parse(lookups.stdout)).toMatchObject({requestsMin: 4, requestsMax: 4, probeRequests: 0})
    const auto = JSON.parse((await dryRun(csv, ['--json'])).stdout) as {
      counties: Array<Record<string, unknown>>
    }
    expect(server.log).toHaveLength(1)
    expect(auto.counties[0]).toMatchObject({plan: 'lookups', pages: 20, requestsMin: 4, requestsMax: 4})
  })
})
