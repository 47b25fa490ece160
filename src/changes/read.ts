import {closeSync, fstatSync, openSync, readSync} from 'node:fs'

import {OPTION_NAMES} from '../api/spec.js'
import {CSV_BROKEN, CSV_INCOMPLETE, CsvFields, csvFieldTexts, csvRecord} from '../io/csv-reader.js'
import {parquetReadError} from '../io/export-reader.js'
import {ParquetColumns} from '../io/parquet-reader.js'
import {ParquetKernel, PickedValues} from './kernel/parquet-kernel.js'
import {Fields, Namer} from '../pipeline/fields.js'
import {decodeEscapes, stringValue} from '../json/values.js'
import {
  ARRAY,
  ENTRY,
  ESCAPED,
  FALSE,
  ID,
  KEY_E,
  KEY_ESCAPED,
  KEY_S,
  KIND,
  KIND_MASK,
  NULL,
  NUMBER,
  OBJECT,
  PARENT,
  STRING,
  TRUE,
  VAL_E,
  VAL_S,
  Walk,
  walkValue,
} from '../json/walk.js'
import {
  csvCellValue,
  flatCellValue,
  layoutOf,
  Layouts,
  numberCell,
  type Cell,
  type ChangeRecord,
  type Layout,
  type ReadRecord,
} from './cells.js'
import {jsonLineRecord, jsonLineText, recordSpan} from './scan-json.js'
import type {ReadBackFile} from './scan.js'

const WINDOW = 4096
const LF = 0x0a
const OPTIONS: ReadonlySet<string> = new Set(OPTION_NAMES)

/**
 * Reads back, by file and byte offset (a Parquet file: row number), the few records a comparison writes
 * out (src/changes/compare.ts), with the fields src/io/export-reader.ts would give them and the values as
 * the export holds them (src/changes/cells.ts: numbers with their text as sent), each as its layout and its
 * values (src/changes/cells.ts `ReadRecord`): a Parquet file's rows share the file's layout, a CSV file's
 * records its header's, NDJSON records one per set of fields met. CSV records through the
 * one CSV grammar (src/io/csv-reader.ts), NDJSON and JSON lines through the one JSON walker
 * (src/json/walk.ts), Parquet rows through the column reader, a row group at a time.
 *
 * Reads of text files go through a 4 KiB window per file (doubled for a longer record): the records asked
 * for come in file order nearly always (added rows in the current export's order, the rest in the
 * previous one's), often a few in one window, and a window is small enough that reading one for each of
 * records far apart costs little (64 KiB windows took about 80 ms of the main thread at 200,000 records,
 * profiled: they read the neighbours of 2,000 updated records again and again).
 */
export class RecordReader {
  /** Each file's descriptor, size and window (an updated row reads from both sides in turn). */
  private readonly open = new Map<
    number,
    {fd: number; size: number; start: number; end: number; buf: Buffer}
  >()
  private readonly parquet = new Map<
    number,
    {
      file: ParquetColumns
      layout: Layout
      /** Which column gives the layout's i-th value (a name given to two columns: the last). */
      from: Int32Array
      group: number
      /** The rows that will be read, ascending. */
      planned: Float64Array
      /** The rows of `group` decoded (ascending) and their values, a list per layout field. */
      rows: Float64Array
      columns: PickedValues[]
    }
  >()
  /** Each CSV file's layout, from its header. */
  private readonly csvLayouts = new Map<number, {layout: Layout; from: Int32Array}>()
  private readonly fields = new CsvFields()
  private readonly walk = new Walk()
  /** The field names the walk gives ids to, and the record each id was last met in (a name met twice). */
  private readonly fieldList = new Fields()
  private stamp = new Int32Array(0)
  private recNo = 0

  private constructor(
    private readonly files: readonly ReadBackFile[],
    private readonly layouts: Layouts,
  ) {
    this.walk.names = new Namer(this.fieldList)
  }

  /**
   * A reader of `files` (their Parquet files opened now: the column reader opens asynchronously).
   * `layouts`: shared with the other side's reader, so that records of the same fields in the same order
   * have one layout on both sides, and the comparison goes place by place (src/changes/compare.ts).
   */
  static async create(files: readonly ReadBackFile[], layouts = new Layouts()): Promise<RecordReader> {
    const r = new RecordReader(files, layouts)
    try {
      for (const [i, f] of files.entries())
        if (f.kind === 'parquet') {
          const file = await ParquetColumns.open(f.path)
          r.parquet.set(i, {
            file,
            ...layoutOf(
              file.columns.map((c) => c.name),
              layouts,
            ),
            group: -1,
            planned: new Float64Array(0),
            rows: new Float64Array(0),
            columns: [],
          })
        }
    } catch (error) {
      r.close()
      throw error
    }
    return r
  }

  read(file: number, offset: number): ReadRecord {
    const f = this.files[file]!
    if (f.kind === 'parquet') return this.parquetRow(file, offset)
    for (let size = WINDOW; ; size *= 2) {
      const {buf, start, end, final} = this.window(file, offset, size)
      const at = offset - start
      if (f.kind === 'csv') {
        const next = csvRecord(buf, at, end - start, final, this.fields)
        if (next === CSV_BROKEN) throw changed(f.path, offset)
        if (next !== CSV_INCOMPLETE) return this.csvRecord(file, csvFieldTexts(buf, at, next, this.fields))
      } else {
        let nl = buf.indexOf(LF, at)
        if (nl >= end - start) nl = -1
        if (nl >= 0 || final) {
          const lineEnd = nl >= 0 ? nl : end - start
          if (f.kind === 'flat')
            return this.objectRecord(JSON.parse(buf.toString('utf8', at, lineEnd)) as ChangeRecord, asCell)
          return this.jsonRecord(buf, at, lineEnd, offset === 0, f.kind === 'json', f.path, offset)
        }
      }
      if (final) throw changed(f.path, offset)
    }
  }

  close(): void {
    for (const {fd} of this.open.values()) closeSync(fd)
    this.open.clear()
    for (const p of this.parquet.values()) p.file.close()
    this.parquet.clear()
  }

  /**
   * Rows of a Parquet file that will be read (`read`'s offsets are row numbers): a row group's planned rows
   * are decoded together when the first of them is read (src/io/parquet-reader.ts `readRows`: only their
   * pages and values), instead of the whole group. Kept as one sorted array (800,000 rows planned are 6 MB,
   * each group's found in it by bisection: a Set of them, spread and filtered for each row group, took
   * 0.2 GB and most of a 15-second comparison).
   */
  plan(file: number, rows: readonly number[]): void {
    const p = this.parquet.get(file)
    if (p) p.planned = Float64Array.from(rows).sort()
  }

  /**
   * A Parquet row: its row group's planned rows decoded once (their values kept as the columns the kernel
   * gives), or the row alone when it was not planned; the row's record is made when it is read. Records
   * made for a whole group at once held 1 GB for a DuckDB file's row groups of 122,880 rows, all updated.
   */
  private parquetRow(file: number, row: number): ReadRecord {
    const p = this.parquet.get(file)!
    const groups = p.file.groups
    let g = p.group >= 0 && row >= groups[p.group]!.first ? p.group : 0
    while (g < groups.length && row >= groups[g]!.first + groups[g]!.rows) g++
    if (g >= groups.length) throw changed(p.file.path, row)
    let i = p.group === g ? lowerBound(p.rows, row) : -1
    if (i < 0 || p.rows[i] !== row) {
      const {first, rows: n} = groups[g]!
      const want = plannedIn(p.planned, first, first + n, row)
      const values = readRowsNamed(
        p.file,
        g,
        Int32Array.from(want, (r) => r - first),
      )
      p.columns = Array.from(p.from, (c) => values[c]!)
      p.rows = want
      p.group = g
      i = lowerBound(want, row)
    }
    // an index loop, not entries(): this runs for every cell read back, in code not yet optimised
    const columns = p.columns
    const cells = new Array<Cell>(columns.length)
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c]!
      const x = column.made ? column.made[i]! : column.at(i)
      cells[c] = typeof x === 'number' ? numberCell(x) : x
    }
    return {layout: p.layout, values: cells}
  }

  /**
   * The record of a JSON line, as flattenRecord (src/io/export-reader.ts) makes JSON.parse's object: an
   * option object's members as `Option.Field`, any other object or list (or anything deeper) as its JSON
   * text, a name met twice holding its last value (an option object its last object); numbers as sent.
   */
  private jsonRecord(
    buf: Buffer,
    start: number,
    end: number,
    first: boolean,
    json: boolean,
    path: string,
    offset: number,
  ): ReadRecord {
    const {s, e} = recordSpan(buf, start, end, first, json)
    const w = this.walk
    w.count = 0
    if (s === e || walkValue(buf, s, e, w) !== e) {
      // a line the walk refuses and JSON.parse takes (the scan read it so): the record object's values
      const text = jsonLineText(buf.toString('utf8', start, end), first, json)
      const rec = text === undefined ? undefined : jsonLineRecord(text)
      if (!rec) throw changed(path, offset)
      return this.objectRecord(rec, flatCellValue)
    }
    return this.namedRecord(buf, s, e) ?? this.spanRecord(buf, s)
  }

  /**
   * The record from the walk's entries named by the field list (the walk names members as the scan's
   * does, src/changes/names.ts): each member is set in its place as met, under its field's own name, a
   * string made once (keys cut from the bytes for every record cost most of the read-back: profiled, a
   * third of the main thread's time after the scans at 200,000 records). Undefined when a name lacks an
   * id (past the cap on unknown names) or comes twice: `spanRecord` gives those JSON.parse's last value.
   * A record all ASCII (the usual one) is decoded once and its values cut from that text, not decoded
   * one by one.
   */
  private namedRecord(buf: Buffer, s: number, e: number): ReadRecord | undefined {
    const text = buf.toString('utf8', s, e)
    const ascii = text.length === e - s // a byte a character: byte offsets are the text's
    const w = this.walk
    const m = w.entries
    const list = this.fieldList.list
    if (this.stamp.length < list.length) this.stamp = new Int32Array(list.length * 2)
    const stamp = this.stamp
    const recNo = ++this.recNo
    const names: string[] = []
    const values: Cell[] = []
    let option = -1 // the entry of the option object whose members are read now
    for (let i = 0; i < w.count; i++) {
      const at = i * ENTRY
      const parent = m[at + PARENT]!
      if (parent >= 0 && parent !== option) continue // a member of an object that is JSON text
      const id = m[at + ID]!
      if (id < 0 || stamp[id] === recNo) return undefined
      stamp[id] = recNo
      const kind = m[at + KIND]!
      const k = kind & KIND_MASK
      const vs = s + m[at + VAL_S]!
      const ve = s + m[at + VAL_E]!
      if (parent < 0 && k === OBJECT && list[id]!.role === 'option') option = i
      else {
        names.push(list[id]!.name)
        values.push(
          ascii
            ? textCell(text, vs - s, ve - s, kind)
            : k === OBJECT || k === ARRAY
              ? jsonTextOf(buf, vs, ve)
              : valueCell(buf, vs, ve, kind),
        )
      }
    }
    return {layout: this.layouts.of(names), values}
  }

  /** The record from the walk's entries by their key texts: any record, names met twice included. */
  private spanRecord(buf: Buffer, s: number): ReadRecord {
    const w = this.walk
    const m = w.entries
    const top = new Map<string, Cell | Map<string, Cell>>()
    const owners: Array<Map<string, Cell> | undefined> = []
    for (let i = 0; i < w.count; i++) {
      const at = i * ENTRY
      const kind = m[at + KIND]!
      const name = keyText(buf, s + m[at + KEY_S]!, s + m[at + KEY_E]!, (kind & KEY_ESCAPED) !== 0)
      const parent = m[at + PARENT]!
      const k = kind & KIND_MASK
      const vs = s + m[at + VAL_S]!
      const ve = s + m[at + VAL_E]!
      if (parent < 0) {
        if (k === OBJECT && OPTIONS.has(name)) {
          const members = new Map<string, Cell>()
          top.set(name, members) // JSON.parse: the last object, in the place of the first name
          owners[i] = members
        } else top.set(name, valueCell(buf, vs, ve, kind))
        continue
      }
      // a member of a record member's object: kept when that object is an option object
      owners[parent]?.set(
        name,
        k === OBJECT || k === ARRAY ? jsonTextOf(buf, vs, ve) : valueCell(buf, vs, ve, kind),
      )
    }
    const names: string[] = []
    const values: Cell[] = []
    for (const [name, v] of top)
      if (v instanceof Map)
        for (const [sub, c] of v) {
          names.push(`${name}.${sub}`)
          values.push(c)
        }
      else {
        names.push(name)
        values.push(v)
      }
    // `${name}.${sub}` may also be a top-level name (`{"A.b": 1, "A": {"b": 2}}`): the object kept the last
    return this.objectRecordOf(names, values)
  }

  /** The record of distinct or repeated `names` (the last value of a name, in the place of its first). */
  private objectRecordOf(names: string[], values: Cell[]): ReadRecord {
    if (new Set(names).size === names.length) return {layout: this.layouts.of(names), values}
    const {layout, from} = layoutOf(names)
    return {layout: this.layouts.of(layout.names), values: Array.from(from, (i) => values[i]!)}
  }

  /** An object's fields (JSON.parse's, each its own) as a record, each value as `cell` gives it. */
  private objectRecord<T>(rec: Record<string, T>, cell: (name: string, v: T) => Cell): ReadRecord {
    const names: string[] = []
    const values: Cell[] = []
    for (const k in rec) {
      names.push(k)
      values.push(cell(k, rec[k]!))
    }
    return {layout: this.layouts.of(names), values}
  }

  /** A CSV record's fields as cells: empty cells null, guarded texts unguarded, numbers kept as written. */
  private csvRecord(file: number, fields: string[]): ReadRecord {
    let l = this.csvLayouts.get(file)
    const header = this.files[file]!.header ?? []
    if (!l) this.csvLayouts.set(file, (l = layoutOf(header, this.layouts)))
    const {layout, from} = l
    const values = new Array<Cell>(from.length)
    for (let i = 0; i < from.length; i++) values[i] = csvCellValue(header[from[i]!]!, fields[from[i]!]!)
    return {layout, values}
  }

  /** At least `size` bytes from `offset` (fewer at the end of the file), from the window when it has them. */
  private window(file: number, offset: number, size: number) {
    let w = this.open.get(file)
    if (!w) {
      const fd = openSync(this.files[file]!.path, 'r')
      w = {fd, size: fstatSync(fd).size, start: 0, end: 0, buf: Buffer.alloc(0)}
      this.open.set(file, w)
    }
    if (offset < w.start || w.end < Math.min(offset + size, w.size) || w.buf.length === 0) {
      if (w.buf.length < size) w.buf = Buffer.allocUnsafe(Math.max(size, WINDOW))
      w.start = offset
      w.end = offset + readSync(w.fd, w.buf, 0, w.buf.length, offset)
    }
    return {buf: w.buf, start: w.start, end: w.end, final: w.end >= w.size}
  }
}

/**
 * Every column's values at the rows `want` of row group `g`: through the kernel (src/changes/kernel/), which
 * decodes at full speed where the JavaScript decoder would run cold, and through `readRows` for the chunks
 * it gives back, which names what is wrong with them. The scan never decoded the columns it leaves out of
 * the digest (`--ignore-fields`, ValuationDate by default), so a page of one of those damaged in the file
 * is first met here: one line naming the file (exit 2), as the export reader says it, not an unexpected
 * failure.
 */
function readRowsNamed(file: ParquetColumns, g: number, want: Int32Array): PickedValues[] {
  try {
    const kernel = ParquetKernel.get()
    if (!kernel) return file.readRows(g, file.columns, want).map((v) => PickedValues.of(v))
    const rows = file.groups[g]!.rows
    const out = file.chunks(g, file.columns).map((c) => kernel.pick(c, rows, want))
    const rest = file.columns.filter((_, i) => out[i] === undefined)
    if (rest.length) {
      const read = file.readRows(g, rest, want)
      rest.forEach((c, j) => (out[file.columns.indexOf(c)] = PickedValues.of(read[j]!)))
    }
    return out as PickedValues[]
  } catch (error) {
    throw parquetReadError(file.path, error)
  }
}

/** A scratch copy's value, a change row's already (src/changes/scan.ts writes them so). */
const asCell = (_name: string, v: Cell): Cell => v

/** The planned rows in [from, to) (`planned` ascending), `row` among them (a read that was not planned). */
function plannedIn(planned: Float64Array, from: number, to: number, row: number): Float64Array {
  const part = planned.subarray(lowerBound(planned, from), lowerBound(planned, to))
  const at = lowerBound(part, row)
  if (part[at] === row) return part
  const out = new Float64Array(part.length + 1)
  out.set(part.subarray(0, at))
  out[at] = row
  out.set(part.subarray(at), at + 1)
  return out
}

/** The first place in ascending `xs` whose value is at least `x`. */
function lowerBound(xs: Float64Array, x: number): number {
  let lo = 0
  let hi = xs.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (xs[mid]! < x) lo = mid + 1
    else hi = mid
  }
  return lo
}

function changed(path: string, offset: number): Error {
  // the scan read this very record: only a file changed since could fail here
  return new Error(`${path}: the record at ${offset} changed while it was compared`)
}

function keyText(buf: Buffer, s: number, e: number, escaped: boolean): string {
  const raw = buf.toString('utf8', s, e)
  return escaped ? decodeEscapes(raw) : raw
}

/** A scalar member's value; an object or list as its JSON text (flattenRecord). */
function valueCell(buf: Buffer, s: number, e: number, kind: number): Cell {
  switch (kind & KIND_MASK) {
    case STRING:
      return stringValue(buf, s, e, (kind & ESCAPED) !== 0)
    case NUMBER:
      return {n: buf.toString('latin1', s, e)}
    case TRUE:
      return true
    case FALSE:
      return false
    case NULL:
      return null
    default:
      return jsonTextOf(buf, s, e)
  }
}

/** `valueCell` of the value at [s, e) of an ASCII record's text (an object or list member: its JSON text). */
function textCell(text: string, s: number, e: number, kind: number): Cell {
  switch (kind & KIND_MASK) {
    case STRING:
      return kind & ESCAPED ? decodeEscapes(text.slice(s + 1, e - 1)) : text.slice(s + 1, e - 1)
    case NUMBER:
      return {n: text.slice(s, e)}
    case TRUE:
      return true
    case FALSE:
      return false
    case NULL:
      return null
    default:
      return JSON.stringify(JSON.parse(text.slice(s, e)))
  }
}

/** An object or list value as flattenRecord gives it: JSON.stringify of what JSON.parse reads. */
function jsonTextOf(buf: Buffer, s: number, e: number): string {
  return JSON.stringify(JSON.parse(buf.toString('utf8', s, e)))
}
