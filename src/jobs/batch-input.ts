import {createHash, type Hash} from 'node:crypto'
import {createReadStream} from 'node:fs'
import {open} from 'node:fs/promises'
import {join} from 'node:path'

import {
  addressIdentity,
  addressZip,
  standardiseInCounty,
  type StandardAddress,
} from '../address/standardise.js'
import {dataDirs, readZipTable, type ZipCounties} from '../address/zip-counties.js'
import {SflError, UsageError} from '../errors.js'
import {validateLookup, type LookupQuery} from '../api/validate.js'
import {CsvSyntaxError, readCsv} from '../io/csv-reader.js'
import {InputFormatError} from '../io/input-error.js'
import {makeScratchDir, streamToPrivateFile, type ScratchDir} from '../io/private-files.js'
import {readLines} from '../io/lines.js'
import {sniffInput, type InputShape} from '../io/text-input.js'
import {decodeInput} from './batch-input-decode.js'
import {
  canonicalColumn,
  joinAddress,
  padFips,
  resolveSources,
  type ColumnMap,
  type Sources,
} from './batch-map.js'

/** The batch input file cannot be used at all (exit 2, with the line number). */
export class InputError extends UsageError {}

export interface InputRow {
  /** 1-based line of the row in the input (the header is line 1 for CSV). */
  line: number
  /** All input columns, carried through to the output in their order. */
  values: Record<string, string>
  query?: LookupQuery
  /** Why the row is invalid (validated with the same rules as a single lookup); no request is sent. */
  invalid?: string
  /** What sfl read differently from the cell as typed (a fips padded to 5 digits), for the output's note. */
  note?: string
  /** Compact identity for de-duplication: rows with the same key are looked up once. */
  key?: string
  /** A blank row between data rows: kept in its place as an empty answer, nothing looked up. */
  blank?: true
  /** The address in its Pub 28 form, as de-duplication read it (a plan matches records by it). */
  std?: StandardAddress
}

/** A data row as read: its values, and whether it is a blank row kept in its place. */
export interface InputRecord {
  line: number
  values: Record<string, string>
  blank?: true
}

/**
 * A batch input file, read as a stream (constant memory whatever its size): `check()` reads it once to
 * the end so a broken file stops the run before any request, then `rows()` can be read as often as needed
 * (once to send the lookups, once to write the output in input order).
 */
export class BatchInput {
  private constructor(
    readonly path: string,
    readonly name: string,
    /** `rows`: a workbook's sheet, decoded to one JSON array a line (src/jobs/batch-input-decode.ts). */
    readonly kind: 'csv' | 'ndjson' | 'rows',
    /** A CSV's field separator: a TAB when the header has tabs and no comma (Excel's "Unicode Text"). */
    readonly delimiter: ',' | '\t',
    /** The input's columns exactly as in its header (or NDJSON keys), in order. */
    readonly columns: string[],
    private readonly defaultFips: string | undefined,
    /** The columns each lookup field is read from (`--map`, or the column named after it). */
    readonly sources: Sources,
    /**
     * The file starts with a UTF-8 BOM, or came from a spreadsheet (UTF-16 text, a workbook): a CSV output
     * starts with one, so Excel reopens it as UTF-8.
     */
    readonly bom: boolean,
    /**
     * Rows whose cells are all empty (`,,,,` as Excel saves a formatted blank row) after the last row with
     * anything in it: skipped, counted (Excel saves runs of them at the end of a sheet).
     */
    readonly blankRows = 0,
    /** Blank rows between data rows: kept in their places as empty answers (one output row per input row). */
    readonly keptBlank = 0,
    /** Data rows up to the last with anything in it (the rows read back; trailing blank rows are not). */
    private readonly dataRows = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * Open and check a file: encoding, header, every row's structure, and that `map` names columns it has.
   * Throws InputError with a line number (or a UsageError naming the --map column).
   */
  static async open(
    path: string,
    name: string,
    defaultFips: string | undefined,
    hash?: Hash,
    map: ColumnMap = {},
    /** What src/jobs/batch-input-decode.ts made of the input: a sheet's rows, and whether Excel saved it. */
    decoded: {form?: 'text' | 'rows'; excel?: boolean} = {},
  ): Promise<BatchInput> {
    const {text: head, bom} = await readHead(path, name, decoded.form === 'rows')
    const kind = decoded.form === 'rows' ? 'rows' : head.startsWith('{') ? 'ndjson' : 'csv'
    const delimiter = kind === 'csv' && tabSeparated(head) ? '\t' : ','
    const columns: string[] = []
    const seen = new Set<string>()
    let rows = 0
    let blank = 0
    // data rows up to the last one with anything in it, and the blank rows before it
    let lastData = 0
    let blankBefore = 0
    const data = (isBlank: boolean) => {
      if (isBlank) return void blank++
      lastData = rows - 1
      blankBefore = blank
    }
    let header = 'line 1'
    // the whole file once: structure (and NDJSON's columns, which any line may add) before any request
    if (kind === 'csv') {
      try {
        // the content hash (the checkpoint's identity of the input) is taken in the same read
        const onChunk = hash ? (t: string) => void hash.update(t) : undefined
        for await (const r of readCsv(path, {delimiter, ...(onChunk ? {onChunk} : {})}))
          if (rows++ === 0) columns.push(...headerColumns(r.fields, name, header))
          else data(blankRow(r.fields))
      } catch (error) {
        if (error instanceof CsvSyntaxError)
          throw new InputError(`${name} line ${error.line}: ${error.message}`)
        throw error
      }
    } else if (kind === 'rows')
      for await (const r of sheetRows(path)) {
        if (rows++ === 0) {
          header = `row ${r.row}`
          columns.push(...headerColumns(r.cells, name, header))
        } else data(blankRow(r.cells))
      }
    else
      for await (const r of rawRows(path, name, kind, delimiter))
        for (const k of Object.keys(r.values))
          if (!seen.has(k)) {
            seen.add(k)
            columns.push(k)
          }
    const sources = resolveSources(map, columns, name)
    if (!sources.address && !sources.apn && !sources.property_id)
      throw new InputError(
        `${name} ${header}: no lookup column; expected one of address, apn, property_id (found: ${columns.join(', ') || 'none'}), or name yours with --map address=street,city,state,zip`,
      )
    // without a county column an address row is placed by its ZIP (issue 31); apn and id rows need one
    if (!sources.fips && defaultFips === undefined && !sources.address)
      throw new InputError(
        `${name} ${header}: no fips column; add one, name yours with --map fips=COLUMN, or give a default county with --fips`,
      )
    const excel = decoded.excel === true
    const kept =
      kind === 'ndjson'
        ? {trailing: 0, kept: 0, rows: Number.POSITIVE_INFINITY}
        : {trailing: blank - blankBefore, kept: blankBefore, rows: lastData}
    return new BatchInput(
      path,
      name,
      kind,
      delimiter,
      columns,
      defaultFips,
      sources,
      bom || excel,
      kept.trailing,
      kept.kept,
      kept.rows,
    )
  }

  /** Every data row, in order, validated as a lookup (a blank row kept in its place: no lookup). */
  async *rows(): AsyncGenerator<InputRow> {
    for await (const r of this.records())
      yield r.blank ? {line: r.line, values: r.values, blank: true} : this.validate(r.line, r.values)
  }

  /**
   * Every data row's values, unvalidated (the output pass, which already knows each row's key): blank rows
   * between data rows in their places (marked), none after the last data row.
   */
  async *records(): AsyncGenerator<InputRecord> {
    let first = true
    let n = 0
    for await (const r of rawRows(this.path, this.name, this.kind, this.delimiter)) {
      if (first && this.kind !== 'ndjson') {
        first = false
        continue
      }
      if (n++ >= this.dataRows) return
      yield r
    }
  }

  /** Validate one row again (the output pass, for the few rows that are invalid). */
  validate(line: number, values: Record<string, string>): InputRow {
    return toRow(line, values, this.defaultFips, this.sources, this.kind === 'rows' ? 'row' : 'line')
  }

  /**
   * The row's note (the output pass, without validating the row again): its fips as padded, if it was, or
   * the county its ZIP chose when it gave none.
   */
  noteOf(values: Record<string, string>): string | undefined {
    const cells = readCells(values, this.sources)
    const placed =
      cells.fips ??
      this.defaultFips ??
      (cells.address === undefined ? undefined : zipCounty(cells.address)?.note)
    const notes = [
      cells.note,
      cells.fips === undefined && this.defaultFips === undefined ? placed : undefined,
    ]
    const said = notes.filter((n) => n !== undefined)
    return said.length ? said.join('; ') : undefined
  }
}

/**
 * Each input row's lookup key, by row number, in 12 bytes a row (a million rows in 12 MB): the output
 * pass finds every row's answer without validating and normalising the row again. All zero: no lookup.
 */
export class RowKeys {
  private buf = Buffer.alloc(12 * 4096)
  private size = 0

  push(key: string | undefined): void {
    if ((this.size + 1) * 12 > this.buf.length) {
      const bigger = Buffer.alloc(this.buf.length * 2)
      this.buf.copy(bigger)
      this.buf = bigger
    }
    if (key !== undefined) Buffer.from(key, 'base64url').copy(this.buf, this.size * 12)
    this.size++
  }

  /** The key of row `i` (0-based), or undefined for a row with no lookup. */
  get(i: number): string | undefined {
    const k = this.buf.subarray(i * 12, i * 12 + 12)
    for (let j = 0; j < 12; j++) if (k[j] !== 0) return k.toString('base64url')
    return undefined
  }
}

/**
 * The first bytes: not binary (src/io/text-input.ts names what a binary file looks like), UTF-8, not
 * empty; whether a BOM starts them. Other encodings and workbooks are decoded before this is called.
 */
async function readHead(path: string, name: string, rows: boolean): Promise<{text: string; bom: boolean}> {
  const fh = await open(path, 'r')
  try {
    const buf = Buffer.alloc(64 * 1024)
    const {bytesRead} = await fh.read(buf, 0, buf.length, 0)
    const bytes = buf.subarray(0, bytesRead)
    if (!rows) {
      let shape: InputShape
      try {
        shape = sniffInput(bytes, false)
      } catch (error) {
        if (error instanceof InputFormatError) throw new InputError(`${name}: ${error.message}`)
        throw error
      }
      if (shape.kind !== 'utf-8')
        throw new InputError(`${name}: ${shape.kind} input is read through openBatchInput, which decodes it`)
    }
    let text: string
    try {
      // a multi-byte character cut at the end of the sample is not an error
      text = new TextDecoder('utf-8', {fatal: true}).decode(bytes, {stream: true})
    } catch {
      throw new InputError(`${name}: not UTF-8 text; save the file as UTF-8 CSV or NDJSON`)
    }
    const body = text.replace(/^\ufeff/, '').trimStart()
    if (body === '' && bytesRead < buf.length)
      throw new InputError(`${name}: the input is empty; expected a header line such as "fips,address"`)
    // TextDecoder drops a BOM, so look at the bytes
    return {text: body, bom: bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf}
  } finally {
    await fh.close()
  }
}

/**
 * A header line with tabs and no comma is TAB-separated: what Excel saves as "Unicode Text" (and a .tsv).
 * A comma anywhere in it keeps CSV, the common case, whatever else the line holds.
 */
function tabSeparated(head: string): boolean {
  const nl = head.search(/[\r\n]/)
  const first = nl === -1 ? head : head.slice(0, nl)
  return first.includes('\t') && !first.includes(',')
}

/** A decoded sheet's rows (src/jobs/batch-input-decode.ts): [row number, ...cells] a line. */
async function* sheetRows(path: string): AsyncGenerator<{row: number; cells: string[]}> {
  for await (const l of readLines(path)) {
    if (l.bytes.length === 0) continue
    const [row, ...cells] = JSON.parse(l.bytes.toString('utf8')) as [number, ...string[]]
    yield {row, cells}
  }
}

interface RawRow {
  line: number
  /** For the CSV header row: `{header: names joined by NUL}`. */
  values: Record<string, string>
  /** Every cell empty (the reader of the rows decides what to do with it). */
  blank?: true
}

async function* rawRows(
  path: string,
  name: string,
  kind: 'csv' | 'ndjson' | 'rows',
  delimiter: ',' | '\t',
): AsyncGenerator<RawRow> {
  if (kind === 'ndjson') {
    let i = 0
    for await (const l of readLines(path)) {
      i++
      const raw = l.bytes.toString('utf8').replace(/^\ufeff/, '')
      if (raw.trim() === '') continue
      let obj: unknown
      try {
        obj = JSON.parse(raw)
      } catch (error) {
        throw new InputError(`${name} line ${i}: not valid JSON (${(error as Error).message})`)
      }
      if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
        throw new InputError(`${name} line ${i}: expected a JSON object per line`)
      const values = inputValues()
      for (const [k, v] of Object.entries(obj as Record<string, unknown>))
        values[k] = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v)
      yield {line: i, values}
    }
    return
  }
  if (kind === 'rows') {
    let columns: string[] | undefined
    for await (const {row, cells} of sheetRows(path)) {
      if (!columns) {
        columns = cells
        yield {line: row, values: {header: columns.join('\u0000')}}
        continue
      }
      const values = inputValues()
      for (let i = 0; i < columns.length; i++) values[columns[i]!] = cells[i] ?? ''
      yield blankRow(cells) ? {line: row, values, blank: true} : {line: row, values}
    }
    return
  }
  let columns: string[] | undefined
  try {
    for await (const {fields, line} of readCsv(path, {delimiter})) {
      if (!columns) {
        columns = headerColumns(fields, name)
        yield {line: 1, values: {header: columns.join('\u0000')}}
        continue
      }
      const values = inputValues()
      for (let i = 0; i < columns.length; i++) values[columns[i]!] = fields[i] ?? ''
      // kept in its place (or, after the last data row, not read: counted by open)
      yield blankRow(fields) ? {line, values, blank: true} : {line, values}
    }
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new InputError(`${name} line ${error.line}: ${error.message}`)
    throw error
  }
}

/**
 * A row's cells by column name, with no prototype: an input column may be named anything (a sheet's
 * `__proto__` or `constructor`), and an ordinary object would turn the one into its prototype (the cell
 * lost) and answer the other, where a row lacks it, with what every object inherits.
 */
function inputValues(): Record<string, string> {
  return Object.create(null) as Record<string, string>
}

/**
 * A row with nothing in any cell (Excel saves a blank row that was ever formatted as `,,,,`, and often a
 * run of them at the end): no lookup, and not an invalid row. Between data rows it keeps its place as an
 * empty answer (status `blank`), so the output's rows line up with the input's; after the last data row it
 * is skipped and counted. Cells of spaces only count as empty, as they do for a lookup.
 */
export function blankRow(fields: readonly string[]): boolean {
  for (const f of fields) if (f.trim() !== '') return false
  return true
}

/**
 * The header's names exactly as typed (`FIPS,Address,City` stays so in the output); two names
 * that differ only in case, spacing or dashes are refused, since Excel, DuckDB and the lookup columns
 * (recognised that way) could not tell them apart.
 */
function headerColumns(record: string[], name: string, where = 'line 1'): string[] {
  const canon = record.map(canonicalColumn)
  const at = canon.findIndex((h, i) => h !== '' && canon.indexOf(h) !== i)
  if (at !== -1) {
    const first = record[canon.indexOf(canon[at]!)]!
    const again = record[at]!
    throw new InputError(
      first === again
        ? `${name} ${where}: the column "${again}" appears twice in the header`
        : `${name} ${where}: the columns "${first}" and "${again}" differ only in case or spacing; rename one`,
    )
  }
  return record
}

/**
 * A row's address line and fips as sfl reads them (a spreadsheet's lost leading zeros restored), and the
 * note saying what was read differently from the cells as typed.
 */
function readCells(
  values: Record<string, string>,
  sources: Sources,
): {
  address: string | undefined
  apn: string | undefined
  propertyId: string | undefined
  fips: string | undefined
  note: string | undefined
} {
  const pick = (k: string | undefined) => {
    const v = k === undefined ? undefined : values[k]
    return v === undefined || v.trim() === '' ? undefined : v.trim()
  }
  const joined = sources.address && joinAddress(sources.address.map((c) => values[c] ?? ''))
  const typed = sources.fips === undefined ? undefined : values[sources.fips]?.trim()
  const padded = typed ? padFips(typed) : undefined
  const ids = {
    propertyId: pick(sources.property_id),
    apn: pick(sources.apn),
    address: joined?.line === '' ? undefined : joined?.line,
  }
  const used = usedIdentifier(ids)
  const notes = [padded?.note, joined?.note, used.note].filter((n) => n !== undefined)
  return {...used.ids, fips: padded?.fips, note: notes.length ? notes.join('; ') : undefined}
}

/**
 * A row that gives several identifiers is looked up by the most precise (spec 4: property_id "the most
 * precise lookup", then the county's own parcel number, then the address), and the note says what was not
 * used, so a row is never refused for carrying more than it needs (a CRM export often has both an address
 * and an APN column). Pure.
 */
export function usedIdentifier(ids: {
  propertyId?: string | undefined
  apn?: string | undefined
  address?: string | undefined
}): {
  ids: {propertyId: string | undefined; apn: string | undefined; address: string | undefined}
  note?: string
} {
  const order = [
    ['property_id', ids.propertyId],
    ['apn', ids.apn],
    ['address', ids.address],
  ] as const
  const given = order.filter(([, v]) => v !== undefined)
  if (given.length <= 1) return {ids: {propertyId: ids.propertyId, apn: ids.apn, address: ids.address}}
  const [use] = given[0]!
  const unused = given.slice(1).map(([k, v]) => `${k} "${v!}"`)
  return {
    ids: {
      propertyId: use === 'property_id' ? ids.propertyId : undefined,
      apn: use === 'apn' ? ids.apn : undefined,
      address: use === 'address' ? ids.address : undefined,
    },
    note: `looked up by ${use}; not used: ${unused.join(', ')}`,
  }
}

function toRow(
  line: number,
  values: Record<string, string>,
  defaultFips: string | undefined,
  sources: Sources,
  unit: 'line' | 'row',
): InputRow {
  const row: InputRow = {line, values}
  const {address, apn, propertyId, fips, note} = readCells(values, sources)
  // no county given: an address that ends in a ZIP is placed in the ZIP's county (the largest share of its
  // homes), as a single lookup's is (docs/lookup.md "A ZIP is enough"); the note says so
  const byZip = fips ?? defaultFips ?? (address === undefined ? undefined : zipCounty(address))
  const notes = [note, byZip && typeof byZip === 'object' ? byZip.note : undefined].filter(
    (n) => n !== undefined,
  )
  if (notes.length) row.note = notes.join('; ')
  try {
    if (byZip === undefined && apn === undefined && propertyId === undefined && address !== undefined)
      throw new UsageError(
        `no county: ${sources.fips === undefined ? 'no fips column and no --fips' : `the ${sources.fips} cell is empty`}, and the address does not end in a ZIP code; give the county, or end the address with its ZIP`,
      )
    const q = validateLookup(
      {fips: typeof byZip === 'object' ? byZip.fips : byZip, address, apn, propertyId},
      {
        fips: sources.fips ?? 'fips',
        address:
          sources.address?.length === 1
            ? sources.address[0]!
            : sources.address
              ? `address (${sources.address.join(' + ')})`
              : 'address',
        apn: sources.apn ?? 'apn',
        propertyId: sources.property_id ?? 'property_id',
      },
    )
    row.query = q
    if (q.by.kind === 'address') {
      const std = standardiseInCounty(q.by.value, q.fips)
      row.std = std
      row.key = compactKey(addressDedupeKey(q.fips, std))
    } else row.key = compactKey(dedupeKey(q))
  } catch (error) {
    if (!(error instanceof SflError)) throw error
    row.invalid = `${unit} ${line}: ${error.message}`
  }
  return row
}

let zipTable: ZipCounties | undefined

/** The county of the ZIP an address ends in (its largest share), with the note saying so; undefined: none. */
function zipCounty(address: string): {fips: string; note: string} | undefined {
  const zip = addressZip(address)
  if (zip === undefined) return undefined
  // read once, and only when a row needs it (dist/ when built, src/address/ in the tests)
  zipTable ??= readZipTable(dataDirs(import.meta.url))
  const counties = zipTable(zip)
  if (!counties?.length) return undefined
  const shared =
    counties.length > 1 ? `; ${counties.length} counties share it, this one holds most of its homes` : ''
  return {fips: counties[0]!, note: `county ${counties[0]!} from ZIP ${zip}${shared}`}
}

/** 96 bits of SHA-256 as 16 base64url characters: no practical chance of a clash in a million lookups. */
export function compactKey(key: string): string {
  return createHash('sha256').update(key).digest().subarray(0, 12).toString('base64url')
}

/** Rows that name the same property the same way are one lookup; addresses compare in their Pub 28 form. */
export function dedupeKey(q: LookupQuery): string {
  if (q.by.kind !== 'address') return `${q.fips}|${q.by.kind}|${q.by.value}`
  return addressDedupeKey(q.fips, standardiseInCounty(q.by.value, q.fips))
}

/** An address's de-duplication key from its standard form (standardised once per row). */
function addressDedupeKey(fips: string, std: StandardAddress): string {
  return `${fips}|address|${addressIdentity(std)}`
}

/**
 * Open `--input` (a path, or - for stdin): stdin is first copied to a private temp file, since the rows
 * are read more than once; an input in another form than UTF-8 text (UTF-16, .gz, a workbook: see
 * src/jobs/batch-input-decode.ts) is decoded there once. Returns the checked input, an id of its content
 * for the checkpoint, and a clean-up for the temp folder.
 */
export async function openBatchInput(
  source: string,
  defaultFips: string | undefined,
  stdin: NodeJS.ReadableStream = process.stdin,
  map: ColumnMap = {},
  opts: {sheet?: string | undefined} = {},
): Promise<{input: BatchInput; inputId: string; cleanup: () => Promise<void>}> {
  const name = source === '-' ? 'stdin' : source
  let dir: ScratchDir | undefined
  // a private scratch folder (0700) through the output gate, for stdin's copy and a decoded input
  const scratch = async () => (dir ??= makeScratchDir('sfl-input-')).path
  const cleanup = async () => {
    await dir?.remove()
  }
  try {
    let path = source
    if (source === '-') {
      path = join(await scratch(), 'stdin')
      try {
        await streamToPrivateFile(stdin, path)
      } catch (error) {
        throw new InputError(`cannot read --input -: ${(error as Error).message}`)
      }
    }
    const hash = createHash('sha256')
    let input: BatchInput
    try {
      const decoded = await decodeInput(path, name, {sheet: opts.sheet, scratch})
      input = await BatchInput.open(decoded.path, name, defaultFips, hash, map, decoded)
      // NDJSON and a sheet's rows are checked a row at a time: hash their bytes in a read of their own
      if (input.kind !== 'csv')
        for await (const chunk of createReadStream(decoded.path)) hash.update(chunk as Buffer)
    } catch (error) {
      if (error instanceof SflError) throw error
      if (error instanceof InputFormatError) throw new InputError(error.message)
      throw new InputError(`cannot read --input ${name}: ${(error as Error).message}`)
    }
    return {input, inputId: hash.digest('hex'), cleanup}
  } catch (error) {
    await cleanup()
    throw error
  }
}

/**
 * A set of 12-byte lookup keys in one Buffer (open addressing, half full at most): a million distinct
 * lookups in 32 MB with no object per key, where a Set of strings takes about twice that and leaves V8
 * a large old space to collect. The keys are SHA-256 prefixes, so their first bytes are a good hash.
 */
export class KeySet {
  private slots = Buffer.alloc(12 * 1024)
  private used = 0

  /** Add `key` (16 base64url characters); false when it was there already. */
  add(key: string): boolean {
    if ((this.used + 1) * 2 > this.slots.length / 12) this.grow()
    const k = Buffer.from(key, 'base64url')
    if (this.place(this.slots, k)) {
      this.used++
      return true
    }
    return false
  }

  clear(): void {
    this.slots = Buffer.alloc(12 * 1024)
    this.used = 0
  }

  private place(slots: Buffer, k: Buffer): boolean {
    const mask = slots.length / 12 - 1
    for (let i = k.readUInt32LE(0) & mask; ; i = (i + 1) & mask) {
      const at = i * 12
      if (
        slots.readUInt32LE(at) === 0 &&
        slots.readUInt32LE(at + 4) === 0 &&
        slots.readUInt32LE(at + 8) === 0
      ) {
        k.copy(slots, at)
        return true
      }
      if (slots.compare(k, 0, 12, at, at + 12) === 0) return false
    }
  }

  private grow(): void {
    const bigger = Buffer.alloc(this.slots.length * 2)
    for (let at = 0; at < this.slots.length; at += 12) {
      const k = this.slots.subarray(at, at + 12)
      if (k.readUInt32LE(0) !== 0 || k.readUInt32LE(4) !== 0 || k.readUInt32LE(8) !== 0) this.place(bigger, k)
    }
    this.slots = bigger
  }
}
