import {readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {asyncBufferFromFile, parquetMetadataAsync} from 'hyparquet'
import {describe, expect, it} from 'vitest'

import {FileTarget} from '../../src/io/output.js'
import {readParquetRecords, type ParquetRecord} from '../../src/io/parquet-reader.js'
import {writeParquet} from '../../src/io/parquet-writer.js'
import {tempDir} from '../helpers/tmp.js'

const tmp = () => tempDir('sfl-parquet-')

/** NDJSON part files as the export spools them: one record a line. */
function parts(dir: string, ...pages: Array<Array<Record<string, unknown>>>): string[] {
  return pages.map((records, i) => {
    const f = join(dir, `p${i}.ndjson`)
    writeFileSync(f, records.map((r) => `${JSON.stringify(r)}\n`).join(''))
    return f
  })
}

async function write(
  files: string[],
  out: string,
  opts: {columns?: string[]; rowGroupRows?: number} = {},
): Promise<Awaited<ReturnType<typeof writeParquet>>> {
  const target = await FileTarget.create(out, () => undefined)
  try {
    const r = await writeParquet(target, files, opts)
    await target.commit()
    return r
  } catch (error) {
    await target.abort()
    throw error
  }
}

async function readAll(path: string): Promise<ParquetRecord[]> {
  const rows: ParquetRecord[] = []
  for await (const r of readParquetRecords(path)) rows.push(r)
  return rows
}

const A = {
  Fips: '06067',
  ServicePropertyID: 30000000001,
  City: 'Ñandú 🏠',
  FinalValue: 688600.0,
  ConfidenceScore: 48,
  ValuationDate: '2026-09-22T13:45:07',
  FHAEligible: true,
  Note: 'a, "b"\nc',
  AssumableMortgage: {
    LoanType: 'FHA',
    RecordingDate: '2012-11-13',
    TermMonths: 360,
    EstimatedInterestRate: 0.1,
  },
}
const B = {
  Fips: '06067',
  ServicePropertyID: 30000000002,
  FinalValue: 1e21,
  FHAEligible: false,
  AssumableMortgage: null,
}
const C = {Fips: '06067', ServicePropertyID: 30000000003, FinalValue: -12.5, Note: 7, Late: [1, {x: null}]}

describe('writeParquet', () => {
  it('writes the CSV columns with spec types, a row group at a time, and readParquetRecords reads them back', async () => {
    const d = tmp()
    const out = join(d, 'o.parquet')
    const r = await write(parts(d, [A, B], [C]), out, {rowGroupRows: 2})
    expect(r.records).toBe(3)
    expect(r.unfit).toEqual([])
    const headers = r.columns.map((c) => c.header)
    // spec 2.1's fields (all 32), unknown fields in first-seen order, then the option's 2.2 columns
    expect(headers.slice(0, 3)).toEqual(['Fips', 'ServicePropertyID', 'APN'])
    expect(headers.slice(32, 35)).toEqual(['Note', 'Late', 'AssumableMortgage.LoanType'])
    expect(headers).toHaveLength(32 + 2 + 16)

    const meta = await parquetMetadataAsync(await asyncBufferFromFile(out))
    expect(meta.row_groups.map((g) => Number(g.num_rows))).toEqual([2, 1])
    expect(meta.schema.slice(1).map((s) => s.name)).toEqual(headers)
    expect(meta.schema.slice(1).every((s) => s.repetition_type === 'OPTIONAL')).toBe(true)

    const rows = await readAll(out)
    expect(rows).toHaveLength(3)
    expect(Object.keys(rows[0]!)).toEqual(headers)
    const pick = (row: ParquetRecord, ...keys: string[]) => Object.fromEntries(keys.map((k) => [k, row[k]]))
    const keys = [
      'Fips',
      'ServicePropertyID',
      'APN',
      'City',
      'FinalValue',
      'ConfidenceScore',
      'ValuationDate',
      'FHAEligible',
      'Note',
      'Late',
      'AssumableMortgage.LoanType',
      'AssumableMortgage.RecordingDate',
      'AssumableMortgage.TermMonths',
      'AssumableMortgage.EstimatedInterestRate',
    ]
    expect(rows.map((row) => pick(row, ...keys))).toEqual([
      {
        Fips: '06067',
        ServicePropertyID: 30000000001,
        APN: null,
        City: 'Ñandú 🏠',
        FinalValue: 688600,
        ConfidenceScore: 48,
        ValuationDate: '2026-09-22T13:45:07',
        FHAEligible: true,
        Note: 'a, "b"\nc',
        Late: null,
        'AssumableMortgage.LoanType': 'FHA',
        'AssumableMortgage.RecordingDate': '2012-11-13',
        'AssumableMortgage.TermMonths': 360,
        'AssumableMortgage.EstimatedInterestRate': 0.1,
      },
      {
        Fips: '06067',
        ServicePropertyID: 30000000002,
        APN: null,
        City: null,
        FinalValue: 1e21,
        ConfidenceScore: null,
        ValuationDate: null,
        FHAEligible: false,
        Note: null,
        Late: null,
        'AssumableMortgage.LoanType': null,
        'AssumableMortgage.RecordingDate': null,
        'AssumableMortgage.TermMonths': null,
        'AssumableMortgage.EstimatedInterestRate': null,
      },
      {
        Fips: '06067',
        ServicePropertyID: 30000000003,
        APN: null,
        City: null,
        FinalValue: -12.5,
        ConfidenceScore: null,
        ValuationDate: null,
        FHAEligible: null,
        Note: '7', // an unknown field's non-string value as its JSON text
        Late: '[1,{"x":null}]',
        'AssumableMortgage.LoanType': null,
        'AssumableMortgage.RecordingDate': null,
        'AssumableMortgage.TermMonths': null,
        'AssumableMortgage.EstimatedInterestRate': null,
      },
    ])
  })

  it("the run's columns (its schema, or --fields): exactly those in that order, without a pass to learn the shape", async () => {
    const d = tmp()
    const out = join(d, 'o.parquet')
    const fields = ['AssumableMortgage.LoanType', 'Fips', 'FinalValue']
    const r = await write(parts(d, [A, B, C]), out, {columns: fields})
    expect(r.columns.map((c) => c.header)).toEqual(fields)
    expect(await readAll(out)).toEqual([
      {'AssumableMortgage.LoanType': 'FHA', Fips: '06067', FinalValue: 688600},
      {'AssumableMortgage.LoanType': null, Fips: '06067', FinalValue: 1e21},
      {'AssumableMortgage.LoanType': null, Fips: '06067', FinalValue: -12.5},
    ])
  })

  it('a value of another type than the spec says is written as null and counted by column', async () => {
    const d = tmp()
    const out = join(d, 'o.parquet')
    const bad = [
      {Fips: '06067', FinalValue: 'abc', ConfidenceScore: 12.5},
      {Fips: '06067', FinalValue: '1', AssumableMortgage: {RecordingDate: '2024-02-30'}},
      {Fips: '06067', FinalValue: 2},
    ]
    const r = await write(parts(d, bad), out, {
      columns: ['Fips', 'FinalValue', 'ConfidenceScore', 'AssumableMortgage.RecordingDate'],
    })
    expect(r.unfit).toEqual([
      {column: 'FinalValue', count: 2},
      {column: 'ConfidenceScore', count: 1},
      {column: 'AssumableMortgage.RecordingDate', count: 1},
    ])
    expect((await readAll(out)).map((x) => x['FinalValue'])).toEqual([null, null, 2])
  })

  it("no records: a valid file with spec 2.1's columns and no rows", async () => {
    const d = tmp()
    const out = join(d, 'o.parquet')
    const r = await write(parts(d, []), out)
    expect(r.records).toBe(0)
    expect(r.columns).toHaveLength(32)
    expect(await readAll(out)).toEqual([])
    const meta = await parquetMetadataAsync(await asyncBufferFromFile(out))
    expect(Number(meta.num_rows)).toBe(0)
  })

  it('a part file cut short after a row group went out: an error, the old file untouched, no temp file left', async () => {
    const d = tmp()
    const out = join(d, 'o.parquet')
    writeFileSync(out, 'last month')
    const files = parts(d, [A, B, C])
    writeFileSync(files[0]!, `${readFileSync(files[0]!, 'utf8')}{"Fips":"06`)
    // given columns skip the shape pass, so three row groups are out before the cut line is read
    await expect(write(files, out, {rowGroupRows: 1, columns: ['Fips']})).rejects.toThrow(
      /p0\.ndjson ends mid-record/,
    )
    expect(readFileSync(out, 'utf8')).toBe('last month')
    expect(readdirSync(d).sort()).toEqual(['o.parquet', 'p0.ndjson'])
  })
})
