import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import CountyExport from '../../src/commands/county-export.js'
import Lookup from '../../src/commands/lookup.js'
import {XlsxWorkbook} from '../../src/io/xlsx-reader.js'
import {XLSX_MAX_CELL} from '../../src/io/xlsx-writer.js'
import {runCommand} from '../helpers/run-command.js'
import {record, startScenario, type Scenario} from '../helpers/scenario-server.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * An xlsx cell holds at most 32,767 characters (Excel's limit): a longer text is cut to it, and the run
 * says how many cells it cut and in which columns in its summary on stderr and in its typed result
 * (docs/exports.md "xlsx files"). The server sends records whose City and CompleteStreetAddress exceed the limit (the spec sets
 * no length for them), once in a county export and once in a batch lookup.
 */
const LONG = 'ELK GROVE '.repeat(4_000) // 40,000 characters
const LONGER = `${'A'.repeat(XLSX_MAX_CELL)}B` // one character over

let server: Scenario
beforeAll(async () => {
  server = await startScenario((r) => {
    const recs = [0, 1, 2, 3].map((i) => record(r.fips, i))
    recs[1]!['City'] = LONG
    recs[3]!['City'] = LONGER
    recs[3]!['CompleteStreetAddress'] = LONG
    recs[2]!['City'] = 'A'.repeat(XLSX_MAX_CELL) // exactly the limit: whole, not counted
    recs[2]!['FinalValue'] = 'about 300k' // not the spec's number: written as sent, a text cell, counted
    const asked = r.query.get('property_id')
    return {page: {records: asked ? recs.filter((x) => String(x['ServicePropertyID']) === asked) : recs}}
  })
})
afterAll(() => server.close())
const env = () => ({SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'sk_test_cut_0123456789'})

/** The first sheet's rows by header, as sfl's own reader sees them. */
async function sheet(path: string): Promise<Array<Map<string, string>>> {
  const wb = await XlsxWorkbook.open(path)
  const rows: string[][] = []
  for await (const r of wb.rows(wb.pick())) rows.push(r.cells)
  const [header, ...data] = rows
  return data.map((cells) => new Map(header!.map((h, i) => [h, cells[i] ?? ''])))
}

describe('xlsx texts longer than a cell holds, and values not of their column type', () => {
  it('county-export --out t.xlsx cuts them to 32,767 characters and counts them by column', async () => {
    const out = join(tempDir(), 't.xlsx')
    const r = await runCommand(CountyExport, ['--fips', '06067', '--out', out, '--no-stats'], env())
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toContain(
      '  2 City texts longer than a workbook cell holds (32,767 characters), cut to it; a CSV or NDJSON output keeps them whole',
    )
    expect(r.stderr).toContain(
      '  1 CompleteStreetAddress text longer than a workbook cell holds (32,767 characters), cut to it; a CSV or NDJSON output keeps it whole',
    )
    // the run's typed result carries the same counts (ExportSummary.cut, unfit), as the library's does
    const summary = r.result as {cut?: unknown; unfit?: unknown}
    // in the sheet's column order
    expect(summary.cut).toEqual([
      {column: 'CompleteStreetAddress', count: 1},
      {column: 'City', count: 2},
    ])
    expect(summary.unfit).toEqual([{column: 'FinalValue', count: 1}])
    const rows = await sheet(out)
    expect(rows.map((x) => x.get('City')!.length)).toEqual([0, XLSX_MAX_CELL, XLSX_MAX_CELL, XLSX_MAX_CELL])
    expect(rows[1]!.get('City')).toBe(LONG.slice(0, XLSX_MAX_CELL))
    expect(rows[3]!.get('City')).toBe('A'.repeat(XLSX_MAX_CELL)) // the one character over is gone
    expect(rows[3]!.get('CompleteStreetAddress')).toBe(LONG.slice(0, XLSX_MAX_CELL))
    expect(r.stderr).toContain("  1 FinalValue value not of the spec's type, written as text")
    expect(rows[2]!.get('FinalValue')).toBe('about 300k')
  })

  it('the same export as CSV cuts nothing and says nothing of it', async () => {
    const out = join(tempDir(), 't.csv')
    const r = await runCommand(CountyExport, ['--fips', '06067', '--out', out, '--no-stats'], env())
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).not.toContain('cut to it')
    expect(readFileSync(out, 'utf8')).toContain(LONGER)
  })

  it('lookup --input --out r.xlsx says the same of the rows it cut', async () => {
    const dir = tempDir()
    const input = join(dir, 'in.csv')
    const ids = [1, 2, 3].map((i) => String(record('06067', i)['ServicePropertyID']))
    writeFileSync(input, `fips,property_id\n${ids.map((id) => `06067,${id}`).join('\n')}\n`)
    const out = join(dir, 'r.xlsx')
    const r = await runCommand(
      Lookup,
      ['--input', input, '--out', out, '--no-stats', '--plan', 'lookups'],
      env(),
    )
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toContain(
      '  2 City texts longer than a workbook cell holds (32,767 characters), cut to it; a CSV or NDJSON output keeps them whole',
    )
    expect(r.stderr).toContain('  1 CompleteStreetAddress text longer than a workbook cell holds')
    expect(r.stderr).toContain("  1 FinalValue value not of the spec's type, written as text")
    const summary = r.result as {cut?: unknown; unfit?: unknown}
    // in the sheet's column order
    expect(summary.cut).toEqual([
      {column: 'CompleteStreetAddress', count: 1},
      {column: 'City', count: 2},
    ])
    expect(summary.unfit).toEqual([{column: 'FinalValue', count: 1}])
    const rows = await sheet(out)
    expect(rows.map((x) => x.get('City')!.length)).toEqual([XLSX_MAX_CELL, XLSX_MAX_CELL, XLSX_MAX_CELL])
    expect(rows[1]!.get('FinalValue')).toBe('about 300k')
  })
})
