import {addressLadder} from '../address/ladder.js'
import type {HttpClient} from '../api/client.js'
import {
  BadRequestError,
  BadResponseError,
  ExitCode,
  ForbiddenError,
  NotFoundError,
  type SflError,
} from '../errors.js'
import {fetchLookup} from '../lookup/fetch-lookup.js'
import {redact} from '../api/secrets.js'
import type {LookupQuery} from '../api/validate.js'
import {flattenRecord} from '../io/export-reader.js'
import {RecordWriter, type RecordFormat} from '../io/record-writer.js'
import {emptyFacts, type StatsReport} from '../stats/accumulator.js'
import {factsOfFlat} from '../stats/facts.js'
import {GroupedStats} from '../stats/grouped.js'
import {cell, columnsFor, flattenRow, ShapeTracker, type Column} from '../model/columns.js'
import type {Scheduler} from '../schedule/scheduler.js'
import {KeySet, RowKeys, type BatchInput, type InputRow} from './batch-input.js'
import {resultNames} from './batch-columns.js'
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
  /** Gather the run statistics over the rows answered found (issue 14; default true). */
  stats?: boolean | undefined
}

export interface BatchDeps extends JobDeps {
  client: HttpClient
  scheduler: Scheduler
  baseUrl: string
  onProgress?: (done: number, total: number) => void
}

export interface BatchSummary {
  rows: number
  counts: Record<RowStatus, number>
  /** Rows that needed no request of their own (a duplicate of an earlier row). */
  saved: number
  fromCheckpoint: number
  stopped?: SflError | undefined
  checkpoint?: string | undefined
  /** Statistics of the records of the rows answered found (per output row), and per county (Fips). */
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

interface Answer {
  status: RowStatus
  error: string | null
  record: Record<string, unknown> | null
}

export async function runBatchLookup(deps: BatchDeps, req: BatchRequest): Promise<BatchSummary> {
  /** Final answers: compact key -> the journal position of the event that holds it. */
  const answered = new Map<string, number>()
  const lengths = new Map<number, number>()
  const shape = new ShapeTracker()
  const run = await RunState.start(deps, {
    out: req.out,
    restart: req.restart,
    header: {
      v: 2,
      kind: 'batch',
      params: {
        input: req.inputId,
        format: req.format,
        unitFallback: req.unitFallback,
        asTyped: req.asTyped,
        baseUrl: deps.baseUrl,
        // only when given, so a checkpoint of a run without --map stays valid; another map asks again
        ...(req.map?.length ? {map: req.map} : {}),
      },
    },
    replay: (e, offset, length) => {
      if (e['t'] !== 'row' || typeof e['k'] !== 'string' || !FINAL.has(e['s'] as RowStatus)) return
      answered.set(e['k'], offset)
      lengths.set(offset, length)
      if (e['r'] && typeof e['r'] === 'object') shape.observe(e['r'] as Record<string, unknown>)
    },
  })
  try {
    const journal = run.journal
    const fromCheckpoint = answered.size
    /** Answers of this run that are not final (`error`), kept only in memory: a rerun asks again. */
    const transient = new Map<string, Answer>()
    let done = answered.size
    let total = answered.size

    const settle = (k: string, a: Answer) => {
      if (FINAL.has(a.status)) {
        const at = journal.append({t: 'row', k, s: a.status, e: a.error, r: a.record})
        answered.set(k, at.offset)
        lengths.set(at.offset, at.length)
        if (a.record) shape.observe(a.record)
      } else transient.set(k, a)
      deps.onProgress?.(++done, total)
    }

    const lookupOne = async (k: string, q: LookupQuery): Promise<void> => {
      if (run.stopped) return
      let a: Answer
      try {
        a = await answer(deps, q, req, run.signal)
      } catch (error) {
        if (run.absorbStop(error)) return
        a = {status: 'error', error: run.message(error), record: null}
      }
      try {
        settle(k, a)
      } catch (error) {
        // the journal could not be written (a full disk): the run stops, the answer is still shown
        transient.set(k, a)
        if (!run.absorbStop(error)) throw error
      }
    }

    // send: one pass over the input, each distinct lookup once, a bounded queue in front of the scheduler
    const asked = new KeySet()
    const keys = new RowKeys()
    const limit = Math.max(1, deps.scheduler.options.concurrency) * QUEUE_PER_WORKER
    let inFlight = 0
    let slotFreed: (() => void) | undefined
    const pending = new Set<Promise<void>>()
    let rows = 0
    let saved = 0
    try {
      for await (const row of req.input.rows()) {
        rows++
        keys.push(row.query ? row.key : undefined)
        if (!row.key || !row.query) continue
        if (!asked.add(row.key)) {
          saved++
          continue
        }
        if (answered.has(row.key)) continue // answered by an earlier run
        if (run.stopped) continue // keep counting rows; nothing more is sent
        total++
        inFlight++
        const p: Promise<void> = lookupOne(row.key, row.query).finally(() => {
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
    // the output pass finds rows by their keys in `keys`; the set of asked keys can go before it
    asked.clear()

    // write: every input row in input order, the answers read back from the journal
    const counts: Record<RowStatus, number> = {
      ok: 0,
      matched_without_unit: 0,
      not_found: 0,
      invalid: 0,
      forbidden: 0,
      malformed: 0,
      error: 0,
    }
    const unanswered = `not looked up: ${run.stopped ? run.message(run.stopped) : 'the run stopped first'}`
    /** A row's answer: by its key from the send pass; a row without one is validated again for its reason. */
    const resultOf = (key: string | undefined, row: () => InputRow): Answer => {
      if (key === undefined) return {status: 'invalid', error: row().invalid ?? 'invalid row', record: null}
      const at = answered.get(key)
      if (at !== undefined) {
        const e = journal.read(at, lengths.get(at)!)
        return {
          status: e['s'] as RowStatus,
          error: (e['e'] as string | null) ?? null,
          record: (e['r'] as Record<string, unknown> | null) ?? null,
        }
      }
      return transient.get(key) ?? {status: 'error', error: unanswered, record: null}
    }
    const anyAnswer = answered.size > 0 || transient.size > 0
    const outcomes: Outcome[] = []
    let finishedAny = false
    // every output row answered found counts (a duplicate row too: the figures describe the output file)
    const stats = req.stats === false ? undefined : new GroupedStats()
    const facts = emptyFacts()
    let wrote = false
    if (!run.outputClosed && (anyAnswer || !run.stopped)) {
      const cols: Column[] = columnsFor(shape.shape)
      const inputCols = req.input.columns
      // input columns as typed; ours renamed where they collide with one (batch-columns.ts)
      const csvNames = resultNames(inputCols, ['status', 'error', 'note', ...cols.map((c) => c.header)])
      const [kStatus, kError, kNote, kData] = resultNames(inputCols, ['status', 'error', 'note', 'data']) as [
        string,
        string,
        string,
        string,
      ]
      const header = [...inputCols, ...csvNames].map((h) => cell(h, req.escapeFormulas))
      const target = await run.outputTarget(req.out)
      const writer = new RecordWriter(target, req.format, {header, bom: req.bom})
      try {
        let i = 0
        for await (const row of req.input.records()) {
          const a = resultOf(keys.get(i++), () => req.input.validate(row.line, row.values))
          counts[a.status]++
          const note = req.input.noteOf(row.values)
          if (stats && a.record && (a.status === 'ok' || a.status === 'matched_without_unit')) {
            const flat = flattenRecord(a.record)
            stats.add(String(flat['Fips'] ?? '(none)'), factsOfFlat(flat, facts))
          }
          const ok =
            req.format === 'csv'
              ? writer.csv([
                  ...inputCols.map((c) => cell(row.values[c] ?? '', req.escapeFormulas)),
                  a.status,
                  a.error ?? '',
                  note ?? '',
                  ...(a.record ? flattenRow(a.record, cols, req.escapeFormulas) : cols.map(() => '')),
                ])
              : writer.json(
                  JSON.stringify({
                    ...row.values,
                    [kStatus]: a.status,
                    [kError]: a.error,
                    [kNote]: note ?? null,
                    [kData]: a.record,
                  }),
                )
          if (!ok) await target.drain()
        }
        writer.end()
        await target.commit()
        wrote = true
      } catch (error) {
        await target.abort()
        run.absorbOrThrow(error)
      }
    }
    for (const [status, c] of Object.entries(counts) as Array<[RowStatus, number]>) {
      if (c === 0) continue
      outcomes.push({kind: KIND[status], records: c, exitCode: CODE[status]})
      if (KIND[status] === 'done' || KIND[status] === 'empty') finishedAny = true
    }
    const open = counts.error > 0 || Boolean(run.stopped)
    const checkpoint = await run.finish(open)
    return {
      rows,
      counts,
      saved,
      fromCheckpoint,
      stopped: run.stopped,
      checkpoint,
      ...(stats && wrote
        ? {
            stats: {
              run: stats.all.report(),
              counties: stats.reports().map(({key, report}) => ({fips: key, report})),
            },
          }
        : {}),
      exitCode: run.exitCode(outcomes, finishedAny),
    }
  } finally {
    await run.close()
  }
}

/** One row's lookup (with --unit-fallback, its address without the unit on a 404); the outcome as a row status. */
async function answer(
  deps: BatchDeps,
  q: LookupQuery,
  req: Pick<BatchRequest, 'unitFallback' | 'asTyped'>,
  signal: AbortSignal,
): Promise<Answer> {
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
      const [rec] = await fetchLookup(deps, sent, signal)
      return {status: form?.withoutUnit ? 'matched_without_unit' : 'ok', error: null, record: rec ?? null}
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
  return {status, error: redact(error instanceof Error ? error.message : String(error)), record: null}
}
