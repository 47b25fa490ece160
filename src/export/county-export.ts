import {join} from 'node:path'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'

import type {HttpClient} from '../api/client.js'
import {
  ExitCode,
  exitCodeOf,
  InvalidKeyError,
  MissingKeyError,
  RateLimitExceededError,
  ServerError,
  SflError,
} from '../api/errors.js'
import {countyUrl} from '../api/query.js'
import {redact} from '../api/secrets.js'
import {emptyShape, ShapeTracker} from '../render/columns.js'
import {RequestCapReachedError, type Scheduler} from '../schedule/scheduler.js'
import {Checkpoint, type CheckpointData, type UnitState} from './checkpoint.js'
import {writeAtomically, writeFormatted, type ExportFormat} from './sink.js'
import {spoolResponse} from './spool.js'

export interface ExportRequest {
  fips: string[]
  out?: string | undefined
  format: ExportFormat
  fields?: string[] | undefined
  resume: boolean
  bom: boolean
  escapeFormulas: boolean
}

export interface ExportDeps {
  client: HttpClient
  scheduler: Scheduler
  baseUrl: string
  signal?: AbortSignal
  onProgress?: (p: ExportProgress) => void
}

export interface ExportProgress {
  countiesDone: number
  counties: number
  records: number
}

export interface ExportSummary {
  records: number
  written: number
  countiesDone: number
  counties: number
  failed: Array<{fips: string; error: string; exitCode: number}>
  resumedUnits: number
  interrupted: boolean
  /** Set when the whole run stopped early (key invalid, rate limit beyond --max-wait, --max-requests). */
  stopped?: SflError
  checkpoint?: string | undefined
}

/** Errors after which no other unit can succeed either: stop the run, keep the checkpoint. */
function stopsTheRun(error: unknown): boolean {
  return (
    error instanceof InvalidKeyError ||
    error instanceof MissingKeyError ||
    error instanceof RateLimitExceededError ||
    error instanceof RequestCapReachedError
  )
}

/**
 * Each county is one unit: its pages (RFC 8288 rel="next") are fetched in order, each spooled to a part
 * file and recorded in the checkpoint once complete. Counties run concurrently under the scheduler. When
 * every unit has ended, the parts are formatted in county order into a temp file renamed over --out.
 */
export async function runCountyExport(deps: ExportDeps, req: ExportRequest): Promise<ExportSummary> {
  const fresh: CheckpointData = {
    version: 1,
    kind: 'county-export',
    params: {fips: req.fips, format: req.format, fields: req.fields ?? null, baseUrl: deps.baseUrl},
    units: Object.fromEntries(req.fips.map((f) => [f, {status: 'pending', pages: []} satisfies UnitState])),
    shape: emptyShape(),
  }
  let cp: Checkpoint
  let resumed = false
  let scratch: string | undefined
  if (req.out) {
    ;({checkpoint: cp, resumed} = await Checkpoint.open(req.out, fresh, req.resume))
  } else {
    // stdout: parts live in a private temp dir and go away at the end (no resume without --out)
    scratch = await mkdtemp(join(tmpdir(), 'sfl-export-'))
    cp = new Checkpoint(join(scratch, 'checkpoint.json'), scratch, fresh)
  }
  const shape = new ShapeTracker(cp.data.shape)
  const summary: ExportSummary = {
    records: 0,
    written: 0,
    countiesDone: 0,
    counties: req.fips.length,
    failed: [],
    resumedUnits: resumed ? Object.values(cp.data.units).filter((u) => u.status === 'done').length : 0,
    interrupted: false,
  }
  const progress = () =>
    deps.onProgress?.({
      countiesDone: summary.countiesDone,
      counties: summary.counties,
      records: summary.records,
    })
  for (const u of Object.values(cp.data.units)) {
    if (u.status === 'done') summary.countiesDone++
    for (const p of u.pages) summary.records += p.records
  }

  const exportCounty = async (fips: string): Promise<void> => {
    const unit = cp.data.units[fips]!
    if (unit.status === 'done') return
    let url: string | undefined =
      unit.next ?? (unit.pages.length === 0 ? countyUrl(deps.baseUrl, fips) : undefined)
    const origin = new URL(deps.baseUrl).origin
    try {
      while (url !== undefined) {
        if (deps.signal?.aborted || summary.stopped) return
        // never follow a next link off the service's origin: the key would go with it
        if (new URL(url).origin !== origin)
          throw new ServerError(
            `refusing to follow a pagination link to another origin (${new URL(url).origin})`,
          )
        const n = unit.pages.length + 1
        const file = `${fips}-${String(n).padStart(5, '0')}.ndjson`
        const pageUrl: string = url
        const result = await deps.scheduler.run(
          () => deps.client.get(pageUrl, deps.signal),
          (res) => spoolResponse(res, join(cp.partsDir, file)),
        )
        shape.merge(result.shape.shape)
        unit.pages.push({n, records: result.records, file})
        unit.status = result.next ? 'partial' : 'done'
        unit.next = result.next
        unit.error = undefined
        cp.data.shape = shape.shape
        summary.records += result.records
        await cp.save()
        progress()
        url = result.next
      }
      summary.countiesDone++
      progress()
    } catch (error) {
      if (deps.signal?.aborted) return
      if (stopsTheRun(error)) {
        summary.stopped ??= error as SflError
        return
      }
      unit.status = 'failed'
      unit.error = redact(error instanceof Error ? error.message : String(error))
      summary.failed.push({fips, error: unit.error, exitCode: exitCodeOf(error)})
      await cp.save()
    }
  }

  try {
    await Promise.all(req.fips.map((f) => exportCounty(f)))
    summary.interrupted = deps.signal?.aborted ?? false
    if (summary.interrupted || summary.stopped) {
      summary.checkpoint = req.out ? cp.path : undefined
      return summary
    }
    // every unit ended: write what finished, in county order, atomically
    const files = req.fips.flatMap((f) => cp.data.units[f]!.pages.map((p) => join(cp.partsDir, p.file)))
    const sinkOpts = {
      format: req.format,
      shape: shape.shape,
      fields: req.fields,
      bom: req.bom,
      escapeFormulas: req.escapeFormulas,
    }
    summary.written = req.out
      ? await writeAtomically(req.out, (dest) => writeFormatted(files, sinkOpts, dest))
      : await writeFormatted(files, sinkOpts, process.stdout)
    if (summary.failed.length === 0) await cp.remove()
    else summary.checkpoint = req.out ? cp.path : undefined
    return summary
  } finally {
    if (scratch) await rm(scratch, {recursive: true, force: true})
  }
}

/** Exit code of a run (README "Exit codes"): 0 all done, 7 some failed, else the code of what stopped it. */
export function exportExitCode(s: ExportSummary): number {
  if (s.interrupted) return 130
  if (s.stopped) return s.stopped.exitCode
  if (s.failed.length === 0) return ExitCode.ok
  if (s.countiesDone > 0) return ExitCode.partial
  // nothing could be done: the failures' own code when they agree
  const codes = new Set(s.failed.map((f) => f.exitCode))
  return codes.size === 1 ? [...codes][0]! : ExitCode.partial
}
