import {UsageError} from '../errors.js'

/**
 * `county-export --dry-run`: what a run would cost, worked out before it starts. Pure: the figures come in
 * (the manifest's and checkpoint's page counts, the budget from one probe or the spec's default) and the
 * plan goes out, as text or as JSON for scripts.
 */

const UNITS: Record<string, number> = {s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000}

/**
 * `--max-age 30d`: a number and one unit (s, m, h, d) as milliseconds; anything else is a usage error.
 *
 * @example parseDuration('12h') // 43_200_000
 */
export function parseDuration(text: string, flag = '--max-age'): number {
  const m = /^(\d+(?:\.\d+)?)\s*([smhd])$/i.exec(text.trim())
  if (!m)
    throw new UsageError(
      `${flag} "${text}": give a number and a unit, s, m, h or d (e.g. 30d for thirty days, 12h, 90m)`,
    )
  return Math.round(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!)
}

/** What one county will cost. */
export interface CountyNeed {
  fips: string
  /** Requests: exact when known from an earlier run, else the least it can take (one). */
  requests: number
  exact: boolean
  why: 'fresh' | 'checkpoint' | 'last run' | 'unknown'
}

/** A county's state in an unfinished run's checkpoint. */
export interface CheckpointUnit {
  /** It ended in a final outcome (done, empty, forbidden, malformed): a rerun does not ask for it. */
  ended: boolean
  /** Pages already fetched and kept. */
  pages: number
}

/**
 * Per county: fresh (--max-age) and ended in the checkpoint cost nothing; a county the manifest recorded
 * takes the pages it took last time (less those the checkpoint holds, at least one); any other at least one.
 */
export function countyNeeds(
  fips: readonly string[],
  known: {
    fresh?: ReadonlySet<string>
    lastPages?: ReadonlyMap<string, number>
    checkpoint?: ReadonlyMap<string, CheckpointUnit>
  },
): CountyNeed[] {
  return fips.map((f) => {
    if (known.fresh?.has(f)) return {fips: f, requests: 0, exact: true, why: 'fresh'}
    const cp = known.checkpoint?.get(f)
    if (cp?.ended) return {fips: f, requests: 0, exact: true, why: 'checkpoint'}
    const last = known.lastPages?.get(f)
    if (last !== undefined)
      return {fips: f, requests: Math.max(1, last - (cp?.pages ?? 0)), exact: true, why: 'last run'}
    return {fips: f, requests: 1, exact: false, why: 'unknown'}
  })
}

/** The key's budget: from the probe's X-RateLimit headers (spec 8.3) or the spec's default (8.2). */
export interface Budget {
  source: 'probe' | 'default'
  limit: number
  remaining: number
  /** When the current window resets (epoch ms); unknown without a probe. */
  resetAtMs?: number | undefined
}

/** Spec 8.2: 1,000 requests per hour unless the operator arranged more. */
export const DEFAULT_BUDGET: Budget = {source: 'default', limit: 1000, remaining: 1000}
export const HOUR_MS = 3_600_000

export interface Timing {
  requests: number
  /** Requests the current window still allows this run (after --reserve). */
  nowLeft: number
  /** Requests each later window allows this run (after --reserve). */
  perWindow: number
  /** Windows after the current one the run needs. */
  windowsAfter: number
  /**
   * How long until the window of the last request opens (0 when everything fits now); the requests' own
   * time comes on top. Undefined when --reserve leaves the run nothing and it does not fit now.
   */
  waitMs: number | undefined
}

/**
 * The time a run of `requests` takes at the key's limit: what is left now goes at once, then `limit -
 * reserve` a window. Without a reset time (no probe) the window is taken to start with the run's first
 * request, so the first reset is one window away.
 */
export function planTiming(
  requests: number,
  budget: Budget,
  nowMs: number,
  reserve = 0,
  windowMs = HOUR_MS,
): Timing {
  const nowLeft = Math.max(0, budget.remaining - reserve)
  const perWindow = Math.max(0, budget.limit - reserve)
  if (requests <= nowLeft) return {requests, nowLeft, perWindow, windowsAfter: 0, waitMs: 0}
  if (perWindow === 0) return {requests, nowLeft, perWindow, windowsAfter: Infinity, waitMs: undefined}
  const windowsAfter = Math.ceil((requests - nowLeft) / perWindow)
  const untilReset = budget.resetAtMs === undefined ? windowMs : Math.max(0, budget.resetAtMs - nowMs)
  return {requests, nowLeft, perWindow, windowsAfter, waitMs: untilReset + (windowsAfter - 1) * windowMs}
}

/** "2 h 35 min", "35 min", "under a minute". */
export function fmtDuration(ms: number): string {
  const min = Math.round(ms / 60_000)
  if (min === 0) return 'under a minute'
  if (min < 60) return `${min} min`
  return `${Math.floor(min / 60)} h${min % 60 ? ` ${String(min % 60).padStart(2, '0')} min` : ''}`
}

const n = (x: number) => x.toLocaleString('en-US')
const hhmm = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`

export interface Plan {
  /** Counties asked, in order. */
  counties: number
  needs: CountyNeed[]
  budget: Budget
  /** How the budget was learned: "one probe request to 06067", or why there was none. */
  budgetNote: string
  /** Requests the plan itself sent (the probe): 0 or 1. */
  probeRequests: number
  /** Requests the counties to fetch need (at least: a county not exported before may take more pages). */
  requests: number
  /** `--max-requests`: the run stops after this many; `timing` is for the requests it sends. */
  maxRequests?: number | undefined
  timing: Timing
  maxAge?: string | undefined
  /** Counties named in the text when there are no more than this. */
  listUpTo?: number
  names?: (fips: string) => string
}

/** Build the plan from the counties' needs and the budget. */
export function makePlan(
  input: Omit<Plan, 'timing' | 'requests'> & {nowMs: number; reserve?: number | undefined},
): Plan {
  const requests = input.needs.reduce((s, c) => s + c.requests, 0)
  const {nowMs, reserve, ...rest} = input
  const sent = input.maxRequests === undefined ? requests : Math.min(requests, input.maxRequests)
  return {...rest, requests, timing: planTiming(sent, input.budget, nowMs, reserve ?? 0)}
}

/** The one summary line, e.g. "3,221 counties, 3,221+ requests: 812 now (…) plus 3 more windows …". */
export function planHeadline(p: Plan, nowMs: number): string {
  const t = p.timing
  const toFetch = p.needs.filter((c) => c.why !== 'fresh' && c.why !== 'checkpoint').length
  const exact = p.needs.every((c) => c.exact)
  const all = `${n(p.requests)}${exact ? '' : '+'} ${p.requests === 1 && exact ? 'request' : 'requests'}`
  // --max-requests: the run sends that many and stops; the time is for those
  const req =
    p.maxRequests !== undefined && (p.maxRequests < p.requests || !exact)
      ? `${all}, this run at most ${n(p.maxRequests)} (--max-requests; rerun to continue)`
      : all
  const counties = `${n(p.counties)} ${p.counties === 1 ? 'county' : 'counties'}${toFetch !== p.counties ? ` (${n(toFetch)} to fetch)` : ''}`
  const b = p.budget
  const window =
    b.source === 'probe'
      ? `now ${n(b.remaining)} of ${n(b.limit)} left${b.resetAtMs !== undefined ? `, resets ${hhmm(b.resetAtMs)}` : ''}`
      : `the default ${n(b.limit)}/hour, window assumed full`
  if (p.requests === 0) return `${counties}, no requests needed: every county is fresh or finished`
  if (t.waitMs === 0) return `${counties}, ${req}: within the current window (${window})`
  if (t.waitMs === undefined)
    return `${counties}, ${req}: more than the current window (${window}) and --reserve leaves no later window anything`
  void nowMs
  return `${counties}, ${req}: 1 window (${window}) plus ${n(t.windowsAfter)} more at ${n(t.perWindow)}/hour: about ${fmtDuration(t.waitMs)} (plus the time the last window's requests take)`
}

/** The plan as text: the headline, then counties, requests, budget and time, one line each. */
export function renderPlan(p: Plan, nowMs: number): string {
  const fresh = p.needs.filter((c) => c.why === 'fresh')
  const fromCheckpoint = p.needs.filter((c) => c.why === 'checkpoint')
  const fetch = p.needs.filter((c) => c.why !== 'fresh' && c.why !== 'checkpoint')
  const lastRun = fetch.filter((c) => c.why === 'last run')
  const unknown = fetch.filter((c) => c.why === 'unknown')
  const lines = [planHeadline(p, nowMs)]
  const counties = [`${n(p.counties)} asked`]
  if (fresh.length) counties.push(`${n(fresh.length)} fresh (finished less than ${p.maxAge} ago), skipped`)
  if (fromCheckpoint.length) counties.push(`${n(fromCheckpoint.length)} already ended in the checkpoint`)
  counties.push(`${n(fetch.length)} to fetch`)
  lines.push(`Counties   ${counties.join('; ')}`)
  if (fetch.length > 0 && fetch.length <= (p.listUpTo ?? 20))
    lines.push(`           ${fetch.map((c) => (p.names ? p.names(c.fips) : c.fips)).join('; ')}`)
  const req: string[] = []
  if (lastRun.length)
    req.push(
      `${n(lastRun.reduce((s, c) => s + c.requests, 0))} for ${n(lastRun.length)} ${lastRun.length === 1 ? 'county' : 'counties'} from the pages the last run recorded (the data may have grown)`,
    )
  if (unknown.length)
    req.push(
      `at least ${n(unknown.length)} for ${n(unknown.length)} ${unknown.length === 1 ? 'county' : 'counties'} not exported before (one per county when the service sends whole counties; one per page when it paginates)`,
    )
  if (req.length) lines.push(`Requests   ${req.join('; ')}`)
  const b = p.budget
  lines.push(
    b.source === 'probe'
      ? `Budget     ${n(b.remaining)} of ${n(b.limit)} left this window${b.resetAtMs !== undefined ? `, resets ${hhmm(b.resetAtMs)}` : ''} (${p.budgetNote})`
      : `Budget     the default ${n(b.limit)} requests/hour (spec 8.2), window assumed full: ${p.budgetNote}`,
  )
  lines.push(
    `Sent       ${p.probeRequests} ${p.probeRequests === 1 ? 'request (the probe)' : 'requests'}; nothing was exported`,
  )
  return `${lines.join('\n')}\n`
}

/** The plan for scripts (`--dry-run --output json`): stable keys, times as ISO 8601 and seconds. */
export function planJson(p: Plan): Record<string, unknown> {
  const t = p.timing
  return {
    counties: p.counties,
    fresh: p.needs.filter((c) => c.why === 'fresh').map((c) => c.fips),
    endedInCheckpoint: p.needs.filter((c) => c.why === 'checkpoint').map((c) => c.fips),
    toFetch: p.needs.filter((c) => c.why !== 'fresh' && c.why !== 'checkpoint').map((c) => c.fips),
    requests: p.requests,
    requestsExact: p.needs.every((c) => c.exact),
    maxRequests: p.maxRequests ?? null,
    /** What the wait below is for: `requests`, or fewer under --max-requests. */
    requestsThisRun: t.requests,
    budget: {
      source: p.budget.source,
      limit: p.budget.limit,
      remaining: p.budget.remaining,
      resetAt: p.budget.resetAtMs === undefined ? null : new Date(p.budget.resetAtMs).toISOString(),
      note: p.budgetNote,
    },
    windowsAfterCurrent: Number.isFinite(t.windowsAfter) ? t.windowsAfter : null,
    waitSeconds: t.waitMs === undefined ? null : Math.round(t.waitMs / 1000),
    probeRequests: p.probeRequests,
  }
}
