import {ExitCode, InvalidKeyError, MissingKeyError, SflError} from '../errors.js'
import {redact} from '../api/secrets.js'
import type {LookupContext} from '../lookup/fetch-lookup.js'
import {LadderCost, pagesFrom, type PlanFlag} from '../plan/cost.js'
import type {BatchInput} from './batch-input.js'
import {indexBatch} from './batch-index.js'
import {answerFromExport, type FromExport} from './batch-from.js'
import {
  batchPlanJson,
  makeBatchPlan,
  renderBatchPlan,
  type BatchPlanDocument,
  type CountyFigures,
} from './batch-plan.js'
import {probeCounty} from './batch-scan.js'
import {DEFAULT_BUDGET, type Budget} from './plan.js'

/**
 * `lookup --input FILE --dry-run`: the batch's plan, worked out without looking anything up (issue 33).
 * The input is read and indexed as the run would (no request), an export on disk (`--from`) is matched
 * (it is local: what it answers is known, not assumed), and at most one request is sent: the first page
 * of the county-wide form of the county with the most lookups a scan could replace among those whose
 * length nothing else tells, as `county-export --dry-run` probes (no retry, no wait). It reads the key's
 * budget (spec 8.3) and that county's length; the plan (src/jobs/batch-plan.ts) is text or JSON.
 */
export interface BatchDryRunRequest {
  input: BatchInput
  plan: PlanFlag
  unitFallback: boolean
  asTyped: boolean
  from?: FromExport | undefined
  reserve: number
  maxRequests?: number | undefined
  /** The probe's connection (no retries, no waiting); undefined: nothing is sent. */
  probe: (() => Promise<LookupContext>) | undefined
  signal: AbortSignal
  names?: ((fips: string) => string) | undefined
  now?: (() => number) | undefined
}

export interface BatchDryRunResult {
  /** 0, or 4 when the probe's key was refused (the run would stop at once). */
  exitCode: number
  text: string
  json: BatchPlanDocument
}

export async function batchDryRun(req: BatchDryRunRequest): Promise<BatchDryRunResult> {
  const now = req.now ?? Date.now
  const indexed = await indexBatch(req.input, {asTyped: req.asTyped})
  const from = req.from ? await answerFromExport(req.from, indexed.counties, () => undefined) : undefined
  const byFips = new Map(from?.report.counties.map((c) => [c.fips, c]) ?? [])
  const figures: CountyFigures[] = [...indexed.counties.values()].map((ix) => {
    const f = byFips.get(ix.fips)
    const manifestPages = from?.pages.get(ix.fips)
    return {
      fips: ix.fips,
      rows: indexed.rowsPerCounty.get(ix.fips) ?? 0,
      lookups: ix.open,
      replaceable: ix.replaceable,
      withUnit: ix.withUnit,
      ...(f?.used ? {fromExport: {answered: f.answered, finishedAt: f.finishedAt}} : {}),
      ...(f && !f.used ? {staleExport: f.finishedAt} : {}),
      ...(manifestPages !== undefined && !f?.used
        ? {pages: {count: manifestPages, from: 'manifest' as const}}
        : {}),
    }
  })
  // the probe: the county a scan may matter most for, among those whose length nothing tells
  const target = figures
    .filter((c) => c.pages === undefined && !c.fromExport && c.replaceable >= 2 && req.plan !== 'lookups')
    .sort((a, b) => b.replaceable - a.replaceable)[0]
  const probed = target && req.probe ? await probe(req.probe, target.fips, req.signal) : undefined
  if (target && probed?.pages) target.pages = probed.pages
  const ladder = new LadderCost(req.unitFallback)
  const plan = makeBatchPlan({
    plan: req.plan,
    rows: indexed.rows,
    saved: indexed.saved,
    counties: figures,
    unitFallback: req.unitFallback,
    perUnitLookup: ladder.perUnitLookup,
    budget: probed?.budget ?? DEFAULT_BUDGET,
    budgetNote: probed?.note ?? (target ? 'no probe sent' : 'no probe: no county of unknown length to scan'),
    probe: {sent: probed?.sent ?? 0, fips: probed?.sent ? target?.fips : undefined},
    maxRequests: req.maxRequests,
    nowMs: now(),
    reserve: req.reserve,
    names: req.names,
  })
  return {exitCode: probed?.exitCode ?? ExitCode.ok, text: renderBatchPlan(plan), json: batchPlanJson(plan)}
}

interface Probed {
  budget: Budget
  note: string
  sent: number
  pages?: CountyFigures['pages']
  exitCode?: number
}

/** One request; any failure leaves the spec's default budget and says why (a refused key: exit 4). */
async function probe(
  connect: () => Promise<LookupContext>,
  fips: string,
  signal: AbortSignal,
): Promise<Probed> {
  let ctx: LookupContext
  try {
    ctx = await connect()
  } catch (error) {
    if (!(error instanceof SflError)) throw error
    return {budget: DEFAULT_BUDGET, note: `no probe sent: ${redact(error.message)}`, sent: 0}
  }
  const sent = () => ctx.scheduler.stats.requests
  try {
    const f = await probeCounty(ctx, fips, signal)
    const b = ctx.scheduler.budget()
    const count = pagesFrom({next: f.next, total: f.total, pageRecords: f.pageRecords})
    const pages =
      count === undefined
        ? undefined
        : {count, from: 'probe' as const, total: f.total, pageRecords: f.pageRecords}
    if (b.limit === undefined || b.remaining === undefined)
      return {
        budget: DEFAULT_BUDGET,
        note: `one probe request to ${fips}; its answer carried no X-RateLimit headers`,
        sent: sent(),
        pages,
      }
    return {
      budget: {source: 'probe', limit: b.limit, remaining: b.remaining, resetAtMs: b.resetAtMs},
      note: `from one probe request to ${fips}`,
      sent: sent(),
      pages,
    }
  } catch (error) {
    const keyRefused = error instanceof InvalidKeyError || error instanceof MissingKeyError
    return {
      budget: DEFAULT_BUDGET,
      note: `the probe to ${fips} ${keyRefused ? 'was refused: the API key is invalid or missing, so the run would stop at once' : `failed (${redact((error as Error).message.split('\n')[0]!)})`}`,
      sent: sent(),
      ...(keyRefused ? {exitCode: ExitCode.auth} : {}),
    }
  }
}
