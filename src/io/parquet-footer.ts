/**
 * A Parquet file's footer (parquet.thrift `FileMetaData`) read for the column reader
 * (src/io/parquet-reader.ts, `ParquetColumns`): the schema and each row group's column chunks, only the
 * fields that reader uses, every other field skipped by its type. hyparquet's `parquetMetadata` read it
 * before; loading hyparquet cost `sfl changes` about 7.5 ms on each of its threads, and hyparquet's first
 * (cold) parse, every i64 a BigInt, about 7.6 ms more. Here an i64 is read as a double, and one
 * past Number.MAX_SAFE_INTEGER is refused: no BigInt.
 *
 * The footer is the file's, and a file may come from anyone: every read is bounds-checked, a list is no
 * longer than the bytes left, nesting is bounded, and whatever is amiss is a ParquetLayoutError (the
 * caller then leaves the file to hyparquet's general reader, which reads it or says what is wrong). Never
 * another exception, never a loop the bytes do not pay for.
 *
 * Where hyparquet read a field it did not know as unset, this refuses: an enum value parquet.thrift does
 * not have (a codec, an encoding, a physical or converted type), a LogicalType member it does not name, a
 * field the reader uses sent as another Thrift type, a field parquet.thrift requires left out. The column
 * reader refused most such files already; any other is now read by the record reader instead.
 *
 * The field ids and enums are parquet.thrift's (github.com/apache/parquet-format,
 * src/main/thrift/parquet.thrift); the bytes are Thrift's compact protocol (github.com/apache/thrift,
 * doc/specs/thrift-compact-protocol.md), whose reader here also reads the page headers (parquet-reader.ts).
 */

/**
 * A file the column reader does not lay out (nested, or an encoding, codec or type it does not know, or a
 * damaged footer or page header): read it as records.
 */
export class ParquetLayoutError extends Error {}

// ---------------------------------------------------------------------------------------------------
// The footer, as far as the column reader reads it (names as parquet.thrift and hyparquet spell them)

export type PhysicalType =
  'BOOLEAN' | 'INT32' | 'INT64' | 'INT96' | 'FLOAT' | 'DOUBLE' | 'BYTE_ARRAY' | 'FIXED_LEN_BYTE_ARRAY'

export type Repetition = 'REQUIRED' | 'OPTIONAL' | 'REPEATED'

export type ConvertedType = (typeof CONVERTED_TYPES)[number]

export type TimeUnit = 'MILLIS' | 'MICROS' | 'NANOS'

/** parquet.thrift `LogicalType`, a union: which member, and a TIME's or TIMESTAMP's unit. */
export type LogicalType =
  | {type: 'TIME' | 'TIMESTAMP'; unit: TimeUnit}
  | {type: Exclude<(typeof LOGICAL_TYPES)[number], 'TIME' | 'TIMESTAMP' | undefined>}

export interface SchemaElement {
  name: string
  /** Unset for a group (the root, a nested column). */
  type?: PhysicalType
  repetition_type?: Repetition
  num_children?: number
  converted_type?: ConvertedType
  /** parquet.thrift's `logicalType` (field 10). */
  logical_type?: LogicalType
}

export type CompressionCodec = (typeof CODECS)[number]

export type Encoding = (typeof ENCODINGS)[number]

export interface ColumnMetaData {
  codec: CompressionCodec
  encodings: Encoding[]
  total_uncompressed_size: number
  total_compressed_size: number
  data_page_offset: number
  dictionary_page_offset?: number
}

export interface ColumnChunk {
  meta_data?: ColumnMetaData
}

export interface RowGroup {
  columns: ColumnChunk[]
  num_rows: number
}

export interface FileMetaData {
  schema: SchemaElement[]
  row_groups: RowGroup[]
}

// parquet.thrift's enums, by number
const PHYSICAL_TYPES: readonly PhysicalType[] = [
  'BOOLEAN',
  'INT32',
  'INT64',
  'INT96',
  'FLOAT',
  'DOUBLE',
  'BYTE_ARRAY',
  'FIXED_LEN_BYTE_ARRAY',
]
const REPETITIONS: readonly Repetition[] = ['REQUIRED', 'OPTIONAL', 'REPEATED']
const CONVERTED_TYPES = [
  'UTF8',
  'MAP',
  'MAP_KEY_VALUE',
  'LIST',
  'ENUM',
  'DECIMAL',
  'DATE',
  'TIME_MILLIS',
  'TIME_MICROS',
  'TIMESTAMP_MILLIS',
  'TIMESTAMP_MICROS',
  'UINT_8',
  'UINT_16',
  'UINT_32',
  'UINT_64',
  'INT_8',
  'INT_16',
  'INT_32',
  'INT_64',
  'JSON',
  'BSON',
  'INTERVAL',
] as const
const CODECS = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'] as const
// 1 (GROUP_VAR_INT) is commented out of parquet.thrift as never used; named, as hyparquet names it
const ENCODINGS = [
  'PLAIN',
  'GROUP_VAR_INT',
  'PLAIN_DICTIONARY',
  'RLE',
  'BIT_PACKED',
  'DELTA_BINARY_PACKED',
  'DELTA_LENGTH_BYTE_ARRAY',
  'DELTA_BYTE_ARRAY',
  'RLE_DICTIONARY',
  'BYTE_STREAM_SPLIT',
] as const
/** `LogicalType`'s members by field id: 9 is reserved (INTERVAL); 11 is UNKNOWN (hyparquet says NULL). */
const LOGICAL_TYPES = [
  undefined,
  'STRING',
  'MAP',
  'LIST',
  'ENUM',
  'DECIMAL',
  'DATE',
  'TIME',
  'TIMESTAMP',
  undefined,
  'INTEGER',
  'UNKNOWN',
  'JSON',
  'BSON',
  'UUID',
  'FLOAT16',
  'VARIANT',
  'GEOMETRY',
  'GEOGRAPHY',
] as const
const TIME_UNITS: readonly TimeUnit[] = ['MILLIS', 'MICROS', 'NANOS'] // TimeUnit's members 1, 2, 3

// ---------------------------------------------------------------------------------------------------
// Thrift's compact protocol

// The compact protocol's types (a field header's low nibble, a list's element type)
export const T_TRUE = 1
const T_FALSE = 2
const T_BYTE = 3
const T_I16 = 4
const T_I32 = 5
const T_I64 = 6
const T_DOUBLE = 7
const T_BINARY = 8
const T_LIST = 9
const T_SET = 10
const T_MAP = 11
export const T_STRUCT = 12

/**
 * Structs and containers inside one another. parquet.thrift's footer nests about 6 deep (FileMetaData,
 * SchemaElement, LogicalType, TimestampType, TimeUnit, MilliSeconds); a hostile footer's thousands would
 * overflow the stack.
 */
const MAX_DEPTH = 32

/**
 * A reader of Thrift's compact protocol over bytes that may be damaged or hostile: each read checks the
 * bytes are there, a container's length is checked against the bytes left (each element takes one at
 * least), nesting stops at MAX_DEPTH, and whatever is amiss is a ParquetLayoutError. Shared by the footer
 * (below) and the page headers (parquet-reader.ts), read once a page in every scan: a check is a
 * comparison, and a struct is passed over without a function made for it, so the 654 page headers of a
 * 100,000-record export are walked in 92 ns each where the page headers' own reader this replaced took
 * 362 (medians of 15 runs, Node 20).
 */
export class CompactReader {
  pos = 0
  private depth = 0
  /** The element type of the list or set whose header was read last (`list`). */
  element = 0

  constructor(
    protected readonly b: Uint8Array,
    /** What is read, for messages ('a page header', 'the footer'). */
    private readonly where: string,
    /** The message when the bytes end first. */
    private readonly cut: string,
  ) {}

  fail(why: string): never {
    throw new ParquetLayoutError(why)
  }

  private byte(): number {
    if (this.pos >= this.b.length) this.fail(this.cut)
    return this.b[this.pos++]!
  }

  /** `n` bytes passed over, when they are there. */
  private advance(n: number): void {
    if (n > this.b.length - this.pos) this.fail(this.cut)
    this.pos += n
  }

  /**
   * An unsigned varint (ULEB128, at most 10 bytes) as a double: exact below 2^53. Its bytes are read in
   * this loop, not a call each: a footer is read once a file, by the interpreter, whose calls cost most.
   */
  private varint(): number {
    const b = this.b
    let pos = this.pos
    let v = 0
    for (let scale = 1, i = 0; ; scale *= 128, i++) {
      if (pos >= b.length) this.fail(this.cut)
      const c = b[pos++]!
      v += (c & 0x7f) * scale
      if (c < 0x80) break
      if (i === 9) this.fail('a varint too long') // 10 bytes hold 64 bits
    }
    this.pos = pos
    return v
  }

  /** A varint passed over: its bytes up to the first below 0x80, at most 10. */
  private skipVarint(): void {
    const b = this.b
    let pos = this.pos
    const stop = Math.min(pos + 10, b.length)
    while (pos < stop && b[pos]! >= 0x80) pos++
    if (pos === stop) this.fail(stop === b.length ? this.cut : 'a varint too long')
    this.pos = pos + 1
  }

  /** A zigzag varint (i16, i32, and an i64 known to be small). */
  int(): number {
    const v = this.varint()
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2
  }

  /** A binary's (a string's) bytes, a view of the reader's. */
  binary(): Uint8Array {
    const n = this.binaryLength()
    this.pos += n
    return this.b.subarray(this.pos - n, this.pos)
  }

  /** A binary's length, at most the bytes left (a view past them would only be cut short, silently). */
  private binaryLength(): number {
    const n = this.varint()
    if (n > this.b.length - this.pos) this.fail(`a string longer than ${this.where}`)
    return n
  }

  /** A struct: `field` is called with each field's id and type, and reads or skips its value. */
  struct(field: (id: number, type: number) => void): void {
    this.enter()
    const b = this.b
    let last = 0
    for (;;) {
      if (this.pos >= b.length) this.fail(this.cut)
      const h = b[this.pos++]!
      const type = h & 0x0f
      if (type === 0) break // STOP
      // the id's delta from the last in the high nibble, or (0) the id itself, a zigzag i16, after
      last = h > 0x0f ? last + (h >> 4) : this.int()
      field(last, type)
    }
    this.depth--
  }

  /** A list's or set's header: its length (its element type in `element`), at most the bytes left. */
  list(): number {
    const h = this.byte()
    const n = h >> 4 === 15 ? this.varint() : h >> 4
    if (n > this.b.length - this.pos) this.fail(`a list longer than ${this.where}`)
    this.element = h & 0x0f
    return n
  }

  /** A field's value, whatever its type, passed over. */
  skip(type: number): void {
    switch (type) {
      case T_TRUE:
      case T_FALSE: // a field's boolean is in its type
        return
      case T_BYTE:
        this.advance(1)
        return
      case T_I16:
      case T_I32:
      case T_I64:
        this.skipVarint()
        return
      case T_DOUBLE:
        this.advance(8)
        return
      case T_BINARY: {
        // the length's own bytes first: `this.pos += this.binaryLength()` read pos before they moved it
        const n = this.binaryLength()
        this.pos += n
        return
      }
      case T_LIST:
      case T_SET:
        this.skipList()
        return
      case T_MAP:
        this.skipMap()
        return
      case T_STRUCT:
        this.skipStruct()
        return
      default:
        this.fail(`a Thrift type ${type} in ${this.where}`)
    }
  }

  /** A struct passed over, as `struct` reads one, with no function made or called for each field. */
  private skipStruct(): void {
    this.enter()
    const b = this.b
    for (;;) {
      if (this.pos >= b.length) this.fail(this.cut)
      const h = b[this.pos++]!
      const type = h & 0x0f
      if (type === 0) break
      if (h < 0x10) this.skipVarint() // the field's id, after its header
      // most skipped fields (statistics', encoding_stats') without the switch
      if (type >= T_I16 && type <= T_I64) this.skipVarint()
      else if (type === T_BINARY) {
        const n = this.binaryLength() // before `this.pos +=` reads pos: the length's bytes moved it
        this.pos += n
      } else this.skip(type)
    }
    this.depth--
  }

  private skipList(): void {
    this.enter()
    const n = this.list()
    const t = this.element
    if (t === T_TRUE || t === T_FALSE)
      this.advance(n) // a boolean there is a byte of its own
    else for (let i = 0; i < n; i++) this.skip(t)
    this.depth--
  }

  /** A map: its length, then (unless empty) its key and value types in a byte, then the pairs. */
  private skipMap(): void {
    this.enter()
    const n = this.varint()
    if (n > (this.b.length - this.pos) / 2) this.fail(`a map longer than ${this.where}`)
    if (n > 0) {
      const kv = this.byte()
      for (let i = 0; i < n; i++) {
        this.skipElement(kv >> 4)
        this.skipElement(kv & 0x0f)
      }
    }
    this.depth--
  }

  /** A container's element: a boolean there is a byte of its own (in a field, it is in the type). */
  private skipElement(type: number): void {
    if (type === T_TRUE || type === T_FALSE) this.advance(1)
    else this.skip(type)
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) this.fail(`${this.where} nested deeper than ${MAX_DEPTH}`)
  }

  /** A field of `type` where parquet.thrift has `wanted`: refused, never read as another type. */
  want(type: number, wanted: number, what: string): void {
    if (type !== wanted) this.fail(`${what} of Thrift type ${type} in ${this.where}`)
  }

  /** An i32 enum's name, refused when parquet.thrift has no such value. */
  named<T>(type: number, names: readonly T[], what: string): T {
    if (type !== T_I32) this.want(type, T_I32, what)
    const v = this.int()
    const name = names[v]
    if (name === undefined) this.fail(`${what} ${v}, which this reader does not know`)
    return name
  }

  /**
   * An i64 size, offset or count (a zigzag varint), exactly: refused when negative or past
   * Number.MAX_SAFE_INTEGER, never a BigInt. Its low 49 bits (the first 7 bytes) and the rest are added
   * up apart, as a double of all 64 may round an odd value to an even one (and zigzag's sign is the
   * lowest bit).
   */
  count(type: number, what: string): number {
    if (type !== T_I64) this.want(type, T_I64, what)
    const b = this.b
    let pos = this.pos
    let low = 0
    let high = 0
    for (let scale = 1, i = 0; ; scale *= 128, i++) {
      if (pos >= b.length) this.fail(this.cut)
      const c = b[pos++]!
      if (i < 7) low += (c & 0x7f) * scale
      else high += (c & 0x7f) * (scale / 2 ** 49)
      if (c < 0x80) break
      if (i === 9) this.fail('a varint too long')
    }
    this.pos = pos
    const odd = low % 2
    const half = (low - odd) / 2 + high * 2 ** 48 // rounds, if at all, only past 2^53
    if (half + odd > Number.MAX_SAFE_INTEGER) this.fail(`a number past 2^53 in ${this.where}`)
    if (odd) this.fail(`a negative ${what} in ${this.where}`)
    return half
  }

  /** A list of structs, each read by `read`. */
  structs<T>(type: number, what: string, read: (r: CompactReader) => T): T[] {
    this.want(type, T_LIST, what)
    const n = this.list()
    if (n > 0) this.want(this.element, T_STRUCT, `${what}'s element`)
    const out: T[] = []
    for (let i = 0; i < n; i++) out.push(read(this))
    return out
  }
}

// ---------------------------------------------------------------------------------------------------
// The footer's structs

const utf8 = new TextDecoder()

/**
 * The footer's `FileMetaData` struct: `metadata` is its bytes alone (the file's last 8 bytes, its length
 * and "PAR1", already taken off). Throws ParquetLayoutError, never another error.
 */
export function parseFooter(metadata: Uint8Array): FileMetaData {
  const r = new CompactReader(metadata, 'the footer', 'a footer that ends inside its metadata')
  let schema: SchemaElement[] | undefined
  let row_groups: RowGroup[] | undefined
  r.struct((id, type) => {
    if (id === 2) schema = r.structs(type, 'the schema', schemaElement)
    else if (id === 4) row_groups = r.structs(type, 'the row groups', rowGroup)
    else r.skip(type)
  })
  if (!schema || !row_groups) return r.fail('a footer without its schema or its row groups')
  return {schema, row_groups}
}

/**
 * parquet.thrift `SchemaElement`: 1 type, 3 repetition_type, 4 name (required), 5 num_children, 6
 * converted_type, 10 logicalType.
 */
function schemaElement(r: CompactReader): SchemaElement {
  let name: string | undefined
  const e: Omit<SchemaElement, 'name'> = {}
  r.struct((id, type) => {
    if (id === 1) e.type = r.named(type, PHYSICAL_TYPES, 'a physical type')
    else if (id === 3) e.repetition_type = r.named(type, REPETITIONS, 'a repetition type')
    else if (id === 4) {
      r.want(type, T_BINARY, 'a name')
      name = utf8.decode(r.binary())
    } else if (id === 5) {
      r.want(type, T_I32, 'a number of children')
      e.num_children = r.int()
    } else if (id === 6) e.converted_type = r.named(type, CONVERTED_TYPES, 'a converted type')
    else if (id === 10) e.logical_type = logicalType(r, type)
    else r.skip(type)
  })
  if (name === undefined) return r.fail('a schema element without its name')
  return {name, ...e}
}

/** parquet.thrift `LogicalType`, a union: exactly one member, each an (often empty) struct. */
function logicalType(r: CompactReader, type: number): LogicalType {
  r.want(type, T_STRUCT, 'a logical type')
  let lt: LogicalType | undefined
  r.struct((id, t) => {
    const name = LOGICAL_TYPES[id]
    if (name === undefined) r.fail(`a logical type ${id}, which this reader does not know`)
    if (lt) r.fail('a logical type of two kinds')
    r.want(t, T_STRUCT, 'a logical type')
    if (name === 'TIME' || name === 'TIMESTAMP') lt = {type: name, unit: timeType(r)}
    else {
      r.skip(t) // an empty struct, or one whose fields (a DECIMAL's scale...) the column reader does not use
      lt = {type: name}
    }
  })
  if (!lt) return r.fail('an empty logical type')
  return lt
}

/** parquet.thrift `TimeType` and `TimestampType`: 1 isAdjustedToUTC (not used), 2 unit (a union). */
function timeType(r: CompactReader): TimeUnit {
  let unit: TimeUnit | undefined
  r.struct((id, type) => {
    if (id !== 2) return r.skip(type)
    r.want(type, T_STRUCT, 'a time unit')
    r.struct((u, t) => {
      const name = TIME_UNITS[u - 1]
      if (name === undefined || unit) r.fail('a time unit this reader does not know')
      r.want(t, T_STRUCT, 'a time unit')
      r.skip(t)
      unit = name
    })
  })
  if (!unit) return r.fail('a time or timestamp without its unit')
  return unit
}

/** parquet.thrift `RowGroup`: 1 columns, 3 num_rows. */
function rowGroup(r: CompactReader): RowGroup {
  let columns: ColumnChunk[] | undefined
  let rows: number | undefined
  r.struct((id, type) => {
    if (id === 1) columns = r.structs(type, 'the column chunks', columnChunk)
    else if (id === 3) rows = r.count(type, 'row count')
    else r.skip(type)
  })
  if (!columns || rows === undefined) return r.fail('a row group without its columns or its rows')
  return {columns, num_rows: rows}
}

/** parquet.thrift `ColumnChunk`: 3 meta_data (optional there; the column reader refuses a chunk without). */
function columnChunk(r: CompactReader): ColumnChunk {
  const c: ColumnChunk = {}
  r.struct((id, type) => {
    if (id !== 3) return r.skip(type)
    r.want(type, T_STRUCT, 'a column chunk metadata')
    c.meta_data = columnMetaData(r)
  })
  return c
}

/**
 * parquet.thrift `ColumnMetaData`: 2 encodings, 4 codec, 6 total_uncompressed_size, 7
 * total_compressed_size, 9 data_page_offset, 11 dictionary_page_offset.
 */
function columnMetaData(r: CompactReader): ColumnMetaData {
  const m: Partial<ColumnMetaData> = {}
  r.struct((id, type) => {
    if (id === 2) {
      r.want(type, T_LIST, 'the encodings')
      const n = r.list()
      if (n > 0) r.want(r.element, T_I32, 'an encoding')
      m.encodings = []
      for (let i = 0; i < n; i++) m.encodings.push(r.named(T_I32, ENCODINGS, 'an encoding'))
    } else if (id === 4) m.codec = r.named(type, CODECS, 'a compression codec')
    else if (id === 6) m.total_uncompressed_size = r.count(type, 'size')
    else if (id === 7) m.total_compressed_size = r.count(type, 'size')
    else if (id === 9) m.data_page_offset = r.count(type, 'offset')
    else if (id === 11) m.dictionary_page_offset = r.count(type, 'offset')
    else r.skip(type)
  })
  const {codec, encodings, total_uncompressed_size, total_compressed_size, data_page_offset} = m
  if (
    codec === undefined ||
    encodings === undefined ||
    total_uncompressed_size === undefined ||
    total_compressed_size === undefined ||
    data_page_offset === undefined
  )
    return r.fail('a column chunk metadata without a field parquet.thrift requires')
  const meta = {codec, encodings, total_uncompressed_size, total_compressed_size, data_page_offset}
  return m.dictionary_page_offset === undefined
    ? meta
    : {...meta, dictionary_page_offset: m.dictionary_page_offset}
}
