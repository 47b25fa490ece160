import {describe, expect, it} from 'vitest'

import {exportFormat} from '../../src/cli/export-format.js'
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

  it('refuses a contradiction, a compression it cannot write and xlsx, naming --out', () => {
    expect(() => exportFormat('csv', 't.json')).toThrow('--out t.json names a JSON file but --output is csv')
    expect(() => exportFormat(undefined, 't.ndjson.zst')).toThrow(/^--out t\.ndjson\.zst: sfl writes gzip/)
    expect(() => exportFormat(undefined, 't.xlsx')).toThrow('county-export does not write xlsx yet')
    expect(() => exportFormat('parquet', 't.parquet.gz')).toThrow('compresses its own pages')
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
