import {describe, expect, it} from 'vitest'

import {exportFormat, exportTargetProblem} from '../../src/cli/export-format.js'
import {changeFormat, changesOutFor} from '../../src/cli/changes-flags.js'

describe("county-export's format from --out's name", () => {
  it('takes the format before .gz from the name when --output is not given, csv without a name', () => {
    expect(exportFormat(undefined, 't.ndjson.gz')).toBe('ndjson')
    expect(exportFormat(undefined, 't.jsonl')).toBe('ndjson')
    expect(exportFormat(undefined, 't.parquet')).toBe('parquet')
    expect(exportFormat(undefined, 'results')).toBe('csv')
    expect(exportFormat(undefined, undefined)).toBe('csv')
    expect(exportFormat('json', undefined)).toBe('json')
    expect(exportFormat('ndjson', 't.ndjson.gz')).toBe('ndjson')
  })

  it('refuses a contradiction and a compression it cannot write, naming --out', () => {
    expect(() => exportFormat('csv', 't.json')).toThrow('--out t.json names a JSON file but --output is csv')
    expect(() => exportFormat(undefined, 't.ndjson.zst')).toThrow(/^--out t\.ndjson\.zst: sfl writes gzip/)
    expect(() => exportFormat('parquet', 't.parquet.gz')).toThrow('compresses its own pages')
    expect(() => exportFormat(undefined, 't.xlsx.gz')).toThrow('an xlsx workbook is already a ZIP archive')
    expect(() => exportFormat('csv', 't.xlsx')).toThrow('--out t.xlsx names a XLSX file but --output is csv')
  })

  it('takes xlsx from the name or from --output', () => {
    expect(exportFormat(undefined, 't.xlsx')).toBe('xlsx')
    expect(exportFormat(undefined, 'T.XLSX')).toBe('xlsx')
    expect(exportFormat('xlsx', 't.xlsx')).toBe('xlsx')
    expect(exportFormat('xlsx', 'results')).toBe('xlsx')
  })
})

describe('where an export format can go', () => {
  it('sends csv, ndjson and json anywhere, Parquet to a file or a folder, xlsx to one file only', () => {
    for (const f of ['csv', 'ndjson', 'json'] as const) {
      expect(exportTargetProblem(f, {})).toBeUndefined()
      expect(exportTargetProblem(f, {outDir: 'd', changesSince: 'old'})).toBeUndefined()
    }
    expect(exportTargetProblem('parquet', {})).toBe(
      '--output parquet needs a file: give --out FILE.parquet or --out-dir DIR (Parquet cannot go to stdout)',
    )
    expect(exportTargetProblem('parquet', {outDir: 'd', changesSince: 'old'})).toBeUndefined()
    expect(exportTargetProblem('xlsx', {out: 't.xlsx'})).toBeUndefined()
    expect(exportTargetProblem('xlsx', {})).toBe(
      '--output xlsx needs a file: give --out FILE.xlsx (xlsx cannot go to stdout or a terminal)',
    )
    expect(exportTargetProblem('xlsx', {outDir: 'd'})).toMatch(
      /^--out-dir writes a dataset folder .* give --out FILE\.xlsx/,
    )
    // --bom is CSV's (Excel's import): with any other format it is refused, never ignored
    expect(exportTargetProblem('csv', {bom: true})).toBeUndefined()
    for (const f of ['ndjson', 'json', 'parquet', 'xlsx'] as const)
      expect(exportTargetProblem(f, {out: `t.${f}`, bom: true})).toBe(
        `--bom is for CSV output (Excel); ${f} output never starts with a BOM`,
      )
    expect(exportTargetProblem('xlsx', {out: 't.xlsx', changesSince: 'old.csv'})).toMatch(
      /^--changes-since reads the export back, and sfl does not read xlsx exports/,
    )
  })
})

describe("a change file's format and name", () => {
  it('reads .gz names as their format and keeps .gz on the default change file beside an export', () => {
    expect(changeFormat(undefined, 'c.ndjson.gz')).toBe('ndjson')
    expect(changeFormat(undefined, 'c.txt', 'json')).toBe('json')
    expect(changesOutFor('nov.csv.gz', 'csv')).toBe('nov.changes.csv.gz')
    expect(changesOutFor('nov.csv', 'csv')).toBe('nov.changes.csv')
    expect(() => changeFormat(undefined, 'c.parquet')).toThrow('a change file is CSV, NDJSON or JSON')
    expect(() => changeFormat(undefined, 'c.csv.xz')).toThrow(/not xz/)
  })
})
