/**
 * Picking values by rank out of data held in value order, whatever holds it (a sorted array, a histogram's
 * counts, a sketch's buckets), and the quantile definition every figure uses. Pure.
 */

/** Data in ascending value order as runs: `emit(value, count)` for each, the smallest value first. */
export type Runs = (emit: (value: number, count: number) => void) => void

/**
 * The values at 0-based `ranks` (each below the runs' total count) in one walk over the runs.
 *
 * @example
 * valuesAtRanks((emit) => { emit(1, 2); emit(5, 1) }, [0, 2]) // [1, 5]
 */
export function valuesAtRanks(runs: Runs, ranks: readonly number[]): number[] {
  const order = ranks.map((r, i) => [r, i] as const).sort((a, b) => a[0] - b[0])
  const out = new Array<number>(ranks.length).fill(Number.NaN)
  let k = 0
  let seen = 0
  runs((value, count) => {
    seen += count
    while (k < order.length && order[k]![0] < seen) out[order[k++]![1]] = value
  })
  return out
}

/** Two sources as one: `few` (a short ascending list of runs) interleaved into the walk of `runs`. */
export function mergeRuns(few: ReadonlyArray<readonly [number, number]>, runs: Runs): Runs {
  return (emit) => {
    let i = 0
    runs((value, count) => {
      while (i < few.length && few[i]![0] <= value) emit(few[i]![0], few[i++]![1])
      emit(value, count)
    })
    while (i < few.length) emit(few[i]![0], few[i++]![1])
  }
}

/**
 * The quantiles `qs` of `n` values by the "linear" definition (numpy's default; R type 7): rank q (n - 1),
 * interpolated between the values at the ranks either side of it. `pick` gives the values at given ranks.
 * Each figure is lo + (hi - lo) w, so from exact values it is exact, and from values each within a
 * relative error of the true ones it is within that error of |lo| (1 - w) + |hi| w.
 */
export function linearQuantiles(
  n: number,
  qs: readonly number[],
  pick: (ranks: number[]) => number[],
): number[] {
  const at = qs.map((q) => q * (n - 1))
  const v = pick(at.flatMap((r) => [Math.floor(r), Math.ceil(r)]))
  return at.map((r, i) => {
    const lo = v[2 * i]!
    const w = r - Math.floor(r)
    return w === 0 ? lo : lo + (v[2 * i + 1]! - lo) * w
  })
}

/**
 * The values at 0-based `ranks` (each below `values.length`) of `values` in ascending order, as a sorted
 * copy gives them (-0 and 0 being one number), without sorting: each rank selected in turn (Hoare's
 * selection, median of three; the ranks ascending, each searched only above the one before). A copy is
 * permuted; `values` is not. A statistics run asks a few ranks of up to a million values a metric, and
 * sorting them all was the largest part of `sfl stats`' figures (issue 32). For values without NaN (where
 * a partition by `<` would be wrong): a caller that may hold one sorts.
 *
 * @example
 * selectRanks(Float64Array.of(5, 1, 4, 2), [0, 3]) // [1, 5]
 */
export function selectRanks(values: Float64Array, ranks: readonly number[]): number[] {
  const x = values.slice()
  const order = [...new Set(ranks)].sort((a, b) => a - b)
  let lo = 0
  for (const k of order) {
    select(x, lo, x.length - 1, k)
    lo = k
  }
  return ranks.map((r) => x[r]!)
}

/** Permute x[lo..hi] so that x[k] is the value a sort would put there, smaller ones before it, larger after. */
function select(x: Float64Array, lo: number, hi: number, k: number): void {
  while (hi > lo) {
    const a = x[lo]!
    const b = x[(lo + hi) >>> 1]!
    const c = x[hi]!
    const p = a < b ? (b < c ? b : a < c ? c : a) : a < c ? a : b < c ? c : b
    let i = lo
    let j = hi
    while (i <= j) {
      while (x[i]! < p) i++
      while (x[j]! > p) j--
      if (i <= j) {
        const t = x[i]!
        x[i++] = x[j]!
        x[j--] = t
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else return
  }
}
