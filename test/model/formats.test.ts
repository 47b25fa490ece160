import {describe, expect, it} from 'vitest'

import {classifyOutputName} from '../../src/io/output-name.js'
import {formatFromName} from '../../src/io/export-reader.js'
import {
  extensionList,
  extensionOf,
  FILE_FORMATS,
  FORMATS,
  formatOfExtension,
  formatsWrittenBy,
  isFileFormat,
  isTextFormat,
  reads,
  unknownFormat,
  writes,
} from '../../src/model/formats.js'

describe('the format registry', () => {
  it('names every format by each of its extensions, in any case, and by no other', () => {
    for (const f of FILE_FORMATS)
      for (const ext of FORMATS[f].extensions) {
        expect(formatOfExtension(ext)).toBe(f)
        expect(formatOfExtension(ext.toUpperCase())).toBe(f)
      }
    expect(formatOfExtension('jsonl')).toBe('ndjson')
    for (const other of ['txt', 'tsv', 'xls', 'gz', '', 'csv.gz'])
      expect(formatOfExtension(other)).toBeUndefined()
  })

  it('gives no two formats the same extension', () => {
    const all = FILE_FORMATS.flatMap((f) => FORMATS[f].extensions)
    expect(new Set(all).size).toBe(all.length)
  })

  it('frames csv, ndjson and json as text, and streams exactly those to stdout', () => {
    expect(FILE_FORMATS.filter(isTextFormat)).toEqual(['csv', 'ndjson', 'json'])
    expect(FILE_FORMATS.filter((f) => FORMATS[f].stdout)).toEqual(['csv', 'ndjson', 'json'])
  })

  it('says which command writes which format', () => {
    expect(formatsWrittenBy('county-export')).toEqual(['csv', 'ndjson', 'json', 'parquet', 'xlsx'])
    expect(formatsWrittenBy('county-export --out-dir')).toEqual(['csv', 'ndjson', 'json', 'parquet'])
    expect(formatsWrittenBy('lookup --input')).toEqual(['csv', 'ndjson', 'json', 'xlsx'])
    expect(formatsWrittenBy('changes')).toEqual(['csv', 'ndjson', 'json'])
    expect(writes('changes', 'xlsx')).toBe(false)
    expect(writes('lookup --input', 'parquet')).toBe(false)
  })

  it('reads with the export reader what sfl changes and sfl stats read, and nothing else', () => {
    for (const f of FILE_FORMATS) expect(reads('changes', f)).toBe(reads('stats', f))
    for (const f of FILE_FORMATS)
      for (const ext of FORMATS[f].extensions)
        expect(formatFromName(`dir/data.${ext}`)).toBe(reads('changes', f) ? f : undefined)
  })

  it('gzips by name exactly the formats the registry says, and refuses the others with its reason', () => {
    for (const f of FILE_FORMATS) {
      const named = classifyOutputName(`t.${extensionOf(f)}.gz`)
      const refused = FORMATS[f].noGzip
      if (refused === undefined) expect(named).toEqual({ok: true, format: f, compression: 'gzip'})
      else expect(named).toEqual({ok: false, reason: refused})
      expect(classifyOutputName(`t.${extensionOf(f)}`)).toEqual({ok: true, format: f, compression: undefined})
    }
  })

  it('spools CSV as rows and every other format as the NDJSON lines sent', () => {
    expect(FILE_FORMATS.filter((f) => FORMATS[f].spool === 'csv')).toEqual(['csv'])
  })

  it('knows its own names only', () => {
    expect(FILE_FORMATS.every(isFileFormat)).toBe(true)
    for (const other of ['table', 'CSV', 'tsv', '', 'constructor', 'toString'])
      expect(isFileFormat(other)).toBe(false)
  })

  it('lists extensions for a message', () => {
    expect(extensionList(['csv', 'ndjson', 'json'])).toBe('.csv, .ndjson or .json')
    expect(extensionList(['parquet'])).toBe('.parquet')
  })

  it('fails loudly on a format no switch handles', () => {
    expect(() => unknownFormat('tsv' as never)).toThrow('no rule for the format tsv')
  })
})
