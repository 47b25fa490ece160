import {unitMismatch} from '../address/unit-match.js'
import {countyByFips} from '../address/counties.js'
import {addressLadder} from '../address/ladder.js'
import {
  BadRequestError,
  BadResponseError,
  ExitCode,
  ForbiddenError,
  NotFoundError,
  type SflError,
} from '../errors.js'
import {fetchLookup, type LookupContext} from '../lookup/fetch-lookup.js'
import {RecordRedactor, redact, type Redacted} from '../api/secrets.js'
import type {LookupQuery} from '../api/validate.js'
import {flattenRecord} from '../io/export-reader.js'
import {RecordWriter} from '../io/record-writer.js'
import type {OutputTarget} from '../io/output.js'
import {isTextFormat, type BatchFormat} from '../model/formats.js'
import {emptyFacts, type StatsReport} from '../stats/accumulator.js'
import {factsOfFlat} from '../stats/facts.js'
import {GroupedStats} from '../stats/grouped.js'
import {cell, columnsFor, flattenRow, ShapeTracker, type Column} from '../model/columns.js'
import {guardCell} from '../text/csv-cell.js'
import {keeps, type Where} from '../model/where.js'
import type {XlsxColumn, XlsxKind} from '../io/xlsx-writer.js'
import {KeySet, RowKeys, type BatchInput, type InputRow} from './batch-input.js'
import {resultNames} from '../model/result-names.js'
import {batchEvent, decodeEvent} from './events.js'
import {journalPaths} from './journal.js'
import {LadderCost, type PlanFlag} from '../plan/cost.js'
import type {CountyIndex} from '../plan/county-index.js'
import {RecordStages, recordProblems} from '../pipeline/stages.js'
import {answerFromExport, type FromExport, type FromReport} from './batch-from.js'
import {indexBatch, type IndexedBatch} from './batch-index.js'
import {CountyScan, type ScanHost, type ScanReport} from './batch-scan.js'
import type {Outcome, OutcomeKind} from './outcome.js'
import {RunState, type JobDeps} from './run.js'

/**
 * `lookup --input` on the job engine. Each distinct lookup is one unit (one request, and one more with
 * --unit-fallback). The input is read as a stream three times at most: checked whole before any request
 * (BatchInput.open), read again to send the lookups as it goes, and read once more to write every input
 * row in input order. Answers go to the journal as they arrive and are read back from it by position, so
 * memory holds one compact key and one number per distinct lookup, not the records.
 */
export type RowStatus =
  | 'ok'
  | 'matched_without_unit'
  | 'not_found'
  | 'invalid'
  | 'forbidden'
  | 'malformed'
  | 'error'
  /** A blank input row between data rows: kept in its place, nothing looked up (issue 32). */
  | 'blank'
  /** Answered, but no record of the answer passes `--where`: kept in its place with no record (issue 32). */
  | 'filtered'

export interface BatchRequest {
  input: BatchInput
  /** Identifies the input for the checkpoint (its content hash). */
  inputId: string
  out?: string | undefined
  format: BatchFormat
  restart: boolean
  unitFallback: boolean
  /** Send addresses exactly as written in the input instead of their USPS Publication 28 form. */
  asTyped: boolean
  escapeFormulas: boolean
  /** `--map` in canonical form (batch-map.ts mapParams); empty when not given. */
  map?: readonly string[] | undefined
  /** Start a CSV output with a UTF-8 BOM (`--bom`, or the input began with one). */
  bom?: boolean | undefined
  /** Gather the run statistics over the lookups answered found (default true). */
  stats?: boolean | undefined
  /** `--strict`: a row whose record breaks the spec's rules is `malformed` (its record not written). */
  strict?: boolean | undefined
  /** `--plan`: per county, lookups or a scan of the county-wide form by their cost (auto, the default), or forced. */
  plan?: PlanFlag | undefined
  /** `--from DIR`: answer rows from an --out-dir export on disk first (counties younger than `maxAgeMs`). */
  from?: FromExport | undefined
  /** `--several`: a row answered by several records gives the first (`first`, the default) or a row each. */
  several?: 'first' | 'rows' | undefined
  /**
   * `--where` (src/model/where.ts), checked: each answer's records are filtered when the rows are written
   * (the journal keeps the answers whole, so a rerun with another filter continues the same checkpoint).
   */
  where?: Where | undefined
}

export interface BatchDeps extends JobDeps, LookupContext {
  onProgress?: (done: number, total: number) => void
  /** Sees each record a lookup of this run received from the service (the CLI's APN shapes, issue 31). */
  onRecord?: (record: Record<string, unknown>) => void
}

export interface BatchSummary {
  rows: number
  counts: Record<RowStatus, number>
  /** Rows that needed no request of their own (a duplicate of an earlier row). */
  saved: number
  fromCheckpoint: number
  /** Rows whose lookup the service answered with several records (each written as a row of its own, noted). */
  several: number
  /** Records that break the spec's rules, by field (written as sent without --strict). */
  violations: Array<{field: string; records: number}>
  /** Places where the service echoed the API key in its answers (masked in the output and the checkpoint). */
  keyEchoes: number
  stopped?: SflError | undefined
  checkpoint?: string | undefined
  /** Statistics of the records of the lookups answered found (each lookup once), and per county (Fips). */
  stats?: {run: StatsReport; counties: Array<{fips: string; report: StatsReport}>} | undefined
  /** What the planner did per county (absent with --plan lookups and no --from). */
  plan?: {scans: ScanReport[]; from?: FromReport | undefined} | undefined
  /** Rows by where their answer came from: their own lookup, a scan, an export on disk. */
  sources: {lookup: number; scan: number; export: number}
  /** xlsx: texts longer than Excel's 32,767 characters a cell, cut to that many, by column. */
  cut?: Array<{column: string; count: number}> | undefined
  /** xlsx: values of another type than their column's (src/io/xlsx-writer.ts), written as text, by column. */
  unfit?: Array<{column: string; count: number}> | undefined
  exitCode: number
}

/** Statuses a rerun does not ask again; `error` rows are retried. */
const FINAL: ReadonlySet<RowStatus> = new Set([
  'ok',
  'matched_without_unit',
  'not_found',
  'invalid',
  'forbidden',
  'malformed',
])

/** Each row status as a unit outcome, for the shared exit-code rule (not_found is an answer: exit 0). */
const KIND: Record<RowStatus, OutcomeKind> = {
  ok: 'done',
  matched_without_unit: 'done',
  not_found: 'empty',
  invalid: 'malformed',
  forbidden: 'forbidden',
  malformed: 'malformed',
  error: 'failed',
  blank: 'empty',
  filtered: 'empty',
}
const CODE: Record<RowStatus, number> = {
  ok: 0,
  matched_without_unit: 0,
  not_found: 0,
  invalid: ExitCode.usage,
  forbidden: ExitCode.auth,
  malformed: ExitCode.server,
  error: ExitCode.server,
  blank: 0,
  filtered: 0,
}

/** Lookups waiting for the scheduler at once: enough to keep it busy, few enough to stay small. */
const QUEUE_PER_WORKER = 4

type Rec = Record<string, unknown>

/** A row's answer: its status, the reason for any but ok, and the record(s) found (several: one output row each), redacted. */
interface Answer {
  status: RowStatus
  error: string | null
  records: Array<Redacted<Rec>> | null
  /** Where the answer came from, when not the row's own lookup: a scan, or an export fetched at `at`. */
  via?: {kind: 'scan' | 'export'; at?: string | undefined} | undefined
  /** Nothing answered the row (the run stopped before its lookup). */
  unanswered?: boolean | undefined
}

/** The note a row gets when its lookup was answered by several records (each written as a row of its own). */
export const SEVERAL_RECORDS = 'several_records'

export async function runBatchLookup(deps: BatchDeps, req: BatchRequest): Promise<BatchSummary> {
  const batch = new BatchRun(deps, req)
  const run = await RunState.start(deps, {
    out: req.out,
    restart: req.restart,
    header: {
      // 4: scans (pages, matches, ends) and where an answer came from; 3: typed events, several records, --strict
      v: 4,
      kind: 'batch',
      params: {
        input: req.inputId,
        format: req.format,
        unitFallback: req.unitFallback,
        asTyped: req.asTyped,
        baseUrl: deps.baseUrl,
        strict: req.strict === true,
        // only when given, so a checkpoint of a run without --map stays valid; another map asks again
        ...(req.map?.length ? {map: req.map} : {}),
      },
    },
    replay: (e, offset, length) => batch.replay(e, offset, length),
  })
  try {
    return await batch.start(run)
  } finally {
    await run.close()
  }
}

class BatchRun {
  /** Final answers: compact key -> the journal position of the event that holds it. */
  private readonly answered = new Map<string, number>()
  private readonly lengths = new Map<number, number>()
  private readonly shape = new ShapeTracker()
  /** Answers of this run that are not final (`error`), kept only in memory: a rerun asks again. */
  private readonly transient = new Map<string, Answer>()
  private readonly violations = new Map<string, number>()
  private keyEchoes = 0
  /** Records read back from the checkpoint pass the redactor again (an older sfl may have written it). */
  private readonly redactor: RecordRedactor
  private journalName: string
  private run!: RunState
  /** The requests a lookup takes, learned as the run goes (the planner's cost of lookups). */
  private readonly ladder: LadderCost
  /** Scan events of earlier runs, by county, replayed once the counties are indexed. */
  private readonly scanEvents = new Map<string, Array<{offset: number; length: number}>>()
  private readonly scanEnds = new Map<string, {whole: boolean; error?: string | undefined}>()

  constructor(
    private readonly deps: BatchDeps,
    private readonly req: BatchRequest,
  ) {
    this.journalName = req.out ? journalPaths(req.out).journal : 'the checkpoint'
    this.redactor = new RecordRedactor(deps.apiKey)
    this.ladder = new LadderCost(req.unitFallback)
  }

  replay(raw: Record<string, unknown>, offset: number, length: number): void {
    const e = decodeEvent(batchEvent, raw, this.journalName)
    if (e.t === 'scan') {
      const list = this.scanEvents.get(e.u) ?? []
      list.push({offset, length})
      this.scanEvents.set(e.u, list)
      return
    }
    if (e.t === 'scanned') return void this.scanEnds.set(e.u, e)
    if (e.t !== 'row' || !FINAL.has(e.s)) return
    this.answered.set(e.k, offset)
    this.lengths.set(offset, length)
    for (const r of recordsOf(e.r)) this.shape.observe(r)
  }

  async start(run: RunState): Promise<BatchSummary> {
    this.run = run
    const fromCheckpoint = this.answered.size
    let pass: {rows: number; saved: number; keys: RowKeys}
    let plan: BatchSummary['plan']
    if ((this.req.plan ?? 'auto') === 'lookups' && !this.req.from) pass = await this.send()
    else {
      const indexed = await this.index()
      pass = indexed
      plan = await this.planned(indexed.counties)
    }
    const {rows, saved, keys} = pass
    const written = await this.write(keys)
    const open = written.counts.error > 0 || Boolean(run.stopped)
    const checkpoint = await run.finish(open)
    return {
      rows,
      counts: written.counts,
      saved,
      fromCheckpoint,
      several: written.several,
      violations: [...this.violations]
        .map(([field, records]) => ({field, records}))
        .sort((a, b) => b.records - a.records),
      keyEchoes: this.keyEchoes + this.redactor.occurrences,
      stopped: run.stopped,
      checkpoint,
      ...(written.stats ? {stats: written.stats} : {}),
      ...(plan ? {plan} : {}),
      sources: written.sources,
      ...(written.cut ? {cut: written.cut} : {}),
      ...(written.unfit ? {unfit: written.unfit} : {}),
      exitCode: run.exitCode(written.outcomes, written.finishedAny),
    }
  }

  /** The index pass (a batch with a plan): src/jobs/batch-index.ts. */
  private index(): Promise<IndexedBatch> {
    return indexBatch(this.req.input, {asTyped: this.req.asTyped, answered: (k) => this.answered.has(k)})
  }

  /**
   * The plan, county by county: answers from an export on disk first (`--from`), then each county's scan
   * when its cost says so (src/jobs/batch-scan.ts) while the counties without one are looked up; then the
   * lookups the scans left. A row is never looked up when a scan or the export answered it.
   */
  private async planned(counties: Map<string, CountyIndex>): Promise<NonNullable<BatchSummary['plan']>> {
    const {run, req} = this
    const stages = new RecordStages({strict: req.strict === true, apiKey: this.deps.apiKey})
    const from = req.from
      ? await answerFromExport(req.from, counties, (k, records, at) =>
          this.settleLocal(k, records, {kind: 'export', at}),
        )
      : undefined
    const scans: Array<{scan: CountyScan; host: ScanHost}> = []
    for (const ix of counties.values()) {
      if (from?.covered.has(ix.fips)) continue // the export was the county's scan: its other rows are looked up
      const scan = new CountyScan(ix.fips, ix)
      for (const {offset, length} of this.scanEvents.get(ix.fips) ?? []) {
        const e = decodeEvent(batchEvent, run.journal.read(offset, length), this.journalName)
        if (e.t === 'scan') scan.restorePage(e, offset, length, this.journalName)
      }
      const end = this.scanEnds.get(ix.fips)
      if (end) scan.restoreEnd(end)
      const host: ScanHost = {
        deps: this.deps,
        run,
        stages,
        plan: req.plan ?? 'auto',
        ladder: this.ladder,
        journalName: this.journalName,
        knownPages: from?.pages.get(ix.fips),
        settle: (k, records) => this.settleLocal(k, records, {kind: 'scan'}),
      }
      if (scan.wouldScan(host)) scans.push({scan, host})
    }
    const scanning = new Set(scans.map((s) => s.scan.fips))
    // a pass over the input sends lookups only for counties that have some left (each pass reads it whole)
    const open = (pick: (fips: string) => boolean) =>
      [...counties.values()].some((ix) => pick(ix.fips) && ix.open > 0)
    const [reports] = await Promise.all([
      Promise.all(scans.map(({scan, host}) => scan.run(host))),
      open((f) => !scanning.has(f)) ? this.send({only: (fips) => !scanning.has(fips)}) : undefined,
    ])
    if (open((f) => scanning.has(f))) await this.send({only: (fips) => scanning.has(fips)})
    this.keyEchoes += stages.keyEchoes
    return {scans: reports, ...(from ? {from: from.report} : {})}
  }

  /** A lookup answered without a request of its own (a scan's records, or an export's): journaled as its row. */
  private settleLocal(
    k: string,
    records: Array<Record<string, unknown>>,
    via: {kind: 'scan' | 'export'; at?: string},
  ): void {
    // counted as a lookup's records are: the spec's rules, by field (an export's records were checked when fetched)
    if (via.kind === 'scan')
      for (const r of records)
        for (const p of recordProblems(r)) {
          const field = p.slice(0, p.indexOf(':'))
          this.violations.set(field, (this.violations.get(field) ?? 0) + 1)
        }
    const r = records.length === 1 ? records[0]! : records
    const at = this.run.journal.append({
      t: 'row',
      k,
      s: 'ok',
      e: null,
      r,
      via: via.kind,
      ...(via.at ? {at: via.at} : {}),
    })
    this.answered.set(k, at.offset)
    this.lengths.set(at.offset, at.length)
    for (const rec of records) this.shape.observe(rec)
  }

  /**
   * The send pass: one pass over the input, each distinct lookup once, a bounded queue in front of the
   * scheduler. `only`: the rows of these counties only (a planned batch, whose index pass numbered the rows).
   */
  private async send(
    opts: {only?: (fips: string) => boolean} = {},
  ): Promise<{rows: number; saved: number; keys: RowKeys}> {
    const {deps, run} = this
    const asked = new KeySet()
    const keys = new RowKeys()
    const limit = Math.max(1, deps.scheduler.options.concurrency) * QUEUE_PER_WORKER
    let inFlight = 0
    let slotFreed: (() => void) | undefined
    const pending = new Set<Promise<void>>()
    let rows = 0
    let saved = 0
    let done = this.answered.size
    let total = this.answered.size
    try {
      for await (const row of this.req.input.rows()) {
        rows++
        // a planned batch numbered its rows in the index pass
        if (!opts.only) keys.push(row.query ? row.key : undefined)
        if (!row.key || !row.query) continue
        if (opts.only && !opts.only(row.query.fips)) continue
        if (!asked.add(row.key)) {
          saved++
          continue
        }
        if (this.answered.has(row.key)) continue // answered by an earlier run
        if (run.stopped) continue // keep counting rows; nothing more is sent
        total++
        inFlight++
        const p: Promise<void> = this.lookupOne(row.key, row.query)
          .then(() => deps.onProgress?.(++done, total))
          .finally(() => {
            pending.delete(p)
            inFlight--
            slotFreed?.()
          })
        pending.add(p)
        // wait for a free slot (not Promise.race over the pending set: that piles up reactions per row)
        while (inFlight >= limit) await new Promise<void>((resolve) => (slotFreed = resolve))
      }
    } finally {
      await Promise.all(pending)
    }
    return {rows, saved, keys}
  }

  private async lookupOne(k: string, q: LookupQuery): Promise<void> {
    const run = this.run
    if (run.stopped) return
    let a: Answer
    try {
      a = await this.answer(q)
    } catch (error) {
      if (run.absorbStop(error)) return
      a = {status: 'error', error: run.message(error), records: null}
    }
    try {
      this.settle(k, a)
    } catch (error) {
      // the journal could not be written (a full disk): the run stops, the answer is still shown
      this.transient.set(k, a)
      if (!run.absorbStop(error)) throw error
    }
  }

  private settle(k: string, a: Answer): void {
    if (!FINAL.has(a.status)) return void this.transient.set(k, a)
    const r = a.records === null ? null : a.records.length === 1 ? a.records[0]! : a.records
    const at = this.run.journal.append({t: 'row', k, s: a.status, e: a.error, r})
    this.answered.set(k, at.offset)
    this.lengths.set(at.offset, at.length)
    for (const rec of a.records ?? []) {
      this.shape.observe(rec)
      this.deps.onRecord?.(rec)
    }
  }

  /**
   * One row's lookup (with --unit-fallback, its address without the unit on a 404), read by the record
   * pipeline (src/lookup/fetch-lookup.ts: envelope, grammar, the spec's rules, the key masked); the outcome
   * as a row status. Records that break the spec's rules are counted; with --strict the row is malformed.
   */
  private async answer(q: LookupQuery): Promise<Answer> {
    const {deps, req} = this
    // the forms a single lookup sends (src/address/ladder.ts): the Pub 28 form (as typed with
    // --address-as-typed) and, with --unit-fallback, the standardised form without its unit; the batch
    // leaves out the single lookup's "as typed" retry, which would cost a request per unmatched row
    // the county's state splits an address typed without one, as for a single lookup (standardise.ts)
    const state = countyByFips(q.fips)?.state
    const forms =
      q.by.kind === 'address'
        ? addressLadder(q.by.value, {asTyped: req.asTyped, state}).filter(
            (a, i) => i === 0 || (req.unitFallback && a.withoutUnit),
          )
        : [undefined]
    let error: unknown
    let tried = 0
    // the planner's cost of a lookup with a unit, learned (src/plan/cost.ts LadderCost)
    const learn = () => forms.length > 1 && this.ladder.observe(tried)
    for (const form of forms) {
      const sent: LookupQuery = form ? {fips: q.fips, by: {kind: 'address', value: form.address}} : q
      tried++
      try {
        const found = await fetchLookup(deps, sent, this.run.signal)
        learn()
        this.keyEchoes += found.keyEchoes
        // counted by the field each problem names (src/pipeline/checks.ts RecordProblem), as the export counts
        for (const p of found.faults.flat())
          this.violations.set(p.field, (this.violations.get(p.field) ?? 0) + 1)
        const problems = found.problems.flat()
        if (req.strict && problems.length)
          return {
            status: 'malformed',
            error: `breaks the spec's rules: ${problems.join('; ')}`,
            records: null,
          }
        // the unit asked for against the records, whichever form found them (src/address/unit-match.ts)
        const otherUnit =
          q.by.kind === 'address' && unitMismatch(q.by.value, found.records, state) !== undefined
        return {
          status: form?.withoutUnit || otherUnit ? 'matched_without_unit' : 'ok',
          error: null,
          records: found.records,
        }
      } catch (e) {
        // the last form's outcome is what the row reports; only a 404 goes on to the next form
        error = e
        if (!(e instanceof NotFoundError)) break
      }
    }
    const status: RowStatus | undefined =
      error instanceof NotFoundError
        ? 'not_found'
        : error instanceof ForbiddenError
          ? 'forbidden'
          : error instanceof BadRequestError
            ? 'invalid'
            : error instanceof BadResponseError
              ? 'malformed'
              : undefined
    if (status === undefined) throw error
    learn()
    return {status, error: redact(error instanceof Error ? error.message : String(error)), records: null}
  }

  /** A row's answer: by its key from the send pass; a row without one is validated again for its reason. */
  private resultOf(key: string | undefined, row: () => InputRow, unanswered: string): Answer {
    if (key === undefined) return {status: 'invalid', error: row().invalid ?? 'invalid row', records: null}
    const at = this.answered.get(key)
    if (at !== undefined) {
      const e = decodeEvent(batchEvent, this.run.journal.read(at, this.lengths.get(at)!), this.journalName)
      if (e.t === 'row')
        return {
          status: e.s,
          error: e.e,
          // every record a row shows passes the redactor, whichever way it came (lookup, scan, export)
          records: e.r === null ? null : recordsOf(e.r).map((r) => this.redactor.parsed(r)),
          ...(e.via ? {via: {kind: e.via, at: e.at}} : {}),
        }
    }
    return this.transient.get(key) ?? {status: 'error', error: unanswered, records: null, unanswered: true}
  }

  /** The write pass: every input row in input order (one output row per record), answers read back from the journal. */
  private async write(keys: RowKeys): Promise<Written> {
    const {req, run} = this
    const counts: Record<RowStatus, number> = {
      ok: 0,
      matched_without_unit: 0,
      not_found: 0,
      invalid: 0,
      forbidden: 0,
      malformed: 0,
      error: 0,
      blank: 0,
      filtered: 0,
    }
    const out: Written = {
      counts,
      several: 0,
      outcomes: [],
      finishedAny: false,
      stats: undefined,
      sources: {lookup: 0, scan: 0, export: 0},
    }
    const unanswered = `not looked up: ${run.stopped ? run.message(run.stopped) : 'the run stopped first'}`
    const anyAnswer = this.answered.size > 0 || this.transient.size > 0
    if (!run.outputClosed && (anyAnswer || !run.stopped)) {
      // every distinct lookup found counts once (a duplicate row is the same property, not another record)
      const stats = req.stats === false ? undefined : new GroupedStats()
      const counted = stats && new KeySet()
      const facts = emptyFacts()
      const rows = new OutputRows(req, this.shape)
      const target = await run.outputTarget(req.out)
      const writer = await rowSink(target, req.format, rows)
      try {
        let i = 0
        for await (const row of req.input.records()) {
          const key = keys.get(i++)
          const answer: Answer = row.blank
            ? {status: 'blank', error: null, records: null}
            : this.resultOf(key, () => req.input.validate(row.line, row.values), unanswered)
          const a = req.where ? filterAnswer(answer, req.where) : answer
          counts[a.status]++
          if (a.via) out.sources[a.via.kind]++
          else if (sourceOf(a) === 'lookup') out.sources.lookup++
          const records = a.records ?? [null]
          if (records.length > 1) out.several++
          if (stats && key !== undefined && a.records && counted!.add(key))
            for (const rec of a.records) {
              const flat = flattenRecord(rec)
              stats.add(String(flat['Fips'] ?? '(none)'), factsOfFlat(flat, facts))
            }
          const note = req.input.noteOf(row.values)
          const several = records.length > 1
          const o: OutputRow = {
            n: i,
            values: row.values,
            answer: a,
            note: several ? [note, SEVERAL_RECORDS].filter(Boolean).join('; ') : note,
          }
          // one output row per input row: the first record, the others' ids (--several rows: a row each)
          const shown = several && req.several !== 'rows' ? records.slice(0, 1) : records
          for (const rec of shown) {
            const others = several ? records.filter((r) => r !== rec).map((r) => idText(r!)) : []
            if (!writer.put(o, rec, others)) await writer.drain()
          }
        }
        const {cut, unfit} = await writer.end()
        await target.commit()
        if (cut.length) out.cut = cut
        if (unfit.length) out.unfit = unfit
        if (stats)
          out.stats = {
            run: stats.all.report(),
            counties: stats.reports().map(({key, report}) => ({fips: key, report})),
          }
      } catch (error) {
        await target.abort()
        run.absorbOrThrow(error)
        out.stats = undefined
      }
    }
    for (const [status, c] of Object.entries(counts) as Array<[RowStatus, number]>) {
      if (c === 0) continue
      out.outcomes.push({kind: KIND[status], records: c, exitCode: CODE[status]})
      if (KIND[status] === 'done' || KIND[status] === 'empty') out.finishedAny = true
    }
    return out
  }
}

/** Where the write pass puts its rows: a text frame, or a workbook (src/model/formats.ts). */
interface RowSink {
  /** One output row; false: await drain(). */
  put(row: OutputRow, rec: Redacted<Rec> | null, others: string[]): boolean
  drain(): Promise<void>
  /**
   * Close the frame or the workbook (the caller commits the target); what a workbook cut, and the values it
   * wrote as text for not being of their column's type, by column.
   */
  end(): Promise<{cut: Array<{column: string; count: number}>; unfit: Array<{column: string; count: number}>}>
}

async function rowSink(target: OutputTarget, format: BatchFormat, rows: OutputRows): Promise<RowSink> {
  if (isTextFormat(format)) {
    const writer = new RecordWriter(target, format, {header: rows.header(), bom: rows.bom})
    return {
      put: (row, rec, others) => rows.write(writer, row, rec, others),
      drain: () => target.drain(),
      end: () => {
        writer.end()
        return Promise.resolve({cut: [], unfit: []})
      },
    }
  }
  // xlsx: each cell typed from the spec (src/io/xlsx-writer.ts), never a formula, so no guard
  const {XlsxWriter, xlsxKind} = await import('../io/xlsx-writer.js')
  const book = new XlsxWriter(target, rows.xlsxColumns(xlsxKind), {sheetName: 'lookups'})
  return {
    put: (row, rec, others) => book.row(rows.values(row, rec, others)),
    drain: () => book.drain(),
    end: async () => {
      const {cut, asText} = await book.end()
      return {cut, unfit: asText}
    },
  }
}

interface Written {
  counts: Record<RowStatus, number>
  /** Rows answered by several records (each written as a row of its own). */
  several: number
  outcomes: Outcome[]
  finishedAny: boolean
  stats: BatchSummary['stats']
  sources: BatchSummary['sources']
  cut?: BatchSummary['cut']
  unfit?: BatchSummary['unfit']
}

/**
 * `--where` over one row's answer: its records the filter keeps (flattened as the output row has them); a
 * row none of whose records pass is `filtered`, still written in its place with no record, so the output
 * keeps one row per input row. An answer without records (not found, invalid...) is left as it is.
 */
function filterAnswer(a: Answer, where: Where): Answer {
  if (!a.records?.length) return a
  const kept = a.records.filter((r) => {
    const flat = flattenRecord(r)
    return keeps(where, (c) => flat[c.header])
  })
  if (kept.length === a.records.length) return a
  if (kept.length > 0) return {...a, records: kept}
  return {...a, status: 'filtered', error: null, records: null}
}

/** A row's record(s) as the journal holds them: one, or a list. */
function recordsOf(
  r: Record<string, unknown> | Array<Record<string, unknown>> | null,
): Array<Record<string, unknown>> {
  return r === null ? [] : Array.isArray(r) ? r : [r]
}

/**
 * How each output row is made: the input columns as typed, then `sfl_row` (the row's place in the input),
 * status, error, note, source (where the answer came from), records (how many answered it) and other_ids
 * (the ServicePropertyIDs of the records not on this row), then the record flattened.
 */
class OutputRows {
  private readonly cols: Column[]
  private readonly names: Record<(typeof RESULT)[number] | 'data', string>
  private readonly csvNames: string[]

  constructor(
    private readonly req: BatchRequest,
    shape: ShapeTracker,
  ) {
    this.cols = columnsFor(shape.shape)
    const input = req.input.columns
    // input columns as typed; ours renamed where they collide with one (src/model/result-names.ts)
    this.csvNames = resultNames(input, [...RESULT, ...this.cols.map((c) => c.header)])
    const names = resultNames(input, [...RESULT, 'data'])
    this.names = Object.fromEntries([...RESULT, 'data'].map((k, i) => [k, names[i]!])) as OutputRows['names']
  }

  header(): string[] {
    return [...this.req.input.columns, ...this.csvNames].map((h) => guardCell(h, this.req.escapeFormulas))
  }

  get bom(): boolean | undefined {
    return this.req.bom
  }

  /**
   * The workbook's columns: the input's as text (typed as they were), the result columns, then the
   * record's typed from the spec (src/io/xlsx-writer.ts xlsxKind: ZIP, APN, FIPS text; values numbers).
   */
  xlsxColumns(kindOf: (c: Column) => XlsxKind): XlsxColumn[] {
    const names = [...this.req.input.columns, ...this.csvNames]
    const kinds: XlsxKind[] = [
      ...this.req.input.columns.map((): XlsxKind => 'text'),
      ...RESULT.map((r): XlsxKind => (r === 'sfl_row' || r === 'records' ? 'integer' : 'text')),
      ...this.cols.map(kindOf),
    ]
    return names.map((header, i) => ({header, kind: kinds[i]!}))
  }

  /** One output row's values in xlsxColumns' order: as sent (JSON values), never CSV text. */
  values(row: OutputRow, rec: Redacted<Rec> | null, others: string[]): unknown[] {
    const {values, answer: a} = row
    const record = rec as Record<string, unknown> | null
    return [
      ...this.req.input.columns.map((c) => values[c] ?? ''),
      row.n,
      a.status,
      a.error ?? '',
      row.note ?? '',
      sourceOf(a),
      a.records?.length ?? 0,
      others.join(' '),
      ...this.cols.map((c) => {
        const top = record?.[c.key]
        if (c.sub === undefined) return top
        return top !== null && typeof top === 'object' ? (top as Record<string, unknown>)[c.sub] : undefined
      }),
    ]
  }

  /** One output row: `rec` the record on it (null: none), `others` the ids of the answer's other records. */
  write(writer: RecordWriter, row: OutputRow, rec: Redacted<Rec> | null, others: string[]): boolean {
    const {req, names} = this
    const {values, answer: a} = row
    const count = a.records?.length ?? 0
    const source = sourceOf(a)
    if (writer.format === 'csv')
      return writer.csv([
        ...req.input.columns.map((c) => cell(values[c] ?? '', req.escapeFormulas)),
        String(row.n),
        a.status,
        a.error ?? '',
        row.note ?? '',
        source,
        String(count),
        others.join(' '),
        ...(rec ? flattenRow(rec, this.cols, req.escapeFormulas) : this.cols.map(() => '')),
      ])
    return writer.json(
      JSON.stringify({
        ...values,
        [names.sfl_row]: row.n,
        [names.status]: a.status,
        [names.error]: a.error,
        [names.note]: row.note ?? null,
        [names.source]: source === '' ? null : source,
        [names.records]: count,
        [names.other_ids]: others,
        [names.data]: rec,
      }),
    )
  }
}

/** The result columns before the record's, in order. */
const RESULT = ['sfl_row', 'status', 'error', 'note', 'source', 'records', 'other_ids'] as const

/** One input row on its way out. */
interface OutputRow {
  /** Its place among the input's data rows, from 1. */
  n: number
  values: Record<string, string>
  answer: Answer
  note: string | undefined
}

/** Where an answer came from: `lookup`, `scan`, `export <date>`; empty when nothing answered the row. */
function sourceOf(a: Answer): string {
  if (a.via) return a.via.kind === 'scan' ? 'scan' : `export ${a.via.at ?? ''}`.trimEnd()
  return a.status === 'invalid' || a.status === 'blank' || a.unanswered ? '' : 'lookup'
}

/** A record's ServicePropertyID as the other_ids column writes it. */
function idText(rec: Record<string, unknown>): string {
  const id = rec['ServicePropertyID']
  return typeof id === 'number' || typeof id === 'string' ? String(id) : ''
}
