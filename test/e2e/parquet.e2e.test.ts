import {readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {DuckDBInstance} from '@duckdb/node-api'
import {describe, expect, it} from 'vitest'

import {killWhen, sfl} from '../helpers/cli.js'
import {withSandbox} from '../helpers/sandbox.js'
import {paged, startScenario} from '../helpers/scenario-server.js'
import {readParquetRecords, type ParquetRecord} from '../../src/io/parquet-reader.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * Parquet output checked by an independent reader: DuckDB reads what `county-export --output parquet`
 * wrote, and its types, row count and every value are compared with the NDJSON export of the same county
 * (the records as sent).
 */
const tmp = () => tempDir('sfl-e2e-parquet-')

type Json = Record<string, unknown>

async function duck(path: string): Promise<{types: Array<[string, string]>; count: number; rows: Json[]}> {
  const db = await DuckDBInstance.create(':memory:')
  const c = await db.connect()
  try {
    const src = `read_parquet('${path.replace(/'/g, "''")}')`
    const types = (await c.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`))
      .getRowObjectsJson()
      .map((r) => [String(r['column_name']), String(r['column_type'])] as [string, string])
    const count = Number(
      (await c.runAndReadAll(`SELECT count(*) AS n FROM ${src}`)).getRowObjectsJson()[0]!['n'],
    )
    const rows = (await c.runAndReadAll(`SELECT * FROM ${src}`)).getRowObjectsJson() as Json[]
    return {types, count, rows}
  } finally {
    c.closeSync()
    db.closeSync()
  }
}

/** A flattened column's value in a record as sent (`Option.Field` reads inside the option object). */
function sent(record: Json, header: string): unknown {
  if (Object.hasOwn(record, header)) return record[header]
  const dot = header.indexOf('.')
  if (dot < 0) return undefined
  const obj = record[header.slice(0, dot)]
  return obj !== null && typeof obj === 'object' ? (obj as Json)[header.slice(dot + 1)] : undefined
}

/** What DuckDB shows for a value sent as `v` in a column of `type` (its JSON rendering of each type). */
function inDuck(v: unknown, type: string): unknown {
  if (v === null || v === undefined) return null
  if (type === 'VARCHAR') return typeof v === 'string' ? v : JSON.stringify(v)
  if (type === 'BIGINT') return String(v)
  if (type === 'TIMESTAMP') return String(v).replace('T', ' ')
  return v
}

/** What readParquetRecords gives for it. */
function inReader(v: unknown, type: string): unknown {
  if (v === null || v === undefined) return null
  if (type === 'VARCHAR') return typeof v === 'string' ? v : JSON.stringify(v)
  return v
}

async function exportBoth(env: Record<string, string>, fips: string, extra: string[] = []) {
  const d = tmp()
  const out = {ndjson: join(d, 'c.ndjson'), parquet: join(d, 'c.parquet'), csv: join(d, 'c.csv')}
  const stderr: Record<string, string> = {}
  for (const [format, file] of Object.entries(out)) {
    const r = await sfl(['county-export', '--fips', fips, '-o', format, '--out', file, ...extra], {env})
    expect(r.code, r.stderr).toBe(0)
    stderr[format] = r.stderr
  }
  const records = readFileSync(out.ndjson, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Json)
  const csvHeader = readFileSync(out.csv, 'utf8').split('\r\n')[0]!.split(',')
  return {d, out, records, csvHeader, stderr}
}

/** DuckDB and our reader hold, record for record and column for column, what the NDJSON holds. */
async function expectSameRecords(parquet: string, records: Json[], csvHeader: string[]) {
  const {types, count, rows} = await duck(parquet)
  expect(types.map(([name]) => name)).toEqual(csvHeader)
  expect(count).toBe(records.length)
  const typeOf = new Map(types)
  const want = records.map((r) => Object.fromEntries(types.map(([h, t]) => [h, inDuck(sent(r, h), t)])))
  expect(rows).toEqual(want)
  const ours: ParquetRecord[] = []
  for await (const r of readParquetRecords(parquet)) ours.push(r)
  expect(ours).toEqual(
    records.map((r) => Object.fromEntries(csvHeader.map((h) => [h, inReader(sent(r, h), typeOf.get(h)!)]))),
  )
  return typeOf
}

const SPEC_TYPES: Array<[string, string]> = [
  ['Fips', 'VARCHAR'],
  ['ServicePropertyID', 'BIGINT'],
  ['APN', 'VARCHAR'],
  ['CompleteStreetAddress', 'VARCHAR'],
  ['StandardizeStreetAddress', 'VARCHAR'],
  ['City', 'VARCHAR'],
  ['State', 'VARCHAR'],
  ['Zip', 'VARCHAR'],
  ['FinalValue', 'DOUBLE'],
  ['HighValue', 'DOUBLE'],
  ['LowValue', 'DOUBLE'],
  ['ConfidenceScore', 'INTEGER'],
  ['StandardDeviation', 'DOUBLE'],
  ['ValuationDate', 'TIMESTAMP'],
  ['CRAEligible', 'VARCHAR'],
  ['FHAEligible', 'BOOLEAN'],
  ['FHALoanLimit', 'DOUBLE'],
  ['FHACondoEligible', 'BOOLEAN'],
  ['USDAAreaEligible', 'BOOLEAN'],
  ['VAEligible', 'BOOLEAN'],
  ['Assumable', 'BOOLEAN'],
  ['TractIncomeLevel', 'VARCHAR'],
  ['TractMinorityPopulationPercent', 'DOUBLE'],
  ['Tract', 'VARCHAR'],
  ['StateFips', 'VARCHAR'],
  ['CountyFips', 'VARCHAR'],
  ['MSACode', 'VARCHAR'],
  ['FHAOwnerOccupancyViolation', 'VARCHAR'],
  ['FHAOwnerOccupancyPercentage', 'VARCHAR'],
  ['FHAConcentration', 'VARCHAR'],
  ['FHAConcentrationViolation', 'VARCHAR'],
  ['FHAExpirationDate', 'TIMESTAMP'],
  ['AssumableMortgage.LoanType', 'VARCHAR'],
  ['AssumableMortgage.FinancingType', 'VARCHAR'],
  ['AssumableMortgage.Lender', 'VARCHAR'],
  ['AssumableMortgage.OriginalLoanAmount', 'DOUBLE'],
  ['AssumableMortgage.RecordingDate', 'DATE'],
  ['AssumableMortgage.TermMonths', 'INTEGER'],
  ['AssumableMortgage.LoanDueDate', 'DATE'],
  ['AssumableMortgage.RemainingYears', 'INTEGER'],
  ['AssumableMortgage.EstimatedLoanBalance', 'DOUBLE'],
  ['AssumableMortgage.EstimatedInterestRate', 'DOUBLE'],
  ['AssumableMortgage.EstimatedMonthlyPayment', 'DOUBLE'],
  ['AssumableMortgage.EstimatedLTV', 'DOUBLE'],
  ['AssumableMortgage.EstimatedEquity', 'DOUBLE'],
  ['AssumableMortgage.IsRefinance', 'BOOLEAN'],
  ['AssumableMortgage.SecondMortgageBalance', 'DOUBLE'],
  ['AssumableMortgage.SecondMortgageInterestRate', 'DOUBLE'],
  ['FHACondoEligibility.ApprovalStatus', 'VARCHAR'],
  ['FHACondoEligibility.EligibilityStatus', 'VARCHAR'],
  ['FHACondoEligibility.CondoName', 'VARCHAR'],
  ['FHACondoEligibility.CondoID', 'VARCHAR'],
  ['FHACondoEligibility.TotalUnits', 'INTEGER'],
  ['FHACondoEligibility.OwnerOccupancyPercentage', 'DOUBLE'],
  ['FHACondoEligibility.OwnerOccupancyViolation', 'BOOLEAN'],
  ['FHACondoEligibility.FHAConcentration', 'DOUBLE'],
  ['FHACondoEligibility.FHAConcentrationViolation', 'BOOLEAN'],
  ['FHACondoEligibility.ExpirationDate', 'DATE'],
  ['FHACondoEligibility.LastUpdated', 'DATE'],
]

// option objects and a null option, unknown fields (a string, a number, an array), a field first seen in
// the last record, non-ASCII and \u escapes, 0.1 and 688600.0, dates and datetimes
const BODY = `{"status":"success","data":[
{"Fips":"06067","ServicePropertyID":1,"APN":"=HYPERLINK(\\"x\\")","FinalValue":688600.0,"ValuationDate":"2026-09-22T13:45:07","Note":"a, \\"b\\"\\nc","City":"\\u00d1and\\u00fa \\ud83c\\udfe0","FHAEligible":true,"AssumableMortgage":{"LoanType":"FHA","RecordingDate":"2012-11-13","TermMonths":360,"EstimatedInterestRate":0.1,"Extra":[1,{"x":null}]}},
{"Fips":"06067","ServicePropertyID":2,"APN":"-5","FinalValue":1e21,"Note":17,"City":"Sacramento","FHAEligible":false,"AssumableMortgage":null,"Tract":"304323"},
{"Fips":"06067","ServicePropertyID":30000000003,"APN":"+1","FinalValue":-12.50,"Note":null,"City":"Elk Grove","FHAEligible":null,"Late":"first seen here"}
]}`

describe('county-export --output parquet', () => {
  it('a sandbox county with both options: DuckDB reads the spec types, the count and every value of the NDJSON export', async () => {
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
      const {records, csvHeader, out, d, stderr} = await exportBoth(env, '06067')
      expect(stderr['parquet']).toMatch(/2,000 records written, 1\/1 counties ended/)
      expect(records).toHaveLength(2000)
      // the data covers what the comparison is about: both options as objects and as null
      expect(records.filter((r) => r['AssumableMortgage'] === null).length).toBeGreaterThan(0)
      expect(records.filter((r) => r['AssumableMortgage'] !== null).length).toBeGreaterThan(0)
      expect(records.filter((r) => r['FHACondoEligibility'] === null).length).toBeGreaterThan(0)
      expect(records.filter((r) => r['FHACondoEligibility'] !== null).length).toBeGreaterThan(0)
      const types = await expectSameRecords(out.parquet, records, csvHeader)
      expect([...types]).toEqual(SPEC_TYPES)
      // nothing is left behind beside the outputs
      expect(readdirSync(d).sort()).toEqual(['c.csv', 'c.ndjson', 'c.parquet'])
    })
  })

  it('unknown fields, non-ASCII text, 0.1 and 688600.0, a late field: the same values as the NDJSON', async () => {
    const server = await startScenario(() => ({status: 200, body: BODY}))
    try {
      const env = {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'golden-key-123'}
      const {records, csvHeader, out} = await exportBoth(env, '06067')
      const types = await expectSameRecords(out.parquet, records, csvHeader)
      expect(types.get('Note')).toBe('VARCHAR')
      expect(types.get('Late')).toBe('VARCHAR')
      expect(types.get('AssumableMortgage.Extra')).toBe('VARCHAR')
      const {rows} = await duck(out.parquet)
      // the facts the comparison holds, spelled out
      expect(rows.map((r) => r['FinalValue'])).toEqual([688600, 1e21, -12.5])
      expect(rows.map((r) => r['Note'])).toEqual(['a, "b"\nc', '17', null])
      expect(rows[0]!['City']).toBe('Ñandú 🏠')
      expect(rows[0]!['APN']).toBe('=HYPERLINK("x")') // typed data: no formula guard
      expect(rows[0]!['ValuationDate']).toBe('2026-09-22 13:45:07')
      expect(rows[0]!['AssumableMortgage.EstimatedInterestRate']).toBe(0.1)
      expect(rows[0]!['AssumableMortgage.RecordingDate']).toBe('2012-11-13')
      expect(rows[0]!['AssumableMortgage.Extra']).toBe('[1,{"x":null}]')
      expect(rows[2]!['ServicePropertyID']).toBe('30000000003')
      expect(rows.map((r) => r['Late'])).toEqual([null, null, 'first seen here'])
    } finally {
      await server.close()
    }
  })

  it('--fields keeps exactly those columns in that order', async () => {
    const server = await startScenario(() => ({status: 200, body: BODY}))
    try {
      const out = join(tmp(), 'f.parquet')
      const r = await sfl(
        [
          'county-export',
          '--fips',
          '06067',
          '-o',
          'parquet',
          '--out',
          out,
          '--fields',
          'AssumableMortgage.LoanType,fips,FinalValue',
        ],
        {env: {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'golden-key-123'}},
      )
      expect(r.code, r.stderr).toBe(0)
      const {types, rows} = await duck(out)
      expect(types).toEqual([
        ['AssumableMortgage.LoanType', 'VARCHAR'],
        ['Fips', 'VARCHAR'],
        ['FinalValue', 'DOUBLE'],
      ])
      expect(rows).toEqual([
        {'AssumableMortgage.LoanType': 'FHA', Fips: '06067', FinalValue: 688600},
        {'AssumableMortgage.LoanType': null, Fips: '06067', FinalValue: 1e21},
        {'AssumableMortgage.LoanType': null, Fips: '06067', FinalValue: -12.5},
      ])
    } finally {
      await server.close()
    }
  })

  it('a value that is not of its spec type is written as null and reported; the run still succeeds', async () => {
    const body = {
      status: 'success',
      data: [
        {Fips: '06067', ServicePropertyID: 1, FinalValue: 'abc', ConfidenceScore: 50},
        {Fips: '06067', ServicePropertyID: 2, FinalValue: 10.5, ConfidenceScore: 'high'},
        {Fips: '06067', ServicePropertyID: 3, FinalValue: '7', ConfidenceScore: 60},
      ],
    }
    const server = await startScenario(() => ({status: 200, body}))
    try {
      const out = join(tmp(), 'u.parquet')
      const r = await sfl(['county-export', '--fips', '06067', '-o', 'parquet', '--out', out], {
        env: {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'golden-key-123'},
      })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toMatch(/3 records written/)
      expect(r.stderr).toContain("  2 FinalValue values not of the spec's type, written as null\n")
      expect(r.stderr).toContain("  1 ConfidenceScore value not of the spec's type, written as null\n")
      const {rows} = await duck(out)
      expect(rows.map((x) => [x['FinalValue'], x['ConfidenceScore']])).toEqual([
        [null, 50],
        [10.5, null],
        [null, 60],
      ])
    } finally {
      await server.close()
    }
  })

  it('without --out: exit 2, one line saying to give --out FILE.parquet, no request sent', async () => {
    const server = await startScenario((r) => paged(r, 1, 1))
    try {
      const env = {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'golden-key-123'}
      for (const flag of [
        ['--output', 'parquet'],
        ['-o', 'parquet'],
      ]) {
        const r = await sfl(['county-export', '--fips', '06067', ...flag], {env})
        expect(r.code).toBe(2)
        expect(r.stdout).toBe('')
        expect(r.stderr).toBe(
          'Error: --output parquet needs a file: give --out FILE.parquet or --out-dir DIR (Parquet cannot go to stdout)\n',
        )
      }
      // the deprecated alias says so on its own lines first
      const alias = await sfl(['county-export', '--fips', '06067', '--format', 'parquet'], {env})
      expect(alias.code).toBe(2)
      expect(alias.stderr).toMatch(/Error: --output parquet needs a file: give --out FILE\.parquet/)
      expect(server.requests).toHaveLength(0)
    } finally {
      await server.close()
    }
  })

  it('when no county finishes, an existing .parquet is left untouched and no temp file remains', async () => {
    const server = await startScenario(() => ({status: 403}))
    try {
      const d = tmp()
      const out = join(d, 'e.parquet')
      writeFileSync(out, 'last month')
      const r = await sfl(['county-export', '--fips', '06113', '-o', 'parquet', '--out', out], {
        env: {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'golden-key-123'},
      })
      expect(r.code).toBe(4)
      expect(r.stderr).toMatch(/0 records written \(output left untouched: no county finished\)/)
      expect(readFileSync(out, 'utf8')).toBe('last month')
      expect(readdirSync(d)).toEqual(['e.parquet'])
    } finally {
      await server.close()
    }
  })

  it('killed half way: no .parquet written, an existing one untouched, and the rerun completes it', async () => {
    let hang = true
    // page 6 hangs until the run is killed; the rerun gets every page
    const server = await startScenario((r) => (hang && r.page >= 6 ? {hang: true} : paged(r, 40, 50)))
    try {
      const d = tmp()
      const out = join(d, 'i.parquet')
      writeFileSync(out, 'last month')
      const env = {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'golden-key-123'}
      const args = ['county-export', '--fips', '06113', '-o', 'parquet', '--out', out, '--concurrency', '1']
      await killWhen(args, env, () => server.requests.length >= 6, server.idle)
      expect(readFileSync(out, 'utf8')).toBe('last month')
      // the checkpoint (lock, journal, parts) stays for the rerun; no output temp file exists
      expect(readdirSync(d).filter((f) => !/^i\.parquet\.sfl-(lock|checkpoint|parts)$/.test(f))).toEqual([
        'i.parquet',
      ])

      hang = false
      const again = await sfl(args, {env})
      expect(again.code, again.stderr).toBe(0)
      expect(again.stderr).toMatch(/2,000 records written/)
      expect(again.stderr).toMatch(/continuing the run recorded in .*i\.parquet\.sfl-checkpoint/)
      const {count, rows} = await duck(out)
      expect(count).toBe(2000)
      expect(new Set(rows.map((r) => r['ServicePropertyID'])).size).toBe(2000)
      expect(readdirSync(d)).toEqual(['i.parquet'])
    } finally {
      await server.close()
    }
  })
})

describe('Parquet with the other analyst tools', () => {
  it('--out-dir writes a data.parquet per county that DuckDB reads as Hive partitions', async () => {
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
      const d = tmp()
      const dir = join(d, 'exports')
      const r = await sfl(
        ['county-export', '--fips', '06067', '--fips', '48201', '-o', 'parquet', '--out-dir', dir],
        {env},
      )
      expect(r.code, r.stderr).toBe(0)
      const manifest = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as {
        format: string
        counties: Array<{fips: string; path: string; records: number}>
      }
      expect(manifest.format).toBe('parquet')
      expect(manifest.counties.map((c) => c.path)).toEqual([
        'state=CA/fips=06067/data.parquet',
        'state=TX/fips=48201/data.parquet',
      ])
      const db = await DuckDBInstance.create(':memory:')
      const c = await db.connect()
      try {
        const glob = `${dir.replace(/'/g, "''")}/**/*.parquet`
        // the partition keys repeat the State and Fips columns, with the same values: DuckDB matches
        // names ignoring case and reads them as one column each
        const rows = (
          await c.runAndReadAll(
            `SELECT state, fips, count(*) AS n FROM read_parquet('${glob}', hive_partitioning=true) GROUP BY ALL ORDER BY 2`,
          )
        ).getRowsJson()
        expect(rows).toEqual(manifest.counties.map((m) => [m.path.slice(6, 8), m.fips, String(m.records)]))
      } finally {
        c.closeSync()
        db.closeSync()
      }
    })
  })

  it('sfl stats and sfl changes read a Parquet export as they read the NDJSON of the same county', async () => {
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
      const {out} = await exportBoth(env, '06067')
      const fromParquet = await sfl(['stats', out.parquet, '--json'], {env})
      const fromNdjson = await sfl(['stats', out.ndjson, '--json'], {env})
      expect(fromParquet.code, fromParquet.stderr).toBe(0)
      expect(JSON.parse(fromParquet.stdout)).toEqual(JSON.parse(fromNdjson.stdout))
      expect((JSON.parse(fromParquet.stdout) as {run: {records: number}}).run.records).toBe(2000)
      const changes = await sfl(['changes', out.parquet, out.ndjson, '--output', 'ndjson'], {env})
      expect(changes.code, changes.stderr).toBe(0)
      expect(changes.stdout).toBe('')
      expect(changes.stderr).toMatch(/0 added, 0 updated, 0 deleted, 2,000 unchanged/)
    })
  })
})
