import {createReadStream, createWriteStream} from 'node:fs'
import {pipeline} from 'node:stream/promises'

import {InputFormatError} from './input-error.js'

/**
 * What an input file is, from its first bytes (docs/exports.md, "Inputs"): UTF-8 text (with or without a
 * byte-order mark), UTF-16 text with its BOM (Excel's "Unicode Text", TAB-separated), a ZIP (an .xlsx
 * workbook, checked further by src/io/xlsx-reader.ts), or gzip when the name ends in .gz. Anything else
 * with a NUL byte is refused with one line naming what it looks like and how to save it as CSV.
 */
export type InputShape =
  {kind: 'utf-8'; bom: boolean} | {kind: 'utf-16le' | 'utf-16be'} | {kind: 'zip'} | {kind: 'gzip'}

const SAVE_AS = 'save it as CSV UTF-8 (in Excel: File > Save As > CSV UTF-8) or as an .xlsx workbook'
const NOT_A_TABLE = 'not a table of lookups; give them as CSV UTF-8 or as an .xlsx workbook'

/** Magic numbers of files people pick by mistake, and what to say of each. */
const MAGIC: Array<[bytes: number[] | string, say: string]> = [
  [
    [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1],
    'it is an Excel 97-2003 workbook (.xls), or a workbook with a password; open it in Excel or Calc and save it, with no password, as .xlsx or as CSV UTF-8',
  ],
  ['%PDF-', `it is a PDF document, ${NOT_A_TABLE}`],
  [
    'BZh',
    'it is bzip2-compressed, which sfl does not read; decompress it (bunzip2), or gzip it and name it .gz',
  ],
  [
    [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00],
    'it is xz-compressed, which sfl does not read; decompress it (unxz), or gzip it and name it .gz',
  ],
  [
    [0x28, 0xb5, 0x2f, 0xfd],
    'it is zstd-compressed, which sfl does not read; decompress it (zstd -d), or gzip it and name it .gz',
  ],
  [[0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], 'it is a 7-Zip archive; extract the list of lookups from it'],
  ['Rar!', 'it is a RAR archive; extract the list of lookups from it'],
  [
    'PAR1',
    "it is a Parquet file; batch input is a table of lookups as CSV, NDJSON or xlsx (DuckDB: COPY (FROM 'FILE') TO 'lookups.csv')",
  ],
  ['SQLite format 3\u0000', 'it is an SQLite database; export the table of lookups as CSV'],
  [[0x89, 0x50, 0x4e, 0x47], `it is a PNG image, ${NOT_A_TABLE}`],
  [[0xff, 0xd8, 0xff], `it is a JPEG image, ${NOT_A_TABLE}`],
  ['GIF8', `it is a GIF image, ${NOT_A_TABLE}`],
  ['\u007fELF', `it is a program, ${NOT_A_TABLE}`],
]

function startsWith(head: Buffer, magic: number[] | string): boolean {
  const bytes = typeof magic === 'string' ? Buffer.from(magic, 'latin1') : Buffer.from(magic)
  return head.length >= bytes.length && head.subarray(0, bytes.length).equals(bytes)
}

/**
 * The shape of an input from its first bytes (at least the first few KiB); `gzNamed`: its name ends in
 * .gz, the only way sfl is told a file is compressed. Throws InputFormatError for what it cannot read.
 */
export function sniffInput(head: Buffer, gzNamed: boolean): InputShape {
  if (startsWith(head, [0xef, 0xbb, 0xbf])) return {kind: 'utf-8', bom: true}
  if (startsWith(head, [0xff, 0xfe, 0, 0]) || startsWith(head, [0, 0, 0xfe, 0xff]))
    throw new InputFormatError(`it is UTF-32 text, which sfl does not read; ${SAVE_AS}`)
  if (startsWith(head, [0xff, 0xfe])) return {kind: 'utf-16le'}
  if (startsWith(head, [0xfe, 0xff])) return {kind: 'utf-16be'}
  if (startsWith(head, 'PK\u0003\u0004') || startsWith(head, 'PK\u0005\u0006')) return {kind: 'zip'}
  if (startsWith(head, [0x1f, 0x8b])) {
    if (gzNamed) return {kind: 'gzip'}
    throw new InputFormatError(
      'it is gzip-compressed but its name does not end in .gz; name it so (sfl then reads it), or decompress it (gunzip)',
    )
  }
  if (gzNamed)
    throw new InputFormatError('its name ends in .gz but it is not gzip data; rename it without .gz')
  for (const [magic, say] of MAGIC) if (startsWith(head, magic)) throw new InputFormatError(say)
  const nul = head.indexOf(0)
  if (nul === -1) return {kind: 'utf-8', bom: false}
  if (utf16WithoutBom(head))
    throw new InputFormatError(
      'it looks like UTF-16 text without a byte-order mark; save it again as CSV UTF-8, or as Unicode Text (which has one)',
    )
  throw new InputFormatError(
    `it is a binary file (a NUL byte at offset ${nul}), not CSV or NDJSON text; ${SAVE_AS}`,
  )
}

/** Every other byte NUL (ASCII as UTF-16): the text sfl would read, were it told the encoding. */
function utf16WithoutBom(head: Buffer): boolean {
  const n = Math.min(head.length, 64) & ~1
  if (n < 4) return false
  for (const zero of [0, 1]) {
    let ok = true
    for (let i = 0; i < n && ok; i += 2) ok = head[i + zero] === 0 && head[i + 1 - zero] !== 0
    if (ok) return true
  }
  return false
}

/**
 * Write UTF-16 text (its BOM dropped) to `dest` as UTF-8, a new file (created exclusively, 0600).
 * A lone surrogate or an odd byte at the end is "not valid UTF-16".
 */
export async function utf16ToUtf8File(
  path: string,
  encoding: 'utf-16le' | 'utf-16be',
  dest: string,
): Promise<void> {
  const decoder = new TextDecoder(encoding, {fatal: true})
  const label = encoding.toUpperCase()
  const decode = (chunk?: Buffer): string => {
    try {
      return chunk ? decoder.decode(chunk, {stream: true}) : decoder.decode()
    } catch {
      throw new InputFormatError(`it starts as ${label} text but is not valid ${label}; ${SAVE_AS}`)
    }
  }
  await pipeline(
    createReadStream(path, {highWaterMark: 1 << 20}),
    async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) yield decode(chunk)
      yield decode()
    },
    createWriteStream(dest, {flags: 'wx', mode: 0o600}),
  )
}
