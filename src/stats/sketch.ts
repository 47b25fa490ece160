/**
 * A log-bucket quantile sketch in the style of DDSketch (Masson, Rim, Lee, VLDB 2019): a value x is
 * counted in bucket ceil(log_gamma |x|) with gamma = (1 + a) / (1 - a), and a bucket answers with
 * 2 gamma^i / (gamma + 1), which is within the relative error `a` of every value the bucket holds. Small
 * (a whole-country FinalValue range, $1 to $1e9, is about 1,040 buckets at 1%), mergeable (buckets add) and
 * deterministic: the same values in any order give the same sketch.
 */
export const RELATIVE_ERROR = 0.01

/** Magnitudes below this are counted as zero (no money or rate figure is that small). */
const MIN_MAGNITUDE = 1e-9

export class LogSketch {
  private readonly gamma: number
  private readonly lnGamma: number
  /** Bucket index -> count, for positive values and for the magnitudes of negative ones. */
  private readonly pos = new Map<number, number>()
  private readonly neg = new Map<number, number>()
  private zeros = 0
  count = 0

  constructor(readonly relativeError = RELATIVE_ERROR) {
    this.gamma = (1 + relativeError) / (1 - relativeError)
    this.lnGamma = Math.log(this.gamma)
  }

  add(x: number): void {
    this.count++
    const m = Math.abs(x)
    if (m < MIN_MAGNITUDE) {
      this.zeros++
      return
    }
    const i = Math.ceil(Math.log(m) / this.lnGamma)
    const store = x > 0 ? this.pos : this.neg
    store.set(i, (store.get(i) ?? 0) + 1)
  }

  /** Add every count of `other` (same relative error) to this sketch. */
  merge(other: LogSketch): void {
    if (other.relativeError !== this.relativeError) throw new Error('sketches of different accuracy')
    this.count += other.count
    this.zeros += other.zeros
    for (const [i, c] of other.pos) this.pos.set(i, (this.pos.get(i) ?? 0) + c)
    for (const [i, c] of other.neg) this.neg.set(i, (this.neg.get(i) ?? 0) + c)
  }

  /** Buckets in this sketch (its size). */
  get buckets(): number {
    return this.pos.size + this.neg.size + (this.zeros ? 1 : 0)
  }

  /**
   * The values at ranks `ranks` (0-based, ascending order of value, each < count), each within the relative
   * error of the value of that rank in the data. One walk over the sorted buckets for all of them.
   */
  atRanks(ranks: readonly number[]): number[] {
    const order = ranks.map((r, i) => [r, i] as const).sort((a, b) => a[0] - b[0])
    const out = new Array<number>(ranks.length).fill(Number.NaN)
    let k = 0
    let seen = 0
    const visit = (upTo: number, value: number) => {
      while (k < order.length && order[k]![0] < upTo) out[order[k++]![1]] = value
    }
    // negatives first, the largest magnitude (most negative) first
    for (const i of [...this.neg.keys()].sort((a, b) => b - a)) {
      seen += this.neg.get(i)!
      visit(seen, -this.valueOf(i))
    }
    seen += this.zeros
    visit(seen, 0)
    for (const i of [...this.pos.keys()].sort((a, b) => a - b)) {
      seen += this.pos.get(i)!
      visit(seen, this.valueOf(i))
    }
    return out
  }

  private valueOf(i: number): number {
    return (2 * Math.pow(this.gamma, i)) / (this.gamma + 1)
  }
}
