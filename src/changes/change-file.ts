import {closeSync, openSync, readSync} from 'node:fs'

import {OPTION_NAMES} from '../api/spec.js'
import {readLines} from '../io/lines.js'
import {GatheredTarget} from '../io/gathered-target.js'
import {openOutput, StdoutTarget} from '../io/output.js'
import {AppendFile} from '../io/private-files.js'
import {removeFileSync} from '../io/private-sync.js'
import {RecordWriter, type RecordFormat} from '../io/record-writer.js'
import {columnsFor, emptyShape, type Shape} from '../model/columns.js'
import {unknownFormat} from '../model/formats.js'
import {guardCell, quoteCell} from '../text/csv-cell.js'
import {
  csvCellText,
  isSentNumber,
  jsonText,
  numberText,
  Layouts,
  MAX_LAYOUTS,
  valueOf,
  type Cell,
  type Layout,
  type ReadRecord,
} from './cells.js'

/**
 * The change file of a comparison (src/changes/compare.ts): its rows as the comparison emits them, held
 * or spooled until the header is known (`Emitter`), and written through the output gate in CSV, NDJSON or
 * JSON (`writeChangeFile`; docs/exports.md, "Changes since the last export").
 */

export type ChangeKind = 'added' | 'updated' | 'deleted'

/**
 * Change rows, counted and their columns noted, held until the change file's header is known: the first
 * HELD_ROWS in memory (a month's changes usually fit, and then skip the spool's round trip), all of them
 * in a scratch spool past that, so memory stays bounded whatever the number of changes. A county's
 * deleted and updated rows wait behind its added ones (`later`: in memory, or past HELD_ROWS in a scratch
 * file of their own) until the county ends. Rows read back are JSON's values already (text, numbers as
 * sent, booleans, null), made into the change file's cells as each row is emitted, so every way writes the
 * same bytes; a spooled row holds its cells and its layout by number (`RowCodec`).
 */
const HELD_ROWS = 5000

export class Emitter {
  readonly cols = new ColumnSet()
  readonly prevCols = new ColumnSet()
  private readonly spool: Spool
  private readonly codec = new RowCodec()
  private held: SpooledRow[] | undefined = []
  private readonly waiting: SpooledRow[] = []
  private waitingSpool: Spool | undefined
  private n = 0
  private breathed = 0

  constructor(
    readonly path: string,
    private readonly s: Record<ChangeKind, number>,
    format: RecordFormat,
  ) {
    this.spool = new Spool(path)
    this.csv = csvCells(format)
  }

  /** Whether the change file's cells are CSV's (else JSON texts): `csvCells`. */
  private readonly csv: boolean

  /**
   * Every row emitted, in order: the rows held in memory as they are (walked without an await a row), or
   * those of the spool as they are read back.
   */
  rows(): SpooledRow[] | AsyncIterable<SpooledRow> {
    return this.held ?? this.spooled()
  }

  private async *spooled(): AsyncGenerator<SpooledRow> {
    for await (const l of readLines(this.path)) yield this.codec.decode(l.bytes)
  }

  emit(
    kind: ChangeKind,
    fips: string,
    rec: ReadRecord,
    changed?: string[],
    old?: ReadRecord,
    later = false,
  ): void {
    this.s[kind]++
    this.cols.addLayout(rec.layout)
    const {values} = rec
    const csv = this.csv
    const cells = new Array<string>(values.length)
    // two direct calls, not one through a function chosen by the format: this runs for every value
    for (let i = 0; i < values.length; i++) cells[i] = csv ? cellOf(values[i]!) : jsonText(values[i])
    const row: SpooledRow = {k: kind, f: fips, l: rec.layout, v: cells}
    if (changed && old) {
      row.c = changed
      row.p = changed.map((c) => (csv ? cellOf : jsonText)(valueOf(old, c) ?? null))
      this.prevCols.addNames(changed)
      // a field only the previous record has is a column too (its cell empty in this row)
      this.cols.addNames(changed)
    }
    if (!later) this.push(row)
    else if (!this.waitingSpool && this.waiting.length < HELD_ROWS) this.waiting.push(row)
    else {
      this.waitingSpool ??= new Spool(`${this.path}.later`)
      for (const r of this.waiting) this.waitingSpool.append(this.codec.encode(r))
      this.waiting.length = 0
      this.waitingSpool.append(this.codec.encode(row))
    }
    this.n++
  }

  /**
   * Whether 4,096 rows or more were emitted since the caller last let the event loop in (`breathe`): a
   * county of many changes lets Ctrl-C in now and then (the reads here are synchronous), and a row costs
   * no await of its own (thousands of them were a few ms of a comparison's main thread).
   */
  due(): boolean {
    if (this.n - this.breathed < 4096) return false
    this.breathed = this.n
    return true
  }

  /**
   * The county's rows that waited go out after its added ones. Rows that waited in a spool of their own
   * (more than HELD_ROWS) are lines of the one codec already: their file goes onto the rows' spool as it
   * is, not parsed and written again (200,000 rows updated: about 1 s of JSON saved).
   */
  async endCounty(): Promise<void> {
    for (const r of this.waiting) this.push(r)
    this.waiting.length = 0
    const w = this.waitingSpool
    if (!w) return
    w.close()
    this.waitingSpool = undefined
    for (const r of this.held ?? []) this.spool.append(this.codec.encode(r))
    this.held = undefined
    this.spool.appendFile(w.path)
    removeFileSync(w.path)
  }

  private push(row: SpooledRow): void {
    if (this.held && this.held.length < HELD_ROWS) this.held.push(row)
    else {
      for (const r of this.held ?? []) this.spool.append(this.codec.encode(r))
      this.held = undefined
      this.spool.append(this.codec.encode(row))
    }
  }

  close(): void {
    this.spool.close()
    this.waitingSpool?.close()
  }
}

/**
 * A change row: its kind, county, the record's layout and its values as the change file's cells (`csvCells`:
 * a CSV cell, quoted, or a JSON value), made when the row is emitted, so a row held or spooled is texts
 * only (a value object a number cost the collector and the spool's JSON most of a comparison with many
 * changes: issue 32, CPU profile).
 */
interface SpooledRow {
  k: ChangeKind
  f: string
  l: Layout
  v: string[]
  /** The changed fields (an updated row). */
  c?: string[]
  /** Their previous values as cells, in the order of `c`. */
  p?: string[]
}

/**
 * How a value is written in a change file of `format`: a CSV cell (formula-guarded,
 * quoted; true) or JSON text (false).
 */
function csvCells(format: RecordFormat): boolean {
  switch (format) {
    case 'csv':
      return true
    case 'ndjson':
    case 'json':
      return false
    default:
      return unknownFormat(format)
  }
}

/**
 * A change row as a spool's line and back. Its texts joined by a separator no text of a row holds (US,
 * U+001F), after a mark (RS, U+001E), its layout by its number in a table kept here: splitting such a line
 * took a quarter of the time JSON.parse did (a row's 45 cells, 92,000 rows). A row whose texts hold the
 * separator or a line break (any text may), or whose layout is past the table's MAX_LAYOUTS, is a line of
 * JSON with its names written out.
 */
class RowCodec {
  private readonly ids = new Map<Layout, number>()
  private readonly list: Layout[] = []
  private readonly layouts = new Layouts()

  encode(row: SpooledRow): string {
    let id = this.ids.get(row.l)
    if (id === undefined && this.list.length < MAX_LAYOUTS) {
      this.ids.set(row.l, (id = this.list.length))
      this.list.push(row.l)
    }
    const c = row.c ?? []
    if (id !== undefined) {
      const parts = [row.k, row.f, String(id), String(c.length), ...c, ...row.v, ...(row.p ?? [])]
      const line = parts.join(US)
      if (!LINE_BREAK.test(line) && separators(line) === parts.length - 1) return `${RS}${line}\n`
    }
    const json: SpooledLine = {k: row.k, f: row.f, n: row.l.names as string[], v: row.v, c: row.c, p: row.p}
    return `${JSON.stringify(json)}\n`
  }

  decode(bytes: Buffer): SpooledRow {
    const text = bytes.toString('utf8')
    if (text.charCodeAt(0) !== RS_CODE) {
      const {k, f, n, v, c, p} = JSON.parse(text) as SpooledLine
      return withChanges({k, f, l: this.layouts.of(n), v}, c, p)
    }
    const parts = text.slice(1).split(US)
    const l = this.list[Number(parts[2])]!
    const nc = Number(parts[3])
    const width = l.names.length
    const c = parts.slice(4, 4 + nc)
    const v = parts.slice(4 + nc, 4 + nc + width)
    return withChanges({k: parts[0] as ChangeKind, f: parts[1]!, l, v}, c, parts.slice(4 + nc + width))
  }
}

const US = '\x1f'
const RS = '\x1e'
const RS_CODE = 0x1e
const LINE_BREAK = /[\n\r]/

/** How many separators `line` holds. */
function separators(line: string): number {
  let n = 0
  for (let at = line.indexOf(US); at >= 0; at = line.indexOf(US, at + 1)) n++
  return n
}

/** An updated row's changes (`c` and `p`, of the same length, not empty) on `row`. */
function withChanges(row: SpooledRow, c: string[] | undefined, p: string[] | undefined): SpooledRow {
  if (c?.length && p) {
    row.c = c
    row.p = p
  }
  return row
}

interface SpooledLine {
  k: ChangeKind
  f: string
  n: string[]
  v: string[]
  c?: string[] | undefined
  p?: string[] | undefined
}

/** An append-only scratch file (0600, created in the run's own scratch folder). */
class Spool {
  private file: AppendFile | undefined
  private buf = ''

  constructor(readonly path: string) {
    this.file = AppendFile.open(path, {fresh: true})
  }

  append(text: string): void {
    this.buf += text
    if (this.buf.length > 1 << 20) this.flush()
  }

  /** Another spool's file, its bytes as they are, after what was appended. */
  appendFile(path: string): void {
    this.flush()
    const chunk = Buffer.allocUnsafe(1 << 20)
    const fd = openSync(path, 'r')
    try {
      for (let n; (n = readSync(fd, chunk, 0, chunk.length, null)) > 0;) this.file!.write(chunk, 0, n)
    } finally {
      closeSync(fd)
    }
  }

  close(): void {
    this.flush()
    this.file?.close()
    this.file = undefined
  }

  private flush(): void {
    if (this.file === undefined || this.buf === '') return
    this.file.write(this.buf)
    this.buf = ''
  }
}

const OPTIONS: ReadonlySet<string> = new Set(OPTION_NAMES)

/**
 * The record columns a change file has: the fields met (a CSV header's names, a record's keys), in the
 * export's order (src/model/columns.ts `columnsFor`: the spec's standard fields, unknown top-level fields
 * as first met, then each option's `Option.Field` columns, spec members first). An option met only null
 * (a JSON record's `"AssumableMortgage": null`) gives no column of its own.
 */
class ColumnSet {
  private readonly shape: Shape = emptyShape()
  private readonly seen = new Set<string>()

  private readonly layouts = new WeakSet<Layout>()

  /** A layout's names (each layout's once). */
  addLayout(layout: Layout): void {
    if (this.layouts.has(layout)) return
    this.layouts.add(layout)
    this.addNames(layout.names)
  }

  addNames(names: readonly string[]): void {
    for (const k of names) if (!this.seen.has(k)) this.add(k)
  }

  private add(name: string): void {
    this.seen.add(name)
    const dot = name.indexOf('.')
    const opt = dot > 0 ? name.slice(0, dot) : ''
    if (!OPTIONS.has(opt)) {
      if (!this.shape.top.includes(name)) this.shape.top.push(name)
      return
    }
    if (!this.shape.top.includes(opt)) this.shape.top.push(opt)
    const subs = this.shape.nested.get(opt) ?? []
    if (!subs.includes(name.slice(dot + 1))) subs.push(name.slice(dot + 1))
    this.shape.nested.set(opt, subs)
  }

  /** The columns met, in the export's order. */
  ordered(): string[] {
    return columnsFor(this.shape)
      .map((c) => c.header)
      .filter((c) => this.seen.has(c))
  }

  /** The names met, in the order of `columns` (the change file's record columns). */
  orderedBy(columns: readonly string[]): string[] {
    return columns.filter((c) => this.seen.has(c))
  }
}

// ---------------------------------------------------------------------------------------------------
// The change file

/** Columns every change file starts with; the record's own columns follow (docs/exports.md, "Changes since the last export"). */
export const CHANGE_COLUMNS = ['Change', 'ServicePropertyID', 'Fips', 'ChangedFields'] as const

/**
 * Write the rows as the change file: CSV with `Previous.<Field>` columns for every field that
 * changed in some row, or NDJSON/JSON with `ChangedFields` as a list and `Previous` as an object.
 */
export async function writeChangeFile(
  rows: SpooledRow[] | AsyncIterable<SpooledRow>,
  cols: string[],
  prevCols: string[],
  req: {out?: string | undefined; format: RecordFormat},
): Promise<void> {
  let failure: Error | undefined
  const onFailure = (e: Error) => (failure ??= e)
  // through the output gate (src/io/output.ts): a file atomically, a FIFO or device written into; the
  // rows are all at hand, so their lines go in writes of 64 KiB (src/io/gathered-target.ts)
  const target = new GatheredTarget(
    req.out ? await openOutput(req.out, onFailure) : new StdoutTarget(onFailure),
  )
  const recordCols = cols.filter((c) => c !== 'ServicePropertyID' && c !== 'Fips')
  // a header is guarded as the export's is (src/pipeline/sinks.ts): a field named =HYPERLINK(...) stays text
  const header = [...CHANGE_COLUMNS, ...recordCols, ...prevCols.map((c) => `Previous.${c}`)].map((h) =>
    guardCell(h, true),
  )
  const rank = new Map(cols.map((c, i) => [c, i]))
  const writer = new RecordWriter(target, req.format, {header})
  // chosen once per file; a format added to the registry fails to compile here until handled
  let put: (row: SpooledRow) => boolean
  switch (req.format) {
    case 'csv':
      {
        const places = new Places(recordCols)
        const cells = new Array<string>(header.length).fill('')
        put = (row) => writer.csvText(csvRowLine(row, places, prevCols, cells))
      }
      break
    case 'ndjson':
    case 'json':
      {
        const memo = new RowOrder()
        put = (row) => writer.json(jsonRow(row, rank, memo))
      }
      break
    default:
      unknownFormat(req.format)
  }
  try {
    // a row written is awaited only when the target asks to drain
    const step = (row: SpooledRow): boolean => {
      if (failure) throw failure
      return put(row)
    }
    if (Array.isArray(rows)) {
      for (const row of rows) if (!step(row)) await target.drain()
    } else for await (const row of rows) if (!step(row)) await target.drain()
    if (failure) throw failure
    writer.end()
    await target.commit()
  } catch (error) {
    await target.abort()
    throw error
  }
}

/**
 * A change row as one CSV line (CRLF included): each value's cell by csvCellText, quoted by RFC 4180
 * (src/text/csv-cell.ts), as `csvLine` of the same cells writes it; its cells put into `cells` (one list
 * for every row, of the header's length) and joined once: a text grown by a cell at a time took twice
 * as long, cold (4,000 rows of 63 cells: 12.6 ms against 6.4, microbenchmark). The record's value of each
 * column by its place in the record's layout (`places`): a record without the field has an empty cell.
 */
function csvRowLine(row: SpooledRow, places: Places, prevCols: readonly string[], cells: string[]): string {
  const {l: layout, v: values} = row
  const at = places.of(layout)
  const id = layout.at('ServicePropertyID')
  cells[0] = quoteCell(row.k)
  cells[1] = id < 0 ? '' : values[id]!
  cells[2] = quoteCell(row.f)
  cells[3] = quoteCell((row.c ?? []).join(';'))
  let n = 4
  for (let i = 0; i < at.length; i++) {
    const j = at[i]!
    cells[n++] = j < 0 ? '' : values[j]!
  }
  const {c, p} = row
  for (let i = 0; i < prevCols.length; i++) {
    const k = c && p ? c.indexOf(prevCols[i]!) : -1
    cells[n++] = k >= 0 ? p![k]! : ''
  }
  return `${cells.join(',')}\r\n`
}

/**
 * Where each of the change file's record columns is in a layout (-1: not there), found once per layout:
 * the last layout's answer first (the rows of one side share one), then the layouts met (MAX_LAYOUTS of
 * them kept).
 */
class Places {
  private last: Layout | undefined
  private lastAt: Int32Array = new Int32Array(0)
  private readonly known = new Map<Layout, Int32Array>()

  constructor(private readonly columns: readonly string[]) {}

  of(layout: Layout): Int32Array {
    if (layout === this.last) return this.lastAt
    let at = this.known.get(layout)
    if (!at) {
      at = Int32Array.from(this.columns, (c) => layout.at(c))
      if (this.known.size < MAX_LAYOUTS) this.known.set(layout, at)
    }
    this.last = layout
    return (this.lastAt = at)
  }
}

/** A value's CSV cell: its text by csvCellText (a number as sent), quoted (a number's text never is). */
function cellOf(c: Cell): string {
  if (typeof c === 'number') return numberText(c)
  if (isSentNumber(c)) return c.n
  return quoteCell(csvCellText(c))
}

/**
 * A change row as one JSON line: `Change`, `ServicePropertyID`, `Fips`, `ChangedFields`, the record's own
 * fields in the export's column order (an option met null under its name, where its columns start), and
 * `Previous` with the changed fields' old values; numbers as sent (src/changes/cells.ts).
 */
function jsonRow(row: SpooledRow, rank: ReadonlyMap<string, number>, memo = new RowOrder()): string {
  const {l: layout, v: values} = row
  const id = layout.at('ServicePropertyID')
  const parts = [
    `"Change":${JSON.stringify(row.k)}`,
    `"ServicePropertyID":${id < 0 ? 'null' : values[id]}`,
    `"Fips":${JSON.stringify(row.f)}`,
    `"ChangedFields":${JSON.stringify(row.c ?? [])}`,
  ]
  for (const i of memo.order(layout, rank)) {
    const k = layout.names[i]!
    if (k !== 'ServicePropertyID' && k !== 'Fips') parts.push(`${memo.name(k)}${values[i]}`)
  }
  const {c, p} = row
  if (c && p) {
    const members = RowOrder.sorted(c, rank).map((i) => `${memo.name(c[i]!)}${p[i]}`)
    parts.push(`"Previous":{${members.join(',')}}`)
  }
  return `{${parts.join(',')}}`
}

/**
 * A layout's fields in the change file's column order (their places in the layout), found once per layout
 * (MAX_LAYOUTS of them kept), and each name as a JSON member's start: sorting each of 4,000 rows' 59 fields
 * again was most of the change file's writing (issue 32, CPU profile).
 */
class RowOrder {
  private readonly orders = new Map<Layout, number[]>()
  private readonly names = new Map<string, string>()

  order(layout: Layout, rank: ReadonlyMap<string, number>): number[] {
    let order = this.orders.get(layout)
    if (!order) {
      order = RowOrder.sorted(layout.names, rank)
      if (this.orders.size < MAX_LAYOUTS) this.orders.set(layout, order)
    }
    return order
  }

  /** `"name":` */
  name(k: string): string {
    let m = this.names.get(k)
    if (m === undefined) {
      m = `${JSON.stringify(k)}:`
      if (this.names.size < MAX_LAYOUTS) this.names.set(k, m)
    }
    return m
  }

  /** The places of `names` in the change file's column order (a name it has no column for: after those). */
  static sorted(names: readonly string[], rank: ReadonlyMap<string, number>): number[] {
    return names
      .map((k, i) => ({i, at: rank.get(k) ?? rankOfOption(k, rank) ?? rank.size + i}))
      .sort((a, b) => a.at - b.at)
      .map((x) => x.i)
  }
}

/** Where an option object's columns start (its name stands for them when it is null). */
function rankOfOption(k: string, rank: ReadonlyMap<string, number>): number | undefined {
  if (!OPTIONS.has(k)) return undefined
  for (const [c, i] of rank) if (c.startsWith(`${k}.`)) return i - 0.5
  return undefined
}
