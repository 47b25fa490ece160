import {unitMismatch} from '../address/unit-match.js'
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
import {RecordWriter, type RecordFormat} from '../io/record-writer.js'
import {emptyFacts, type StatsReport} from '../stats/accumulator.js'
import {factsOfFlat} from '../stats/facts.js'
import {GroupedStats} from '../stats/grouped.js'
import {cell, columnsFor, flattenRow, ShapeTracker, type Column} from '../model/columns.js'
import {guardCell} from '../text/csv-cell.js'
import {KeySet, RowKeys, type BatchInput, type InputRow} from './batch-input.js'
import {resultNames} from '../model/result-names.js'
import {batchEvent, decodeEvent} from './events.js'
import {journalPaths} from './journal.js'
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
  'ok' | 'matched_without_unit' | 'not_found' | 'invalid' | 'forbidden' | 'malformed' | 'error'

export interface BatchRequest {
  input: BatchInput
  /** Identifies the input for the checkpoint (its content hash). */
  inputId: string
  out?: string | undefined
  format: RecordFormat
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
}

export interface BatchDeps extends JobDeps, LookupContext {
  onProgress?: (done: number, total: number) => void
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
}
const CODE: Record<RowStatus, number> = {
  ok: 0,
  matched_without_unit: 0,
  not_found: 0,
  invalid: ExitCode.usage,
  forbidden: ExitCode.auth,
  malformed: ExitCode.server,
  error: ExitCode.server,
}

/** Lookups waiting for the scheduler at once: enough to keep it busy, few enough to stay small. */
const QUEUE_PER_WORKER = 4

type Rec = Record<string, unknown>

/** A row's answer: its status, the reason for any but ok, and the record(s) found (several: one output row each), redacted. */
interface Answer {
  status: RowStatus
  error: string | null
  records: Array<Redacted<Rec>> | null
}

/** The note a row gets when its lookup was answered by several records (each written as a row of its own). */
export const SEVERAL_RECORDS = 'several_records'

export async function runBatchLookup(deps: BatchDeps, req: BatchRequest): Promise<BatchSummary> {
  const batch = new BatchRun(deps, req)
  const run = await RunState.start(deps, {
    out: req.out,
    restart: req.restart,
    header: {
      // 3: typed events; a row's answer may hold several records; --strict is part of the request
      v: 3,
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

  constructor(
    private readonly deps: BatchDeps,
    private readonly req: BatchRequest,
  ) {
    this.journalName = req.out ? journalPaths(req.out).journal : 'the checkpoint'
    this.redactor = new RecordRedactor(deps.apiKey)
  }

  replay(raw: Record<string, unknown>, offset: number, length: number): void {
    const e = decodeEvent(batchEvent, raw, this.journalName)
    if (e.t !== 'row' || !FINAL.has(e.s)) return
    this.answered.set(e.k, offset)
    this.lengths.set(offset, length)
    for (const r of recordsOf(e.r)) this.shape.observe(r)
  }

  async start(run: RunState): Promise<BatchSummary> {
    this.run = run
    const fromCheckpoint = this.answered.size
    const {rows, saved, keys} = await this.send()
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
      exitCode: run.exitCode(written.outcomes, written.finishedAny),
    }
  }

  /** The send pass: one pass over the input, each distinct lookup once, a bounded queue in front of the scheduler. */
  private async send(): Promise<{rows: number; saved: number; keys: RowKeys}> {
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
        keys.push(row.query ? row.key : undefined)
        if (!row.key || !row.query) continue
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
    for (const rec of a.records ?? []) this.shape.observe(rec)
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
    const forms =
      q.by.kind === 'address'
        ? addressLadder(q.by.value, {asTyped: req.asTyped}).filter(
            (a, i) => i === 0 || (req.unitFallback && a.withoutUnit),
          )
        : [undefined]
    let error: unknown
    for (const form of forms) {
      const sent: LookupQuery = form ? {fips: q.fips, by: {kind: 'address', value: form.address}} : q
      try {
        const found = await fetchLookup(deps, sent, this.run.signal)
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
        const otherUnit = q.by.kind === 'address' && unitMismatch(q.by.value, found.records) !== undefined
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
          records: e.r === null ? null : recordsOf(e.r).map((r) => this.redactor.parsed(r)),
        }
    }
    return this.transient.get(key) ?? {status: 'error', error: unanswered, records: null}
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
    }
    const out: Written = {counts, several: 0, outcomes: [], finishedAny: false, stats: undefined}
    const unanswered = `not looked up: ${run.stopped ? run.message(run.stopped) : 'the run stopped first'}`
    const anyAnswer = this.answered.size > 0 || this.transient.size > 0
    if (!run.outputClosed && (anyAnswer || !run.stopped)) {
      // every distinct lookup found counts once (a duplicate row is the same property, not another record)
      const stats = req.stats === false ? undefined : new GroupedStats()
      const counted = stats && new KeySet()
      const facts = emptyFacts()
      const rows = new OutputRows(req, this.shape)
      const target = await run.outputTarget(req.out)
      const writer = new RecordWriter(target, req.format, {header: rows.header(), bom: req.bom})
      try {
        let i = 0
        for await (const row of req.input.records()) {
          const key = keys.get(i++)
          const a = this.resultOf(key, () => req.input.validate(row.line, row.values), unanswered)
          counts[a.status]++
          const records = a.records ?? [null]
          if (records.length > 1) out.several++
          if (stats && key !== undefined && a.records && counted!.add(key))
            for (const rec of a.records) {
              const flat = flattenRecord(rec)
              stats.add(String(flat['Fips'] ?? '(none)'), factsOfFlat(flat, facts))
            }
          const note = req.input.noteOf(row.values)
          for (const rec of records) {
            const n = records.length > 1 ? [note, SEVERAL_RECORDS].filter(Boolean).join('; ') : note
            if (!rows.write(writer, row.values, a, rec, n)) await target.drain()
          }
        }
        writer.end()
        await target.commit()
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

interface Written {
  counts: Record<RowStatus, number>
  /** Rows answered by several records (each written as a row of its own). */
  several: number
  outcomes: Outcome[]
  finishedAny: boolean
  stats: BatchSummary['stats']
}

/** A row's record(s) as the journal holds them: one, or a list. */
function recordsOf(
  r: Record<string, unknown> | Array<Record<string, unknown>> | null,
): Array<Record<string, unknown>> {
  return r === null ? [] : Array.isArray(r) ? r : [r]
}

/** How each output row is made: the input columns as typed, then status, error, note, then the record flattened. */
class OutputRows {
  private readonly cols: Column[]
  private readonly names: {status: string; error: string; note: string; data: string}
  private readonly csvNames: string[]

  constructor(
    private readonly req: BatchRequest,
    shape: ShapeTracker,
  ) {
    this.cols = columnsFor(shape.shape)
    const input = req.input.columns
    // input columns as typed; ours renamed where they collide with one (batch-columns.ts)
    this.csvNames = resultNames(input, ['status', 'error', 'note', ...this.cols.map((c) => c.header)])
    const [status, error, note, data] = resultNames(input, ['status', 'error', 'note', 'data']) as [
      string,
      string,
      string,
      string,
    ]
    this.names = {status, error, note, data}
  }

  header(): string[] {
    return [...this.req.input.columns, ...this.csvNames].map((h) => guardCell(h, this.req.escapeFormulas))
  }

  write(
    writer: RecordWriter,
    values: Record<string, string>,
    a: Answer,
    rec: Redacted<Rec> | null,
    note: string | undefined,
  ): boolean {
    const {req, names} = this
    if (req.format === 'csv')
      return writer.csv([
        ...req.input.columns.map((c) => cell(values[c] ?? '', req.escapeFormulas)),
        a.status,
        a.error ?? '',
        note ?? '',
        ...(rec ? flattenRow(rec, this.cols, req.escapeFormulas) : this.cols.map(() => '')),
      ])
    return writer.json(
      JSON.stringify({
        ...values,
        [names.status]: a.status,
        [names.error]: a.error,
        [names.note]: note ?? null,
        [names.data]: rec,
      }),
    )
  }
}
