import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {InputFormatError} from '../../src/io/input-error.js'
import {sniffInput, utf16ToUtf8File} from '../../src/io/text-input.js'
import {tempDir} from '../helpers/tmp.js'

/** What an input's first bytes say it is, and UTF-16 text made UTF-8. */

const b = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))))

describe('an input by its first bytes', () => {
  it.each([
    ['UTF-8 text', b('fips,apn\n'), false, {kind: 'utf-8', bom: false}],
    ['UTF-8 with a BOM', b([0xef, 0xbb, 0xbf], 'fips'), false, {kind: 'utf-8', bom: true}],
    ['UTF-16LE with its BOM', b([0xff, 0xfe], 'f\0i\0'), false, {kind: 'utf-16le'}],
    ['UTF-16BE with its BOM', b([0xfe, 0xff], '\0f\0i'), false, {kind: 'utf-16be'}],
    ['a ZIP (an xlsx)', b('PK\u0003\u0004', [20, 0, 0, 0]), false, {kind: 'zip'}],
    ['gzip named .gz', b([0x1f, 0x8b, 8, 0]), true, {kind: 'gzip'}],
  ] as const)('%s', (_, head, gz, shape) => expect(sniffInput(head, gz)).toEqual(shape))

  const said = (head: Buffer, gz = false) => {
    try {
      sniffInput(head, gz)
    } catch (error) {
      expect(error).toBeInstanceOf(InputFormatError)
      return (error as Error).message
    }
    throw new Error('read')
  }

  it.each([
    [
      'an .xls',
      b([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]),
      'it is an Excel 97-2003 workbook (.xls), or a workbook with a password; open it in Excel or Calc and save it, with no password, as .xlsx or as CSV UTF-8',
    ],
    [
      'a PDF',
      b('%PDF-1.7\n%\xe2\xe3'),
      'it is a PDF document, not a table of lookups; give them as CSV UTF-8 or as an .xlsx workbook',
    ],
    [
      'gzip not named .gz',
      b([0x1f, 0x8b, 8, 0, 0]),
      'it is gzip-compressed but its name does not end in .gz; name it so (sfl then reads it), or decompress it (gunzip)',
    ],
    [
      'zstd',
      b([0x28, 0xb5, 0x2f, 0xfd, 0]),
      'it is zstd-compressed, which sfl does not read; decompress it (zstd -d), or gzip it and name it .gz',
    ],
    [
      'bzip2',
      b('BZh91AY&SY'),
      'it is bzip2-compressed, which sfl does not read; decompress it (bunzip2), or gzip it and name it .gz',
    ],
    [
      'a Parquet file',
      b('PAR1', [0x15, 0]),
      "it is a Parquet file; batch input is a table of lookups as CSV, NDJSON or xlsx (DuckDB: COPY (FROM 'FILE') TO 'lookups.csv')",
    ],
    [
      'a PNG',
      b([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]),
      'it is a PNG image, not a table of lookups; give them as CSV UTF-8 or as an .xlsx workbook',
    ],
    [
      'UTF-32',
      b([0xff, 0xfe, 0, 0], 'f\0\0\0'),
      'it is UTF-32 text, which sfl does not read; save it as CSV UTF-8 (in Excel: File > Save As > CSV UTF-8) or as an .xlsx workbook',
    ],
    [
      'UTF-16 without a BOM',
      b('f\0i\0p\0s\0,\0'),
      'it looks like UTF-16 text without a byte-order mark; save it again as CSV UTF-8, or as Unicode Text (which has one)',
    ],
    [
      'anything else with a NUL',
      b('fips,apn\n06067,\0\u0001'),
      'it is a binary file (a NUL byte at offset 15), not CSV or NDJSON text; save it as CSV UTF-8 (in Excel: File > Save As > CSV UTF-8) or as an .xlsx workbook',
    ],
  ])('%s is refused in one line naming it', (_, head, message) => expect(said(head)).toBe(message))

  it('a name ending in .gz that holds no gzip data is refused', () =>
    expect(said(b('fips,apn\n'), true)).toBe(
      'its name ends in .gz but it is not gzip data; rename it without .gz',
    ))
})

describe('UTF-16 text made UTF-8', () => {
  const dir = () => tempDir('sfl-utf16-')
  it.each(['utf-16le', 'utf-16be'] as const)(
    '%s: the BOM dropped, every character kept',
    async (encoding) => {
      const text = 'Name\tfips\r\n"Doe, J"\t06067\r\nÑandú 🏠\t06067\r\n'
      const le = Buffer.from(`\ufeff${text}`, 'utf16le')
      const bytes = encoding === 'utf-16le' ? le : Buffer.from(le).swap16()
      const d = dir()
      writeFileSync(join(d, 'in.txt'), bytes)
      await utf16ToUtf8File(join(d, 'in.txt'), encoding, join(d, 'out'))
      expect(readFileSync(join(d, 'out'), 'utf8')).toBe(text)
    },
  )

  it('a lone surrogate, or an odd byte at the end, is not valid UTF-16', async () => {
    const d = dir()
    writeFileSync(
      join(d, 'a'),
      Buffer.concat([Buffer.from('\ufeffab', 'utf16le'), Buffer.from([0x00, 0xd8, 0x41, 0x00])]),
    )
    await expect(utf16ToUtf8File(join(d, 'a'), 'utf-16le', join(d, 'a.out'))).rejects.toThrow(
      'it starts as UTF-16LE text but is not valid UTF-16LE; save it as CSV UTF-8',
    )
    writeFileSync(join(d, 'b'), Buffer.concat([Buffer.from('\ufeffab', 'utf16le'), Buffer.from([0x41])]))
    await expect(utf16ToUtf8File(join(d, 'b'), 'utf-16le', join(d, 'b.out'))).rejects.toThrow(
      'it starts as UTF-16LE text but is not valid UTF-16LE',
    )
  })
})
