import {UsageError} from '../errors.js'
import {count} from '../text/count.js'

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

/**
 * What one county will cost: `min` is the fewest requests it can take (a 404, a 403 or one page is one),
 * `estimate` what it is expected to take, or undefined when nothing says (spec 4 leaves pagination open).
 */
export interface CountyNeed {
  fips: string
  min: number
  estimate: number | undefined
  /**
   * Where the figure comes from: fresh (--max-age), ended in the checkpoint, or ended there refused (403,
   * `refused before`): nothing to send; the pages
   * the last run recorded; the probe's own answer (`probed`, or `not permitted`: a 403, one request that
   * brings nothing); `scaled` from the probed county by housing units; `assumed` like the probed county
   * (no housing figure to scale by); `unknown`.
   */
  why:
    | 'fresh'
    | 'checkpoint'
    | 'refused before'
    | 'last run'
    | 'probed'
    | 'not permitted'
    | 'scaled'
    | 'assumed'
    | 'unknown'
}

/** Known, not assumed: `requests` is what the county takes (the last run's pages: the data may have grown). */
export const isExact = (c: CountyNeed): boolean =>
  c.estimate !== undefined && c.why !== 'assumed' && c.why !== 'scaled'

/** A county's state in an unfinished run's checkpoint. */
export interface CheckpointUnit {
  /** It ended in a final outcome (done, empty, forbidden, malformed): a rerun does not ask for it. */
  ended: boolean
  /** Pages already fetched and kept. */
  pages: number
  /** It ended `forbidden` (403): the key may not use it; named in the plan. */
  forbidden?: boolean
}

/**
 * What the --dry-run probe's one request learned about the county it went to (src/keys/check.ts):
 * `records` with the first page's size facts, `empty` (404), `not permitted` (403), or `none` (no answer
 * about the county: the key refused, the window spent, a failure).
 */
export interface ProbeFinding {
  fips: string
  answer: 'records' | 'empty' | 'not permitted' | 'none'
  /** The answer linked a next page (RFC 8288): the service pages counties. */
  next?: boolean
  /** X-Total-Count: the records the service says the county holds. */
  total?: number | null
  /** Records on the first page, counted when it linked a next page. */
  pageRecords?: number | null
}

/** The probed county's requests as measured (min = estimate), or at least 2 when it is paged but unsized. */
export function probedPages(p: ProbeFinding): {min: number; estimate: number | undefined} | undefined {
  if (p.answer === 'empty' || p.answer === 'not permitted') return {min: 1, estimate: 1}
  if (p.answer !== 'records') return undefined
  if (!p.next) return {min: 1, estimate: 1} // the answer was the whole county (or its only page)
  if (p.total != null && p.pageRecords != null && p.pageRecords > 0) {
    const pages = Math.max(2, Math.ceil(p.total / p.pageRecords))
    return {min: pages, estimate: pages}
  }
  return {min: 2, estimate: undefined}
}

/**
 * What the other counties are assumed to take, from the probed one: as many pages (a paged answer with
 * X-Total-Count and a counted page), or one request each (an answer that held the whole county). Nothing
 * is assumed from a 404, a 403, a paged answer that did not say its size, or no answer.
 */
export function assumedPages(p: ProbeFinding | undefined): number | undefined {
  if (!p || p.answer !== 'records') return undefined
  return probedPages(p)?.estimate
}

/** A county's housing units (src/address/county-housing.ts), undefined for one without a figure. */
export type Housing = (fips: string) => number | undefined

/**
 * What the probed county's answer gives to scale by: its records (X-Total-Count), its housing units and
 * the page size (the records on its first page, which linked a next one).
 */
export interface Scale {
  fips: string
  records: number
  units: number
  pageSize: number
}

/**
 * The probed county's scale, when its answer was paged and said its size and the table holds the county;
 * undefined otherwise (a county that came whole says nothing about page size, and the others are assumed
 * whole too).
 */
export function probeScale(p: ProbeFinding | undefined, housing: Housing | undefined): Scale | undefined {
  if (!p || p.answer !== 'records' || !p.next || p.total == null || !p.pageRecords) return undefined
  const units = housing?.(p.fips)
  if (!units) return undefined
  return {fips: p.fips, records: p.total, units, pageSize: p.pageRecords}
}

/**
 * A county of `units` housing units, taken to hold records in the probed county's proportion: its pages of
 * the probed page size, at least one (a 404 or a page). Integers until the one division, so a county the
 * size of the probed one takes exactly its pages.
 *
 * @example scaledPages({fips: '48201', records: 2000, units: 1_600_000, pageSize: 200}, 560_000) // 4
 */
export function scaledPages(s: Scale, units: number): number {
  return Math.max(1, Math.ceil((s.records * units) / (s.units * s.pageSize)))
}

/**
 * Per county: fresh (--max-age) and ended in the checkpoint cost nothing; the probed county what its
 * answer showed; a county the manifest recorded the pages it took last time; any other at least one, and
 * when the probe gives something to assume, its pages scaled by housing units (`scaled`: records in the
 * probed county's proportion, at its page size), or, for a county without a housing figure or when the
 * probed county has none, as many as the probed county (`assumed`). Pages the checkpoint holds are
 * taken off (at least one request is left for a county that has not ended).
 */
export function countyNeeds(
  fips: readonly string[],
  known: {
    fresh?: ReadonlySet<string>
    lastPages?: ReadonlyMap<string, number>
    checkpoint?: ReadonlyMap<string, CheckpointUnit>
    probe?: ProbeFinding | undefined
    housing?: Housing | undefined
  },
): CountyNeed[] {
  const assumed = assumedPages(known.probe)
  const scale = probeScale(known.probe, known.housing)
  return fips.map((f): CountyNeed => {
    if (known.fresh?.has(f)) return {fips: f, min: 0, estimate: 0, why: 'fresh'}
    const cp = known.checkpoint?.get(f)
    if (cp?.ended) return {fips: f, min: 0, estimate: 0, why: cp.forbidden ? 'refused before' : 'checkpoint'}
    const left = (pages: number) => Math.max(1, pages - (cp?.pages ?? 0))
    const probed = known.probe?.fips === f ? probedPages(known.probe) : undefined
    if (probed) {
      const why = known.probe!.answer === 'not permitted' ? 'not permitted' : 'probed'
      return {
        fips: f,
        min: left(probed.min),
        estimate: probed.estimate === undefined ? undefined : left(probed.estimate),
        why,
      }
    }
    const last = known.lastPages?.get(f)
    if (last !== undefined) return {fips: f, min: left(last), estimate: left(last), why: 'last run'}
    const units = scale && known.housing?.(f)
    if (scale && units !== undefined)
      return {fips: f, min: 1, estimate: left(scaledPages(scale, units)), why: 'scaled'}
    if (assumed !== undefined) return {fips: f, min: 1, estimate: left(assumed), why: 'assumed'}
    return {fips: f, min: 1, estimate: undefined, why: 'unknown'}
  })
}

/** What sizes a county before any request is sent: its housing units, and the records a last run found. */
export interface CountySizes {
  housing?: Housing | undefined
  /** Records per county in the manifest of --out-dir (the last run's). */
  lastRecords?: ReadonlyMap<string, number> | undefined
}

/** The county the probe goes to and why: its records are what the other counties are scaled from. */
export interface ProbeChoice {
  fips: string
  /**
   * `housing units`: the most homes of the counties to fetch; `last run`: the most records the last run
   * found (the manifest); `first to fetch`: no figure for any of them.
   */
  by: 'housing units' | 'last run' | 'first to fetch'
}

/**
 * The county the probe goes to: of those to fetch, the one likely to hold the most records, so the one
 * most likely paged (issue 32: a probe to an empty first county learns nothing about paging). Records are
 * expected as the last run found them (the manifest) or, for the others, from housing units at the last
 * run's records per unit (one per unit without one: then only their order counts). Ties, and counties
 * with no figure at all, go to the order asked; with none anywhere, the first to fetch.
 */
export function probeTarget(needs: readonly CountyNeed[], sizes: CountySizes = {}): ProbeChoice | undefined {
  const fetch = needs.filter((c) => c.min > 0)
  if (fetch.length === 0) return undefined
  const expected = expectedRecords(sizes)
  let best: (ProbeChoice & {records: number}) | undefined
  for (const c of fetch) {
    const e = expected(c.fips)
    if (e && (best === undefined || e.records > best.records)) best = {fips: c.fips, ...e}
  }
  return best ? {fips: best.fips, by: best.by} : {fips: fetch[0]!.fips, by: 'first to fetch'}
}

/** A county's expected records, and where the figure came from; undefined with none. */
function expectedRecords(
  sizes: CountySizes,
): (fips: string) => {records: number; by: ProbeChoice['by']} | undefined {
  let records = 0
  let units = 0
  for (const [f, r] of sizes.lastRecords ?? []) {
    const u = sizes.housing?.(f)
    if (u) [records, units] = [records + r, units + u]
  }
  // a last run that found nothing says nothing about the proportion: housing units alone then
  const perUnit = records > 0 && units > 0 ? records / units : 1
  return (f) => {
    const last = sizes.lastRecords?.get(f)
    if (last !== undefined) return {records: last, by: 'last run'}
    const u = sizes.housing?.(f)
    return u === undefined ? undefined : {records: u * perUnit, by: 'housing units'}
  }
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

/** "2 h 35 min", "35 min", "18 s" (a short window, as a test server or a tight key has). */
export function fmtDuration(ms: number): string {
  if (ms < 59_500) return `${Math.round(ms / 1000)} s`
  const min = Math.round(ms / 60_000)
  if (min < 60) return `${min} min`
  return `${Math.floor(min / 60)} h${min % 60 ? ` ${String(min % 60).padStart(2, '0')} min` : ''}`
}

const n = count
/** "09:00 UTC", or "20:55:20 UTC" when the seconds matter (a short window). */
const hhmm = (ms: number) => {
  const t = new Date(ms).toISOString()
  return `${t.slice(11, t.slice(17, 19) === '00' ? 16 : 19)} UTC`
}

export interface Plan {
  /** Counties asked, in order. */
  counties: number
  needs: CountyNeed[]
  budget: Budget
  /** How the budget was learned: "one probe request to 06067", or why there was none. */
  budgetNote: string
  /** Requests the plan itself sent (the probe): 0 or 1. */
  probeRequests: number
  /** What the probe learned about its county, when it was sent. */
  probe?: ProbeFinding | undefined
  /** Why the probe went to its county. */
  probeChoice?: ProbeChoice | undefined
  /** What the probed county gave to scale the others by (probeScale); undefined when nothing. */
  scale?: Scale | undefined
  /** The fewest requests the counties to fetch can take. */
  requests: number
  /** The requests expected (known, measured or assumed: see the needs); undefined when some are unknown. */
  estimate: number | undefined
  /** `--max-requests`: the run stops after this many; the timings are for the requests it sends. */
  maxRequests?: number | undefined
  /** The time of the fewest requests. */
  timing: Timing
  /** The time of the estimate; undefined with it. */
  timingEstimate: Timing | undefined
  maxAge?: string | undefined
  /** `--where`: rows are filtered after fetching; the requests are those of the whole counties. */
  where?: string | undefined
  /** Counties named in the text when there are no more than this. */
  listUpTo?: number
  names?: (fips: string) => string
}

/** Build the plan from the counties' needs and the budget. */
export function makePlan(
  input: Omit<Plan, 'timing' | 'timingEstimate' | 'requests' | 'estimate'> & {
    nowMs: number
    reserve?: number | undefined
  },
): Plan {
  const requests = input.needs.reduce((s, c) => s + c.min, 0)
  const estimate = input.needs.every((c) => c.estimate !== undefined)
    ? input.needs.reduce((s, c) => s + c.estimate!, 0)
    : undefined
  const {nowMs, reserve, ...rest} = input
  const sent = (x: number) => (input.maxRequests === undefined ? x : Math.min(x, input.maxRequests))
  const time = (x: number) => planTiming(sent(x), input.budget, nowMs, reserve ?? 0)
  return {
    ...rest,
    requests,
    estimate,
    timing: time(requests),
    timingEstimate: estimate === undefined ? undefined : time(estimate),
  }
}

/** Ended in the checkpoint, refused or not: a rerun does not ask for them. */
const ended = (c: CountyNeed) => c.why === 'checkpoint' || c.why === 'refused before'
const toFetch = (p: Plan) => p.needs.filter((c) => c.why !== 'fresh' && !ended(c))
const exactPlan = (p: Plan) => p.needs.every(isExact)
const plural = (x: number, one: string, many: string) => `${n(x)} ${x === 1 ? one : many}`

/**
 * "15 requests" (known), "about 40 requests (at least 13)" (some assumed), "at least 58 requests (page
 * counts unknown)" (nothing to assume from).
 */
function requestsPhrase(p: Plan): string {
  if (exactPlan(p)) return plural(p.requests, 'request', 'requests')
  if (p.estimate !== undefined)
    return p.estimate === p.requests
      ? `at least ${plural(p.requests, 'request', 'requests')} (likely ${n(p.estimate)}: see Requests)`
      : `about ${n(p.estimate)} requests (at least ${n(p.requests)})`
  return `at least ${plural(p.requests, 'request', 'requests')} (page counts unknown)`
}

/**
 * The wait of a timing: "within the current window", or the windows after it and how long until the
 * last one opens. Windows after the next are taken to be an hour long (spec 8.2 states the limit per
 * hour; the X-RateLimit headers give only the current window's reset).
 */
function waitPhrase(t: Timing, window: string, bound: 'about' | 'at least', least = ''): string {
  if (t.waitMs === 0) return `within the current window (${window})`
  if (t.waitMs === undefined)
    return `more than the current window (${window}) and --reserve leaves no later window anything`
  const hour = t.windowsAfter > 1 ? ' (taken to be an hour long, spec 8.2)' : ''
  const more = `${bound === 'at least' ? 'at least ' : ''}${n(t.windowsAfter)} more at ${n(t.perWindow)} a window${hour}`
  return `${bound} ${fmtDuration(t.waitMs)} of waiting${least}: 1 window (${window}) plus ${more}, plus the time the last window's requests take`
}

/** The one summary line, e.g. "4 counties, about 40 requests (at least 13): about 18 s of waiting: …". */
export function planHeadline(p: Plan, nowMs: number): string {
  void nowMs
  const fetch = toFetch(p)
  const refused = fetch.filter((c) => c.why === 'not permitted').length
  const notes = [
    ...(fetch.length !== p.counties ? [`${n(fetch.length)} to fetch`] : []),
    ...(refused ? [`${n(refused)} not permitted`] : []),
  ]
  const counties = `${plural(p.counties, 'county', 'counties')}${notes.length ? ` (${notes.join(', ')})` : ''}`
  if (p.requests === 0) return `${counties}, no requests needed: every county is fresh or finished`
  const exact = exactPlan(p)
  const upper = p.estimate ?? p.requests
  // --max-requests: the run sends that many and stops; the time is for those
  const req =
    p.maxRequests !== undefined && (p.maxRequests < upper || p.estimate === undefined)
      ? `${requestsPhrase(p)}, this run at most ${n(p.maxRequests)} (--max-requests; rerun to continue)`
      : requestsPhrase(p)
  const b = p.budget
  const window =
    b.source === 'probe'
      ? `now ${n(b.remaining)} of ${n(b.limit)} left${b.resetAtMs !== undefined ? `, resets ${hhmm(b.resetAtMs)}` : ''}`
      : `the default ${n(b.limit)}/hour, window assumed full`
  // known requests, or a cap the least already reaches (the run sends exactly --max-requests): one time
  const capped = p.maxRequests !== undefined && p.maxRequests <= p.requests
  if (exact || capped) return `${counties}, ${req}: ${waitPhrase(p.timing, window, 'about')}`
  if (p.timingEstimate !== undefined) {
    // the least requests' wait beside the estimate's: a range, not a point
    const low = p.timing.waitMs
    const least =
      low === p.timingEstimate.waitMs || low === undefined
        ? ''
        : ` (at least ${low === 0 ? 'none' : fmtDuration(low)})`
    return `${counties}, ${req}: ${waitPhrase(p.timingEstimate, window, 'about', least)}`
  }
  // sizes unknown: only the least is known, and "within the current window" holds only for it
  if (p.timing.waitMs === 0)
    return `${counties}, ${req}: the current window holds ${n(p.requests)} (${window}); more windows if the counties take more pages`
  return `${counties}, ${req}: ${waitPhrase(p.timing, window, 'at least')}`
}

/** The Requests line's parts: how each group of counties was estimated. */
function requestsDetail(p: Plan): string[] {
  const fetch = toFetch(p)
  const of = (why: CountyNeed['why']) => fetch.filter((c) => c.why === why)
  const sum = (cs: CountyNeed[], k: 'min' | 'estimate') => cs.reduce((s, c) => s + (c[k] ?? 0), 0)
  const out: string[] = []
  const probe = p.probe
  const probed = of('probed')
  if (probe && probed.length) {
    const c = probed[0]!
    const total = probe.total != null ? ` (X-Total-Count ${n(probe.total)})` : ''
    const it = `${c.fips}${chosen(p)}`
    out.push(
      probe.answer === 'empty'
        ? `1 for ${it}: the probe found no records (404)`
        : !probe.next
          ? `1 for ${it}: it came whole in one answer${total}`
          : c.estimate !== undefined
            ? `${n(c.estimate)} for ${it}: ${plural(c.estimate, 'page', 'pages')} of ${n(probe.pageRecords!)}${total}`
            : `at least ${n(c.min)} for ${it}: it comes in pages, but the service did not say how many records it holds (no X-Total-Count)`,
    )
  }
  const others = (k: number) => (k === 1 ? 'the other county' : `the ${n(k)} other counties`)
  const scaled = of('scaled')
  const s = p.scale
  if (scaled.length && s)
    out.push(
      `about ${n(sum(scaled, 'estimate'))} for ${others(scaled.length)}, assumed to hold records in proportion to their housing units as ${s.fips} does (${n(s.records)} records to ${n(s.units)} homes in the 2010 Census), in pages of ${n(s.pageSize)} (at least ${n(sum(scaled, 'min'))}: one request each)`,
    )
  const assumed = of('assumed')
  if (assumed.length) {
    const each = probe && !probe.next ? 'assumed to come whole too' : 'assumed alike'
    const who = scaled.length
      ? `${plural(assumed.length, 'county', 'counties')} with no housing figure`
      : others(assumed.length)
    out.push(
      `about ${n(sum(assumed, 'estimate'))} for ${who}, ${each} (at least ${n(sum(assumed, 'min'))}: a smaller county takes fewer pages)`,
    )
  }
  const lastRun = of('last run')
  if (lastRun.length)
    out.push(
      `${n(sum(lastRun, 'min'))} for ${plural(lastRun.length, 'county', 'counties')} from the pages the last run recorded (the data may have grown)`,
    )
  const unknown = of('unknown')
  if (unknown.length)
    out.push(
      `at least ${n(unknown.length)} for ${plural(unknown.length, 'county', 'counties')} of unknown size (${unknownWhy(p)}): one request each when the service sends whole counties, one per page when it pages them`,
    )
  return out
}

/** Why the probe went to its county, when there was a choice: " (the most homes of the 254 to fetch)". */
function chosen(p: Plan): string {
  const k = toFetch(p).length
  if (k < 2 || !p.probeChoice) return ''
  if (p.probeChoice.by === 'housing units') return ` (the most homes of the ${n(k)} to fetch)`
  if (p.probeChoice.by === 'last run') return ` (the most records in the last run of the ${n(k)} to fetch)`
  return ' (the first to fetch: no size known for any)'
}

/** Why nothing could be assumed about the counties the probe did not see. */
function unknownWhy(p: Plan): string {
  if (!p.probe) return p.probeRequests ? 'the probe learned nothing' : 'no probe sent'
  if (p.probe.answer === 'not permitted') return `the probe to ${p.probe.fips} was refused`
  if (p.probe.answer === 'empty') return `the probed county ${p.probe.fips} is empty`
  if (p.probe.answer === 'none') return 'the probe got no answer about its county'
  return `${p.probe.fips} is paged but did not say its size`
}

/** The plan as text: the headline, then counties, requests, budget and what was sent, one line each. */
export function renderPlan(p: Plan, nowMs: number): string {
  const fresh = p.needs.filter((c) => c.why === 'fresh')
  const fromCheckpoint = p.needs.filter(ended)
  const fetch = toFetch(p)
  const lines = [planHeadline(p, nowMs)]
  const counties = [`${n(p.counties)} asked`]
  if (fresh.length) counties.push(`${n(fresh.length)} fresh (finished less than ${p.maxAge} ago), skipped`)
  if (fromCheckpoint.length) counties.push(`${n(fromCheckpoint.length)} already ended in the checkpoint`)
  counties.push(`${n(fetch.length)} to fetch`)
  lines.push(`Counties   ${counties.join('; ')}`)
  if (fetch.length > 0 && fetch.length <= (p.listUpTo ?? 20))
    lines.push(`           ${fetch.map((c) => (p.names ? p.names(c.fips) : c.fips)).join('; ')}`)
  const refused = fetch.filter((c) => c.why === 'not permitted')
  for (const c of refused)
    lines.push(
      `Refused    ${p.names ? p.names(c.fips) : c.fips}: not permitted for this key (HTTP 403 to the probe): 1 request (the refusal), no data. The key may be limited to other counties too: \`sfl keys check --fips CODE\` tells, one request each`,
    )
  const before = p.needs.filter((c) => c.why === 'refused before')
  if (before.length)
    lines.push(
      `Refused    ${before.map((c) => (p.names && before.length <= (p.listUpTo ?? 20) ? p.names(c.fips) : c.fips)).join('; ')}: not permitted for this key (HTTP 403 in the checkpoint's run); not asked again`,
    )
  const req = requestsDetail(p)
  if (req.length) lines.push(`Requests   ${req.join('; ')}`)
  if (p.where !== undefined) lines.push(`Filter     ${WHERE_NOTE}`)
  const b = p.budget
  lines.push(
    b.source === 'probe'
      ? `Budget     ${n(b.remaining)} of ${n(b.limit)} left this window${b.resetAtMs !== undefined ? `, resets ${hhmm(b.resetAtMs)}` : ''} (${p.budgetNote})`
      : `Budget     the default ${n(b.limit)} requests/hour (spec 8.2), window assumed full: ${p.budgetNote}`,
  )
  lines.push(
    `Sent       ${p.probeRequests} ${p.probeRequests === 1 ? 'request (the probe; counted in the budget above)' : 'requests'}; nothing was exported`,
  )
  return `${lines.join('\n')}\n`
}

/**
 * What --where does to a plan: nothing to its requests. The service has no filter parameter (spec 4: fips, address, apn, property_id only), so
 * every record of a county is fetched and the rows are filtered here (docs/exports.md, "Filters").
 */
export const WHERE_NOTE =
  '--where: rows are filtered after fetching, so the requests are those of the whole counties (the same as without it)'

/** `county-export --dry-run --json`: the plan for scripts (docs/exports.md, "Nationwide runs"). */
export interface PlanDocument {
  counties: number
  fresh: string[]
  endedInCheckpoint: string[]
  toFetch: string[]
  /**
   * Counties the key is not permitted for (403): the probed one (one request, no data), and those the
   * checkpoint's run was refused (not asked again).
   */
  notPermitted: string[]
  /** The fewest requests the run can take. */
  requests: number
  /** true when every county's requests are known (not assumed): `requests` is then what the run takes. */
  requestsExact: boolean
  /** The requests expected (some assumed, see estimateBasis); null when the counties' sizes are unknown. */
  requestsEstimate: number | null
  /** How the estimate was made, as the text says it; null when nothing was estimated. */
  estimateBasis: string | null
  probe: ProbeFinding | null
  /** Why the probe went to its county (ProbeChoice): `housing units`, `last run`, `first to fetch`. */
  probeChosenBy: ProbeChoice['by'] | null
  maxRequests: number | null
  /** What `waitSeconds` is for: `requests`, or fewer under --max-requests. */
  requestsThisRun: number
  budget: {source: Budget['source']; limit: number; remaining: number; resetAt: string | null; note: string}
  /** For `requests`, the least: windows after the current one and the wait until the last opens. */
  windowsAfterCurrent: number | null
  waitSeconds: number | null
  /** The same for `requestsEstimate`; null without one. */
  windowsAfterCurrentEstimate: number | null
  waitSecondsEstimate: number | null
  /** Requests the plan sent (the probe), already counted in budget.remaining. */
  probeRequests: number
  /** `--where` as given, or null: it filters rows after fetching and changes no figure above. */
  where: string | null
}

const windows = (t: Timing | undefined) =>
  t === undefined || !Number.isFinite(t.windowsAfter) ? null : t.windowsAfter
const seconds = (t: Timing | undefined) =>
  t === undefined || t.waitMs === undefined ? null : Math.round(t.waitMs / 1000)

/** The plan for scripts: stable keys, times as ISO 8601 and seconds. */
export function planJson(p: Plan): PlanDocument {
  const fetch = toFetch(p)
  const detail = requestsDetail(p)
  return {
    counties: p.counties,
    fresh: p.needs.filter((c) => c.why === 'fresh').map((c) => c.fips),
    endedInCheckpoint: p.needs.filter(ended).map((c) => c.fips),
    toFetch: fetch.map((c) => c.fips),
    notPermitted: p.needs
      .filter((c) => c.why === 'not permitted' || c.why === 'refused before')
      .map((c) => c.fips),
    requests: p.requests,
    requestsExact: exactPlan(p),
    requestsEstimate: p.estimate ?? null,
    estimateBasis: detail.length ? detail.join('; ') : null,
    probe: p.probe ?? null,
    probeChosenBy: p.probe ? (p.probeChoice?.by ?? null) : null,
    maxRequests: p.maxRequests ?? null,
    requestsThisRun: p.timing.requests,
    budget: {
      source: p.budget.source,
      limit: p.budget.limit,
      remaining: p.budget.remaining,
      resetAt: p.budget.resetAtMs === undefined ? null : new Date(p.budget.resetAtMs).toISOString(),
      note: p.budgetNote,
    },
    windowsAfterCurrent: windows(p.timing),
    waitSeconds: seconds(p.timing),
    windowsAfterCurrentEstimate: windows(p.timingEstimate),
    waitSecondsEstimate: seconds(p.timingEstimate),
    probeRequests: p.probeRequests,
    where: p.where ?? null,
  }
}
