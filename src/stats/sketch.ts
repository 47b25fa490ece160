import {valuesAtRanks} from './ranks.js'

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
  /** Bucket counts for positive values and for the magnitudes of negative ones. */
  private readonly pos = new Buckets()
  private readonly neg = new Buckets()
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
    ;(x > 0 ? this.pos : this.neg).add(i, 1)
  }

  /** Add every count of `other` (same relative error) to this sketch. */
  merge(other: LogSketch): void {
    if (other.relativeError !== this.relativeError) throw new Error('sketches of different accuracy')
    this.count += other.count
    this.zeros += other.zeros
    other.pos.forEach((i, c) => this.pos.add(i, c))
    other.neg.forEach((i, c) => this.neg.add(i, c))
  }

  /** Buckets in this sketch (its size). */
  get buckets(): number {
    return this.pos.used + this.neg.used + (this.zeros ? 1 : 0)
  }

  /**
   * The values at ranks `ranks` (0-based, ascending order of value, each < count), each within the relative
   * error of the value of that rank in the data. One walk over the sorted buckets for all of them.
   */
  atRanks(ranks: readonly number[]): number[] {
    return valuesAtRanks((emit) => this.runs(emit), ranks)
  }

  /** Each non-empty bucket as (its value, its count), ascending: negatives (most negative first), 0, positives. */
  runs(emit: (value: number, count: number) => void): void {
    const neg: Array<[number, number]> = []
    this.neg.forEach((i, c) => neg.push([i, c]))
    for (let k = neg.length - 1; k >= 0; k--) emit(-this.valueOf(neg[k]![0]), neg[k]![1])
    if (this.zeros) emit(0, this.zeros)
    this.pos.forEach((i, c) => emit(this.valueOf(i), c))
  }

  private valueOf(i: number): number {
    return (2 * Math.pow(this.gamma, i)) / (this.gamma + 1)
  }
}

/**
 * Counts by bucket index in a dense array from the lowest index seen (a value's bucket is an array slot,
 * not a hash lookup: this is the per-record cost past the exact bound). The indices a county's money and
 * rate figures fall in span a few hundred slots.
 */
class Buckets {
  private counts: number[] = []
  private offset = 0
  used = 0

  add(i: number, c: number): void {
    const counts = this.counts
    if (counts.length === 0) {
      this.offset = i
      counts.push(0)
    } else if (i < this.offset) {
      this.counts = [...new Array<number>(this.offset - i).fill(0), ...counts]
      this.offset = i
    } else if (i - this.offset >= counts.length) {
      for (let k = counts.length; k <= i - this.offset; k++) counts.push(0)
    }
    const at = i - this.offset
    if (this.counts[at] === 0) this.used++
    this.counts[at]! += c
  }

  /** Each non-empty bucket, lowest index first. */
  forEach(fn: (index: number, count: number) => void): void {
    const counts = this.counts
    for (let k = 0; k < counts.length; k++) if (counts[k]! > 0) fn(k + this.offset, counts[k]!)
  }
}
