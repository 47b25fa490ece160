import {firstStep, requestRange, type FirstStep, type PlanFlag, type RequestRange} from '../plan/cost.js'
import {count} from '../text/count.js'
import {fmtDuration, planTiming, type Budget, type Timing} from './plan.js'

/**
 * `lookup --input FILE --dry-run`: what a batch would cost, county by county, before it runs (issue 33).
 * Pure: the figures come in (the index pass's counts, what an export on disk answers, the pages known from
 * its manifest or the one probe, the budget) and the plan goes out, as text or as JSON for scripts.
 */
export interface CountyFigures {
  fips: string
  /** Input rows of the county (valid ones). */
  rows: number
  /** Distinct lookups not answered yet (by the checkpoint, or the export on disk). */
  lookups: number
  /** Of them, lookups a record can answer exactly (a scan's to replace). */
  replaceable: number
  /** Of them, addresses with a unit (with --unit-fallback a lookup may take a second request). */
  withUnit: number
  /** Lookups the export on disk answered (`--from`), with the date it was fetched. */
  fromExport?: {answered: number; finishedAt: string} | undefined
  /** The export holds the county but fetched it longer ago than --max-age. */
  staleExport?: string | undefined
  /** The county's length, and how it is known. */
  pages?:
    | {count: number; from: 'probe' | 'manifest'; total?: number | null; pageRecords?: number | null}
    | undefined
}

export interface CountyPlan extends CountyFigures {
  step: FirstStep
  requests: RequestRange
  /** What the range assumed, in a few words. */
  assumed: string
}

export interface BatchPlan {
  plan: PlanFlag
  rows: number
  /** Rows that repeat an earlier row's lookup. */
  saved: number
  counties: CountyPlan[]
  requests: RequestRange
  budget: Budget
  budgetNote: string
  /** Requests the dry run sent (0 or 1: the probe), and where. */
  probe: {sent: number; fips?: string | undefined}
  maxRequests?: number | undefined
  timing: {min: Timing; max: Timing | undefined}
  names?: ((fips: string) => string) | undefined
}

/** Plan every county by the rules of src/plan/cost.ts; the ranges add up to the run's. */
export function makeBatchPlan(input: {
  plan: PlanFlag
  rows: number
  saved: number
  counties: CountyFigures[]
  unitFallback: boolean
  /** The requests a unit lookup is expected to take (src/plan/cost.ts LadderCost, before the run). */
  perUnitLookup: number
  budget: Budget
  budgetNote: string
  probe: {sent: number; fips?: string | undefined}
  maxRequests?: number | undefined
  nowMs: number
  reserve?: number | undefined
  names?: ((fips: string) => string) | undefined
}): BatchPlan {
  const counties = input.counties.map((c): CountyPlan => {
    const perLookup =
      c.lookups === 0 ? 1 : (c.lookups - c.withUnit + c.withUnit * input.perUnitLookup) / c.lookups
    const maxPerLookup = input.unitFallback && c.withUnit > 0 ? (c.lookups + c.withUnit) / c.lookups : 1
    const pages = c.pages?.count
    // a county the export answered from is never scanned: its other rows are looked up
    const step: FirstStep = c.fromExport
      ? 'lookups'
      : firstStep(input.plan, {lookups: c.replaceable, perLookup, pages})
    const requests = requestRange(step, {
      lookups: c.lookups,
      replaceable: c.replaceable,
      perLookup,
      maxPerLookup,
      pages,
    })
    return {...c, step, requests, assumed: assumption(c, step)}
  })
  const requests = {
    min: counties.reduce((s, c) => s + c.requests.min, 0),
    max: counties.reduce((s, c) => s + c.requests.max, 0),
  }
  const cap = (x: number) => (input.maxRequests === undefined ? x : Math.min(x, input.maxRequests))
  const time = (x: number) => planTiming(cap(x), input.budget, input.nowMs, input.reserve ?? 0)
  return {
    plan: input.plan,
    rows: input.rows,
    saved: input.saved,
    counties,
    requests,
    budget: input.budget,
    budgetNote: input.budgetNote,
    probe: input.probe,
    maxRequests: input.maxRequests,
    timing: {min: time(requests.min), max: Number.isFinite(requests.max) ? time(requests.max) : undefined},
    names: input.names,
  }
}

const n = count
const plural = (x: number, one: string, many: string) => `${n(x)} ${x === 1 ? one : many}`

/** What a county's range rests on. */
function assumption(c: CountyFigures, step: FirstStep): string {
  const parts: string[] = []
  if (c.fromExport)
    parts.push(
      `${plural(c.fromExport.answered, 'lookup', 'lookups')} answered by the export fetched ${c.fromExport.finishedAt}`,
    )
  if (c.staleExport) parts.push(`the export's copy (${c.staleExport}) is older than --max-age: not used`)
  const p = c.pages
  if (p?.from === 'probe')
    parts.push(
      p.count === 1
        ? 'the probe found it whole in one answer'
        : `${plural(p.count, 'page', 'pages')}: X-Total-Count ${n(p.total ?? 0)} over the probe's ${n(p.pageRecords ?? 0)} records a page`,
    )
  else if (p?.from === 'manifest')
    parts.push(`${plural(p.count, 'page', 'pages')} when the export fetched it`)
  else if (step === 'probe')
    parts.push(
      'length unknown: its first page decides; a scan goes on only while its pages stay below the lookups they replace (at most twice the cheaper plan)',
    )
  else if (step === 'scan') parts.push('length unknown: --plan scan reads every page')
  const others = c.lookups - c.replaceable
  if (others > 0 && step !== 'lookups')
    parts.push(
      `${plural(others, 'lookup', 'lookups')} no record can answer exactly (sent whatever the scan finds)`,
    )
  if (step !== 'lookups')
    parts.push('the fewest if every other row matches a record exactly, the most if none does')
  return parts.join('; ')
}

const STEP_WORDS: Record<FirstStep, string> = {
  lookups: 'lookups',
  scan: 'scan',
  probe: 'scan if its first page says so',
}

function range(r: RequestRange): string {
  if (!Number.isFinite(r.max)) return `at least ${plural(r.min, 'request', 'requests')}`
  return r.min === r.max ? plural(r.min, 'request', 'requests') : `${n(r.min)} to ${n(r.max)} requests`
}

/** "now 900 of 1,000 left, resets 09:00 UTC", or the default window. */
function windowWords(b: Budget): string {
  if (b.source !== 'probe') return `the default ${n(b.limit)}/hour, window assumed full`
  const reset =
    b.resetAtMs === undefined ? '' : `, resets ${new Date(b.resetAtMs).toISOString().slice(11, 16)} UTC`
  return `now ${n(b.remaining)} of ${n(b.limit)} left${reset}`
}

function waitWords(t: Timing | undefined): string {
  if (t === undefined) return 'unknown (a forced scan of unknown length)'
  if (t.waitMs === 0) return 'within the current window'
  if (t.waitMs === undefined) return 'never: --reserve leaves no later window anything'
  return `${fmtDuration(t.waitMs)} of waiting (${plural(t.windowsAfter, 'window', 'windows')} after this one)`
}

/** The plan as text: the headline, a line per county, the budget and what was sent. */
export function renderBatchPlan(p: BatchPlan): string {
  const lookups = p.counties.reduce((s, c) => s + c.lookups, 0)
  const cap = p.maxRequests !== undefined ? `, this run at most ${n(p.maxRequests)} (--max-requests)` : ''
  const lines = [
    `${plural(p.counties.length, 'county', 'counties')}, ${plural(p.rows, 'row', 'rows')} (${plural(lookups, 'lookup', 'lookups')} to answer), --plan ${p.plan}: ${range(p.requests)}${cap}`,
    `Time       at the key's limit (${windowWords(p.budget)}): ${waitWords(p.timing.min)}${p.timing.max && p.timing.max.waitMs !== p.timing.min.waitMs ? ` to ${waitWords(p.timing.max)}` : ''}`,
  ]
  for (const c of p.counties) {
    const name = p.names ? p.names(c.fips) : c.fips
    lines.push(
      `County     ${name}: ${plural(c.rows, 'row', 'rows')}, ${plural(c.lookups, 'lookup', 'lookups')}: ${STEP_WORDS[c.step]}, ${range(c.requests)}${c.assumed ? ` (${c.assumed})` : ''}`,
    )
  }
  const b = p.budget
  lines.push(
    b.source === 'probe'
      ? `Budget     ${n(b.remaining)} of ${n(b.limit)} left this window (${p.budgetNote})`
      : `Budget     the default ${n(b.limit)} requests/hour (spec 8.2), window assumed full: ${p.budgetNote}`,
  )
  lines.push(
    `Sent       ${p.probe.sent === 1 ? `1 request (the probe of ${p.probe.fips ?? 'one county'}; counted in the budget above)` : `${n(p.probe.sent)} requests`}; nothing was looked up`,
  )
  return `${lines.join('\n')}\n`
}

/** `lookup --input FILE --dry-run --json`: the plan for scripts (docs/exports.md, "Lists of properties"). */
export interface BatchPlanDocument {
  plan: PlanFlag
  rows: number
  saved: number
  counties: Array<{
    fips: string
    rows: number
    lookups: number
    replaceable: number
    plan: FirstStep
    /** The county's length when known, and how. */
    pages: number | null
    pagesFrom: 'probe' | 'manifest' | null
    fromExport: {answered: number; finishedAt: string} | null
    requestsMin: number
    /** null: no bound but the county's own length (a forced scan of unknown length). */
    requestsMax: number | null
    assumed: string
  }>
  requestsMin: number
  requestsMax: number | null
  maxRequests: number | null
  budget: {source: Budget['source']; limit: number; remaining: number; resetAt: string | null; note: string}
  /** The wait until the last window the run needs opens, for the fewest and the most requests. */
  waitSecondsMin: number | null
  waitSecondsMax: number | null
  probeRequests: number
  probeFips: string | null
}

const seconds = (t: Timing | undefined) =>
  t === undefined || t.waitMs === undefined ? null : Math.round(t.waitMs / 1000)
const finite = (x: number) => (Number.isFinite(x) ? x : null)

export function batchPlanJson(p: BatchPlan): BatchPlanDocument {
  return {
    plan: p.plan,
    rows: p.rows,
    saved: p.saved,
    counties: p.counties.map((c) => ({
      fips: c.fips,
      rows: c.rows,
      lookups: c.lookups,
      replaceable: c.replaceable,
      plan: c.step,
      pages: c.pages?.count ?? null,
      pagesFrom: c.pages?.from ?? null,
      fromExport: c.fromExport ?? null,
      requestsMin: c.requests.min,
      requestsMax: finite(c.requests.max),
      assumed: c.assumed,
    })),
    requestsMin: p.requests.min,
    requestsMax: finite(p.requests.max),
    maxRequests: p.maxRequests ?? null,
    budget: {
      source: p.budget.source,
      limit: p.budget.limit,
      remaining: p.budget.remaining,
      resetAt: p.budget.resetAtMs === undefined ? null : new Date(p.budget.resetAtMs).toISOString(),
      note: p.budgetNote,
    },
    waitSecondsMin: seconds(p.timing.min),
    waitSecondsMax: seconds(p.timing.max),
    probeRequests: p.probe.sent,
    probeFips: p.probe.fips ?? null,
  }
}
