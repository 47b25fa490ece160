import {join} from 'node:path'

import {fipsProblem} from '../api/validate.js'
import {UsageError} from '../errors.js'
import {STRING_SIZES} from '../api/spec.js'
import {onImmediateExit} from '../io/atomic-file.js'
import {asNumber, asText, type FlatRecord, type FlatValue} from '../io/export-reader.js'
import {readLines} from '../io/lines.js'
import {openOutput, StdoutTarget, type OutputTarget} from '../io/output.js'
import {AppendFile, makeScratchDir, removeTree} from '../io/private-files.js'
import {removeTreeSync} from '../io/private-sync.js'
import {RecordWriter, type RecordFormat} from '../io/record-writer.js'
import {guardCell, isFormulaStart} from '../text/csv-cell.js'
import {canonicalField, KNOWN_FIELDS} from '../model/field-names.js'
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
import {scanSides} from './scan-run.js'
import type {SideScan} from './scan.js'
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
 * never compared. Values compare as text (export-reader `asText`: a CSV cell "688600.0" equals the JSON
 * number 688600; a missing field equals null). Both rules are fingerprinted in src/changes/row-digest.ts.
 */

/**
 * The names of the fields whose values differ, compared as text, ignored fields left out. In the
 * current record's field order, then fields only the previous record has.
 */
export function changedFields(prev: FlatRecord, cur: FlatRecord, ignore: ReadonlySet<string>): string[] {
  const out: string[] = []
  for (const k in cur) {
    const v = cur[k]
    const p = prev[k]
    // the same value is the same text: asText only where they differ (a few fields of an updated record)
    if (v !== p && !ignore.has(k) && asText(v) !== asText(p)) out.push(k)
  }
  for (const k in prev) if (!(k in cur) && !ignore.has(k) && asText(prev[k]) !== null) out.push(k)
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
  /** Scan each side on a worker thread of this file (src/changes/scan-run.ts); default: on this one. */
  worker?: URL | undefined
}

/**
 * Compare two exports and write the change file: one row per property added, updated (with the names
 * of its changed fields) or deleted; unchanged properties give none.
 *
 * 1. Each side is read once, as bytes where it can be (src/changes/scan.ts): per record 24 bytes go
 *    to a scratch file of its county, its key's and its compared values' fingerprints and its offset.
 *    The two sides are scanned at once, a worker thread each, when `worker` is given.
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
  const scratch = await makeScratchDir('sfl-changes-')
  const forget = onImmediateExit(() => removeTreeSync(scratch))
  try {
    const [prevSide, curSide] = [await sideFiles(req.previous), await sideFiles(req.current)]
    const scans = await scanSides(
      [
        {label: 'previous', scratch, files: prevSide.files, ignore: req.ignore},
        {label: 'current', scratch, files: curSide.files, ignore: req.ignore},
      ],
      req.worker,
    )
    const prev = sideOf(scans[0]!, prevSide.counties)
    const cur = sideOf(scans[1]!, curSide.counties)
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
    const rows = new Emitter(join(scratch, 'rows.ndjson'), s)
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
      await writeChangeFile(rows.rows(), rows.cols.ordered(), rows.prevCols.ordered(), req)
    } finally {
      rows.close()
      prev.reader.close()
      cur.reader.close()
    }
    return s
  } finally {
    forget()
    await removeTree(scratch)
  }
}

/** A side scanned, ready to compare: its counties, their scans, and a reader of its records. */
interface Side {
  counties: string[]
  holds: Set<string>
  groups: Map<string, GroupScan>
  reader: RecordReader
}

function sideOf(scan: SideScan, manifestCounties: string[] | undefined): Side {
  // a manifest's counties are its entries (an empty county file included); a file's are its records'
  const counties = manifestCounties ?? scan.groups.map((g) => g.fips)
  return {
    counties,
    holds: new Set(counties),
    groups: new Map(scan.groups.map((g) => [g.fips, g])),
    reader: new RecordReader(scan.files),
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
  const state = new Uint8Array(np)
  for (let i = 0; i < np; i++) {
    const at = i * ENTRY_WORDS
    if (table.get(P[at + KEY_A]!, P[at + KEY_B]!) !== EMPTY) {
      state[i] = REPEATED
      s.duplicates++
    } else table.put(i)
  }
  const added: number[] = []
  for (let j = 0; j < nc; j++) {
    const at = j * ENTRY_WORDS
    const v = table.get(C[at + KEY_A]!, C[at + KEY_B]!)
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
  s.tableBytes = Math.max(s.tableBytes, P.byteLength + C.byteLength + table.bytes + state.byteLength)
  for (const j of added) await rows.emit('added', fips, read(cur, C, j))
  for (let i = 0; i < np; i++) {
    if (state[i] === PREVIOUS) await rows.emit('deleted', fips, read(prev, P, i))
    else if (state[i] === UPDATED) {
      const old = read(prev, P, i)
      const rec = read(cur, C, P[i * ENTRY_WORDS + DIGEST_A]!)
      await rows.emit('updated', fips, rec, changedFields(old, rec, ignore), old)
    }
  }
}

/** The current county's scan; its field names join the change file's columns (even when nothing changed). */
function curSideGroup(cur: Side, fips: string, rows: Emitter): GroupScan | undefined {
  const g = cur.groups.get(fips)
  if (g) rows.cols.addNames(g.names)
  return g
}

function read(side: Side, entries: Uint32Array, i: number): FlatRecord {
  const {file, offset} = entryRef(entries, i)
  return side.reader.read(file, offset)
}

/**
 * Change rows, counted and their columns noted, held until the change file's header is known: the first
 * HELD_ROWS in memory (a month's changes usually fit, and then skip a round trip through JSON text),
 * all of them in a scratch spool past that, so memory stays bounded whatever the number of changes. Rows
 * read back are JSON's values already (text, finite numbers, booleans, null), so both ways write the
 * same bytes.
 */
const HELD_ROWS = 5000

class Emitter {
  readonly cols = new ColumnSet()
  readonly prevCols = new ColumnSet()
  private readonly spool: Spool
  private held: SpooledRow[] | undefined = []
  private n = 0

  constructor(
    readonly path: string,
    private readonly s: ChangeSummary,
  ) {
    this.spool = new Spool(path)
  }

  /** Every row emitted, in order. */
  async *rows(): AsyncGenerator<SpooledRow> {
    if (this.held) yield* this.held
    else for await (const l of readLines(this.path)) yield JSON.parse(l.bytes.toString('utf8')) as SpooledRow
  }

  async emit(kind: ChangeKind, fips: string, rec: FlatRecord, changed?: string[], old?: FlatRecord) {
    this.s[kind]++
    this.cols.addAll(rec)
    const row: SpooledRow = {k: kind, f: fips, r: rec}
    if (changed && old) {
      row.c = changed
      row.p = Object.fromEntries(changed.map((c) => [c, old[c] ?? null]))
      this.prevCols.addAll(row.p)
    }
    if (this.held && this.held.length < HELD_ROWS) this.held.push(row)
    else {
      for (const r of this.held ?? []) this.spool.append(`${JSON.stringify(r)}\n`)
      this.held = undefined
      this.spool.append(`${JSON.stringify(row)}\n`)
    }
    // a county of many changes: let Ctrl-C in now and then (the reads here are synchronous)
    if (++this.n % 4096 === 0) await new Promise((resolve) => setImmediate(resolve))
  }

  close(): void {
    this.spool.close()
  }
}

interface SpooledRow {
  k: ChangeKind
  f: string
  r: FlatRecord
  c?: string[]
  p?: FlatRecord
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

/** Column names in the spec's order (src/render/field-names.ts), unknown ones after, as first met. */
class ColumnSet {
  private readonly seen = new Set<string>()

  addAll(rec: FlatRecord): void {
    for (const k in rec) this.seen.add(k)
  }

  addNames(names: readonly string[]): void {
    for (const k of names) this.seen.add(k)
  }

  ordered(): string[] {
    const rank = (c: string) => {
      const i = KNOWN_FIELDS.indexOf(c)
      return i < 0 ? KNOWN_FIELDS.length : i
    }
    return [...this.seen].sort((a, b) => rank(a) - rank(b))
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
  rows: AsyncIterable<SpooledRow>,
  cols: string[],
  prevCols: string[],
  req: ChangeRequest,
): Promise<void> {
  let failure: Error | undefined
  const onFailure = (e: Error) => (failure ??= e)
  // through the output gate (src/io/output.ts): a file atomically, a FIFO or device written into
  const target: OutputTarget = req.out ? await openOutput(req.out, onFailure) : new StdoutTarget(onFailure)
  const recordCols = cols.filter((c) => c !== 'ServicePropertyID' && c !== 'Fips')
  const header = [...CHANGE_COLUMNS, ...recordCols, ...prevCols.map((c) => `Previous.${c}`)]
  const writer = new RecordWriter(target, req.format, {header})
  try {
    for await (const row of rows) {
      const ok =
        req.format === 'csv'
          ? writer.csv(csvCells(row, recordCols, prevCols))
          : writer.json(JSON.stringify(jsonRow(row)))
      if (!ok) await target.drain()
      if (failure) throw failure
    }
    writer.end()
    await target.commit()
  } catch (error) {
    await target.abort()
    throw error
  }
}

function csvCells(row: SpooledRow, recordCols: string[], prevCols: string[]): string[] {
  return [
    row.k,
    cellText(row.r['ServicePropertyID']),
    row.f,
    (row.c ?? []).join(';'),
    ...recordCols.map((c) => cellText(row.r[c])),
    ...prevCols.map((c) => (row.p && c in row.p ? cellText(row.p[c]) : '')),
  ]
}

/** A flat value as a CSV cell: numbers as they are, text guarded against formulas (OWASP CSV injection). */
function cellText(v: FlatValue | undefined): string {
  if (v === null || v === undefined) return ''
  if (typeof v !== 'string') return String(v)
  // only a text that starts like a formula is guarded, and then only if it is not a number ("-4.5")
  return isFormulaStart(v.charCodeAt(0)) && asNumber(v) === undefined ? guardCell(v, true) : v
}

function jsonRow(row: SpooledRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    Change: row.k,
    ServicePropertyID: jsonValue('ServicePropertyID', row.r['ServicePropertyID']),
    Fips: row.f,
    ChangedFields: row.c ?? [],
  }
  for (const k in row.r) if (k !== 'ServicePropertyID' && k !== 'Fips') out[k] = jsonValue(k, row.r[k])
  if (row.p) out['Previous'] = Object.fromEntries(Object.entries(row.p).map(([k, v]) => [k, jsonValue(k, v)]))
  return out
}

/** Spec 2.1-2.3 varchar fields: their text stays text in JSON even when it looks like a number ("95814"). */
const TEXT_FIELDS = new Set([
  ...Object.keys(STRING_SIZES),
  'AssumableMortgage.LoanType',
  'AssumableMortgage.FinancingType',
  'AssumableMortgage.Lender',
  'FHACondoEligibility.ApprovalStatus',
  'FHACondoEligibility.EligibilityStatus',
  'FHACondoEligibility.CondoName',
  'FHACondoEligibility.CondoID',
])

/**
 * A value for the NDJSON/JSON change file: a CSV side's text turned back into the JSON type the spec gives
 * its field (bigint, float, int, boolean), so a change row has one type per field whatever side it came
 * from. Text fields, dates and columns the spec does not name stay as they were read.
 */
export function jsonValue(field: string, v: FlatValue | undefined): FlatValue {
  if (v === undefined) return null
  if (typeof v !== 'string' || TEXT_FIELDS.has(field) || !KNOWN.has(field)) return v
  if (v === 'true' || v === 'false') return v === 'true'
  return /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(v) ? Number(v) : v
}
const KNOWN = new Set(KNOWN_FIELDS)

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

/** `--fips` as given (repeatable, comma-separated): the counties to compare, each checked; undefined: all. */
export function countyList(flag: readonly string[] | undefined): string[] | undefined {
  if (flag === undefined) return undefined
  const out: string[] = []
  for (const raw of flag) {
    const fips = raw.trim()
    const problem = fipsProblem(fips)
    if (problem) throw new UsageError(`--fips "${fips}" ${problem}`)
    if (!out.includes(fips)) out.push(fips)
  }
  return out
}

/**
 * `--ignore-fields` as given (comma-separated, repeatable) to the list left out of the comparison:
 * spec names matched case-insensitively; `none` compares every field; absent: DEFAULT_IGNORED.
 */
export function ignoreList(flag: readonly string[] | undefined): string[] {
  if (flag === undefined) return [...DEFAULT_IGNORED]
  const names = flag.map((s) => s.trim()).filter((s) => s !== '')
  if (names.length === 1 && names[0]!.toLowerCase() === 'none') return []
  return names.map((name) => {
    const known = canonicalField(name)
    if (known === undefined)
      throw new UsageError(
        `--ignore-fields: unknown column "${name}"; use spec names such as ValuationDate or AssumableMortgage.LoanType, or none`,
      )
    return known
  })
}

/** The change file's format: --output, else --out's extension, else `fallback`. */
export function changeFormat(
  flag: RecordFormat | undefined,
  out: string | undefined,
  fallback: RecordFormat = 'csv',
): RecordFormat {
  if (flag) return flag
  const ext = out && /\.([a-z]+)$/i.exec(out)?.[1]?.toLowerCase()
  return ext === 'ndjson' || ext === 'jsonl'
    ? 'ndjson'
    : ext === 'json'
      ? 'json'
      : ext === 'csv'
        ? 'csv'
        : fallback
}

/** county-export's default change file, beside its output: `nov.csv` -> `nov.changes.csv`. */
export function changesOutFor(out: string, format: RecordFormat): string {
  const m = /^(.*[^/\\])\.(csv|ndjson|jsonl|json)$/i.exec(out)
  return m ? `${m[1]}.changes.${m[2]}` : `${out}.changes.${format}`
}
