import {hash} from 'node:crypto'
import {closeSync, openSync, readSync, rmSync, writeSync} from 'node:fs'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {UsageError} from '../errors.js'
import {STRING_SIZES} from '../api/spec.js'
import {onImmediateExit} from '../io/atomic-file.js'
import {asNumber, asText, type FlatRecord, type FlatValue} from '../io/export-reader.js'
import {readLines} from '../io/lines.js'
import {FileTarget, StdoutTarget, type OutputTarget} from '../io/output.js'
import {RecordWriter, type RecordFormat} from '../io/record-writer.js'
import {neutraliseFormula} from '../model/columns.js'
import {canonicalField, KNOWN_FIELDS} from '../model/field-names.js'
import {openSide, type ExportSide} from './change-sides.js'
import {IdTable, SlotState} from './id-table.js'

export type ChangeKind = 'added' | 'updated' | 'deleted'

/**
 * The valuation date moves at every revaluation (spec 2.1 ValuationDate), so comparing it would report
 * nearly every property as updated each month; it is left out unless `--ignore-fields` says otherwise.
 */
export const DEFAULT_IGNORED = ['ValuationDate'] as const

// ---------------------------------------------------------------------------------------------------
// The comparison rules (pure)

/**
 * A record's identity within its county. Spec 2.1: ServicePropertyID is the service's unique property
 * id, so it is the key. A record without one falls back to its APN (unique within a county, and
 * counties are compared one at a time, so this is Fips+APN); a record with neither is unkeyed: counted,
 * never compared.
 */
export function recordKey(rec: FlatRecord): string | undefined {
  const id = asText(rec['ServicePropertyID'])
  if (id !== null && id !== '') return `id:${id}`
  const apn = asText(rec['APN'])
  if (apn !== null && apn !== '') return `apn:${apn}`
  return undefined
}

/**
 * The names of the fields whose values differ, compared as text (export-reader `asText`: a CSV cell
 * "688600.0" equals the JSON number 688600; a missing field equals null), ignored fields left out. In the
 * current record's field order, then fields only the previous record has.
 */
export function changedFields(prev: FlatRecord, cur: FlatRecord, ignore: ReadonlySet<string>): string[] {
  const out: string[] = []
  for (const k in cur) if (!ignore.has(k) && asText(cur[k]) !== asText(prev[k])) out.push(k)
  for (const k in prev) if (!(k in cur) && !ignore.has(k) && asText(prev[k]) !== null) out.push(k)
  return out
}

/**
 * 8 bytes standing for a record's compared values: equal records (by `changedFields`' rule) have equal
 * digests whatever their format or field order, so a first pass can keep the digest instead of the record.
 */
export function recordDigest(rec: FlatRecord, ignore: ReadonlySet<string>): Buffer {
  let text = ''
  for (const k of sortedKeys(rec)) {
    if (ignore.has(k)) continue
    const v = asText(rec[k])
    if (v !== null) text += `${k}\u0000${v}\u0000`
  }
  // one hash call a record: a hash update a field cost more than reading the record (profiled)
  return hash('sha1', text, 'buffer').subarray(0, 8)
}

/** The records of one export share their field order: sort it once, reuse it while it holds. */
let lastKeys: string[] = []
let lastSorted: string[] = []
function sortedKeys(rec: FlatRecord): string[] {
  const keys = Object.keys(rec)
  if (keys.length === lastKeys.length && keys.every((k, i) => k === lastKeys[i])) return lastSorted
  lastKeys = keys
  lastSorted = [...keys].sort()
  return lastSorted
}

function keyHash(key: string): Buffer {
  return hash('sha1', key, 'buffer').subarray(0, 8)
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

export interface ChangeSummary extends ChangeCounts {
  /** Counties compared. */
  counties: number
  /** Where the change file went (undefined: stdout). */
  out?: string | undefined
  /** The largest id table of one county, bytes (the comparison's memory beyond a record or two). */
  tableBytes: number
}

export interface ChangeRequest {
  previous: string
  current: string
  /** Compare only these counties (county-export: the counties that finished). Default: every county of either side. */
  counties?: readonly string[] | undefined
  ignore: readonly string[]
  out?: string | undefined
  format: RecordFormat
}

/**
 * Compare two exports and write the change file: one row per property added, updated (with the names
 * of its changed fields) or deleted; unchanged properties give none. County by county, in three passes:
 *
 * 1. the previous county: id -> 8-byte digest of the record, in an IdTable (34-68 bytes a record);
 * 2. the current county: unknown id -> added (written at once); same digest -> unchanged; another digest
 *    -> updated: the current record goes to a scratch spool and its slot keeps the spool offset;
 * 3. the previous county again, only when something was updated or is left over: ids never met ->
 *    deleted (the previous record), updated ids -> the changed fields against the spooled current record.
 *
 * Rows go to a spool first because a CSV change file needs its columns (and the `Previous.*` columns of
 * fields that changed anywhere) before its first row.
 */
export async function compareExports(req: ChangeRequest): Promise<ChangeSummary> {
  const scratch = await mkdtemp(join(tmpdir(), 'sfl-changes-'))
  const forget = onImmediateExit(() => rmSync(scratch, {recursive: true, force: true}))
  try {
    const [prev, cur] = [
      await openSide(req.previous, scratch, 'previous'),
      await openSide(req.current, scratch, 'current'),
    ]
    const ignore = new Set(req.ignore)
    const counties = req.counties ?? [...new Set([...cur.counties, ...prev.counties])]
    const rows = new Spool(join(scratch, 'rows.ndjson'))
    const updated = new Spool(join(scratch, 'updated.ndjson'))
    const cols = new ColumnSet()
    const prevCols = new ColumnSet()
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
    }
    const emit = (kind: ChangeKind, fips: string, rec: FlatRecord, changed?: string[], old?: FlatRecord) => {
      s[kind]++
      cols.addAll(rec)
      const row: SpooledRow = {k: kind, f: fips, r: rec}
      if (changed && old) {
        row.c = changed
        row.p = Object.fromEntries(changed.map((c) => [c, old[c] ?? null]))
        prevCols.addAll(row.p)
      }
      rows.append(`${JSON.stringify(row)}\n`)
    }
    try {
      for (const fips of counties) await compareCounty(fips, prev, cur, ignore, updated, emit, s, cols)
      rows.close()
      updated.close()
      await writeChangeFile(rows.path, cols.ordered(), prevCols.ordered(), req)
    } finally {
      rows.close()
      updated.close()
    }
    return s
  } finally {
    forget()
    await rm(scratch, {recursive: true, force: true})
  }
}

async function compareCounty(
  fips: string,
  prev: ExportSide,
  cur: ExportSide,
  ignore: ReadonlySet<string>,
  updated: Spool,
  emit: (kind: ChangeKind, fips: string, rec: FlatRecord, changed?: string[], old?: FlatRecord) => void,
  s: ChangeSummary,
  cols: ColumnSet,
): Promise<void> {
  const table = new IdTable()
  const none = Buffer.alloc(8)
  for await (const rec of prev.read(fips)) {
    const key = recordKey(rec)
    if (key === undefined) s.unkeyed++
    else if (table.insert(keyHash(key), recordDigest(rec, ignore), SlotState.previous) < 0) s.duplicates++
  }
  updated.reset()
  let pending = table.size
  for await (const rec of cur.read(fips)) {
    // the change file has the current export's columns even when few rows (or none) changed
    cols.addAll(rec)
    const key = recordKey(rec)
    if (key === undefined) {
      s.unkeyed++
      continue
    }
    const k = keyHash(key)
    const slot = table.find(k)
    if (slot < 0) {
      table.insert(k, none, SlotState.added)
      emit('added', fips, rec)
    } else if (table.state(slot) !== SlotState.previous) s.duplicates++
    else if (table.valueEquals(slot, recordDigest(rec, ignore))) {
      table.setState(slot, SlotState.unchanged)
      s.unchanged++
      pending--
    } else {
      table.setState(slot, SlotState.updated)
      table.setValueNumber(slot, updated.append(`${JSON.stringify(rec)}\n`))
    }
  }
  s.tableBytes = Math.max(s.tableBytes, table.bytes)
  if (pending === 0) return
  // third pass: what the previous export had that did not come back unchanged
  for await (const old of prev.read(fips)) {
    const key = recordKey(old)
    if (key === undefined) continue
    const slot = table.find(keyHash(key))
    const state = table.state(slot)
    if (state === SlotState.previous) emit('deleted', fips, old)
    else if (state === SlotState.updated) {
      const rec = JSON.parse(updated.lineAt(table.valueNumber(slot))) as FlatRecord
      emit('updated', fips, rec, changedFields(old, rec, ignore), old)
    } else continue
    table.setState(slot, SlotState.done)
  }
}

interface SpooledRow {
  k: ChangeKind
  f: string
  r: FlatRecord
  c?: string[]
  p?: FlatRecord
}

/** An append-only scratch file with byte offsets, and reading one line back by its offset. */
class Spool {
  private fd: number | undefined
  private buf = ''
  private size = 0
  private flushed = 0

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w+', 0o600)
  }

  /** Append text; returns the offset it starts at. */
  append(text: string): number {
    this.fd ??= openSync(this.path, 'w+', 0o600)
    const at = this.size
    this.buf += text
    this.size += Buffer.byteLength(text)
    if (this.buf.length > 1 << 20) this.flush()
    return at
  }

  /** The line starting at `offset`, without its newline. */
  lineAt(offset: number): string {
    this.flush()
    const parts: Buffer[] = []
    for (let pos = offset; ;) {
      const chunk = Buffer.allocUnsafe(8 * 1024)
      const n = readSync(this.fd!, chunk, 0, chunk.length, pos)
      const nl = chunk.subarray(0, n).indexOf(0x0a)
      if (nl >= 0 || n === 0) {
        parts.push(chunk.subarray(0, nl >= 0 ? nl : n))
        return Buffer.concat(parts).toString('utf8')
      }
      parts.push(chunk.subarray(0, n))
      pos += n
    }
  }

  /** Start again empty (the next county). */
  reset(): void {
    this.close()
    this.size = 0
    this.flushed = 0
  }

  close(): void {
    this.flush()
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }

  private flush(): void {
    if (this.fd === undefined || this.buf === '') return
    this.flushed += writeSync(this.fd, this.buf, this.flushed)
    this.buf = ''
  }
}

/** Column names in the spec's order (src/render/field-names.ts), unknown ones after, as first met. */
class ColumnSet {
  private readonly seen = new Set<string>()

  addAll(rec: FlatRecord): void {
    for (const k in rec) this.seen.add(k)
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

/** Columns every change file starts with; the record's own columns follow (README "Change files"). */
export const CHANGE_COLUMNS = ['Change', 'ServicePropertyID', 'Fips', 'ChangedFields'] as const

/**
 * Write the spooled rows as the change file: CSV with `Previous.<Field>` columns for every field that
 * changed in some row, or NDJSON/JSON with `ChangedFields` as a list and `Previous` as an object.
 */
async function writeChangeFile(
  spool: string,
  cols: string[],
  prevCols: string[],
  req: ChangeRequest,
): Promise<void> {
  let failure: Error | undefined
  const onFailure = (e: Error) => (failure ??= e)
  const target: OutputTarget = req.out
    ? await FileTarget.create(req.out, onFailure)
    : new StdoutTarget(onFailure)
  const recordCols = cols.filter((c) => c !== 'ServicePropertyID' && c !== 'Fips')
  const header = [...CHANGE_COLUMNS, ...recordCols, ...prevCols.map((c) => `Previous.${c}`)]
  const writer = new RecordWriter(target, req.format, {header})
  try {
    for await (const l of readLines(spool)) {
      const row = JSON.parse(l.bytes.toString('utf8')) as SpooledRow
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
  return asNumber(v) !== undefined ? v : neutraliseFormula(v)
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
  const n = (x: number) => x.toLocaleString('en-US')
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
