import {createHash} from 'node:crypto'
import {createWriteStream} from 'node:fs'
import {mkdir, readFile, rm} from 'node:fs/promises'
import {once} from 'node:events'
import {join} from 'node:path'
import {Readable, type Writable} from 'node:stream'
import {pipeline} from 'node:stream/promises'

import {withoutUnit} from '../api/address.js'
import type {HttpClient} from '../api/client.js'
import {
  BadRequestError,
  ForbiddenError,
  InvalidKeyError,
  NotFoundError,
  RateLimitExceededError,
  SflError,
} from '../api/errors.js'
import {fetchLookup} from '../api/lookup.js'
import {redact} from '../api/secrets.js'
import type {LookupQuery} from '../api/validate.js'
import {cell, columnsFor, flattenRow, ShapeTracker, type Column} from '../render/columns.js'
import {RequestCapReachedError, type Scheduler} from '../schedule/scheduler.js'
import {writeFileAtomic} from './atomic-file.js'
import {checkpointPaths} from './checkpoint.js'
import type {InputRow, ParsedInput} from './batch-input.js'
import {keepOpen, writeAtomically} from './sink.js'

export type RowStatus = 'ok' | 'matched_without_unit' | 'not_found' | 'invalid' | 'forbidden' | 'error'

export interface Result {
  k: string
  status: RowStatus
  error: string | null
  record: Record<string, unknown> | null
}

export interface BatchRequest {
  input: ParsedInput
  inputBytes: Buffer
  out?: string | undefined
  format: 'csv' | 'ndjson' | 'json'
  resume: boolean
  unitFallback: boolean
  escapeFormulas: boolean
}

export interface BatchSummary {
  rows: number
  counts: Record<RowStatus, number>
  lookups: number
  saved: number
  fromCheckpoint: number
  stopped?: SflError
  interrupted: boolean
  checkpoint?: string | undefined
}

/** Statuses that are final: a resumed run does not ask again. `error` rows are retried on --resume. */
const FINAL: ReadonlySet<RowStatus> = new Set([
  'ok',
  'matched_without_unit',
  'not_found',
  'invalid',
  'forbidden',
])

/**
 * Look up each distinct row once through the scheduler, record each answer in an append-only results log
 * beside --out (the checkpoint), then write every input row in input order, atomically.
 */
export async function runBatch(
  deps: {
    client: HttpClient
    scheduler: Scheduler
    baseUrl: string
    signal?: AbortSignal
    onProgress?: (done: number, total: number) => void
  },
  req: BatchRequest,
): Promise<BatchSummary> {
  const rows = req.input.rows
  const unique = new Map<string, LookupQuery>()
  for (const r of rows) if (r.key && r.query && !unique.has(r.key)) unique.set(r.key, r.query)
  const results = new Map<string, Result>()
  const summary: BatchSummary = {
    rows: rows.length,
    counts: {ok: 0, matched_without_unit: 0, not_found: 0, invalid: 0, forbidden: 0, error: 0},
    lookups: unique.size,
    saved: rows.filter((r) => r.key).length - unique.size,
    fromCheckpoint: 0,
    interrupted: false,
  }

  let log: Writable | undefined
  let paths: {checkpoint: string; parts: string} | undefined
  if (req.out) {
    paths = checkpointPaths(req.out)
    const params = {
      kind: 'batch',
      input: createHash('sha256').update(req.inputBytes).digest('hex'),
      format: req.format,
      unitFallback: req.unitFallback,
      baseUrl: deps.baseUrl,
    }
    const existing = await readFile(paths.checkpoint, 'utf8').catch(() => undefined)
    if (existing !== undefined && !req.resume)
      throw new BadRequestLike(
        `a checkpoint from an interrupted run exists at ${paths.checkpoint}; add --resume to continue it, or delete it and ${paths.parts} to start over`,
      )
    if (existing === undefined && req.resume)
      throw new BadRequestLike(
        `--resume: no checkpoint at ${paths.checkpoint}; run without --resume to start`,
      )
    if (existing !== undefined && existing.trim() !== JSON.stringify(params))
      throw new BadRequestLike(
        `the checkpoint ${paths.checkpoint} belongs to a different input or options; resume with the same ones, or delete it to start over`,
      )
    if (existing === undefined) {
      await rm(paths.parts, {recursive: true, force: true})
      await mkdir(paths.parts, {recursive: true})
      await writeFileAtomic(paths.checkpoint, JSON.stringify(params))
    }
    const logFile = join(paths.parts, 'results.ndjson')
    // a line cut short by a crash is ignored: that lookup is simply asked again
    for (const line of (await readFile(logFile, 'utf8').catch(() => '')).split('\n')) {
      try {
        const r = JSON.parse(line) as Result
        if (FINAL.has(r.status) && unique.has(r.k)) results.set(r.k, r)
      } catch {
        // partial last line
      }
    }
    summary.fromCheckpoint = results.size
    log = createWriteStream(logFile, {flags: 'a'})
  }

  let done = results.size
  const record = async (r: Result) => {
    results.set(r.k, r)
    done++
    deps.onProgress?.(done, unique.size)
    if (log && FINAL.has(r.status) && !log.write(`${JSON.stringify(r)}\n`)) await once(log, 'drain')
  }

  const lookupOne = async (k: string, q: LookupQuery): Promise<void> => {
    if (deps.signal?.aborted || summary.stopped) return
    try {
      const [rec] = await fetchLookup(deps, q)
      await record({k, status: 'ok', error: null, record: rec ?? null})
    } catch (first) {
      let error = first
      if (error instanceof NotFoundError && req.unitFallback && q.by.kind === 'address') {
        const base = withoutUnit(q.by.value)
        if (base !== undefined) {
          try {
            const [rec] = await fetchLookup(deps, {fips: q.fips, by: {kind: 'address', value: base}})
            return await record({k, status: 'matched_without_unit', error: null, record: rec ?? null})
          } catch (inner) {
            error = inner // the fallback's own outcome is what the row reports
          }
        }
      }
      if (
        error instanceof InvalidKeyError ||
        error instanceof RateLimitExceededError ||
        error instanceof RequestCapReachedError
      ) {
        summary.stopped ??= error
        return
      }
      if (deps.signal?.aborted) return
      const message = redact(error instanceof Error ? error.message : String(error))
      const status: RowStatus =
        error instanceof NotFoundError
          ? 'not_found'
          : error instanceof ForbiddenError
            ? 'forbidden'
            : error instanceof BadRequestError
              ? 'invalid'
              : 'error'
      await record({k, status, error: message, record: null})
    }
  }

  try {
    await Promise.all([...unique].filter(([k]) => !results.has(k)).map(([k, q]) => lookupOne(k, q)))
  } finally {
    if (log) {
      log.end()
      await once(log, 'close')
    }
  }
  summary.interrupted = deps.signal?.aborted ?? false
  if (summary.interrupted || summary.stopped) {
    summary.checkpoint = paths?.checkpoint
    return summary
  }

  for (const r of rows) summary.counts[statusOf(r, results)]++
  const write = (dest: Writable) => writeRows(req, rows, results, dest)
  if (req.out) await writeAtomically(req.out, write)
  else await write(process.stdout)
  if (summary.counts.error === 0 && paths) {
    await rm(paths.checkpoint, {force: true})
    await rm(paths.parts, {recursive: true, force: true})
  } else summary.checkpoint = paths?.checkpoint
  return summary
}

/** Not a 400 from the service: a usage problem with the checkpoint (exit 2). */
class BadRequestLike extends SflError {
  override readonly exitCode = 2
}

function statusOf(row: InputRow, results: Map<string, Result>): RowStatus {
  if (row.invalid || !row.key) return 'invalid'
  return results.get(row.key)?.status ?? 'error'
}

/** Every input row, in input order: input columns untouched, then status and error, then the record. */
async function writeRows(
  req: BatchRequest,
  rows: InputRow[],
  results: Map<string, Result>,
  dest: Writable,
): Promise<number> {
  const shape = new ShapeTracker()
  for (const r of results.values()) if (r.record) shape.observe(r.record)
  const cols: Column[] = columnsFor(shape.shape)
  const inputCols = req.input.columns
  const resultOf = (row: InputRow) => {
    const res = row.key ? results.get(row.key) : undefined
    const status = statusOf(row, results)
    const error =
      row.invalid ?? res?.error ?? (status === 'error' ? 'not looked up (the run stopped first)' : null)
    return {status, error, record: res?.record ?? null}
  }
  const sink = dest === process.stdout ? keepOpen(dest) : dest
  if (req.format === 'csv') {
    const {stringify} = await import('csv-stringify')
    const header = [...inputCols, 'status', 'error', ...cols.map((c) => c.header)]
    const gen = function* () {
      for (const row of rows) {
        const {status, error, record} = resultOf(row)
        yield [
          ...inputCols.map((c) => cell(row.values[c] ?? '', req.escapeFormulas)),
          status,
          error ?? '',
          ...(record ? flattenRow(record, cols, req.escapeFormulas) : cols.map(() => '')),
        ]
      }
    }
    await pipeline(
      Readable.from(gen()),
      stringify({header: true, columns: header, bom: false, record_delimiter: 'windows'}),
      sink,
    )
    return rows.length
  }
  const json = req.format === 'json'
  const gen = function* () {
    if (json) yield '['
    let i = 0
    for (const row of rows) {
      const {status, error, record} = resultOf(row)
      const line = JSON.stringify({...row.values, status, error, data: record})
      yield json ? `${i++ === 0 ? '\n' : ',\n'}${line}` : `${line}\n`
    }
    if (json) yield rows.length ? '\n]\n' : ']\n'
  }
  await pipeline(Readable.from(gen()), sink)
  return rows.length
}
