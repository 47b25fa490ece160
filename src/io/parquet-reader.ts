import {closeSync, fstatSync, openSync, readSync} from 'node:fs'
import {brotliDecompressSync, gunzipSync} from 'node:zlib'
import * as zlib from 'node:zlib'

import {decompressorsFor, ParquetCodecError} from './parquet-codecs.js'
import {
  CompactReader,
  ParquetLayoutError,
  parseFooter,
  T_STRUCT,
  T_TRUE,
  type ColumnMetaData,
  type FileMetaData,
  type SchemaElement,
} from './parquet-footer.js'

export {ParquetLayoutError}

/**
 * Reading Parquet exports (`sfl stats`, `sfl changes`, `--changes-since`), column by column: only the
 * columns asked for are read and decompressed, a row group at a time, into flat tables (a slot per row
 * and each distinct dictionary value once), so a digest or an aggregate over them makes no object per
 * row. hyparquet's general reader assembles each value through its nested-list machinery and made
 * `sfl changes` of two 150,000-record files take 11.5 s (issue 32); this reads the flat columns every
 * sfl export has (every column OPTIONAL or REQUIRED, none nested) with a loop per page. The footer is
 * read by src/io/parquet-footer.ts, so this reader does not load hyparquet; hyparquet reads, as record
 * objects, any file laid out otherwise (`readParquetRecords`): nested columns, INT96 or decimal columns,
 * encodings or codecs this reader does not know (`ParquetLayoutError` says which).
 *
 * The Parquet format's facts used here are from its specification (github.com/apache/parquet-format):
 * the page header in Thrift's compact protocol, the RLE/bit-packing hybrid for levels and dictionary
 * indices, PLAIN values little-endian.
 */

export type ParquetRecord = Record<string, string | number | boolean | null>

const pad = (n: number, w = 2) => String(n).padStart(w, '0')

/** A DATE as spec 2.2 shapes it, YYYY-MM-DD. */
function isoDate(d: Date): string {
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
}

/** A TIMESTAMP as spec 2.1 shapes it, YYYY-MM-DDTHH:MM:SS (milliseconds only when there are some). */
function isoDateTime(d: Date): string {
  const ms = d.getUTCMilliseconds()
  return `${isoDate(d)}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${ms ? `.${pad(ms, 3)}` : ''}`
}

/**
 * The records of a Parquet file of any layout hyparquet reads, keyed by column header
 * (`AssumableMortgage.LoanType`), one row group at a time so memory stays flat. DATE columns come back
 * as `YYYY-MM-DD`, TIMESTAMP columns as `YYYY-MM-DDTHH:MM:SS`, INT64 as numbers (spec 2.1
 * ServicePropertyID has 11 digits, well inside a double's exact integers). The column reader below gives
 * the same values for the files it takes (`cellOf`).
 *
 * @example for await (const r of readParquetRecords('county.parquet')) console.log(r['FinalValue'])
 */
export async function* readParquetRecords(path: string): AsyncGenerator<ParquetRecord> {
  const {asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema} =
    await import('hyparquet')
  const file = await asyncBufferFromFile(path)
  const metadata = await parquetMetadataAsync(file)
  // gzip, brotli and zstd from node:zlib (hyparquet has Snappy only); zstd said plainly where Node lacks it
  const compressors = decompressorsFor()
  for (const group of metadata.row_groups)
    for (const c of group.columns)
      if (c.meta_data?.codec === 'ZSTD' && !compressors.ZSTD) throw new ParquetCodecError()
  const dates = new Set(
    parquetSchema(metadata)
      .children.filter((c) => c.element.converted_type === 'DATE' || c.element.logical_type?.type === 'DATE')
      .map((c) => c.element.name),
  )
  let start = 0
  for (const group of metadata.row_groups) {
    const end = start + Number(group.num_rows)
    const rows = await parquetReadObjects({file, metadata, rowStart: start, rowEnd: end, compressors})
    for (const row of rows) {
      const out: ParquetRecord = {}
      for (const k in row) {
        const v: unknown = row[k]
        out[k] =
          v === undefined || v === null
            ? null
            : v instanceof Date
              ? dates.has(k)
                ? isoDate(v)
                : isoDateTime(v)
              : typeof v === 'bigint'
                ? Number(v)
                : (v as string | number | boolean)
      }
      yield out
    }
    start = end
  }
}

// ---------------------------------------------------------------------------------------------------
// The column reader

/**
 * Whether the column reader lays `path` out and the first row group's pages look whole, without
 * decompressing any: the footer parses, and each column chunk's pages up to its first data page have a
 * header that fits the chunk and a body that starts as its codec's does (a Snappy block's length is the
 * page's, a gzip or zstd stream its magic bytes). False for any failure, which src/io/export-reader.ts then
 * names when it reads the file. Decoding the first row instead decompressed every column's first page (a
 * sixth of a 100,000-row export, on each side, before a comparison could start: issue 32); a page damaged
 * inside its compressed bytes is found by the reading itself (src/changes/scan-parquet.ts reads such a
 * file through export-reader, which names it).
 */
export async function pagesLookWhole(path: string): Promise<boolean> {
  let file: ParquetColumns | undefined
  try {
    file = await ParquetColumns.open(path)
    return !file.groups.length || file.firstPagesLookWhole()
  } catch {
    return false
  } finally {
    file?.close()
  }
}

/** What a column's values are, from its physical and logical type. */
export type ColumnKind = 'string' | 'number' | 'boolean' | 'date' | 'timestamp'

export interface ParquetColumn {
  name: string
  /** Its place among the file's columns (and in each row group's column chunks). */
  index: number
  kind: ColumnKind
  physical: 'BOOLEAN' | 'INT32' | 'INT64' | 'FLOAT' | 'DOUBLE' | 'BYTE_ARRAY'
  /** REQUIRED columns have no definition levels. */
  optional: boolean
  /** Milliseconds per unit of a timestamp column (MICROS: 0.001). */
  msPerUnit: number
}

/**
 * One column of one row group: per row, the slot of its value in the table (-1: null). A dictionary's
 * values are each one slot, whatever the number of rows that use it; PLAIN values one slot each.
 */
export interface ColumnValues {
  column: ParquetColumn
  rows: number
  slot: Int32Array
  /** Slots used. */
  size: number
  /** BYTE_ARRAY values: slot i is `bytes[start[i], end[i])`. */
  bytes: Uint8Array
  start: Int32Array
  end: Int32Array
  /** Numbers (INT32, INT64 as a double, FLOAT, DOUBLE; days of a DATE, units of a TIMESTAMP) and booleans (0 or 1). */
  num: Float64Array
}

/**
 * Row sums a scan wants instead of slots (src/changes/scan-parquet.ts: a record's digest is the sum of its
 * values' fingerprints): for the columns in `summed`, each page's new table values are fingerprinted by
 * `fingerprint` (into `la`, `lb` by slot), and each row's value's fingerprint is added to `sumA`, `sumB`
 * as its levels and indices are walked, in the one pass that would otherwise write its slot. Such a
 * column's `slot` array is left unwritten.
 */
export interface RowSums {
  summed: ReadonlySet<number>
  sumA: Int32Array
  sumB: Int32Array
  /** Fingerprint the table's slots [from, to) of `v`; returns the per-slot fingerprints (from 0). */
  fingerprint(v: ColumnValues, from: number, to: number): {la: Int32Array; lb: Int32Array}
}

/**
 * Rows a reader wants to know hold a value, not which (src/jobs/file-stats.ts: a record carries a loan when
 * any AssumableMortgage column holds one): for the columns in `columns`, each row whose definition level
 * says it holds a value sets its byte of `mask` to 1, and nothing else of the column is decoded (its
 * dictionary and values are skipped, a DATA_PAGE_V2's values not even decompressed). Such a column's
 * values come back empty and its `slot` array unwritten.
 */
export interface RowPresence {
  columns: ReadonlySet<number>
  mask: Uint8Array
}

export interface RowGroupInfo {
  /** The file's row number of the group's first row. */
  first: number
  rows: number
}

/** One column chunk of a row group as it lies in the file (`ParquetColumns.chunks`). */
export interface RawChunk {
  column: ParquetColumn
  meta: ColumnMetaData
  /** Its pages, headers and bodies, compressed as `meta.codec` says. */
  bytes: Uint8Array
}

const MAGIC = 0x31524150 // "PAR1" read little-endian

/** A footer's reading: its metadata, its flat columns and its row groups, checked. */
interface Layout {
  readonly metadata: FileMetaData
  readonly columns: ParquetColumn[]
  readonly groups: RowGroupInfo[]
  /** Each row group's column chunks, checked (`chunkMeta`) and placed, by column index. */
  readonly places: ChunkPlace[][]
}

/** A column chunk's metadata, checked, and where its bytes lie in the file. */
interface ChunkPlace {
  meta: ColumnMetaData
  start: number
  end: number
}

/**
 * The footers read last, by their bytes. `sfl changes` opens a file up to three times on one thread (its
 * check, its scan, its read-back) and parsing a footer is a pure function of its bytes: the same bytes
 * (compared whole; any change to the file that moves a byte of the footer misses) are not parsed again
 * (a 1,000,000-record export's footer is 350 kB). A few only, and only what parsed and passed the checks.
 */
const LAYOUTS: Array<{footer: Uint8Array; layout: Layout}> = []
const MAX_LAYOUTS = 4

/** `footer`: the file's metadata with its last 8 bytes (the metadata's length, "PAR1"). */
function layoutOf(footer: Uint8Array): Layout {
  const known = LAYOUTS.find((l) => Buffer.compare(l.footer, footer) === 0)
  if (known) return known.layout
  const metadata = parseFooter(footer.subarray(0, footer.length - 8))
  const columns = flatColumns(metadata.schema)
  const groups: RowGroupInfo[] = []
  // each chunk checked and placed once here, not at every read of it (a read-back reads every chunk)
  const places: ChunkPlace[][] = []
  let first = 0
  for (const g of metadata.row_groups) {
    if (g.columns.length !== columns.length) throw new ParquetLayoutError('a row group without every column')
    groups.push({first, rows: Number(g.num_rows)})
    first += Number(g.num_rows)
    places.push(
      g.columns.map((c) => {
        const meta = chunkMeta(c.meta_data)
        return {meta, ...chunkSpan(meta)}
      }),
    )
  }
  const layout = {metadata, columns, groups, places}
  LAYOUTS.unshift({footer: new Uint8Array(footer), layout}) // a copy (one memcpy): the caller owns its buffer
  LAYOUTS.length = Math.min(LAYOUTS.length, MAX_LAYOUTS)
  return layout
}

/**
 * A Parquet file open for reading by column. `open` reads the footer (src/io/parquet-footer.ts) and
 * checks that every column is flat and of a type this reader knows; then `readGroup` decodes the chosen
 * columns of one row group, reading their bytes in one read.
 */
export class ParquetColumns {
  private constructor(
    readonly path: string,
    private fd: number | undefined,
    readonly metadata: FileMetaData,
    readonly columns: ParquetColumn[],
    readonly groups: RowGroupInfo[],
    private readonly places: ChunkPlace[][],
  ) {}

  get rows(): number {
    return this.groups.reduce((a, g) => a + g.rows, 0)
  }

  column(name: string): ParquetColumn | undefined {
    return this.columns.find((c) => c.name === name)
  }

  /**
   * Open `path`; throws ParquetLayoutError for a file whose layout this reader does not take (a footer
   * damaged among them), and the file system's errors (ENOENT...) as they are.
   */
  static async open(path: string): Promise<ParquetColumns> {
    const fd = openSync(path, 'r')
    try {
      const size = fstatSync(fd).size
      if (size < 12) throw new ParquetLayoutError('too short for a Parquet file')
      const tail = readAt(fd, size - 8, 8)
      if (new DataView(tail.buffer, tail.byteOffset).getUint32(4, true) !== MAGIC)
        throw new ParquetLayoutError('no Parquet magic bytes at the end')
      const length = new DataView(tail.buffer, tail.byteOffset).getUint32(0, true)
      if (length + 12 > size) throw new ParquetLayoutError('a footer longer than the file')
      const footer = readAt(fd, size - 8 - length, length + 8)
      const {metadata, columns, groups, places} = layoutOf(footer)
      return new ParquetColumns(path, fd, metadata, columns, groups, places)
    } catch (error) {
      closeSync(fd)
      throw error
    }
  }

  /** The last values read of each column (by index), whose arrays the next group's may take. */
  private readonly last = new Map<number, ColumnValues>()

  /**
   * The values of `columns` in row group `g` (one read of their bytes). They hold until the next call:
   * its values take the arrays of this one's for the same columns (a scan keeps one group at a time).
   */
  readGroup(
    g: number,
    columns: readonly ParquetColumn[],
    sums?: RowSums,
    present?: RowPresence,
  ): ColumnValues[] {
    const rows = this.groups[g]!.rows
    return this.chunks(g, columns).map(({column: c, meta, bytes}) => {
      const v = decodeChunk(
        c,
        meta,
        bytes,
        rows,
        this.last.get(c.index),
        sums?.summed.has(c.index) ? sums : undefined,
        present?.columns.has(c.index) ? present.mask : undefined,
      )
      this.last.set(c.index, v)
      return v
    })
  }

  /**
   * The values of `columns` at the rows `want` of row group `g` (group-relative, ascending), as `cellOf`
   * gives them: a list per column, a value per wanted row. Only the pages holding wanted rows are
   * decompressed, and only the wanted values decoded (a row group's few changed rows, read back).
   */
  readRows(g: number, columns: readonly ParquetColumn[], want: Int32Array): ParquetCell[][] {
    const rows = this.groups[g]!.rows
    return this.chunks(g, columns).map(({column, meta, bytes}) => pickChunk(column, meta, bytes, rows, want))
  }

  /**
   * The column chunks of `columns` in row group `g` as they lie in the file (their pages, compressed), read
   * in one read (a group's columns lie together; one far from the others costs bytes, not reads), each with
   * its metadata, checked as every reader here checks it (a codec or encoding this reader does not know is
   * a ParquetLayoutError). For readGroup and readRows, and for a decoder of its own
   * (src/changes/kernel/parquet-kernel.ts). The bytes are this file's one read buffer (`readShared`):
   * valid until its next read (`chunks`, `readGroup`, `readRows`), so what a caller keeps it copies.
   */
  chunks(g: number, columns: readonly ParquetColumn[]): RawChunk[] {
    if (this.fd === undefined) throw new Error(`${this.path}: closed`)
    const places = this.places[g]!
    if (!columns.length) return []
    let from = Infinity
    let to = -Infinity
    for (const c of columns) {
      const p = places[c.index]!
      from = Math.min(from, p.start)
      to = Math.max(to, p.end)
    }
    const bytes = this.readShared(from, to - from)
    return columns.map((column) => {
      const {meta, start, end} = places[column.index]!
      return {column, meta, bytes: bytes.subarray(start - from, end - from)}
    })
  }

  /** The first row group's pages up to each column's first data page (`pagesLookWhole`). */
  firstPagesLookWhole(): boolean {
    if (this.fd === undefined) throw new Error(`${this.path}: closed`)
    const rows = this.groups[0]!.rows
    for (const {meta, start, end} of this.places[0]!) {
      const bytes = this.readShared(start, end - start)
      if (!chunkStartLooksWhole(meta.codec, bytes, rows)) return false
    }
    return true
  }

  /**
   * `length` bytes from `position`, read into this file's one buffer: valid until its next read, so the
   * bytes a caller keeps it copies (the kernel into its memory, the decoder into its tables). A fresh
   * buffer a read faulted its pages in from the system: 15 ms of a Parquet comparison's main thread for
   * 20 MB read, against 1 ms into a buffer read into before (issue 32, CPU profile and a measure of reads
   * alone).
   */
  private readShared(position: number, length: number): Uint8Array {
    if (this.shared.length < length)
      this.shared = Buffer.allocUnsafe(Math.max(length, 2 * this.shared.length))
    return readAt(this.fd!, position, length, this.shared)
  }

  private shared = Buffer.alloc(0)

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}

function readAt(fd: number, position: number, length: number, into?: Buffer): Uint8Array {
  const out = into ?? Buffer.allocUnsafe(length)
  for (let at = 0; at < length;) {
    const n = readSync(fd, out, at, length - at, position + at)
    if (n === 0) throw new ParquetLayoutError('the file ends inside a column chunk')
    at += n
  }
  return into ? into.subarray(0, length) : out
}

/** The file's columns, which must all be leaves of the root (no groups, lists or maps). */
function flatColumns(schema: SchemaElement[]): ParquetColumn[] {
  const root = schema[0]
  if (!root || (root.num_children ?? 0) !== schema.length - 1) throw new ParquetLayoutError('nested columns')
  return schema.slice(1).map((e, index) => {
    if (e.num_children) throw new ParquetLayoutError(`the nested column ${e.name}`)
    if (e.repetition_type === 'REPEATED') throw new ParquetLayoutError(`the repeated column ${e.name}`)
    return {
      name: e.name,
      index,
      ...kindOf(e),
      optional: e.repetition_type !== 'REQUIRED',
    }
  })
}

function kindOf(e: SchemaElement): Pick<ParquetColumn, 'kind' | 'physical' | 'msPerUnit'> {
  const lt = e.logical_type
  const ct = e.converted_type
  const unsupported = () => new ParquetLayoutError(`the column ${e.name} (${e.type} ${lt?.type ?? ct ?? ''})`)
  switch (e.type) {
    case 'BYTE_ARRAY':
      // text (UTF8, STRING, JSON, ENUM) or plain bytes, which hyparquet also reads as UTF-8 text
      if (lt && lt.type !== 'STRING' && lt.type !== 'JSON' && lt.type !== 'ENUM') throw unsupported()
      if (ct && ct !== 'UTF8' && ct !== 'JSON' && ct !== 'ENUM') throw unsupported()
      return {kind: 'string', physical: 'BYTE_ARRAY', msPerUnit: 0}
    case 'BOOLEAN':
      return {kind: 'boolean', physical: 'BOOLEAN', msPerUnit: 0}
    case 'FLOAT':
    case 'DOUBLE':
      if (lt || ct) throw unsupported()
      return {kind: 'number', physical: e.type, msPerUnit: 0}
    case 'INT32':
      if (lt?.type === 'DATE' || ct === 'DATE') return {kind: 'date', physical: 'INT32', msPerUnit: 0}
      if ((lt && lt.type !== 'INTEGER') || (ct && !/^U?INT_/.test(ct))) throw unsupported()
      return {kind: 'number', physical: 'INT32', msPerUnit: 0}
    case 'INT64': {
      const unit =
        lt?.type === 'TIMESTAMP'
          ? lt.unit
          : ct === 'TIMESTAMP_MILLIS'
            ? 'MILLIS'
            : ct === 'TIMESTAMP_MICROS'
              ? 'MICROS'
              : undefined
      if (unit)
        return {
          kind: 'timestamp',
          physical: 'INT64',
          msPerUnit: unit === 'MILLIS' ? 1 : unit === 'MICROS' ? 1e-3 : 1e-6,
        }
      if ((lt && lt.type !== 'INTEGER') || (ct && !/^U?INT_/.test(ct))) throw unsupported()
      return {kind: 'number', physical: 'INT64', msPerUnit: 0}
    }
    default:
      throw unsupported()
  }
}

const CODECS = new Set(['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'ZSTD'])
const ENCODINGS = new Set(['PLAIN', 'PLAIN_DICTIONARY', 'RLE_DICTIONARY', 'RLE', 'BIT_PACKED'])

function chunkMeta(m: ColumnMetaData | undefined): ColumnMetaData {
  if (!m) throw new ParquetLayoutError('a column chunk without its metadata')
  if (!CODECS.has(m.codec) || (m.codec === 'ZSTD' && !zstd))
    throw new ParquetLayoutError(`the compression ${m.codec}`)
  for (const e of m.encodings) if (!ENCODINGS.has(e)) throw new ParquetLayoutError(`the encoding ${e}`)
  return m
}

/** zstd is in node:zlib from Node 22.15; on Node 20 a zstd file is read as records (hyparquet refuses it there too). */
const zstd = (zlib as {zstdDecompressSync?: (b: Uint8Array) => Buffer}).zstdDecompressSync

function chunkSpan(m: ColumnMetaData): {start: number; end: number} {
  const start = Number(m.dictionary_page_offset ?? m.data_page_offset)
  return {start, end: start + Number(m.total_compressed_size)}
}

// Page types and encodings as Thrift numbers (parquet.thrift)
const DATA_PAGE = 0
const DICTIONARY_PAGE = 2
const DATA_PAGE_V2 = 3
const ENC_PLAIN = 0
const ENC_PLAIN_DICTIONARY = 2
const ENC_RLE = 3
const ENC_RLE_DICTIONARY = 8

/** Decode one column chunk (its pages, in order) into slots and a table, or row sums (RowSums). */
function decodeChunk(
  column: ParquetColumn,
  m: ColumnMetaData,
  bytes: Uint8Array,
  rows: number,
  reuse: ColumnValues | undefined,
  sums?: RowSums,
  presence?: Uint8Array,
): ColumnValues {
  const byteCap = column.physical === 'BYTE_ARRAY' ? Number(m.total_uncompressed_size) : 0
  // the arrays of the column's last group, when the caller is done with it: no allocation per group
  const out: ColumnValues = {
    column,
    rows,
    slot: reuse && reuse.slot.length >= rows ? reuse.slot : new Int32Array(rows),
    size: 0,
    bytes: reuse && reuse.bytes.length >= byteCap ? reuse.bytes : new Uint8Array(byteCap),
    start: reuse?.start ?? new Int32Array(0),
    end: reuse?.end ?? new Int32Array(0),
    num: reuse?.num ?? new Float64Array(0),
  }
  const r = new Thrift(bytes)
  let row = 0
  let bytesUsed = 0
  let dictionary = -1 // slots [0, dictionary) hold the dictionary
  let prints: {la: Int32Array; lb: Int32Array} | undefined
  while (row < rows) {
    if (r.pos >= bytes.length)
      throw new ParquetLayoutError(`${column.name}: a column chunk shorter than its rows`)
    const h = r.pageHeader()
    const body = bytes.subarray(r.pos, r.pos + h.compressed)
    r.pos += h.compressed
    if (h.type === DICTIONARY_PAGE) {
      if (dictionary >= 0 || row > 0) throw new ParquetLayoutError(`${column.name}: a second dictionary page`)
      if (presence) {
        dictionary = h.values // only whether rows hold a value is wanted: no value is read
        continue
      }
      const page = decompress(m.codec, body, h.uncompressed)
      reserve(out, h.values)
      bytesUsed = plainValues(out, page, 0, h.values, bytesUsed)
      dictionary = h.values
      if (sums) prints = sums.fingerprint(out, 0, dictionary)
      continue
    }
    if (h.type !== DATA_PAGE && h.type !== DATA_PAGE_V2) continue // an index page: nothing to read
    if (row + h.values > rows) throw new ParquetLayoutError(`${column.name}: more values than rows`)
    if (presence) {
      markPresent(column, m.codec, h, body, presence, row)
      row += h.values
      continue
    }
    let page: Uint8Array
    let levels: Uint8Array | undefined
    let levelsAt = 0
    let levelsEnd = 0
    let at = 0
    if (h.type === DATA_PAGE_V2) {
      // levels come first, never compressed; then the values, compressed unless is_compressed says not
      if (h.repLength) throw new ParquetLayoutError(`${column.name}: repetition levels`)
      levels = body
      levelsEnd = h.defLength
      const values = body.subarray(h.defLength)
      page = h.compressedV2 ? decompress(m.codec, values, h.uncompressed - h.defLength) : values
    } else {
      page = decompress(m.codec, body, h.uncompressed)
      if (column.optional) {
        if (h.defEncoding !== ENC_RLE) throw new ParquetLayoutError(`${column.name}: bit-packed levels`)
        levels = page
        levelsAt = 4
        levelsEnd = 4 + u32(page, 0)
        at = levelsEnd
      }
    }
    const defs = column.optional && levels ? {b: levels, start: levelsAt, end: levelsEnd} : undefined
    const present = defs ? presentCount(defs.b, defs.start, defs.end, h.values) : h.values
    if (h.encoding === ENC_RLE_DICTIONARY || h.encoding === ENC_PLAIN_DICTIONARY) {
      if (dictionary < 0)
        throw new ParquetLayoutError(`${column.name}: dictionary indices without a dictionary`)
      const idx = hybrid(page, at + 1, page.length, page[at]!, present, dictionary)
      if (idx === undefined) throw new ParquetLayoutError(`${column.name}: a dictionary index out of range`)
      if (sums && prints) sumsOf(defs, sums, prints, row, h.values, idx, 0)
      else slotsOf(defs, out.slot, row, h.values, idx, 0)
    } else if (h.encoding === ENC_PLAIN || (h.encoding === ENC_RLE && column.physical === 'BOOLEAN')) {
      const first = out.size
      reserve(out, present)
      if (h.encoding === ENC_RLE) {
        // booleans, RLE: a 4-byte length, then the hybrid at bit width 1
        const bits = hybrid(page, at + 4, at + 4 + u32(page, at), 1, present)!
        for (let i = 0; i < present; i++) out.num[first + i] = bits[i]!
        out.size += present
      } else bytesUsed = plainValues(out, page, at, present, bytesUsed)
      if (sums) {
        prints = sums.fingerprint(out, first, out.size)
        sumsOf(defs, sums, prints, row, h.values, undefined, first)
      } else slotsOf(defs, out.slot, row, h.values, undefined, first)
    } else throw new ParquetLayoutError(`${column.name}: encoding ${h.encoding}`)
    row += h.values
  }
  return out
}

/**
 * One data page of a column read for presence only (RowPresence): its `h.values` rows from `row` marked in
 * `mask` where their definition level is 1; a REQUIRED column's rows all hold a value. Only a DATA_PAGE
 * (v1) is decompressed, its levels being inside its compressed body.
 */
function markPresent(
  column: ParquetColumn,
  codec: string,
  h: PageHeader,
  body: Uint8Array,
  mask: Uint8Array,
  row: number,
): void {
  if (!column.optional) {
    mask.fill(1, row, row + h.values)
    return
  }
  let defs: {b: Uint8Array; start: number; end: number}
  if (h.type === DATA_PAGE_V2) {
    if (h.repLength) throw new ParquetLayoutError(`${column.name}: repetition levels`)
    defs = {b: body, start: 0, end: h.defLength}
  } else {
    if (h.defEncoding !== ENC_RLE) throw new ParquetLayoutError(`${column.name}: bit-packed levels`)
    const page = decompress(codec, body, h.uncompressed)
    defs = {b: page, start: 4, end: 4 + u32(page, 0)}
  }
  const {b, end} = defs
  let pos = defs.start
  let r = 0
  while (r < h.values) {
    const run = runHeader(b, pos, end)
    pos = run.pos
    if ((run.header & 1) === 1) {
      const count = (run.header >>> 1) * 8
      const stop = Math.min(count, h.values - r)
      if (pos + Math.ceil(stop / 8) > end) throw new ParquetLayoutError('a bit-packed run past its page')
      for (let i = 0; i < stop; i++) mask[row + r + i]! |= (b[pos + (i >> 3)]! >> (i & 7)) & 1
      pos += count / 8
      r += count
    } else {
      const count = Math.min(run.header >>> 1, h.values - r)
      if (pos >= end) throw new ParquetLayoutError('a repeated run past its page')
      const v = b[pos++]!
      if (v > 1) throw new ParquetLayoutError('a definition level above 1')
      if (v === 1) mask.fill(1, row + r, row + r + count)
      r += count
    }
  }
}

/** A column chunk's pages up to its first data page: headers that fit, bodies that start as `codec`'s do. */
function chunkStartLooksWhole(codec: string, bytes: Uint8Array, rows: number): boolean {
  const r = new Thrift(bytes)
  for (;;) {
    if (r.pos >= bytes.length) return false
    const h = r.pageHeader()
    if (h.values > rows || h.uncompressed < 0) return false
    const body = bytes.subarray(r.pos, r.pos + h.compressed)
    r.pos += h.compressed
    const v2 = h.type === DATA_PAGE_V2
    if (
      v2
        ? !bodyLooksWhole(
            h.compressedV2 ? codec : 'UNCOMPRESSED',
            body.subarray(h.defLength),
            h.uncompressed - h.defLength,
          )
        : !bodyLooksWhole(codec, body, h.uncompressed)
    )
      return false
    if (h.type === DATA_PAGE || v2) return true
    if (h.type !== DICTIONARY_PAGE) return false
  }
}

/** A compressed page body's first bytes as `codec` writes them (RFC 1952's magic for gzip, zstd's frame magic). */
function bodyLooksWhole(codec: string, b: Uint8Array, size: number): boolean {
  switch (codec) {
    case 'UNCOMPRESSED':
      return b.length === size
    case 'SNAPPY':
      return snappyPreamble(b)?.length === size
    case 'GZIP':
      return b[0] === 0x1f && b[1] === 0x8b
    case 'ZSTD':
      return b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd
    default:
      return b.length > 0 // brotli has no magic bytes
  }
}

/** A value as the reader gives it. */
export type ParquetCell = string | number | boolean | null

/**
 * The values of one column chunk at the rows `want` (ascending): each page that holds a wanted row is
 * decompressed, its levels and values walked by runs to the wanted ones (no slot per row), the dictionary
 * decoded once when a page refers to it. decodeChunk reads every row; this reads a few.
 */
function pickChunk(
  column: ParquetColumn,
  m: ColumnMetaData,
  bytes: Uint8Array,
  rows: number,
  want: Int32Array,
): ParquetCell[] {
  const out = new Array<ParquetCell>(want.length).fill(null)
  const r = new Thrift(bytes)
  let row = 0
  let wi = 0
  let dictPage: {body: Uint8Array; values: number; size: number} | undefined
  let dict: ColumnValues | undefined
  // each dictionary value made a cell once, at its first use: a chunk's 500-odd wanted rows share a few
  let dictCells: ParquetCell[] = []
  while (row < rows && wi < want.length) {
    if (r.pos >= bytes.length)
      throw new ParquetLayoutError(`${column.name}: a column chunk shorter than its rows`)
    const h = r.pageHeader()
    const body = bytes.subarray(r.pos, r.pos + h.compressed)
    r.pos += h.compressed
    if (h.type === DICTIONARY_PAGE) {
      dictPage = {body, values: h.values, size: h.uncompressed}
      continue
    }
    if (h.type !== DATA_PAGE && h.type !== DATA_PAGE_V2) continue
    let wj = wi
    while (wj < want.length && want[wj]! < row + h.values) wj++
    if (wj === wi) {
      row += h.values // no wanted row here: the page is not even decompressed
      continue
    }
    const dictionaryIndexes = h.encoding === ENC_RLE_DICTIONARY || h.encoding === ENC_PLAIN_DICTIONARY
    if (dictionaryIndexes && !dict && dictPage) {
      // decoded before the data page: both are decompressed into the one scratch buffer
      dict = emptyValues(column, m)
      reserve(dict, dictPage.values)
      plainValues(dict, decompress(m.codec, dictPage.body, dictPage.size), 0, dictPage.values, 0)
      dictCells = new Array<ParquetCell>(dict.size)
    }
    const page = pageOf(column, m, h, body)
    // each wanted row's index among the page's values, or -1 (null)
    const ks = new Int32Array(wj - wi)
    for (let i = 0; i < ks.length; i++) ks[i] = want[wi + i]! - row
    if (page.defs) valueIndexes(page.defs, ks)
    let count = 0
    for (let i = 0; i < ks.length; i++) if (ks[i]! >= 0) count++
    const present = new Int32Array(count)
    for (let i = 0, q = 0; i < ks.length; i++) if (ks[i]! >= 0) present[q++] = ks[i]!
    const at = page.at
    const b = page.page
    let vals: ParquetCell[]
    if (dictionaryIndexes) {
      const d = dict
      if (!d) throw new ParquetLayoutError(`${column.name}: dictionary indices without a dictionary`)
      const idx = hybridAt(b, at + 1, b.length, b[at]!, present)
      vals = new Array<ParquetCell>(idx.length)
      for (let i = 0; i < idx.length; i++) {
        const x = idx[i]!
        if (x >= d.size) throw new ParquetLayoutError(`${column.name}: a dictionary index out of range`)
        vals[i] = dictCells[x] ??= cellOf(d, x)
      }
    } else if (h.encoding === ENC_RLE && column.physical === 'BOOLEAN') {
      const bits = hybridAt(b, at + 4, at + 4 + u32(b, at), 1, present)
      vals = new Array<ParquetCell>(bits.length)
      for (let i = 0; i < bits.length; i++) vals[i] = bits[i] === 1
    } else if (h.encoding === ENC_PLAIN) vals = plainAt(column, b, at, present)
    else throw new ParquetLayoutError(`${column.name}: encoding ${h.encoding}`)
    let p = 0
    for (let i = 0; i < ks.length; i++) if (ks[i]! >= 0) out[wi + i] = vals[p++]!
    wi = wj
    row += h.values
  }
  return out
}

/** An empty table for a column's values. */
function emptyValues(column: ParquetColumn, m: ColumnMetaData): ColumnValues {
  return {
    column,
    rows: 0,
    slot: new Int32Array(0),
    size: 0,
    bytes: new Uint8Array(column.physical === 'BYTE_ARRAY' ? Number(m.total_uncompressed_size) : 0),
    start: new Int32Array(0),
    end: new Int32Array(0),
    num: new Float64Array(0),
  }
}

/** A data page's values section (decompressed) and where its values start, with its levels when optional. */
function pageOf(
  column: ParquetColumn,
  m: ColumnMetaData,
  h: PageHeader,
  body: Uint8Array,
): {page: Uint8Array; at: number; defs: {b: Uint8Array; start: number; end: number; n: number} | undefined} {
  if (h.type === DATA_PAGE_V2) {
    if (h.repLength) throw new ParquetLayoutError(`${column.name}: repetition levels`)
    const values = body.subarray(h.defLength)
    const page = h.compressedV2 ? decompress(m.codec, values, h.uncompressed - h.defLength) : values
    return {
      page,
      at: 0,
      defs: column.optional ? {b: body, start: 0, end: h.defLength, n: h.values} : undefined,
    }
  }
  const page = decompress(m.codec, body, h.uncompressed)
  if (!column.optional) return {page, at: 0, defs: undefined}
  if (h.defEncoding !== ENC_RLE) throw new ParquetLayoutError(`${column.name}: bit-packed levels`)
  const end = 4 + u32(page, 0)
  return {page, at: end, defs: {b: page, start: 4, end, n: h.values}}
}

/**
 * Rows of a page (`ks`, ascending) to their indices among the page's values, or -1 where the definition
 * level is 0: the levels walked by runs, counting the values before each wanted row.
 */
function valueIndexes(defs: {b: Uint8Array; start: number; end: number; n: number}, ks: Int32Array): void {
  const {b, end, n} = defs
  let pos = defs.start
  let r = 0
  let k = 0
  let i = 0
  while (r < n && i < ks.length) {
    const h = runHeader(b, pos, end)
    pos = h.pos
    if ((h.header & 1) === 1) {
      const count = (h.header >>> 1) * 8
      const stop = Math.min(count, n - r)
      if (pos + Math.ceil(stop / 8) > end) throw new ParquetLayoutError('a bit-packed run past its page')
      let seen = 0 // values among the run's bits before `bit`
      let bit = 0
      for (; i < ks.length && ks[i]! < r + stop; i++) {
        const o = ks[i]! - r
        seen += setBits(b, pos, bit, o)
        bit = o
        ks[i] = (b[pos + (o >> 3)]! >> (o & 7)) & 1 ? k + seen : -1
      }
      seen += setBits(b, pos, bit, stop)
      k += seen
      pos += count / 8
      r += count
    } else {
      const count = Math.min(h.header >>> 1, n - r)
      if (pos >= end) throw new ParquetLayoutError('a repeated run past its page')
      const v = b[pos++]!
      if (v > 1) throw new ParquetLayoutError('a definition level above 1')
      for (; i < ks.length && ks[i]! < r + count; i++) ks[i] = v ? k + ks[i]! - r : -1
      k += v * count
      r += count
    }
  }
}

/** The hybrid's values at positions `ks` (ascending), walked by runs. */
function hybridAt(b: Uint8Array, pos: number, end: number, width: number, ks: Int32Array): Int32Array {
  const out = new Int32Array(ks.length)
  if (width > 32) throw new ParquetLayoutError('a bit width above 32')
  const bytesPerValue = (width + 7) >> 3
  let k = 0
  let i = 0
  while (i < ks.length) {
    const h = runHeader(b, pos, end)
    pos = h.pos
    if ((h.header & 1) === 1) {
      const count = (h.header >>> 1) * 8
      for (; i < ks.length && ks[i]! < k + count; i++) {
        // the bytes holding the value, least significant first, as one number (at most 5 bytes: exact)
        const bit = (ks[i]! - k) * width
        const first = pos + (bit >> 3)
        const last = pos + ((bit + width - 1) >> 3)
        if (last >= end) throw new ParquetLayoutError('a bit-packed run past its page')
        let v = 0
        for (let q = last; q >= first; q--) v = v * 256 + b[q]!
        out[i] = Math.floor(v / 2 ** (bit & 7)) % 2 ** width
      }
      pos += Math.ceil((count * width) / 8)
      k += count
    } else {
      const count = h.header >>> 1
      let v = 0
      for (let j = 0; j < bytesPerValue; j++) v |= b[pos + j]! << (8 * j)
      pos += bytesPerValue
      if (pos > end) throw new ParquetLayoutError('a repeated run past its page')
      if (width < 32 && v >>> width !== 0) throw wider()
      for (; i < ks.length && ks[i]! < k + count; i++) out[i] = v
      k += count
    }
  }
  return out
}

/** PLAIN values at indices `ks` (ascending), as `cellOf` gives them. */
function plainAt(column: ParquetColumn, page: Uint8Array, at: number, ks: Int32Array): ParquetCell[] {
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength)
  const out = new Array<ParquetCell>(ks.length)
  const short = () => new ParquetLayoutError(`${column.name}: a page shorter than its values`)
  if (column.physical === 'BYTE_ARRAY') {
    const text = Buffer.from(page.buffer, page.byteOffset, page.byteLength)
    let pos = at
    let idx = 0
    for (let i = 0; i < ks.length; i++) {
      for (; idx < ks[i]!; idx++) {
        if (pos + 4 > page.length) throw short()
        pos += 4 + view.getUint32(pos, true)
      }
      if (pos + 4 > page.length) throw short()
      const len = view.getUint32(pos, true)
      if (pos + 4 + len > page.length) throw short()
      out[i] = text.toString('utf8', pos + 4, pos + 4 + len)
    }
    return out
  }
  const width =
    column.physical === 'INT64' || column.physical === 'DOUBLE' ? 8 : column.physical === 'BOOLEAN' ? 0 : 4
  for (let i = 0; i < ks.length; i++) {
    const k = ks[i]!
    if (width === 0) {
      if (at + (k >> 3) >= page.length) throw short()
      out[i] = numberValueOf(column, (page[at + (k >> 3)]! >> (k & 7)) & 1)
      continue
    }
    const o = at + k * width
    if (o + width > page.length) throw short()
    const x =
      column.physical === 'INT32'
        ? view.getInt32(o, true)
        : column.physical === 'INT64'
          ? view.getInt32(o + 4, true) * 4294967296 + view.getUint32(o, true)
          : column.physical === 'FLOAT'
            ? view.getFloat32(o, true)
            : view.getFloat64(o, true)
    out[i] = numberValueOf(column, x)
  }
  return out
}

/** Set bits of `b` from bit `from` to bit `to` (exclusive) after `pos`: whole bytes by table (a run is thousands of levels). */
function setBits(b: Uint8Array, pos: number, from: number, to: number): number {
  let n = 0
  let bit = from
  for (; bit < to && bit & 7; bit++) n += (b[pos + (bit >> 3)]! >> (bit & 7)) & 1
  for (; bit + 8 <= to; bit += 8) n += BITS[b[pos + (bit >> 3)]!]!
  for (; bit < to; bit++) n += (b[pos + (bit >> 3)]! >> (bit & 7)) & 1
  return n
}

/** Set bits of each byte. */
const BITS = Uint8Array.from({length: 256}, (_, i) => {
  let n = 0
  for (let v = i; v; v >>= 1) n += v & 1
  return n
})

/**
 * A ULEB128 run header of the hybrid at `b[pos]`: its value and the position after it. At most 4 bytes (a
 * run of up to 2^27 - 1 values, far more than a page holds), read with integer operations: a header made
 * with 2 ** shift (a double) made every count and position of the loops that use it a double (issue 32).
 * A longer one is a layout this reader leaves to the record reader.
 */
function runHeader(b: Uint8Array, pos: number, end: number): {header: number; pos: number} {
  let header = 0
  for (let shift = 0; ; shift += 7) {
    if (pos >= end || shift > 21) throw new ParquetLayoutError('a run header past its page')
    const c = b[pos++]!
    header |= (c & 0x7f) << shift
    if (c < 0x80) return {header, pos}
  }
}

/** How many of `n` definition levels (a flat OPTIONAL column's: 0 or 1, the hybrid at bit width 1) are 1. */
function presentCount(b: Uint8Array, pos: number, end: number, n: number): number {
  let k = 0
  let present = 0
  while (k < n) {
    const h = runHeader(b, pos, end)
    pos = h.pos
    if ((h.header & 1) === 1) {
      const count = (h.header >>> 1) * 8
      const stop = Math.min(count, n - k)
      if (pos + Math.ceil(stop / 8) > end) throw new ParquetLayoutError('a bit-packed run past its page')
      const whole = stop >> 3
      for (let i = 0; i < whole; i++) present += BITS[b[pos + i]!]!
      if (stop & 7) present += BITS[b[pos + whole]! & ((1 << (stop & 7)) - 1)]!
      pos += count / 8
      k += count
    } else {
      const count = Math.min(h.header >>> 1, n - k)
      if (pos >= end) throw new ParquetLayoutError('a repeated run past its page')
      const v = b[pos++]!
      if (v > 1) throw new ParquetLayoutError('a definition level above 1')
      present += v * count
      k += count
    }
  }
  return present
}

/**
 * The slots of `n` rows from `row`: -1 where the definition level is 0 (null), else the next dictionary
 * index of `idx` or the next of `first`, `first + 1`...; a run of levels at a time (a run of values is one
 * native copy or fill). Without levels (a REQUIRED column) every row holds a value. presentCount has
 * checked the runs.
 */
function slotsOf(
  defs: {b: Uint8Array; start: number; end: number} | undefined,
  slot: Int32Array,
  row: number,
  n: number,
  idx: Int32Array | undefined,
  first: number,
): void {
  const values = (to: number, k: number, count: number) => {
    if (idx) slot.set(idx.subarray(k, k + count), to)
    else for (let i = 0; i < count; i++) slot[to + i] = first + k + i
  }
  if (!defs) return values(row, 0, n)
  const {b, end} = defs
  let pos = defs.start
  let r = 0
  let k = 0
  while (r < n) {
    const h = runHeader(b, pos, end)
    pos = h.pos
    if ((h.header & 1) === 1) {
      const count = (h.header >>> 1) * 8
      const stop = Math.min(count, n - r)
      for (let i = 0; i < stop; i++)
        slot[row + r + i] = (b[pos + (i >> 3)]! >> (i & 7)) & 1 ? (idx ? idx[k++]! : first + k++) : -1
      pos += count / 8
      r += count
    } else {
      const count = Math.min(h.header >>> 1, n - r)
      if (b[pos++] === 1) {
        values(row + r, k, count)
        k += count
      } else slot.fill(-1, row + r, row + r + count)
      r += count
    }
  }
}

/**
 * slotsOf's walk, adding each row's value's fingerprint (`prints` by slot) into the row sums instead of
 * writing its slot: a null adds nothing.
 */
function sumsOf(
  defs: {b: Uint8Array; start: number; end: number} | undefined,
  sums: RowSums,
  prints: {la: Int32Array; lb: Int32Array},
  row: number,
  n: number,
  idx: Int32Array | undefined,
  first: number,
): void {
  const {sumA, sumB} = sums
  const {la, lb} = prints
  if (!defs) return addValues(sumA, sumB, la, lb, row, 0, n, idx, first)
  const {b, end} = defs
  let pos = defs.start
  let r = 0
  let k = 0
  while (r < n) {
    const h = runHeader(b, pos, end)
    pos = h.pos
    if ((h.header & 1) === 1) {
      const count = (h.header >>> 1) * 8
      const stop = Math.min(count, n - r)
      for (let i = 0; i < stop; i++)
        if ((b[pos + (i >> 3)]! >> (i & 7)) & 1) {
          const x = idx ? idx[k++]! : first + k++
          const to = row + r + i
          sumA[to] = (sumA[to]! + la[x]!) | 0
          sumB[to] = (sumB[to]! + lb[x]!) | 0
        }
      pos += count / 8
      r += count
    } else {
      const count = Math.min(h.header >>> 1, n - r)
      if (b[pos++] === 1) {
        addValues(sumA, sumB, la, lb, row + r, k, count, idx, first)
        k += count
      }
      r += count
    }
  }
}

/** `count` rows from `to` that all hold a value: the next of `idx` from `k`, or slots `first + k`... */
function addValues(
  sumA: Int32Array,
  sumB: Int32Array,
  la: Int32Array,
  lb: Int32Array,
  to: number,
  k: number,
  count: number,
  idx: Int32Array | undefined,
  first: number,
): void {
  if (idx)
    for (let i = 0; i < count; i++) {
      const x = idx[k + i]!
      sumA[to + i] = (sumA[to + i]! + la[x]!) | 0
      sumB[to + i] = (sumB[to + i]! + lb[x]!) | 0
    }
  else
    for (let i = 0, x = first + k; i < count; i++, x++) {
      sumA[to + i] = (sumA[to + i]! + la[x]!) | 0
      sumB[to + i] = (sumB[to + i]! + lb[x]!) | 0
    }
}

/** Room for `n` more slots in the table. */
function reserve(out: ColumnValues, n: number): void {
  const need = out.size + n
  if (out.column.physical === 'BYTE_ARRAY') {
    if (out.start.length < need) {
      const cap = Math.max(need, out.start.length * 2)
      const s = new Int32Array(cap)
      s.set(out.start)
      const e = new Int32Array(cap)
      e.set(out.end)
      out.start = s
      out.end = e
    }
  } else if (out.num.length < need) {
    const f = new Float64Array(Math.max(need, out.num.length * 2))
    f.set(out.num)
    out.num = f
  }
}

/** `n` PLAIN values of the column's physical type from `page[at]` into the table; returns the bytes used. */
function plainValues(out: ColumnValues, page: Uint8Array, at: number, n: number, bytesUsed: number): number {
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength)
  const base = out.size
  const num = out.num
  switch (out.column.physical) {
    case 'BYTE_ARRAY': {
      // the page's bytes copied once; each value is a span of them (its 4-byte length before it)
      const from = at
      for (let i = 0; i < n; i++) {
        if (at + 4 > page.length)
          throw new ParquetLayoutError(`${out.column.name}: a page shorter than its values`)
        const len = view.getUint32(at, true)
        at += 4
        out.start[base + i] = bytesUsed + at - from
        at += len
        out.end[base + i] = bytesUsed + at - from
      }
      if (at > page.length) throw new ParquetLayoutError(`${out.column.name}: a page shorter than its values`)
      if (bytesUsed + at - from > out.bytes.length) {
        const bigger = new Uint8Array(Math.max(out.bytes.length * 2, bytesUsed + at - from))
        bigger.set(out.bytes)
        out.bytes = bigger
      }
      out.bytes.set(page.subarray(from, at), bytesUsed)
      bytesUsed += at - from
      break
    }
    case 'BOOLEAN':
      if (at + Math.ceil(n / 8) > page.length)
        throw new ParquetLayoutError(`${out.column.name}: a page shorter than its values`)
      for (let i = 0; i < n; i++) num[base + i] = (page[at + (i >> 3)]! >> (i & 7)) & 1
      break
    case 'INT32':
      need(out, page, at, n * 4)
      for (let i = 0; i < n; i++) num[base + i] = view.getInt32(at + 4 * i, true)
      break
    case 'INT64':
      need(out, page, at, n * 8)
      // exact below 2^53 (spec 2.1 ServicePropertyID has 11 digits; timestamps in milliseconds)
      for (let i = 0; i < n; i++)
        num[base + i] = view.getInt32(at + 8 * i + 4, true) * 4294967296 + view.getUint32(at + 8 * i, true)
      break
    case 'FLOAT':
      need(out, page, at, n * 4)
      for (let i = 0; i < n; i++) num[base + i] = view.getFloat32(at + 4 * i, true)
      break
    case 'DOUBLE':
      need(out, page, at, n * 8)
      for (let i = 0; i < n; i++) num[base + i] = view.getFloat64(at + 8 * i, true)
      break
  }
  out.size += n
  return bytesUsed
}

function need(out: ColumnValues, page: Uint8Array, at: number, bytes: number): void {
  if (at + bytes > page.length)
    throw new ParquetLayoutError(`${out.column.name}: a page shorter than its values`)
}

function u32(b: Uint8Array, at: number): number {
  if (at + 4 > b.length) throw new ParquetLayoutError('a length past the end of its page')
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0
}

/**
 * `n` values of the RLE/bit-packing hybrid (Parquet's encodings.md): runs, each a ULEB128 header whose low
 * bit says bit-packed (groups of 8 values, `width` bits each, least significant bit first) or repeated (a
 * count, then the value in ceil(width / 8) bytes, little-endian). Undefined when a value is `limit` or
 * more (a dictionary index out of range: checked as the values are read, not in a pass of its own, which
 * ran unoptimised in a fresh thread).
 */
function hybrid(
  b: Uint8Array,
  pos: number,
  end: number,
  width: number,
  n: number,
  limit = 2 ** 32,
): Int32Array | undefined {
  // one buffer for every page's indices (a page's are used before the next page's): no allocation per page
  if (hybridOut.length < n + 8) hybridOut = new Int32Array(Math.max(n + 8, hybridOut.length * 2))
  const out = hybridOut
  if (width > 32) throw new ParquetLayoutError('a bit width above 32')
  const bytesPerValue = (width + 7) >> 3
  const mask = width === 32 ? -1 : (1 << width) - 1
  let k = 0
  while (k < n) {
    if (pos >= end) throw new ParquetLayoutError('levels or indices shorter than their page')
    // as runHeader reads it (integers, at most 4 bytes), inline in this hottest loop
    let header = 0
    for (let shift = 0; ; shift += 7) {
      const c = b[pos++]!
      header |= (c & 0x7f) << shift
      if (c < 0x80) break
      if (pos >= end || shift >= 21) throw new ParquetLayoutError('a run header past its page')
    }
    if ((header & 1) === 1) {
      // bit-packed: (header >> 1) groups of 8 values, read through a bit accumulator (width <= 24)
      const count = (header >>> 1) * 8
      const stop = Math.min(count, n - k)
      const runEnd = pos + Math.ceil((count * width) / 8)
      if (width > 24) {
        unpackWide(b, pos, Math.min(runEnd, end), width, out, k, stop)
        for (let i = 0; i < stop; i++) if (out[k + i]! >>> 0 >= limit) return undefined
      } else {
        let acc = 0
        let bits = 0
        let p = pos
        for (let i = 0; i < stop; i++) {
          while (bits < width) {
            // a last group may be cut short after the values the page holds
            acc |= (p < end ? b[p]! : 0) << bits
            p++
            bits += 8
          }
          const v = acc & mask
          if (v >= limit) return undefined
          out[k + i] = v
          acc >>>= width
          bits -= width
        }
        if (pos + Math.ceil((stop * width) / 8) > end)
          throw new ParquetLayoutError('a bit-packed run past its page')
      }
      pos = runEnd
      k += count
    } else {
      const count = header >>> 1
      let v = 0
      for (let j = 0; j < bytesPerValue; j++) v |= b[pos + j]! << (8 * j)
      pos += bytesPerValue
      if (pos > end) throw new ParquetLayoutError('a repeated run past its page')
      if ((v & ~mask) !== 0) throw wider()
      if (v >>> 0 >= limit && count > 0 && k < n) return undefined
      out.fill(v, k, Math.min(n, k + count))
      k += count
    }
  }
  return out
}

let hybridOut = new Int32Array(1 << 14)

/**
 * A repeated run's value with bits set past the run's bit width: damage (a writer pads the value's bytes
 * with zeros). Refused by both hybrid readers alike, so that a scan and a read-back of the same page cannot
 * read one value two ways.
 */
function wider(): ParquetLayoutError {
  return new ParquetLayoutError('a repeated value wider than its bit width')
}

/** A bit-packed run of values wider than 24 bits, a bit at a time (rare: dictionaries of over 16 million values). */
function unpackWide(
  b: Uint8Array,
  pos: number,
  end: number,
  width: number,
  out: Int32Array,
  k: number,
  n: number,
): void {
  let bit = 0
  for (let i = 0; i < n; i++) {
    let v = 0
    for (let j = 0; j < width; j++, bit++) {
      const byte = pos + (bit >> 3)
      if (byte >= end) throw new ParquetLayoutError('a bit-packed run past its page')
      v |= ((b[byte]! >> (bit & 7)) & 1) << j
    }
    out[k + i] = v
  }
}

/**
 * A Snappy block's preamble: the uncompressed length as a ULEB128 varint (at most 5 bytes), and where the
 * elements start; undefined when the block ends first. The decoder and the side check read it alike.
 */
function snappyPreamble(b: Uint8Array): {length: number; at: number} | undefined {
  let length = 0
  for (let pos = 0, shift = 0; pos < b.length && shift <= 28; shift += 7) {
    const c = b[pos++]!
    length += (c & 0x7f) * 2 ** shift
    if (c < 0x80) return {length, at: pos}
  }
  return undefined
}

/**
 * Snappy's block format (github.com/google/snappy, format_description.txt): a varint of the length, then
 * literals and copies of 1, 2 or 4-byte offsets. Byte loops, except for long literals: a column's copies
 * are short, and a native call for each cost more than the loop (measured over every page of the
 * benchmark county: 265 MB/s, hyparquet's decoder 288 MB/s, with copies of 16 bytes or more by copyWithin
 * 240 MB/s).
 */
function unsnappy(input: Uint8Array, size: number, out: Uint8Array): Uint8Array {
  const n = input.length
  const preamble = snappyPreamble(input)
  if (!preamble) throw new ParquetLayoutError('a Snappy block without its length')
  if (preamble.length !== size) throw new ParquetLayoutError('a Snappy block of another length than its page')
  let pos = preamble.at
  let o = 0
  while (pos < n) {
    const tag = input[pos++]!
    let len: number
    let offset: number
    if ((tag & 3) === 0) {
      len = (tag >> 2) + 1
      if (len > 60) {
        const k = len - 60
        if (pos + k > n) throw new ParquetLayoutError('a Snappy literal past its block')
        // little-endian in 1 to 4 bytes, read with integer operations: a length made with 2 ** (a
        // double) turned every position in this function into a double, a third of its time (issue 32)
        len = input[pos]!
        if (k > 1) len |= input[pos + 1]! << 8
        if (k > 2) len |= input[pos + 2]! << 16
        if (k > 3) len |= input[pos + 3]! << 24
        len = (len >>> 0) + 1
        pos += k
      }
      if (pos + len > n || o + len > size) throw new ParquetLayoutError('a Snappy literal past its block')
      if (len < 64) for (let j = 0; j < len; j++) out[o + j] = input[pos + j]!
      else out.set(input.subarray(pos, pos + len), o)
      pos += len
      o += len
      continue
    }
    if ((tag & 3) === 1) {
      if (pos >= n) throw new ParquetLayoutError('a Snappy copy past its block')
      len = ((tag >> 2) & 7) + 4
      offset = ((tag >> 5) << 8) | input[pos++]!
    } else if ((tag & 3) === 2) {
      if (pos + 2 > n) throw new ParquetLayoutError('a Snappy copy past its block')
      len = (tag >> 2) + 1
      offset = input[pos]! | (input[pos + 1]! << 8)
      pos += 2
    } else {
      if (pos + 4 > n) throw new ParquetLayoutError('a Snappy copy past its block')
      len = (tag >> 2) + 1
      offset =
        (input[pos]! | (input[pos + 1]! << 8) | (input[pos + 2]! << 16) | (input[pos + 3]! << 24)) >>> 0
      pos += 4
    }
    if (offset === 0 || offset > o || o + len > size)
      throw new ParquetLayoutError('a Snappy copy out of its block')
    // byte by byte, in order: an overlapping copy repeats the bytes it is writing (and copies are short)
    for (let j = 0, from = o - offset; j < len; j++) out[o + j] = out[from + j]!
    o += len
  }
  if (o !== size) throw new ParquetLayoutError('a Snappy block shorter than its page')
  return out
}

/**
 * One buffer for every decompressed page: a page's values are copied out of it (decodeChunk) before the
 * next page is read, so a page costs no allocation.
 */
let scratch = new Uint8Array(1 << 16)
function scratchOf(size: number): Uint8Array {
  if (scratch.length < size) scratch = new Uint8Array(Math.max(size, scratch.length * 2))
  return scratch.subarray(0, size)
}

function decompress(codec: string, b: Uint8Array, size: number): Uint8Array {
  switch (codec) {
    case 'UNCOMPRESSED':
      return b
    case 'SNAPPY':
      return unsnappy(b, size, scratchOf(size))
    case 'GZIP':
      return sized(gunzipSync(b), size)
    case 'BROTLI':
      return sized(brotliDecompressSync(b), size)
    default:
      return sized(zstd!(b), size)
  }
}

/** A page decompressed to another length than its header says is damaged: refused, never decoded. */
function sized(page: Uint8Array, size: number): Uint8Array {
  if (page.length !== size)
    throw new Error(`a page that decompresses to ${page.length} bytes where its header says ${size}`)
  return page
}

interface PageHeader {
  type: number
  uncompressed: number
  compressed: number
  values: number
  encoding: number
  defEncoding: number
  defLength: number
  repLength: number
  compressedV2: boolean
}

/**
 * A page header (parquet.thrift `PageHeader`) in Thrift's compact protocol: the fields this reader needs,
 * every other field skipped by its type. The protocol's reading (bounds, varints, skips) is the footer's
 * (src/io/parquet-footer.ts); this is read once a page of every column chunk scanned.
 */
class Thrift extends CompactReader {
  constructor(b: Uint8Array) {
    super(b, 'a page header', 'a page header past its column chunk')
  }

  pageHeader(): PageHeader {
    const h: PageHeader = {
      type: -1,
      uncompressed: 0,
      compressed: 0,
      values: 0,
      encoding: 0,
      defEncoding: ENC_RLE,
      defLength: 0,
      repLength: 0,
      compressedV2: true,
    }
    this.struct((id, type) => {
      if (id === 1) h.type = this.int()
      else if (id === 2) h.uncompressed = this.int()
      else if (id === 3) h.compressed = this.int()
      else if (id === 5 && type === T_STRUCT)
        this.struct((f, t) => {
          if (f === 1) h.values = this.int()
          else if (f === 2) h.encoding = this.int()
          else if (f === 3) h.defEncoding = this.int()
          else this.skip(t)
        })
      else if (id === 7 && type === T_STRUCT)
        this.struct((f, t) => {
          if (f === 1) h.values = this.int()
          else this.skip(t)
        })
      else if (id === 8 && type === T_STRUCT)
        this.struct((f, t) => {
          if (f === 1) h.values = this.int()
          else if (f === 4) h.encoding = this.int()
          else if (f === 5) h.defLength = this.int()
          else if (f === 6) h.repLength = this.int()
          else if (f === 7) h.compressedV2 = t === T_TRUE
          else this.skip(t)
        })
      else this.skip(type)
    })
    if (h.compressed < 0 || this.pos + h.compressed > this.b.length || h.values < 0 || h.defLength < 0)
      throw new ParquetLayoutError('a page header past its column chunk')
    // a DATA_PAGE_V2's levels lie in its body: longer than the body, they would be read past it
    if (h.type === DATA_PAGE_V2 && h.defLength + h.repLength > h.compressed)
      throw new ParquetLayoutError('levels longer than their page')
    return h
  }
}

// ---------------------------------------------------------------------------------------------------
// Values

const DAY_MS = 86_400_000

/**
 * A slot's value as `readParquetRecords` gives it: text, a number, a boolean; DATE as YYYY-MM-DD and
 * TIMESTAMP as YYYY-MM-DDTHH:MM:SS (milliseconds when there are some).
 */
export function cellOf(v: ColumnValues, slot: number): ParquetCell {
  if (slot < 0) return null
  if (v.column.kind === 'string') return textView(v.bytes).toString('utf8', v.start[slot], v.end[slot])
  return numberValueOf(v.column, v.num[slot]!)
}

/** A Buffer over a table's bytes, the last one's kept: a Buffer made per value cost more than its text. */
function textView(bytes: Uint8Array): Buffer {
  if (
    lastView?.buffer !== bytes.buffer ||
    lastView.byteOffset !== bytes.byteOffset ||
    lastView.length !== bytes.length
  )
    lastView = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return lastView
}
let lastView: Buffer | undefined

/**
 * A DATE's days as YYYY-MM-DD, each day's text made once: a county's date columns (recording dates, due
 * dates) hold a few thousand days between them, met in every row group and again when rows are read back,
 * and a Date made and formatted per value was a tenth of a Parquet scan's CPU (issue 32). Bounded, so a
 * file of ever-new days cannot grow it.
 */
function dayText(days: number): string {
  let text = dayTexts.get(days)
  if (text === undefined) {
    if (dayTexts.size >= 1 << 16) dayTexts.clear()
    text = isoDate(new Date(days * DAY_MS))
    dayTexts.set(days, text)
  }
  return text
}
const dayTexts = new Map<number, string>()

/**
 * A TIMESTAMP's milliseconds as YYYY-MM-DDTHH:MM:SS, each instant's text made once, as `dayText` does for
 * days: an export's timestamps (ValuationDate, FHAExpirationDate) repeat across a county, and a Date made
 * and formatted per value was 3 ms of reading back 6,000 records (issue 32, CPU profile). Bounded.
 */
function instantText(ms: number): string {
  let text = instantTexts.get(ms)
  if (text === undefined) {
    if (instantTexts.size >= 1 << 16) instantTexts.clear()
    text = isoDateTime(new Date(ms))
    instantTexts.set(ms, text)
  }
  return text
}
const instantTexts = new Map<number, string>()

/** A value a column holds as a number (a boolean's 0 or 1, a date's days, a timestamp's units) as `cellOf` gives it. */
export function numberValueOf(c: ParquetColumn, x: number): ParquetCell {
  switch (c.kind) {
    case 'boolean':
      return x === 1
    case 'date':
      return dayText(x)
    case 'timestamp':
      return instantText(Math.trunc(x * c.msPerUnit))
    default:
      return x
  }
}
