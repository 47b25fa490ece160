import {open} from 'node:fs/promises'
import {join} from 'node:path'
import {Readable} from 'node:stream'

import {gunzipToFile} from '../io/gzip.js'
import {InputFormatError} from '../io/input-error.js'
import {streamToPrivateFile} from '../io/private-files.js'
import {sniffInput, utf16ToUtf8File, type InputShape} from '../io/text-input.js'
import {XlsxWorkbook, type SheetInfo} from '../io/xlsx-reader.js'
import {columnLetters} from '../io/xlsx-writer.js'

/**
 * A batch input as the batch reads it (src/jobs/batch-input.ts): UTF-8 text as it is, and every other
 * form sfl reads decoded once, before any request, into a private temp folder (docs/exports.md,
 * "Inputs"): UTF-16 text (Excel's "Unicode Text") as UTF-8, a `.gz` file expanded (and then read as any
 * input), a workbook's sheet as rows. Whatever cannot be read stops here with one line.
 */
export interface DecodedInput {
  /** The UTF-8 file to read: the input itself, or its decoded copy. */
  path: string
  /** `text`: CSV, TSV or NDJSON. `rows`: a sheet's rows, a JSON array a line: [row number, ...cells]. */
  form: 'text' | 'rows'
  /** Saved by a spreadsheet (UTF-16 text, a workbook): a CSV output starts with a BOM, as Excel wants. */
  excel: boolean
  /** The sheet read, for a workbook. */
  sheet?: string
}

export interface DecodeOptions {
  /** `--sheet`: the workbook's sheet to read (default: its first worksheet). */
  sheet?: string | undefined
  /** A private folder for decoded copies, made on first use and removed by the caller. */
  scratch: () => Promise<string>
}

const HEAD = 4096

async function readStart(path: string): Promise<Buffer> {
  const fh = await open(path, 'r')
  try {
    const buf = Buffer.alloc(HEAD)
    const {bytesRead} = await fh.read(buf, 0, HEAD, 0)
    return buf.subarray(0, bytesRead)
  } finally {
    await fh.close()
  }
}

/**
 * Decode `path` (shown as `name`, which may be "stdin") into what the batch reads. Throws
 * InputFormatError whose message starts with the name; nothing is sent before this returns.
 */
export async function decodeInput(path: string, name: string, opts: DecodeOptions): Promise<DecodedInput> {
  try {
    return await decode(path, name, opts, false)
  } catch (error) {
    if (error instanceof InputFormatError && !error.message.startsWith(name))
      throw new InputFormatError(`${name}: ${error.message}`)
    throw error
  }
}

async function decode(
  path: string,
  name: string,
  opts: DecodeOptions,
  gunzipped: boolean,
): Promise<DecodedInput> {
  const head = await readStart(path)
  if (head[0] === 0x1f && head[1] === 0x8b && (gunzipped || name === 'stdin'))
    throw new InputFormatError(
      gunzipped
        ? 'it is gzip data inside gzip data; decompress it once (gunzip) and give the result'
        : 'it is gzip-compressed; give the file by its name (--input FILE.gz), or pipe it through gunzip -c',
    )
  const shape: InputShape = sniffInput(head, !gunzipped && /\.gz$/i.test(name))
  if (shape.kind !== 'zip' && opts.sheet !== undefined)
    throw new InputFormatError(
      '--sheet picks a sheet of an .xlsx workbook, and this is not one; drop --sheet',
    )
  switch (shape.kind) {
    case 'utf-8':
      return {path, form: 'text', excel: false}
    case 'utf-16le':
    case 'utf-16be': {
      const dest = join(await opts.scratch(), `text-${gunzipped ? 2 : 1}`)
      await utf16ToUtf8File(path, shape.kind, dest)
      return {path: dest, form: 'text', excel: true}
    }
    case 'gzip': {
      const dest = join(await opts.scratch(), 'gunzipped')
      await gunzipToFile(path, dest)
      return decode(dest, name, opts, true)
    }
    case 'zip': {
      const dest = join(await opts.scratch(), 'sheet-rows')
      const sheet = await sheetToRows(path, name, opts.sheet, dest)
      return {path: dest, form: 'rows', excel: true, sheet}
    }
  }
}

/** The sheet's rows into `dest`, one JSON array a line; returns the sheet's name. */
async function sheetToRows(
  path: string,
  name: string,
  sheetName: string | undefined,
  dest: string,
): Promise<string> {
  const book = await XlsxWorkbook.open(path)
  const sheet = book.pick(sheetName)
  await streamToPrivateFile(Readable.from(rowLines(book, sheet, name)), dest)
  return sheet.name
}

/**
 * The header is the first row with anything in it (a title row above it would be taken for the header:
 * the "no lookup column" message then names what it found). Every later row is cut or padded to the
 * header's width; a value in a column without a header is refused, as CSV refuses a longer record.
 * Rows are batched into lines of about 64 KiB.
 */
async function* rowLines(book: XlsxWorkbook, sheet: SheetInfo, name: string): AsyncGenerator<string> {
  let width: number | undefined
  let headerRow = 0
  let batch = ''
  for await (const r of book.rows(sheet)) {
    if (width === undefined) {
      if (r.cells.every((c) => c.trim() === '')) continue
      width = r.cells.length
      headerRow = r.row
      batch += `${JSON.stringify([r.row, ...r.cells])}\n`
      continue
    }
    const stray = r.cells.findIndex((c, i) => i >= width! && c !== '')
    if (stray !== -1)
      throw new InputFormatError(
        `${name} row ${r.row}: cell ${columnLetters(stray)}${r.row} has a value but its column has no name in the header (row ${headerRow}); name the column or clear the cell`,
      )
    const cells = r.cells.length > width ? r.cells.slice(0, width) : r.cells
    while (cells.length < width) cells.push('')
    batch += `${JSON.stringify([r.row, ...cells])}\n`
    if (batch.length > 1 << 16) {
      yield batch
      batch = ''
    }
  }
  if (width === undefined)
    throw new InputFormatError(
      `${name}: the sheet "${sheet.name}" is empty; expected a header row such as fips,address`,
    )
  yield batch
}
