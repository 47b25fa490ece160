import {join} from 'node:path'

import {readLines} from '../io/lines.js'
import {makeScratchDir} from '../io/private-files.js'
import type {RecordFormat} from '../io/record-writer.js'
import {compareText, isSentNumber, Layouts, type ReadRecord} from './cells.js'
import {
  DIGEST_A,
  DIGEST_B,
  ENTRY_WORDS,
  entryRef,
  KEY_A,
  KEY_B,
  loadEntries,
  type Classified,
  type GroupScan,
} from './entries.js'
import {ParquetKernel} from './kernel/parquet-kernel.js'
import {Emitter, writeChangeFile} from './change-file.js'
import {RecordReader} from './read.js'
import {scanWorkerWanted} from './prestart.js'
import {scanSides, type ScanWorker} from './scan-run.js'
import type {ScanFile, SideScan} from './scan.js'
import {sideFiles} from './sides.js'
import {EMPTY, IdTable} from './id-table.js'
import {count as n} from '../text/count.js'

export type {ChangeKind} from './change-file.js'

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
  /** The most one county's comparison held, bytes: its entries (24 a record), key table, states and lists. */
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
   * this thread scans the previous (src/changes/scan-run.ts); default: both on this one. A worker file is
   * started only for sides of src/changes/prestart.ts SCAN_WORKER_BYTES or more.
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
 * 2. County by county, the previous county's keys go into a table; the current county's entries are
 *    looked up: unknown key -> added, same digest -> unchanged, another digest -> updated; previous keys
 *    never met -> deleted (`classify`: in the kernel for a county of 4,096 entries or more).
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
      // a worker file (county-export --changes-since): started only for sides of SCAN_WORKER_BYTES or more
      req.worker instanceof URL && !scanWorkerWanted([...prevFiles, ...curFiles].map((f) => f.path))
        ? undefined
        : req.worker,
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
  const {prev: P, cur: C, added, todo, todoTo, ...k} = classify(pg, cg)
  s.duplicates += k.duplicates
  s.unchanged += k.unchanged
  s.tableBytes = Math.max(s.tableBytes, k.bytes)
  plan(prev, P, todo)
  plan(cur, C, [...added, ...todoTo.filter((j) => j >= 0)])
  // Rows go out added first (the current export's order), then deleted and updated (the previous one's).
  // Reads go in file order on both sides: an added record is read as the sweep of updated ones passes
  // its place in the current export, and the deleted and updated rows wait (Emitter `later`) until the
  // county's added ones are out, so each side is read once, forwards (a Parquet row group decoded once).
  let a = 0
  for (let t = 0; t < todo.length; t++) {
    const i = todo[t]!
    const j = todoTo[t]!
    if (j < 0) rows.emit('deleted', fips, read(prev, P, i), undefined, undefined, true)
    else {
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
 * Entries of both sides of a county at least this many: classified by the kernel (src/changes/kernel/, the
 * same rules in C), where JavaScript would run each loop below once, cold (15-20 ms of 100,000 records a
 * side); fewer, here (the kernel not even made for them).
 */
const KERNEL_ENTRIES = 4096

/**
 * Step 2: a county's previous and current entries (their scans `pg`, `cg`) read and classified
 * (src/changes/entries.ts `Classified`), by the kernel (into its memory) or by `classifyHere`.
 */
export function classify(pg: GroupScan | undefined, cg: GroupScan | undefined): Classified {
  const np = pg?.count ?? 0
  const nc = cg?.count ?? 0
  const kernel = np + nc >= KERNEL_ENTRIES ? ParquetKernel.get() : undefined
  const k = kernel?.classify(np, nc, (P, C) => {
    loadEntries(pg, P)
    loadEntries(cg, C)
  })
  return k ?? classifyHere(loadEntries(pg), loadEntries(cg), np, nc)
}

/**
 * `classify` in JavaScript: the rules (keyPrevious, classifyCurrent), then what changed, in order, named by
 * their places in `P` and `C` (its `prev` and `cur`); an updated entry's digest in `P` is overwritten with
 * the current entry it became.
 */
export function classifyHere(P: Uint32Array, C: Uint32Array, np: number, nc: number): Classified {
  const table = new IdTable(P, C, np + nc)
  const counts = {duplicates: 0, unchanged: 0}
  const state = keyPrevious(P, np, table, counts)
  const added = classifyCurrent(P, C, np, nc, table, state, counts)
  const todo: number[] = []
  const todoTo: number[] = []
  for (let i = 0; i < np; i++) {
    if (state[i] !== PREVIOUS && state[i] !== UPDATED) continue
    todo.push(i)
    todoTo.push(state[i] === UPDATED ? P[i * ENTRY_WORDS + DIGEST_A]! : -1)
  }
  return {
    prev: P,
    cur: C,
    added: Int32Array.from(added),
    todo: Int32Array.from(todo),
    todoTo: Int32Array.from(todoTo),
    ...counts,
    bytes: P.byteLength + C.byteLength + table.bytes + state.byteLength,
  }
}

/**
 * Step 2a: the previous side's keys into the table, each entry's state PREVIOUS, or REPEATED for a key met
 * before (the table holds the first).
 */
function keyPrevious(P: Uint32Array, np: number, table: IdTable, s: {duplicates: number}): Uint8Array {
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
  s: {duplicates: number; unchanged: number},
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
function plan(side: Side, entries: Uint32Array, read: ArrayLike<number>): void {
  const byFile = new Map<number, number[]>()
  for (let t = 0; t < read.length; t++) {
    const {file, offset} = entryRef(entries, read[t]!)
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
