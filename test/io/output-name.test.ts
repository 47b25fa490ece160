import {describe, expect, it} from 'vitest'

import {classifyOutputName} from '../../src/io/output-name.js'

/** What an output's name asks for: the one rule the format registry and `lookup --input --out` use. */
describe('an output name', () => {
  it.each([
    ['t.csv', 'csv', undefined],
    ['dir.v2/T.CSV', 'csv', undefined],
    ['t.ndjson', 'ndjson', undefined],
    ['t.jsonl', 'ndjson', undefined],
    ['t.json', 'json', undefined],
    ['t.parquet', 'parquet', undefined],
    ['t.xlsx', 'xlsx', undefined],
    ['t.csv.gz', 'csv', 'gzip'],
    ['t.NDJSON.GZ', 'ndjson', 'gzip'],
    ['t.jsonl.gz', 'ndjson', 'gzip'],
    ['t.json.gz', 'json', 'gzip'],
    ['results', undefined, undefined],
    ['results.txt', undefined, undefined],
    ['.hidden', undefined, undefined],
  ])('%s asks for %s, compressed %s', (name, format, compression) =>
    expect(classifyOutputName(name)).toEqual({ok: true, format, compression}),
  )

  it.each([
    [
      't.ndjson.zst',
      'sfl writes gzip (.gz) but not zstd (.zst): name it t.ndjson.gz, or write t.ndjson and compress it with zstd',
    ],
    [
      't.csv.bz2',
      'sfl writes gzip (.gz) but not bzip2 (.bz2): name it t.csv.gz, or write t.csv and compress it with bzip2',
    ],
    [
      't.xz',
      'sfl writes gzip (.gz) but not xz (.xz): name it t.csv.gz, or write t.csv and compress it with xz',
    ],
    [
      't.json.Z',
      'sfl writes gzip (.gz) but not compress (.Z): name it t.json.gz, or write t.json and compress it with compress',
    ],
    [
      't.csv.gzip',
      'sfl writes gzip (.gz) but not gzip under the name .gzip (.gzip): name it t.csv.gz, or write t.csv and compress it with gzip',
    ],
    [
      't.zip',
      'sfl writes one file, not a .zip archive: name it .csv, .ndjson or .json (add .gz to compress)',
    ],
    ['t.xls', 'sfl does not write an Excel 97-2003 workbook (.xls): name it .xlsx for a workbook, or .csv'],
    ['t.ods', 'sfl does not write an OpenDocument spreadsheet (.ods): name it .xlsx for a workbook, or .csv'],
    ['t.parquet.gz', 'a Parquet file compresses its own pages; name it .parquet, without .gz'],
    ['t.xlsx.gz', 'an xlsx workbook is already a ZIP archive; name it .xlsx, without .gz'],
    ['t.gz', 'name the format before .gz: t.csv.gz, t.ndjson.gz or t.json.gz'],
    ['t.txt.gz', 'name the format before .gz: t.csv.gz, t.ndjson.gz or t.json.gz'],
  ])('%s is refused: %s', (name, reason) => expect(classifyOutputName(name)).toEqual({ok: false, reason}))
})
