import {LogSketch, RELATIVE_ERROR} from './sketch.js'

/**
 * One metric's values for quantiles in constant memory: kept exactly up to `bound` values, then moved into a
 * LogSketch (1% relative error) for good, so a whole-country run (~150 million records) costs the same
 * memory as a county. Quantiles interpolate between the two values around rank q (n - 1) (the usual
 * "linear" definition, numpy's default); from the sketch each of those two values is within the relative
 * error, so the figure is too (for values of one sign), and it is reported as approximate.
 */
export const EXACT_BOUND = 100_000

export interface Quantiles {
  count: number
  /** Values in `qs` order; null when there are no values. */
  values: Array<number | null>
  /** True when the figures come from the sketch (each within `relativeError` of the exact one). */
  approximate: boolean
}

export class QuantileTracker {
  private exact: Float64Array | undefined = new Float64Array(64)
  private sketch: LogSketch | undefined
  count = 0

  constructor(readonly bound = EXACT_BOUND) {}

  get approximate(): boolean {
    return this.sketch !== undefined
  }

  add(x: number): void {
    if (this.sketch) {
      this.sketch.add(x)
      this.count++
      return
    }
    if (this.count === this.bound) {
      this.toSketch()
      this.sketch!.add(x)
      this.count++
      return
    }
    let buf = this.exact!
    if (this.count === buf.length) {
      const grown = new Float64Array(Math.min(this.bound, buf.length * 2))
      grown.set(buf)
      this.exact = buf = grown
    }
    buf[this.count++] = x
  }

  /** Add `other`'s values; beyond the bound (or when either is a sketch already) the result is a sketch. */
  merge(other: QuantileTracker): void {
    if (other.count === 0) return
    if (!this.sketch && !other.sketch && this.count + other.count <= this.bound) {
      for (let i = 0; i < other.count; i++) this.add(other.exact![i]!)
      return
    }
    this.toSketch()
    if (other.sketch) this.sketch!.merge(other.sketch)
    else for (let i = 0; i < other.count; i++) this.sketch!.add(other.exact![i]!)
    this.count += other.count
  }

  /** Keep at most `keep` values exactly: a tracker set aside (a county passed by) shrinks to its sketch. */
  compact(keep: number): void {
    if (!this.sketch && this.count > keep) this.toSketch()
    else if (!this.sketch && this.exact!.length > Math.max(64, this.count))
      this.exact = this.exact!.slice(0, Math.max(64, this.count))
  }

  quantiles(qs: readonly number[]): Quantiles {
    const n = this.count
    if (n === 0) return {count: 0, values: qs.map(() => null), approximate: false}
    const at = qs.map((q) => q * (n - 1))
    const ranks = at.flatMap((r) => [Math.floor(r), Math.ceil(r)])
    let v: number[]
    if (this.sketch) v = this.sketch.atRanks(ranks)
    else {
      const sorted = this.exact!.slice(0, n).sort()
      v = ranks.map((r) => sorted[r]!)
    }
    return {
      count: n,
      values: at.map((r, i) => interpolate(v[2 * i]!, v[2 * i + 1]!, r - Math.floor(r))),
      approximate: this.approximate,
    }
  }

  private toSketch(): void {
    if (this.sketch) return
    const s = new LogSketch(RELATIVE_ERROR)
    for (let i = 0; i < this.count; i++) s.add(this.exact![i]!)
    this.sketch = s
    this.exact = undefined
  }
}

function interpolate(lo: number, hi: number, w: number): number {
  return w === 0 ? lo : lo + (hi - lo) * w
}
