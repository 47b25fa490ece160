import {RecordRedactor} from '../api/secrets.js'
import {numberValue} from '../json/values.js'
import {NUMBER, NOT_INTEGER} from '../json/walk.js'
import type {RecordFacts} from '../stats/accumulator.js'
import {problemLine, RecordChecks} from './checks.js'
import {ViewFacts} from './facts.js'
import {Fields, Namer} from './fields.js'
import {IdSet} from './ids.js'
import {MAX_RECORD_BYTES, MAX_RECORD_DEPTH, RecordScanner, type Rejected} from './records.js'
import {RunSchema} from './schema.js'
import {RecordView} from './view.js'
import {WhereFilter} from './where-view.js'
import type {Where} from '../model/where.js'

/**
 * The record pipeline every path runs over a response body: the redactor (the key, and every run of 8 or
 * more of its characters, masked before anything reads the bytes) -> records (one validating scan:
 * envelope, JSON grammar, UTF-8, size and depth; a name given twice rejects the record) -> checks (the
 * spec's rules, duplicates) -> the caller's sink. The state of a run (its fields, names, schema, checks)
 * is shared by the pages in flight: each record is read synchronously from the scan to the sink, so
 * pages of several counties may interleave at their awaits without sharing a record.
 */
export interface StageOptions {
  /** `--strict`: a record that breaks the spec's rules is rejected (not written), as the lookup refuses one. */
  strict: boolean
  /**
   * The key the answers were asked with: it, and every run of 8 or more of its characters, is masked
   * wherever a body echoes it (spec 5.5). Required, so no path builds the stages without saying which key
   * (undefined: none was sent, as for the library's `checkRecord`).
   */
  apiKey: string | undefined
  maxRecordBytes?: number | undefined
  /** `--fields`: the columns, fixed. */
  fields?: readonly string[] | undefined
  /**
   * `--where` (src/model/where.ts): records it does not keep are counted and go no further (no sink, no
   * statistics). Applied after the checks and the duplicates, so the rows kept are exactly the rows of
   * the unfiltered export that pass it.
   */
  where?: Where | undefined
}

export class RecordStages {
  readonly fields = new Fields()
  /** The one redactor of the run's records (src/api/secrets.ts): every body's bytes pass it first. */
  readonly redactor: RecordRedactor
  readonly namer: Namer
  readonly view = new RecordView(this.fields)
  readonly checks = new RecordChecks(this.fields)
  readonly facts = new ViewFacts(this.fields)
  readonly schema: RunSchema
  /** The `--where` stage, when the run has one. */
  readonly filter: WhereFilter | undefined
  /** Places where the bodies read so far echoed the key, whole or in part (masked). */
  keyEchoes = 0
  private readonly idField: number

  constructor(readonly options: StageOptions) {
    this.redactor = new RecordRedactor(options.apiKey)
    this.namer = new Namer(this.fields, this.redactor)
    this.schema = new RunSchema(this.fields, options.fields)
    this.filter = options.where && new WhereFilter(options.where, this.fields)
    this.idField = this.fields.idOf('ServicePropertyID')!
  }

  scanner(): RecordScanner {
    const scanner = new RecordScanner(
      {maxRecordBytes: this.options.maxRecordBytes ?? MAX_RECORD_BYTES, maxDepth: MAX_RECORD_DEPTH},
      this.redactor,
    )
    // the walk names each member with its field id as it reads the key
    scanner.walk.names = this.namer
    return scanner
  }

  /** The record's ServicePropertyID when it is a whole number the spec allows (spec 2.1: bigint, size 11), else undefined. */
  serviceId(view: RecordView): number | undefined {
    const e = view.entry(this.idField)
    if (e < 0 || view.kind(e) !== NUMBER) return undefined
    const v = numberValue(view.bytes, view.start(e), view.end(e))
    return (view.flags(e) & NOT_INTEGER) === 0 && v > 0 && v <= IdSet.MAX_ID ? v : undefined
  }
}

/** What one body gave, for its page's journal entry and the run's summary. */
export interface BodyOutcome {
  /** Records handed to the sink. */
  records: number
  /** Records skipped: broken JSON, not UTF-8, over a cap, a name given twice, or (with --strict) breaking the spec's rules. */
  rejected: Rejected[]
  /** Records whose ServicePropertyID the county already had (dropped, the first kept). */
  duplicates: number
  /** Records `--where` did not keep (fetched and checked, not handed to the sink). */
  filtered: number
  /**
   * The ServicePropertyIDs of those records, when the county keeps ids: the checkpoint records them, so a
   * resumed county still drops a later repeat of one as a duplicate (src/jobs/resume.ts rebuildIds).
   */
  filteredIds?: number[]
  /** Records that break the spec's rules (written unless --strict), by field id. */
  violations: Map<number, number>
  /** Records that broke any rule. */
  violating: number
  /** Places where the body echoed the key, whole or in part (masked). */
  keyEchoes: number
  /** Whether the envelope said success before the first record (a sink may stream such a page at once). */
  statusFirst: boolean
  /** `stop` ended the reading before the body's end (a probe that had what it needed): not checked whole. */
  stopped?: true
}

export interface BodySink {
  /** One record that passed every stage; a promise means "wait" (backpressure). */
  record(view: RecordView, statusOk: boolean): Promise<void> | undefined
  /** The facts of the record just handed over, for the statistics (absent: none gathered). */
  facts?: ((facts: RecordFacts) => void) | undefined
}

/**
 * Read one response body through the stages into `sink`. `ids` is the county's record of the
 * ServicePropertyIDs taken (absent: no de-duplication, as for a batch row, whose answer is one lookup).
 * `stop`, asked after each chunk, ends the reading early when it says so (`keys check` needs one record of
 * a county that may be hundreds of MB): the rest of the body is neither read nor checked. Throws
 * BadResponseError (malformed) or TruncatedBodyError (cut short) from the scan.
 */
export async function readBody(
  body: AsyncIterable<Buffer>,
  stages: RecordStages,
  sink: BodySink,
  ids?: IdSet,
  stop?: () => boolean,
): Promise<BodyOutcome> {
  const scanner = stages.scanner()
  const out: BodyOutcome = {
    records: 0,
    rejected: [],
    duplicates: 0,
    filtered: 0,
    violations: new Map(),
    violating: 0,
    keyEchoes: 0,
    statusFirst: false,
  }
  let first = true
  const take = async (chunk: Buffer): Promise<void> => {
    const n = scanner.push(chunk)
    for (let k = 0; k < n; k++) {
      if (first) {
        out.statusFirst = scanner.statusOk
        first = false
      }
      const wait = pass(stages, scanner, k, out, sink, ids)
      if (wait !== undefined) await wait
    }
    if (n === 0 && first && scanner.statusOk) out.statusFirst = true
    const rejected = scanner.takeRejected()
    if (rejected.length) out.rejected.push(...rejected)
  }
  for await (const raw of body) {
    await take(raw)
    if (stop?.()) {
      out.stopped = true
      break
    }
  }
  if (!out.stopped) scanner.end()
  out.keyEchoes = scanner.keyEchoes
  stages.keyEchoes += scanner.keyEchoes
  out.rejected.sort((a, b) => a.index - b.index)
  return out
}

/** One record through the checks to the sink (synchronous up to the sink's promise). */
function pass(
  stages: RecordStages,
  scanner: RecordScanner,
  k: number,
  out: BodyOutcome,
  sink: BodySink,
  ids: IdSet | undefined,
): Promise<void> | undefined {
  const view = stages.view
  const first = scanner.first[k]!
  view.set(
    scanner.records[k]!,
    scanner.walk.entries,
    first,
    scanner.entriesEnd(k) - first,
    scanner.spaced[k] === 1,
  )
  // RFC 8259 section 4: names SHOULD be unique, and readers differ on which value counts (JSON.parse and
  // sfl's own take the last); such a record is no one record: rejected, on every path, before the
  // checks and before its ServicePropertyID is taken, so it never displaces the record that has that id
  if (view.repeated) {
    out.rejected.push({index: scanner.index[k]!, reason: repeatedReason(view.repeatedName())})
    return undefined
  }
  if (stages.checks.check(view, out.violations) > 0) {
    out.violating++
    if (stages.options.strict) {
      const problems = stages.checks.problems(view).map(problemLine)
      out.rejected.push({index: scanner.index[k]!, reason: `breaks the spec's rules: ${problems.join('; ')}`})
      return undefined
    }
  }
  const id = ids ? stages.serviceId(view) : undefined
  if (id !== undefined && !ids!.add(id)) {
    out.duplicates++
    return undefined
  }
  // the columns are those of the records fetched, filter or not: a filtered file has the unfiltered
  // export's header (and its option columns even when no row is kept)
  stages.schema.observe(view, stages.namer.fresh)
  if (stages.filter && !stages.filter.keeps(view)) {
    out.filtered++
    if (id !== undefined) (out.filteredIds ??= []).push(id)
    return undefined
  }
  out.records++
  sink.facts?.(stages.facts.read(view))
  return sink.record(view, scanner.statusOk)
}

/** The reason a record that gives a member name twice is rejected with. */
export function repeatedReason(name: string): string {
  return `names ${name} twice (RFC 8259 section 4: names should be unique; readers differ on which value counts)`
}

let shared: RecordStages | undefined

/**
 * The problems of one record (a parsed object or its JSON text) against the spec's rules, as the checks
 * stage finds them on every path: one line each, none when it conforms. For callers that hold a record
 * rather than a body (the sandbox's conformance tests, the library's `checkRecord`).
 */
export function recordProblems(record: unknown): string[] {
  const text = typeof record === 'string' ? record : JSON.stringify(record)
  // one set of stages for every call, as a run has (building them per record cost more than the check):
  // the spec's fields are all known up front, and unknown fields (capped) are never a problem
  const stages = (shared ??= new RecordStages({strict: false, apiKey: undefined}))
  const scanner = stages.scanner()
  const n = scanner.push(Buffer.from(`{"status":"success","data":[${text}]}`))
  scanner.end()
  const bad = scanner.takeRejected()[0]
  if (bad) return [`(record): ${bad.reason}`]
  if (n !== 1) return ['(record): not one JSON object']
  const view = stages.view
  view.set(
    scanner.records[0]!,
    scanner.walk.entries,
    scanner.first[0]!,
    scanner.entriesEnd(0) - scanner.first[0]!,
  )
  return stages.checks.problems(view).map(problemLine)
}
