import {IntHistogram} from './histogram.js'
import {EXACT_BOUND, ExactPool, QuantileTracker} from './quantiles.js'
import {RELATIVE_ERROR} from './sketch.js'

/**
 * Run statistics over export records, fed one record at a time, in bounded memory: counts are exact, the
 * ConfidenceScore median exact at any size (a histogram, src/stats/histogram.ts), the quantiles of money and
 * rates exact up to EXACT_BOUND values per metric and within RELATIVE_ERROR beyond (src/stats/quantiles.ts).
 * Pure: no I/O; the record arrives as the few facts it needs (src/stats/facts.ts reads them from a record).
 */

/**
 * The exact values one accumulator holds at most, as a multiple of its bound: a record gives at most three
 * (FinalValue, its loan's rate and equity), so up to `bound` records every metric is exact, and however many
 * loan types arrive, the memory stays 3 x 8 bytes x bound (24 MB at the default bound).
 */
export const POOL_PER_BOUND = 3

/** The yes/no fields reported as shares (spec 2.1; the boolean? ones may be null: "unknown"). */
export const FLAG_FIELDS = [
  'FHAEligible',
  'VAEligible',
  'USDAAreaEligible',
  'Assumable',
  'FHACondoEligible',
] as const
export type FlagField = (typeof FLAG_FIELDS)[number]

/** Spec 2.1 CRAEligible allowed values, in income order; anything else seen is listed after them. */
export const CRA_LEVELS = ['Low', 'Moderate', 'Middle', 'Upper', 'Not Available'] as const
/** Spec 2.2 LoanType values (FHA, VA, USDA loans are the assumable ones, rule 1). */
export const LOAN_TYPES = ['FHA', 'VA', 'USDA'] as const

/** Distinct CRA levels or loan types kept by name: a stream of ever-new values cannot grow memory. */
export const MAX_CATEGORIES = 32
export const OTHER = '(other)'

/** What the statistics read from one record. null / undefined: the field is absent, null or unreadable. */
export interface RecordFacts {
  flags: Array<boolean | null>
  cra: string | null
  finalValue: number | undefined
  confidence: number | undefined
  /** Whether the record carries an AssumableMortgage object (spec 2.2; null or omitted when none). */
  loan: boolean
  loanType: string | null
  rate: number | undefined
  equity: number | undefined
}

export function emptyFacts(): RecordFacts {
  return {
    flags: FLAG_FIELDS.map(() => null),
    cra: null,
    finalValue: undefined,
    confidence: undefined,
    loan: false,
    loanType: null,
    rate: undefined,
    equity: undefined,
  }
}

export interface FlagShare {
  true: number
  false: number
  /** Records where the field is null or absent. */
  unknown: number
  /** Share of true among the known values, percent to one decimal; null when none is known. */
  percent: number | null
}

export interface Level {
  level: string
  count: number
  /** Of all records, percent to one decimal. */
  percent: number
}

export interface Spread {
  count: number
  p25: number | null
  median: number | null
  p75: number | null
  approximate: boolean
}

export interface Median {
  count: number
  median: number | null
  approximate: boolean
}

export interface LoanTypeStats {
  LoanType: string
  count: number
  EstimatedInterestRate: Median
  EstimatedEquity: Median
}

/** The statistics of a set of records (the JSON shape's `run` and each `counties[]` entry). */
export interface StatsReport {
  records: number
  flags: Record<FlagField, FlagShare>
  /** Counts per CRAEligible value, allowed values first (spec 2.1), then others; `unknown`: null or absent. */
  CRAEligible: {levels: Level[]; unknown: number}
  FinalValue: Spread
  ConfidenceScore: Median
  /** Records with an AssumableMortgage object, by its LoanType (FHA, VA, USDA first). */
  assumableLoans: LoanTypeStats[]
}

class Loans {
  count = 0
  readonly rate: QuantileTracker
  readonly equity: QuantileTracker
  constructor(bound: number, pool: ExactPool) {
    this.rate = new QuantileTracker(bound, pool)
    this.equity = new QuantileTracker(bound, pool)
  }
}

export class StatsAccumulator {
  records = 0
  private readonly flagTrue = new Array<number>(FLAG_FIELDS.length).fill(0)
  private readonly flagFalse = new Array<number>(FLAG_FIELDS.length).fill(0)
  private readonly cra = new Map<string, number>()
  private craUnknown = 0
  private readonly finalValue: QuantileTracker
  /** Spec 2.1: ConfidenceScore is an int, 0 to 100. */
  private readonly confidence: IntHistogram
  private readonly loans = new Map<string, Loans>()
  private readonly pool: ExactPool

  /**
   * Exact up to `bound` values per metric, drawn from `pool` (by default one of its own, POOL_PER_BOUND x
   * bound slots; src/stats/grouped.ts gives its counties one shared pool).
   */
  constructor(
    private readonly bound = EXACT_BOUND,
    pool?: ExactPool,
  ) {
    this.pool = pool ?? new ExactPool(POOL_PER_BOUND * bound)
    this.finalValue = new QuantileTracker(bound, this.pool)
    this.confidence = new IntHistogram(0, 100, bound, this.pool)
  }

  /** Exact-value slots held by this accumulator's trackers (8 bytes each). */
  get held(): number {
    let n = this.finalValue.held + this.confidence.held
    for (const l of this.loans.values()) n += l.rate.held + l.equity.held
    return n
  }

  add(f: RecordFacts): void {
    this.records++
    for (let i = 0; i < FLAG_FIELDS.length; i++) {
      const v = f.flags[i]
      if (v === true) this.flagTrue[i]!++
      else if (v === false) this.flagFalse[i]!++
    }
    if (f.cra === null) this.craUnknown++
    else bump(this.cra, f.cra, 1)
    if (f.finalValue !== undefined) this.finalValue.add(f.finalValue)
    if (f.confidence !== undefined) this.confidence.add(f.confidence)
    if (f.loan) {
      const l = this.loansOf(f.loanType ?? '(none)')
      l.count++
      if (f.rate !== undefined) l.rate.add(f.rate)
      if (f.equity !== undefined) l.equity.add(f.equity)
    }
  }

  /** Add every record `other` has seen (a page into its county, a county into the run). */
  merge(other: StatsAccumulator): void {
    this.records += other.records
    for (let i = 0; i < FLAG_FIELDS.length; i++) {
      this.flagTrue[i]! += other.flagTrue[i]!
      this.flagFalse[i]! += other.flagFalse[i]!
    }
    this.craUnknown += other.craUnknown
    for (const [k, c] of other.cra) bump(this.cra, k, c)
    this.finalValue.merge(other.finalValue)
    this.confidence.merge(other.confidence)
    for (const [k, l] of other.loans) {
      const mine = this.loansOf(k)
      mine.count += l.count
      mine.rate.merge(l.rate)
      mine.equity.merge(l.equity)
    }
  }

  /** Shrink to sketches beyond `keep` exact values per metric (an accumulator set aside, still open). */
  compact(keep: number): void {
    this.finalValue.compact(keep)
    this.confidence.compact(keep)
    for (const l of this.loans.values()) {
      l.rate.compact(keep)
      l.equity.compact(keep)
    }
  }

  report(): StatsReport {
    const n = this.records
    const flags = {} as Record<FlagField, FlagShare>
    FLAG_FIELDS.forEach((name, i) => {
      const t = this.flagTrue[i]!
      const f = this.flagFalse[i]!
      flags[name] = {true: t, false: f, unknown: n - t - f, percent: t + f ? pct(t, t + f) : null}
    })
    const known = CRA_LEVELS.filter((l) => this.cra.has(l))
    const others = [...this.cra.keys()]
      .filter((k) => !(CRA_LEVELS as readonly string[]).includes(k))
      .sort(byCountThenName(this.cra))
    const fv = this.finalValue.quantiles([0.25, 0.5, 0.75])
    const cs = this.confidence.quantiles([0.5])
    const loanOrder = [
      ...LOAN_TYPES.filter((t) => this.loans.has(t)),
      ...[...this.loans.keys()]
        .filter((k) => !(LOAN_TYPES as readonly string[]).includes(k))
        .sort(byCountThenName(new Map([...this.loans].map(([k, l]) => [k, l.count])))),
    ]
    return {
      records: n,
      flags,
      CRAEligible: {
        levels: [...known, ...others].map((level) => {
          const count = this.cra.get(level)!
          return {level, count, percent: pct(count, n)}
        }),
        unknown: this.craUnknown,
      },
      FinalValue: {
        count: fv.count,
        p25: fv.values[0]!,
        median: fv.values[1]!,
        p75: fv.values[2]!,
        approximate: fv.approximate,
      },
      ConfidenceScore: median(cs.count, cs.values[0]!, cs.approximate),
      assumableLoans: loanOrder.map((LoanType) => {
        const l = this.loans.get(LoanType)!
        const r = l.rate.quantiles([0.5])
        const e = l.equity.quantiles([0.5])
        return {
          LoanType,
          count: l.count,
          EstimatedInterestRate: median(r.count, r.values[0]!, r.approximate),
          EstimatedEquity: median(e.count, e.values[0]!, e.approximate),
        }
      }),
    }
  }

  private loansOf(type: string): Loans {
    const key = this.loans.has(type) || this.loans.size < MAX_CATEGORIES ? type : OTHER
    let l = this.loans.get(key)
    if (!l) this.loans.set(key, (l = new Loans(this.bound, this.pool)))
    return l
  }
}

/** A count under `key`, or under OTHER once MAX_CATEGORIES names are kept. */
function bump(m: Map<string, number>, key: string, by: number): void {
  const c = m.get(key)
  if (c !== undefined) m.set(key, c + by)
  else if (m.size < MAX_CATEGORIES) m.set(key, by)
  else m.set(OTHER, (m.get(OTHER) ?? 0) + by)
}

const pct = (part: number, whole: number) => Math.round((part / whole) * 1000) / 10

const median = (count: number, value: number | null, approximate: boolean): Median => ({
  count,
  median: value,
  approximate,
})

const byCountThenName = (m: Map<string, number>) => (a: string, b: string) =>
  m.get(b)! - m.get(a)! || (a < b ? -1 : a > b ? 1 : 0)

/** The relative error of approximate figures (for the JSON document and the table's footnote). */
export {RELATIVE_ERROR}
