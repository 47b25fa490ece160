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
