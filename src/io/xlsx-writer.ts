import type {SpecType} from '../api/spec.js'
import {columnOf, type Column} from '../model/columns.js'
import {CheckpointError} from '../errors.js'
import {readLines} from './lines.js'
import type {OutputTarget} from './output.js'
import {specType, toParquetValue, UNFIT} from './parquet-types.js'
import {
  contentTypesXml,
  rootRelsXml,
  SHEET_END,
  sheetStart,
  STYLE,
  stylesXml,
  workbookRelsXml,
  workbookXml,
} from './xlsx-parts.js'
import {ZipWriter, type ZipEntryStream} from './zip-writer.js'

/**
 * How a column's values become cells (ECMA-376 Part 1, 18.3.1.4 `c`; docs/exports.md, "xlsx"):
 * - `text`: every value an inline string (`t="inlineStr"`), so ZIP 02134, APN 00012345 and `1E5`, FIPS
 *   06067 stay exactly as sent: Excel and Calc read a string cell as text, never as a number;
 * - `number`, `integer`: a JSON number as a number cell (`integer` shown with the format "0": an 11-digit
 *   ServicePropertyID would be 3E+10 in General);
 * - `boolean`: a boolean cell (`t="b"`);
 * - `date`, `datetime`: a date serial (days since 1899-12-30) with a yyyy-mm-dd (hh:mm:ss) style;
 * - `value`: as the JSON value is (a number a number, a string text): a field the spec does not name.
 * A value of another type than its column's is written as text and counted (nothing is changed silently),
 * as is an empty string or null: no cell at all. There is never a formula cell: no `<f>` is ever written,
 * and text is an inline string, which a spreadsheet does not evaluate, so the CSV's formula guard (a
 * leading `'`) is not needed and not added.
 */
export type XlsxKind = 'text' | 'number' | 'integer' | 'boolean' | 'date' | 'datetime' | 'value'

export interface XlsxColumn {
  header: string
  kind: XlsxKind
}

const BY_SPEC: Record<SpecType, XlsxKind> = {
  varchar: 'text',
  bigint: 'integer',
  int: 'number',
  float: 'number',
  boolean: 'boolean',
  date: 'date',
  datetime: 'datetime',
}

/**
 * The kind of one flattened column, from the type spec section 2 states (src/io/parquet-types.ts
 * `specType`, the same rule the Parquet writer follows): codes and identifiers the spec types varchar
 * (Fips, Zip, APN, Tract, MSACode, CondoID...) are text; a field the spec does not name is `value`.
 *
 * @example xlsxKind({key: 'Zip'}) // 'text'
 */
export function xlsxKind(column: Pick<Column, 'key' | 'sub'>): XlsxKind {
  const t = specType(column)
  return t === undefined ? 'value' : BY_SPEC[t]
}

/** ECMA-376 Part 1, 18.3.1.73: a sheet has 1,048,576 rows; the header takes one. */
export const XLSX_MAX_ROWS = 1_048_576
/** 18.3.1.13: columns A to XFD. */
export const XLSX_MAX_COLUMNS = 16_384
/** Excel's limit on the characters of one cell; a longer text is cut to it and counted. */
export const XLSX_MAX_CELL = 32_767

export interface XlsxResult {
  /** Data rows written (the header rows not counted). */
  rows: number
  /** The sheets, in order: `data`, then `data 2`, `data 3`... past XLSX_MAX_ROWS - 1 rows each. */
  sheets: string[]
  /** Values of another type than their column's, written as text, by column header. */
  asText: Array<{column: string; count: number}>
  /** Texts longer than XLSX_MAX_CELL characters, cut to it, by column header. */
  cut: Array<{column: string; count: number}>
}

export interface XlsxOptions {
  /** The first sheet's name; the next are "<name> 2", "<name> 3"... */
  sheetName?: string
  /** Data rows per sheet (tests lower it). */
  rowsPerSheet?: number
  /** zlib level: 1 is the fastest, and the default (see docs/design.md, "xlsx"). */
  level?: number
  /** Passed to the ZIP writer (tests lower it to write ZIP64 fields). */
  zip64At?: number
}

/** A rough width for each column, in characters: its header, or what its kind shows. */
function widthOf(c: XlsxColumn): number {
  const shown = c.kind === 'datetime' ? 19 : c.kind === 'date' ? 10 : c.kind === 'integer' ? 12 : 8
  return Math.min(Math.max(c.header.length, shown) + 2, 60)
}

/** The sheet's XML is handed to deflate in pieces of about this many characters. */
const FLUSH_AT = 1 << 16
/**
 * A sheet name Excel accepts (at most 31 characters, none of []:*?/\, no ' at either end), with room
 * for the " 2" ... of the sheets after it.
 */
const SHEET_NAME = /^(?!')[^[\]:*?/\\]{1,27}(?<!')$/

/**
 * A workbook written as rows arrive, onto an OutputTarget (src/io/output.ts): the sheet XML goes through
 * deflate into the ZIP a buffer at a time, so memory is the same for a hundred rows or a million. The
 * header row is bold, frozen and text. `row()` returns false when the target is full: await `drain()`.
 * Past 1,048,575 data rows the sheet is closed and the next one opened with the header again (docs/exports.md
 * says why a split and not a refusal). `end()` writes the styles, the workbook and the package parts;
 * the caller commits (or aborts) the target.
 */
export class XlsxWriter {
  private readonly zip: ZipWriter
  private readonly letters: string[]
  private readonly sheets: string[] = []
  private sheet: ZipEntryStream | undefined
  private inSheet = 0
  private nextRow = 2
  private pending = ''
  private rows = 0
  /** A row that found its sheet full, waiting for drain() to start the next sheet. */
  private held: unknown[] | undefined
  private readonly asText: number[]
  private readonly cut: number[]
  private readonly base: string
  private readonly perSheet: number

  constructor(
    target: OutputTarget,
    private readonly columns: readonly XlsxColumn[],
    opts: XlsxOptions = {},
  ) {
    if (columns.length > XLSX_MAX_COLUMNS)
      throw new RangeError(`an xlsx sheet holds at most ${XLSX_MAX_COLUMNS} columns; got ${columns.length}`)
    this.zip = new ZipWriter(target, {
      level: opts.level ?? 1,
      ...(opts.zip64At ? {zip64At: opts.zip64At} : {}),
    })
    this.letters = columns.map((_, i) => columnLetters(i))
    this.asText = columns.map(() => 0)
    this.cut = columns.map(() => 0)
    this.base = opts.sheetName ?? 'data'
    if (!SHEET_NAME.test(this.base)) throw new RangeError(`"${this.base}" cannot name an xlsx sheet`)
    this.perSheet = opts.rowsPerSheet ?? XLSX_MAX_ROWS - 1
  }

  /**
   * One data row, a value per column (JSON values: string, number, boolean, null, or an object). When the
   * sheet is full the row is held and false returned: `drain()` closes the sheet and starts the next.
   */
  row(values: readonly unknown[]): boolean {
    if (this.held) throw new Error('xlsx: await drain() after row() returned false')
    if (!this.sheet) this.openSheet()
    else if (this.inSheet === this.perSheet) {
      this.held = [...values]
      return false
    }
    this.inSheet++
    const r = this.nextRow++
    let xml = `<row r="${r}">`
    const n = this.columns.length
    for (let i = 0; i < n; i++) {
      const v = values[i]
      if (v === null || v === undefined || v === '') continue
      xml += this.cell(i, r, v)
    }
    this.rows++
    this.pending += `${xml}</row>`
    return this.pending.length < FLUSH_AT || this.flush()
  }

  /** Wait until the sheet's deflate and the target take more (and start the next sheet if one is due). */
  async drain(): Promise<void> {
    if (this.held) {
      const held = this.held
      this.held = undefined
      await this.closeSheet()
      this.openSheet()
      this.row(held)
    }
    if (this.sheet) await this.sheet.drain()
  }

  /** Close the last sheet and write the workbook around it. */
  async end(): Promise<XlsxResult> {
    if (this.held) await this.drain()
    if (!this.sheet) this.openSheet()
    await this.closeSheet()
    const n = this.sheets.length
    await this.zip.file('xl/styles.xml', stylesXml())
    await this.zip.file('xl/workbook.xml', workbookXml(this.sheets))
    await this.zip.file('xl/_rels/workbook.xml.rels', workbookRelsXml(n))
    await this.zip.file('_rels/.rels', rootRelsXml())
    await this.zip.file('[Content_Types].xml', contentTypesXml(n))
    await this.zip.finish()
    const counted = (counts: number[]) =>
      this.columns.flatMap((c, i) => (counts[i]! > 0 ? [{column: c.header, count: counts[i]!}] : []))
    return {rows: this.rows, sheets: [...this.sheets], asText: counted(this.asText), cut: counted(this.cut)}
  }

  private openSheet(): void {
    const k = this.sheets.length + 1
    this.sheets.push(k === 1 ? this.base : `${this.base} ${k}`)
    this.sheet = this.zip.stream(`xl/worksheets/sheet${k}.xml`)
    this.inSheet = 0
    this.nextRow = 2
    let header = '<row r="1">'
    for (let i = 0; i < this.columns.length; i++)
      header += textCell(`${this.letters[i]!}1`, this.columns[i]!.header, STYLE.header)
    this.pending = sheetStart(this.columns.map(widthOf), k === 1) + `${header}</row>`
  }

  private async closeSheet(): Promise<void> {
    const sheet = this.sheet!
    sheet.write(this.pending + SHEET_END)
    this.pending = ''
    this.sheet = undefined
    await sheet.end()
  }

  private flush(): boolean {
    const ok = this.sheet!.write(this.pending)
    this.pending = ''
    return ok
  }

  /** One cell's XML; a value that does not fit its column's kind is its text, counted. */
  private cell(i: number, r: number, v: unknown): string {
    const ref = this.letters[i]! + r
    switch (this.columns[i]!.kind) {
      case 'text':
        return this.text(i, ref, v)
      case 'number':
        if (typeof v === 'number') return `<c r="${ref}"><v>${v}</v></c>`
        break
      case 'integer':
        if (typeof v === 'number') return `<c r="${ref}" s="${STYLE.integer}"><v>${v}</v></c>`
        break
      case 'boolean':
        if (typeof v === 'boolean') return `<c r="${ref}" t="b"><v>${v ? 1 : 0}</v></c>`
        break
      case 'date': {
        const serial = typeof v === 'string' ? dateSerial(v) : undefined
        if (serial !== undefined) return `<c r="${ref}" s="${STYLE.date}"><v>${serial}</v></c>`
        break
      }
      case 'datetime': {
        const serial = typeof v === 'string' ? datetimeSerial(v) : undefined
        if (serial !== undefined) return `<c r="${ref}" s="${STYLE.datetime}"><v>${serial}</v></c>`
        break
      }
      case 'value':
        if (typeof v === 'number') return `<c r="${ref}"><v>${v}</v></c>`
        if (typeof v === 'boolean') return `<c r="${ref}" t="b"><v>${v ? 1 : 0}</v></c>`
        return this.text(i, ref, v)
    }
    this.asText[i]!++
    return this.text(i, ref, v)
  }

  private text(i: number, ref: string, v: unknown): string {
    let s =
      typeof v === 'string'
        ? v
        : typeof v === 'number' || typeof v === 'boolean'
          ? String(v)
          : (JSON.stringify(v) ?? '')
    if (s.length > XLSX_MAX_CELL) {
      this.cut[i]!++
      s = s.slice(0, XLSX_MAX_CELL)
    }
    return textCell(ref, s, STYLE.text)
  }
}

/** An inline string cell (18.3.1.53 `is`): never a formula, never read as a number. */
function textCell(ref: string, s: string, style: number): string {
  // leading or trailing spaces are kept only with xml:space="preserve" (XML 1.0 section 2.10)
  const space = /^\s|\s$/.test(s) ? ' xml:space="preserve"' : ''
  return `<c r="${ref}" s="${style}" t="inlineStr"><is><t${space}>${xmlText(s)}</t></is></c>`
}

// what a text node cannot hold as is: the XML specials, characters XML 1.0 forbids (section 2.2), a CR
// (which XML turns into LF), and text that looks like the `_xHHHH_` escape Excel decodes
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const SPECIAL = /[&<>\u0000-\u0008\u000b-\u001f\ufffe\uffff]|_x[0-9a-fA-F]{4}_/
// eslint-disable-next-line no-control-regex -- as above
const SPECIALS = /[&<>\u0000-\u0008\u000b-\u001f\ufffe\uffff]|_(?=x[0-9a-fA-F]{4}_)/g

/**
 * Text as an XML text node. Characters XML cannot carry are written as Excel's `_xHHHH_` (ECMA-376
 * Part 1, 22.9.2.19 ST_Xstring), and an `_` that starts such a pattern in the text as `_x005F_`, so a
 * reader that decodes them (Excel, Calc) gets back the text as sent.
 */
export function xmlText(s: string): string {
  if (!SPECIAL.test(s)) return s
  return s.replace(SPECIALS, (c) => {
    if (c === '&') return '&amp;'
    if (c === '<') return '&lt;'
    if (c === '>') return '&gt;'
    return `_x${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`
  })
}

/** A, B, ... Z, AA, AB ... (0-based). */
export function columnLetters(i: number): string {
  let s = ''
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s
  return s
}

/** Days from Excel's day 0 (1899-12-30 in the 1900 date system) to 1970-01-01. */
const EPOCH_1970 = 25_569
/** 1900-03-01: before it, Excel's serials count a 29 February 1900 that never was; written as text. */
const FIRST_SERIAL = 61

/** A spec date (YYYY-MM-DD) as an Excel serial, or undefined when it is not one (the one date rule). */
export function dateSerial(v: string): number | undefined {
  const days = toParquetValue('DATE', v)
  if (days === UNFIT || typeof days !== 'number') return undefined
  const serial = days + EPOCH_1970
  return serial >= FIRST_SERIAL ? serial : undefined
}

/** A spec datetime (YYYY-MM-DDTHH:MM:SS, or a plain date) as an Excel serial with its fraction of a day. */
export function datetimeSerial(v: string): number | undefined {
  const ms = toParquetValue('TIMESTAMP', v)
  if (ms === UNFIT || typeof ms !== 'bigint') return undefined
  const serial = Number(ms) / 86_400_000 + EPOCH_1970
  return serial >= FIRST_SERIAL ? serial : undefined
}

async function* partRecords(files: readonly string[]): AsyncGenerator<Record<string, unknown>> {
  for (const file of files)
    for await (const l of readLines(file)) {
      if (!l.complete)
        throw new CheckpointError(
          `the part file ${file} ends mid-record (damaged); add --restart to fetch the run again`,
        )
      yield JSON.parse(l.bytes.toString('utf8')) as Record<string, unknown>
    }
}

/**
 * Records as one workbook on `target`, as src/io/parquet-writer.ts `writeParquet` takes them: NDJSON part
 * files of records as sent (flattened here to the run's columns), or flat records keyed by column header.
 * Each column's kind comes from the spec (`xlsxKind`). The caller commits or aborts the target.
 */
export async function writeXlsx(
  target: OutputTarget,
  source: readonly string[] | {flat: AsyncIterable<Record<string, unknown>>},
  opts: XlsxOptions & {columns: readonly string[]},
): Promise<XlsxResult> {
  const columns = opts.columns.map(columnOf)
  const writer = new XlsxWriter(
    target,
    columns.map((c) => ({header: c.header, kind: xlsxKind(c)})),
    opts,
  )
  const files = Array.isArray(source) ? (source as readonly string[]) : undefined
  const rows = files ? partRecords(files) : (source as {flat: AsyncIterable<Record<string, unknown>>}).flat
  const values: unknown[] = new Array<unknown>(columns.length)
  for await (const r of rows) {
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i]!
      let v = files ? r[c.key] : r[c.header]
      if (files && c.sub !== undefined)
        v =
          v !== null && typeof v === 'object' && !Array.isArray(v)
            ? (v as Record<string, unknown>)[c.sub]
            : null
      values[i] = v
    }
    if (!writer.row(values)) await writer.drain()
  }
  return writer.end()
}
