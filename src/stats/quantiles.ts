import {linearQuantiles, selectRanks, type Runs} from './ranks.js'
import {LogSketch, RELATIVE_ERROR} from './sketch.js'

/**
 * One metric's values for quantiles in bounded memory: kept exactly (8 bytes a value, a Float64Array) up to
 * `bound` values, then moved into a LogSketch (1% relative error) for good, so a whole-country run (~150
 * million records) costs the same memory as a large county. Quantiles are the "linear" definition
 * (src/stats/ranks.ts): exact from the values, and from the sketch within RELATIVE_ERROR of the two values
 * either side of the rank (of the figure itself, for values of one sign), reported as approximate.
 *
 * The exact values are also drawn from an ExactPool, which a whole set of figures shares (a StatsAccumulator's
 * metrics; every county of a GroupedStats): a tracker the pool cannot grow goes to its sketch early, so the
 * memory of many metrics or many counties is the pool's size, not their number times `bound`.
 */
export const EXACT_BOUND = 1_000_000

/** Slots a tracker takes at first; it doubles from there, within its bound and what the pool grants. */
const FIRST_SLOTS = 16

export interface Quantiles {
  count: number
  /** Values in `qs` order; null when there are no values. */
  values: Array<number | null>
  /** True when the figures come from the sketch (each within `relativeError` of the exact one). */
  approximate: boolean
}

/**
 * Slots for exact values (8 bytes each) shared by trackers. `take` grants slots while any are free; when too
 * few are, it first asks `reclaim` (set by an owner that can give some back, src/stats/grouped.ts).
 */
export class ExactPool {
  private used = 0
  /** Asked to free at least `slots` slots (by sending trackers to their sketches) before a take fails. */
  reclaim: ((slots: number) => void) | undefined

  constructor(readonly size: number) {}

  /** Slots held now (never above `size`). */
  get held(): number {
    return this.used
  }

  /** At least `min` and at most `max` slots, or none (0) when even `min` cannot be had. */
  take(min: number, max: number): number {
    if (this.size - this.used < min && this.reclaim) this.reclaim(min - (this.size - this.used))
    const free = this.size - this.used
    if (free < min) return 0
    const n = Math.min(max, free)
    this.used += n
    return n
  }

  give(slots: number): void {
    this.used -= slots
  }
}

const NONE = new Float64Array(0)

export class QuantileTracker {
  private exact: Float64Array = NONE
  private sketch: LogSketch | undefined
  private readonly pool: ExactPool
  private nan = false
  count = 0

  /** Exact up to `bound` values, drawn from `pool` (by default a pool of its own, `bound` slots). */
  constructor(
    readonly bound = EXACT_BOUND,
    pool?: ExactPool,
  ) {
    this.pool = pool ?? new ExactPool(bound)
  }

  get approximate(): boolean {
    return this.sketch !== undefined
  }

  /** Exact-value slots this tracker holds (its share of the pool). */
  get held(): number {
    return this.exact.length
  }

  add(x: number): void {
    if (x !== x) this.nan = true // NaN: its exact values are sorted, not selected (ranks.ts selectRanks)
    if (!this.sketch && (this.count < this.exact.length || this.reserve(this.count + 1))) {
      this.exact[this.count++] = x
      return
    }
    this.toSketch()
    this.sketch!.add(x)
    this.count++
  }

  /** Add `other`'s values: exact while both are and the total fits (bound and pool), else a sketch. */
  merge(other: QuantileTracker): void {
    if (other.count === 0) return
    this.nan ||= other.nan
    if (!this.sketch && !other.sketch && this.reserve(this.count + other.count)) {
      this.exact.set(other.exact.subarray(0, other.count), this.count)
      this.count += other.count
      return
    }
    this.toSketch()
    if (other.sketch) this.sketch!.merge(other.sketch)
    else for (let i = 0; i < other.count; i++) this.sketch!.add(other.exact[i]!)
    this.count += other.count
  }

  /** Keep at most `keep` values exactly (the rest of the figures in the sketch); slack goes back to the pool. */
  compact(keep: number): void {
    if (this.sketch) return
    if (this.count > keep) this.toSketch()
    else if (this.exact.length > this.count) this.resize(this.count)
  }

  quantiles(qs: readonly number[]): Quantiles {
    const n = this.count
    if (n === 0) return {count: 0, values: qs.map(() => null), approximate: false}
    let pick: (ranks: number[]) => number[]
    if (this.sketch) pick = (ranks) => this.sketch!.atRanks(ranks)
    else if (!this.nan) pick = (ranks) => selectRanks(this.exact.subarray(0, n), ranks)
    else {
      const sorted = this.exact.slice(0, n).sort()
      pick = (ranks) => ranks.map((r) => sorted[r]!)
    }
    return {count: n, values: linearQuantiles(n, qs, pick), approximate: this.approximate}
  }

  /** The values in ascending order as runs (each exact value its own; the sketch's buckets). */
  runs(): Runs {
    if (this.sketch) {
      const s = this.sketch
      return (emit) => s.runs(emit)
    }
    const sorted = this.exact.slice(0, this.count).sort()
    return (emit) => sorted.forEach((v) => emit(v, 1))
  }

  /** Room for `n` exact values: within the bound, growing by doubling as far as the pool grants. */
  private reserve(n: number): boolean {
    const have = this.exact.length
    if (n <= have) return true
    if (n > this.bound) return false
    const want = Math.min(this.bound, Math.max(n, FIRST_SLOTS, 2 * have))
    const got = this.pool.take(n - have, want - have)
    if (got === 0) return false
    this.resize(have + got, got)
    return true
  }

  /** A new array of `slots` (already taken from the pool when `taken`; the difference is given back). */
  private resize(slots: number, taken = 0): void {
    const next = new Float64Array(slots)
    next.set(this.exact.subarray(0, this.count))
    this.pool.give(this.exact.length + taken - slots)
    this.exact = next
  }

  private toSketch(): void {
    if (this.sketch) return
    const s = new LogSketch(RELATIVE_ERROR)
    for (let i = 0; i < this.count; i++) s.add(this.exact[i]!)
    this.sketch = s
    this.pool.give(this.exact.length)
    this.exact = NONE
  }
}
