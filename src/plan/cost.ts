/**
 * What a county of a batch (`lookup --input`) costs, in requests, and which way is cheaper: a lookup per
 * distinct row, or a scan of the county-wide form (spec 1: "leaving out the address returns all eligible
 * records for the county") whose records answer the rows they match exactly, followed by lookups for the
 * rows they did not. Pure: the figures come in, a decision goes out; src/jobs/batch-scan.ts acts on it
 * page by page. docs/exports.md ("Lists of properties") states the guarantee these rules keep.
 *
 * The rules, per county, with u the county's lookups the scan could still replace and e the requests a
 * lookup is expected to take (the ladder's, see LadderCost):
 *
 * - the length known (1 page when the service sent the county in one body; the pages a previous run's
 *   manifest recorded; X-Total-Count over the first page's records): fetch the next page while the pages
 *   left cost less than the lookups they can replace (pages left < u·e). A county that would cost as
 *   much as its lookups is never scanned, and a scan that finishes costs what the scan plan costs.
 * - the length unknown (the service pages but does not say how many records it holds): the ski-rental
 *   rule. Scanning is renting at one request a page for an unknown number of pages; switching to the
 *   lookups is buying at a known price, u·e. Fetch the next page only while the pages fetched stay below
 *   that price. Whatever the county's length, the run then spends at most about twice the cheaper plan:
 *   the pages it gave up on cost less than the lookups they were meant to replace.
 * - the first page is a probe (it tells whether the county comes whole, and its length when the service
 *   says so): sent only when there are at least two lookups' worth to replace, so a county of one row is
 *   never probed. When the plan then keeps to lookups, the run spent one request more than per-row lookups.
 * - no row is ever looked up twice, and a row the scan answered is never looked up.
 */
export type PlanFlag = 'auto' | 'lookups' | 'scan'

/** A county's cost figures at one moment of the run. */
export interface CountyCost {
  /** Distinct lookups of the county that are not answered yet (the lookups a scan could still replace). */
  lookups: number
  /** Requests a lookup is expected to take (1, more with --unit-fallback: LadderCost). */
  perLookup: number
  /** The county-wide form's pages, when known (1: it comes whole in one body). */
  pages?: number | undefined
}

/** The first step for a county: no scan, a scan of known length, or a first page that decides (the probe). */
export type FirstStep = 'lookups' | 'scan' | 'probe'

/**
 * Before any page of the county is fetched: what to do. `--plan lookups` never scans, `--plan scan` always
 * does; `auto` scans a county of known length when its pages cost less than its lookups, probes a county
 * of unknown length when it has at least two lookups' worth to replace, and otherwise keeps to lookups.
 *
 * @example firstStep('auto', {lookups: 10_000, perLookup: 1, pages: 400}) // 'scan'
 * @example firstStep('auto', {lookups: 30, perLookup: 1, pages: 400}) // 'lookups'
 */
export function firstStep(plan: PlanFlag, c: CountyCost): FirstStep {
  if (plan === 'lookups') return 'lookups'
  if (plan === 'scan') return 'scan'
  const price = c.lookups * c.perLookup
  if (c.pages !== undefined) return c.pages < price ? 'scan' : 'lookups'
  return price >= 2 ? 'probe' : 'lookups'
}

/**
 * After `fetched` pages, with a next page linked: fetch it? `--plan scan` always, `--plan lookups` never (it
 * fetched none); `auto` by the rules above: the pages left against the lookups they can replace when the
 * length is known, the pages fetched against them (ski rental) when it is not.
 *
 * @example nextPage('auto', 1, {lookups: 30, perLookup: 1, pages: 400}) // false: 399 pages for 30 lookups
 * @example nextPage('auto', 3, {lookups: 30, perLookup: 1}) // true: 3 pages so far, under the 30 lookups
 */
export function nextPage(plan: PlanFlag, fetched: number, c: CountyCost): boolean {
  if (plan !== 'auto') return plan === 'scan'
  const price = c.lookups * c.perLookup
  if (c.pages !== undefined) return c.pages - fetched < price
  return fetched < price
}

/**
 * The pages of a county-wide answer from its first page: 1 when no next page is linked (the county came
 * whole), X-Total-Count over the first page's records when the service said both, else unknown.
 */
export function pagesFrom(first: {
  next: boolean
  total?: number | null
  pageRecords?: number | null
}): number | undefined {
  if (!first.next) return 1
  const {total, pageRecords} = first
  if (total == null || pageRecords == null || pageRecords <= 0 || !Number.isSafeInteger(total))
    return undefined
  return Math.max(2, Math.ceil(total / pageRecords))
}

/**
 * The requests a lookup takes, learned as the run goes (issue 33: "the ladder's expected requests"). A
 * batch sends one form of an address, and with --unit-fallback a second (the address without its unit)
 * when the first is not found (src/jobs/batch-lookup.ts): a lookup without a unit, or without the fallback,
 * takes exactly one request. The share of unit lookups that needed the second is counted, starting from
 * one in two (a prior of one of each), so the first figures are neither 1 nor 2.
 */
export class LadderCost {
  private unitLookups = 0
  private fallbacks = 0

  constructor(readonly unitFallback: boolean) {}

  /** A unit lookup was answered after `requests` forms (1 or 2). */
  observe(requests: number): void {
    this.unitLookups++
    if (requests > 1) this.fallbacks++
  }

  /** The expected requests of one unit lookup now. */
  get perUnitLookup(): number {
    return this.unitFallback ? 1 + (this.fallbacks + 1) / (this.unitLookups + 2) : 1
  }

  /** Expected requests per lookup of a county with `lookups` distinct lookups, `withUnit` of them with a unit. */
  perLookup(lookups: number, withUnit: number): number {
    if (lookups === 0) return 1
    return (lookups - withUnit + withUnit * this.perUnitLookup) / lookups
  }

  /** The most a unit lookup can take. */
  get maxPerUnitLookup(): number {
    return this.unitFallback ? 2 : 1
  }
}

/** A range of requests: the fewest the county can take, and the most the rules allow. */
export interface RequestRange {
  min: number
  max: number
}

/** What a county's range is worked out from. */
export interface RangeFigures {
  /** Distinct lookups not answered yet. */
  lookups: number
  /** Of them, lookups a record can answer (the scan's to replace). */
  replaceable: number
  /** Requests a lookup is expected to take, and the most it can take. */
  perLookup: number
  maxPerLookup: number
  /** The county's length, when known. */
  pages?: number | undefined
}

/**
 * The requests a county will take under the rules, before anything is known of its matches: the fewest
 * (every row the scan could answer answered by it) and the most (none answered, and a scan of unknown
 * length given up at the latest page the ski-rental rule allows). A forced scan of unknown length has no
 * upper bound but the county's own length.
 */
export function requestRange(step: FirstStep, c: RangeFigures): RequestRange {
  const most = Math.ceil(c.lookups * c.maxPerLookup)
  if (c.lookups === 0) return {min: 0, max: 0}
  if (step === 'lookups') return {min: c.lookups, max: most}
  const others = c.lookups - c.replaceable
  if (c.pages !== undefined) return {min: c.pages + others, max: c.pages + most}
  if (step === 'probe')
    return {min: 1 + others, max: Math.max(1, Math.ceil(c.replaceable * c.perLookup)) + most}
  return {min: 1 + others, max: Number.POSITIVE_INFINITY}
}
