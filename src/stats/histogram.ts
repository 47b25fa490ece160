import {EXACT_BOUND, QuantileTracker, type ExactPool, type Quantiles} from './quantiles.js'
import {linearQuantiles, mergeRuns, valuesAtRanks, type Runs} from './ranks.js'

/**
 * Quantiles of an integer field with a small range (ConfidenceScore, spec 2.1: int, 0 to 100): one count
 * per value, so the figures are exact at any size, in the same few hundred bytes for ten records or a
 * country, and merging two is adding counts. A sketch would be needless here (and was: at 150,000 records
 * it printed ≈68.7 for an exact 69). A value outside the range or not an integer, which the spec does not
 * allow, is still counted: it goes to a QuantileTracker (exact up to its bound), and the figures come from
 * both; they are approximate only if that tracker has gone to its sketch.
 */
export class IntHistogram {
  private readonly counts: Float64Array
  private readonly others: QuantileTracker
  count = 0

  constructor(
    readonly min: number,
    readonly max: number,
    bound = EXACT_BOUND,
    pool?: ExactPool,
  ) {
    this.counts = new Float64Array(max - min + 1)
    this.others = new QuantileTracker(bound, pool)
  }

  get approximate(): boolean {
    return this.others.approximate
  }

  /** Exact-value slots held for out-of-range values (the counts themselves are a fixed few hundred bytes). */
  get held(): number {
    return this.others.held
  }

  add(x: number): void {
    this.count++
    const i = x - this.min
    // counts are doubles: exact up to 2^53 records
    if (Number.isInteger(x) && i >= 0 && i < this.counts.length) this.counts[i]!++
    else this.others.add(x)
  }

  merge(other: IntHistogram): void {
    if (other.min !== this.min || other.max !== this.max) throw new Error('histograms of different ranges')
    for (let i = 0; i < this.counts.length; i++) this.counts[i]! += other.counts[i]!
    this.others.merge(other.others)
    this.count += other.count
  }

  /** Only the out-of-range values can be compacted (see QuantileTracker.compact). */
  compact(keep: number): void {
    this.others.compact(keep)
  }

  quantiles(qs: readonly number[]): Quantiles {
    const n = this.count
    if (n === 0) return {count: 0, values: qs.map(() => null), approximate: false}
    const inRange: Runs = (emit) => this.counts.forEach((c, i) => c > 0 && emit(this.min + i, c))
    let runs = inRange
    if (this.others.count > 0) {
      const few: Array<[number, number]> = []
      inRange((v, c) => few.push([v, c]))
      runs = mergeRuns(few, this.others.runs())
    }
    const values = linearQuantiles(n, qs, (ranks) => valuesAtRanks(runs, ranks))
    return {count: n, values, approximate: this.approximate}
  }
}
