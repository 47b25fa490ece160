import {closeSync, openSync, readSync} from 'node:fs'
import {join} from 'node:path'

import {OPTION_NAMES} from '../api/spec.js'
import {readLines} from '../io/lines.js'
import {GatheredTarget} from '../io/gathered-target.js'
import {openOutput, StdoutTarget} from '../io/output.js'
import {AppendFile, makeScratchDir} from '../io/private-files.js'
import {removeFileSync} from '../io/private-sync.js'
import {RecordWriter, type RecordFormat} from '../io/record-writer.js'
import {columnsFor, emptyShape, type Shape} from '../model/columns.js'
import {unknownFormat} from '../model/formats.js'
import {guardCell, quoteCell} from '../text/csv-cell.js'
import {
  compareText,
  csvCellText,
  isSentNumber,
  jsonText,
  Layouts,
  MAX_LAYOUTS,
  valueOf,
  type Cell,
  type Layout,
  type ReadRecord,
} from './cells.js'
import {
  DIGEST_A,
  DIGEST_B,
  ENTRY_WORDS,
  entryRef,
  KEY_A,
  KEY_B,
  loadEntries,
  type GroupScan,
} from './entries.js'
import {RecordReader} from './read.js'
import {scanSides, type ScanWorker} from './scan-run.js'
import type {ScanFile, SideScan} from './scan.js'
import {sideFiles} from './sides.js'
import {EMPTY, IdTable} from './id-table.js'
import {count as n} from '../text/count.js'

export type ChangeKind = 'added' | 'updated' | 'deleted'

/**
 * The valuation date moves at every revaluation (spec 2.1 ValuationDate), so comparing it would report
 * nearly every property as updated each month; it is left out unless `--ignore-fields` says otherwise.
 */
export const DEFAULT_IGNORED = ['ValuationDate'] as const

// ---------------------------------------------------------------------------------------------------
// The comparison rules (pure)

/*
 * A record's identity within its county. Spec 2.1: ServicePropertyID is the service's unique property
 * id, so it is the key. A record without one falls back to its APN (unique within a county, and
 * counties are compared one at a time, so this is Fips+APN); a record with neither is unkeyed: counted,
 * never compared. Values compare as text (src/changes/cells.ts `compareText`, export-reader's `asText`: a
 * CSV cell "688600.0" equals the JSON number 688600; a missing field equals null). Both rules are
 * fingerprinted in src/changes/row-digest.ts.
 */

/**
 * The names of the fields whose values differ, compared as text, ignored fields left out. In the
 * current record's field order, then fields only the previous record has.
 */
export function changedFields(prev: ReadRecord, cur: ReadRecord, ignore: ReadonlySet<string>): string[] {
  const out: string[] = []
  const names = cur.layout.names
  // two records of one layout (two rows of a Parquet file, of files with the same columns) compare
  // place by place; others through where each field is in the other (found once per pair of layouts)
  const same = prev.layout === cur.layout
  const inPrev = same ? undefined : cur.layout.placesIn(prev.layout)
  for (let i = 0; i < names.length; i++) {
    const v = cur.values[i]
    const j = inPrev ? inPrev[i]! : i
    const p = j < 0 ? undefined : prev.values[j]
    // the same value is the same text: compareText only where they differ (a few fields of an updated
    // record). Numbers are objects, never the same: the same text as sent is the same number.
    if (v === p || (isSentNumber(v) && isSentNumber(p) && v.n === p.n)) continue
    if (!ignore.has(names[i]!) && compareText(v) !== compareText(p)) out.push(names[i]!)
  }
  if (!same) {
    const inCur = prev.layout.placesIn(cur.layout)
    prev.layout.names.forEach((k, j) => {
      if (inCur[j]! < 0 && !ignore.has(k) && compareText(prev.values[j]) !== null) out.push(k)
    })
  }
  return out
}

// ---------------------------------------------------------------------------------------------------
// The engine

export interface ChangeCounts {
  added: number
  updated: number
  deleted: number
  unchanged: number
  /** Records with neither ServicePropertyID nor APN, on either side: not compared. */
  unkeyed: number
  /** A key met again within one county of one side: the first record counts, the others are skipped. */
  duplicates: number
}

/** A county compared that only one side holds, and how many change rows it gave (all deleted, or added). */
export interface OneSidedCounty {
  fips: string
  rows: number
}

export interface ChangeSummary extends ChangeCounts {
  /** Counties compared. */
  counties: number
  /** Where the change file went (undefined: stdout). */
  out?: string | undefined
  /** The most one county's comparison held, bytes: its entries (24 a record), key table and states. */
  tableBytes: number
  /** Counties compared that the current export does not hold: every record of theirs is deleted. */
  onlyPrevious: OneSidedCounty[]
  /** Counties compared that the previous export does not hold: every record of theirs is added. */
  onlyCurrent: OneSidedCounty[]
  /** Counties asked for (`counties`) that neither export holds. */
  inNeither: string[]
}

export interface ChangeRequest {
  previous: string
  current: string
  /** Compare only these counties (county-export: the counties that finished). Default: every county of either side. */
  counties?: readonly string[] | undefined
  ignore: readonly string[]
  out?: string | undefined
  format: RecordFormat
  /**
   * Scan the current side on a worker thread (of this worker file, or this worker already started) while
   * this thread scans the previous (src/changes/scan-run.ts); default: both on this one.
   */
  worker?: URL | ScanWorker | undefined
}

/**
 * Compare two exports and write the change file: one row per property added, updated (with the names
 * of its changed fields) or deleted; unchanged properties give none.
 *
 * 1. Each side is read once, as bytes where it can be (src/changes/scan.ts): per record 24 bytes go
 *    to a scratch file of its county, its key's and its compared values' fingerprints and its offset.
 *    The two sides are scanned at once when `worker` is given: the previous here, the current on a worker.
 * 2. County by county, the previous county's keys go into an IdTable; the current county's entries are
 *    looked up: unknown key -> added, same digest -> unchanged, another digest -> updated; previous keys
 *    never met -> deleted.
 * 3. Only the records that changed are read back, by offset, as record objects (src/changes/read.ts),
 *    to write their rows: added in the current export's order, then deleted and updated in the previous
 *    one's, with the changed fields named by comparing the two objects.
 *
 * Rows go to a spool first because a CSV change file needs its columns (and the `Previous.*` columns of
 * fields that changed anywhere) before its first row.
 */
export async function compareExports(req: ChangeRequest): Promise<ChangeSummary> {
  const dir = makeScratchDir('sfl-changes-')
  const scratch = dir.path
  try {
    const [prevSide, curSide] = [await sideFiles(req.previous), await sideFiles(req.current)]
    const [prevFiles, curFiles] = [
      askedFiles(prevSide.files, req.counties),
      askedFiles(curSide.files, req.counties),
    ]
    const digest = await digestOf([...prevFiles, ...curFiles])
    const scans = await scanSides(
      [
        {label: 'previous', scratch, files: prevFiles, ignore: req.ignore, digest},
        {label: 'current', scratch, files: curFiles, ignore: req.ignore, digest},
      ],
      req.worker,
    )
    // one registry of record layouts for both sides: records of the same fields share one
    const layouts = new Layouts()
    const prev = await sideOf(scans[0]!, prevSide.counties, layouts)
    const cur = await sideOf(scans[1]!, curSide.counties, layouts).catch((error: unknown) => {
      prev.reader.close()
      throw error
    })
    const counties = req.counties ?? [...new Set([...cur.counties, ...prev.counties])]
    const s: ChangeSummary = {
      counties: counties.length,
      added: 0,
      updated: 0,
      deleted: 0,
      unchanged: 0,
      unkeyed: 0,
      duplicates: 0,
      out: req.out,
      tableBytes: 0,
      onlyPrevious: [],
      onlyCurrent: [],
      inNeither: [],
    }
    const rows = new Emitter(join(scratch, 'rows.ndjson'), s, req.format)
    try {
      for (const fips of counties) {
        const before = s.added + s.deleted
        await compareCounty(fips, prev, cur, new Set(req.ignore), rows, s)
        const one = {fips, rows: s.added + s.deleted - before}
        if (!cur.holds.has(fips) && prev.holds.has(fips)) s.onlyPrevious.push(one)
        else if (!prev.holds.has(fips) && cur.holds.has(fips)) s.onlyCurrent.push(one)
        else if (!prev.holds.has(fips)) s.inNeither.push(fips)
      }
      rows.close()
      const cols = rows.cols.ordered()
      await writeChangeFile(rows.rows(), cols, rows.prevCols.orderedBy(cols), req)
    } finally {
      rows.close()
      prev.reader.close()
      cur.reader.close()
    }
    return s
  } finally {
    await dir.remove()
  }
}

/**
 * The files of a side that hold counties compared: a manifest's county file of a county not asked for
 * (`--fips 06067` of a state's folder, county-export's counties that did not finish) is not read at all;
 * a file of several counties is (its records' Fips say which they are).
 */
function askedFiles(files: readonly ScanFile[], counties: readonly string[] | undefined): ScanFile[] {
  if (!counties) return [...files]
  const asked = new Set(counties)
  return files.filter((f) => f.group === undefined || asked.has(f.group))
}

/**
 * What the scans digest (src/changes/scan.ts `digest`): a record's bytes when every file of both sides is
 * NDJSON or JSON lines, or CSV with one header (an unchanged record is then the same bytes), else its
 * values. On a side of the 200,000-record benchmark pair the bytes digest took the scan's CPU from 1.05 s
 * to 0.87 s for NDJSON and from 0.55 s to 0.40 s for CSV (docs/performance.md).
 */
async function digestOf(files: readonly ScanFile[]): Promise<'values' | 'bytes'> {
  if (files.every((f) => f.format === 'ndjson' || f.format === 'json')) return 'bytes'
  if (!files.every((f) => f.format === 'csv')) return 'values'
  const headers = new Set<string>()
  for (const f of files) headers.add(await csvHeaderLine(f.path))
  return headers.size === 1 ? 'bytes' : 'values'
}

/** A CSV file's first line as it lies (its header), or '' for an empty file. */
async function csvHeaderLine(path: string): Promise<string> {
  for await (const l of readLines(path)) return l.bytes.toString('latin1').replace(/\r$/, '')
  return ''
}

/** A side scanned, ready to compare: its counties, their scans, and a reader of its records. */
interface Side {
  counties: string[]
  holds: Set<string>
  groups: Map<string, GroupScan>
  reader: RecordReader
}

async function sideOf(
  scan: SideScan,
  manifestCounties: string[] | undefined,
  layouts: Layouts,
): Promise<Side> {
  // a manifest's counties are its entries (an empty county file included); a file's are its records'
  const counties = manifestCounties ?? scan.groups.map((g) => g.fips)
  return {
    counties,
    holds: new Set(counties),
    groups: new Map(scan.groups.map((g) => [g.fips, g])),
    reader: await RecordReader.create(scan.files, layouts),
  }
}

const PREVIOUS = 0
const UNCHANGED = 1
const UPDATED = 2
const REPEATED = 3

/** One county: classify every entry (step 2), then write the rows of those that changed (step 3). */
async function compareCounty(
  fips: string,
  prev: Side,
  cur: Side,
  ignore: ReadonlySet<string>,
  rows: Emitter,
  s: ChangeSummary,
): Promise<void> {
  const pg = prev.groups.get(fips)
  const cg = curSideGroup(cur, fips, rows)
  s.unkeyed += (pg?.unkeyed ?? 0) + (cg?.unkeyed ?? 0)
  const P = loadEntries(pg)
  const C = loadEntries(cg)
  const np = P.length / ENTRY_WORDS
  const nc = C.length / ENTRY_WORDS
  const table = new IdTable(P, C, np + nc)
  const state = keyPrevious(P, np, table, s)
  const added = classifyCurrent(P, C, np, nc, table, state, s)
  s.tableBytes = Math.max(s.tableBytes, P.byteLength + C.byteLength + table.bytes + state.byteLength)
  plan(prev, P, (i) => state[i] === PREVIOUS || state[i] === UPDATED, np)
  const wanted = new Uint8Array(nc)
  for (const j of added) wanted[j] = 1
  for (let i = 0; i < np; i++) if (state[i] === UPDATED) wanted[P[i * ENTRY_WORDS + DIGEST_A]!] = 1
  plan(cur, C, (j) => wanted[j] === 1, nc)
  // Rows go out added first (the current export's order), then deleted and updated (the previous one's).
  // Reads go in file order on both sides: an added record is read as the sweep of updated ones passes
  // its place in the current export, and the deleted and updated rows wait (Emitter `later`) until the
  // county's added ones are out, so each side is read once, forwards (a Parquet row group decoded once).
  let a = 0
  for (let i = 0; i < np; i++) {
    if (state[i] === PREVIOUS) rows.emit('deleted', fips, read(prev, P, i), undefined, undefined, true)
    else if (state[i] === UPDATED) {
      const j = P[i * ENTRY_WORDS + DIGEST_A]!
      for (; a < added.length && added[a]! < j; a++) rows.emit('added', fips, read(cur, C, added[a]!))
      const old = read(prev, P, i)
      const rec = read(cur, C, j)
      const changed = changedFields(old, rec, ignore)
      // a bytes digest differs for bytes that mean the same (`1.0` and `1`): no field changed, unchanged
      if (changed.length === 0) s.unchanged++
      else rows.emit('updated', fips, rec, changed, old, true)
    }
    if (rows.due()) await breathe()
  }
  for (; a < added.length; a++) {
    rows.emit('added', fips, read(cur, C, added[a]!))
    if (rows.due()) await breathe()
  }
  await rows.endCounty()
}

/**
 * Step 2a: the previous side's keys into the table, each entry's state PREVIOUS, or REPEATED for a key met
 * before (the table holds the first).
 */
function keyPrevious(P: Uint32Array, np: number, table: IdTable, s: ChangeSummary): Uint8Array {
  const state = new Uint8Array(np)
  for (let i = 0; i < np; i++) {
    const at = i * ENTRY_WORDS
    if (table.get(P[at + KEY_A]!, P[at + KEY_B]!) !== EMPTY) {
      state[i] = REPEATED
      s.duplicates++
    } else table.put(i)
  }
  return state
}

/**
 * Step 2b: each current entry classified against the previous side: added (returned, in order), a
 * duplicate, or the previous entry it matches made UNCHANGED or UPDATED (its digest slot then says which
 * current entry it became).
 */
function classifyCurrent(
  P: Uint32Array,
  C: Uint32Array,
  np: number,
  nc: number,
  table: IdTable,
  state: Uint8Array,
  s: ChangeSummary,
): number[] {
  const added: number[] = []
  // Two exports of a county list its properties in one order, so the current record j is nearly always
  // the previous record after the last one matched: checked there first, its entry read in order, before
  // the table's random probe (at 1,000,000 records a side the probes were most of the main thread's
  // classifying). Where the guess holds the key it is the table's answer too (a key of the previous side
  // is never entered as a current one), unless that previous record repeats a key (the table holds the
  // first): then the table answers.
  let guess = 0
  for (let j = 0; j < nc; j++) {
    const at = j * ENTRY_WORDS
    const ka = C[at + KEY_A]!
    const kb = C[at + KEY_B]!
    const g = guess * ENTRY_WORDS
    const v =
      guess < np && P[g + KEY_A] === ka && P[g + KEY_B] === kb && state[guess] !== REPEATED
        ? guess
        : table.get(ka, kb)
    if (v >= 0) guess = v + 1
    if (v === EMPTY) {
      table.put(-j - 2)
      added.push(j)
    } else if (v < 0 || state[v] !== PREVIOUS) s.duplicates++
    else {
      const p = v * ENTRY_WORDS
      if (P[p + DIGEST_A] === C[at + DIGEST_A] && P[p + DIGEST_B] === C[at + DIGEST_B]) {
        state[v] = UNCHANGED
        s.unchanged++
      } else {
        state[v] = UPDATED
        P[p + DIGEST_A] = j // the digest is spent: the slot now says which current record it became
      }
    }
  }
  return added
}

/** The current county's scan; its field names join the change file's columns (even when nothing changed). */
function curSideGroup(cur: Side, fips: string, rows: Emitter): GroupScan | undefined {
  const g = cur.groups.get(fips)
  if (g) rows.cols.addNames(g.names)
  return g
}

/** Tell the side's reader which of the county's records will be read (its Parquet files decode just those). */
function plan(side: Side, entries: Uint32Array, read: (i: number) => boolean, n: number): void {
  const byFile = new Map<number, number[]>()
  for (let i = 0; i < n; i++) {
    if (!read(i)) continue
    const {file, offset} = entryRef(entries, i)
    let list = byFile.get(file)
    if (!list) byFile.set(file, (list = []))
    list.push(offset)
  }
  for (const [file, rows] of byFile) side.reader.plan(file, rows)
}

/** The event loop let in (a signal's handler, a closed stdout) before the work goes on. */
const breathe = () => new Promise((resolve) => setImmediate(resolve))

function read(side: Side, entries: Uint32Array, i: number): ReadRecord {
  const {file, offset} = entryRef(entries, i)
  return side.reader.read(file, offset)
}

/**
 * Change rows, counted and their columns noted, held until the change file's header is known: the first
 * HELD_ROWS in memory (a month's changes usually fit, and then skip a round trip through JSON text),
 * all of them in a scratch spool past that, so memory stays bounded whatever the number of changes. A
 * county's deleted and updated rows wait behind its added ones (`later`: in memory, or past HELD_ROWS in
 * a scratch file of their own) until the county ends. Rows read back are JSON's values already (text,
 * numbers as sent, booleans, null), so every way writes the same bytes; a spooled row holds its values as
 * a list and its layout by number (`RowCodec`).
 */
const HELD_ROWS = 5000

class Emitter {
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
    private readonly s: ChangeSummary,
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
async function writeChangeFile(
  rows: SpooledRow[] | AsyncIterable<SpooledRow>,
  cols: string[],
  prevCols: string[],
  req: ChangeRequest,
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

/** The one-line summary on stderr. */
export function changeSummaryLine(s: ChangeSummary, what = 'sfl changes'): string {
  const parts = [
    `${n(s.added)} added`,
    `${n(s.updated)} updated`,
    `${n(s.deleted)} deleted`,
    `${n(s.unchanged)} unchanged`,
  ]
  if (s.unkeyed) parts.push(`${n(s.unkeyed)} without ServicePropertyID or APN (not compared)`)
  if (s.duplicates) parts.push(`${n(s.duplicates)} repeated ids skipped`)
  const where = s.out ? ` -> ${s.out}` : ''
  return `${what}: ${parts.join(', ')} in ${n(s.counties)} ${s.counties === 1 ? 'county' : 'counties'}${where}`
}

/**
 * What the one-line summary does not say: counties only one export holds, whose records are therefore all
 * deleted (a folder of a state compared with the file of one county: rarely what was meant) or all added,
 * and counties asked for that neither holds. `sfl changes` compares every county of either side, as a full
 * outer join (DuckDB) or `git diff` of two trees would; these lines name what that did, and --fips, like a
 * WHERE clause or a pathspec, narrows it.
 */
export function oneSidedNotices(s: ChangeSummary, what = 'sfl changes'): string[] {
  const list = (xs: string[]) =>
    xs.length <= 10 ? xs.join(', ') : `${xs.slice(0, 10).join(', ')} and ${n(xs.length - 10)} more`
  const line = (counties: OneSidedCounty[], side: string, kind: string) => {
    const rows = counties.reduce((a, c) => a + c.rows, 0)
    const one = counties.length === 1
    return `${what}: ${one ? '' : `${n(counties.length)} counties `}${one ? counties[0]!.fips : `(${list(counties.map((c) => c.fips))})`} ${one ? 'is' : 'are'} only in the ${side} export: ${one ? 'its' : 'their'} ${n(rows)} ${rows === 1 ? 'record is' : 'records are'} reported ${kind}`
  }
  const out: string[] = []
  if (s.onlyPrevious.length)
    out.push(`${line(s.onlyPrevious, 'previous', 'deleted')} (--fips compares only the counties named)`)
  if (s.onlyCurrent.length) out.push(line(s.onlyCurrent, 'current', 'added'))
  if (s.inNeither.length) out.push(`${what}: --fips ${list(s.inNeither)}: in neither export`)
  return out
}
