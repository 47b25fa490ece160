import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {emptyFacts as empty, StatsAccumulator} from '../../src/stats/accumulator.js'
import {IntHistogram} from '../../src/stats/histogram.js'
import {EXACT_BOUND, ExactPool, QuantileTracker} from '../../src/stats/quantiles.js'
import {RELATIVE_ERROR} from '../../src/stats/sketch.js'

/**
 * The exact phase against a sorted-array reference, and the sketch past it against its stated bound. The
 * reference is written here from the definition (numpy's "linear": rank q (n - 1), interpolated), not
 * taken from the module.
 */
function reference(values: readonly number[], qs: readonly number[]): number[] {
  const s = Float64Array.from(values).sort()
  return qs.map((q) => {
    const r = q * (s.length - 1)
    const lo = Math.floor(r)
    const w = r - lo
    return w === 0 ? s[lo]! : s[lo]! + (s[Math.ceil(r)]! - s[lo]!) * w
  })
}

/** The stated bound past the exact phase: within a of the two values interpolated between (see docs/exports.md, "Statistics"). */
function allowed(sorted: Float64Array, q: number): number {
  const r = q * (sorted.length - 1)
  const lo = Math.floor(r)
  const w = r - lo
  const mag = (1 - w) * Math.abs(sorted[lo]!) + w * Math.abs(sorted[Math.ceil(r)]!)
  // float rounding at a bucket edge, and magnitudes below 1e-9 counted as 0 (src/stats/sketch.ts)
  return RELATIVE_ERROR * mag * (1 + 1e-9) + 1e-9
}

const QUARTILES = [0.25, 0.5, 0.75]
const QS = [0, 0.01, 0.25, 0.5, 0.75, 0.99, 1]

/** Values with many repeats: drawn from a small set, so the property meets ties at the ranks it reads. */
const multiset = fc.oneof(
  fc.array(fc.double({min: -1e9, max: 1e9, noNaN: true}), {minLength: 1, maxLength: 300}),
  fc
    .array(fc.double({min: -1e7, max: 1e7, noNaN: true}), {minLength: 1, maxLength: 5})
    .chain((pool) => fc.array(fc.constantFrom(...pool), {minLength: 1, maxLength: 300})),
  fc.array(fc.integer({min: 0, max: 3}), {minLength: 1, maxLength: 300}),
)

describe('exact quantiles under the bound', () => {
  it('for any multiset under the bound, median and quartiles equal the sorted-array reference', () => {
    fc.assert(
      fc.property(multiset, fc.nat(), (values, cut) => {
        const t = new QuantileTracker(values.length)
        for (const v of values) t.add(v)
        const got = t.quantiles([...QUARTILES, 0, 1])
        expect(got).toEqual({
          count: values.length,
          values: reference(values, [...QUARTILES, 0, 1]),
          approximate: false,
        })
        // two accumulators merged (a county into its run) give the same exact figures
        const at = cut % (values.length + 1)
        const a = new StatsAccumulator(values.length)
        const b = new StatsAccumulator(values.length)
        values.forEach((v, i) => (i < at ? a : b).add({...empty(), finalValue: v, equity: v, loan: true}))
        a.merge(b)
        const r = a.report()
        const [p25, median, p75] = reference(values, QUARTILES)
        expect(r.FinalValue).toEqual({count: values.length, p25, median, p75, approximate: false})
        expect(r.assumableLoans[0]!.EstimatedEquity).toEqual({
          count: values.length,
          median,
          approximate: false,
        })
      }),
      {numRuns: 300},
    )
  })

  it(`exact at ${EXACT_BOUND.toLocaleString('en-US')} values by default; approximate one value later`, () => {
    const t = new QuantileTracker()
    const values = new Float64Array(EXACT_BOUND)
    // a skewed spread of dollar amounts: the log sketch would give each quartile to within 1%, not exactly
    for (let i = 0; i < EXACT_BOUND; i++)
      values[i] = Math.round(50_000 * Math.exp(((i * 7919) % EXACT_BOUND) / 2e5))
    for (const v of values) t.add(v)
    const want = reference([...values], QUARTILES)
    expect(t.quantiles(QUARTILES)).toEqual({count: EXACT_BOUND, values: want, approximate: false})
    t.add(1)
    expect(t.quantiles(QUARTILES).approximate).toBe(true)
    expect(t.held).toBe(0) // its exact values went back to its pool
  })
})

describe('past the bound: the sketch within its stated bound on adversarial data', () => {
  const n = 20_000
  /** A seeded generator (mulberry32: 32-bit integer steps, so no precision is lost), values in (0, 1). */
  const rnd = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 2 ** 32
  }
  const cases: Array<[string, (i: number, r: () => number) => number]> = [
    [
      'log-normal (skewed, like home values)',
      (_i, r) => 250_000 * Math.exp(0.8 * Math.sqrt(-2 * Math.log(r())) * Math.cos(2 * Math.PI * r())),
    ],
    ['Pareto heavy tail', (_i, r) => 10_000 / Math.pow(r(), 1 / 1.1)],
    [
      'heavy duplicates (three values, one 90% of them)',
      (i) => (i % 10 === 0 ? 1_000_000 : i % 10 === 1 ? 2.5 : 350_000),
    ],
    ['all equal', () => 425_000],
    ['mixed sign (equity below water and above)', (_i, r) => (r() < 0.3 ? -1 : 1) * 80_000 * r()],
    [
      'exact bucket edges gamma^k',
      (i) => Math.pow((1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR), (i % 400) - 50),
    ],
    ['tiny and huge together', (i, r) => (i % 2 ? 1e-12 * r() : 1e12 * r())],
    ['sorted ascending', (i) => i * 37.5],
    ['zeros and negatives only', (i) => (i % 3 === 0 ? 0 : -(i % 1000) - 0.25)],
  ]
  it.each(cases)('%s: every quantile within 1% of the values around its rank', (_name, gen) => {
    const r = rnd(42)
    const values = Array.from({length: n}, (_, i) => gen(i, r))
    const t = new QuantileTracker(1_000) // exact up to 1,000, then the sketch
    for (const v of values) t.add(v)
    const got = t.quantiles(QS)
    expect(got.approximate).toBe(true)
    const sorted = Float64Array.from(values).sort()
    const want = reference(values, QS)
    QS.forEach((q, i) => expect(Math.abs(got.values[i]! - want[i]!)).toBeLessThanOrEqual(allowed(sorted, q)))
    // the generated data is what its name says: spread ones have (nearly) no repeats
    if (gen.length === 2) expect(new Set(values).size).toBeGreaterThan(n * 0.99)
  })

  it('past the real bound (1,200,000 skewed values) the quartiles are within 1%', () => {
    const r = rnd(7)
    const t = new QuantileTracker()
    const values = new Float64Array(1_200_000)
    for (let i = 0; i < values.length; i++) t.add((values[i] = Math.round(20_000 / Math.pow(r(), 0.7))))
    const got = t.quantiles(QUARTILES)
    expect(got.approximate).toBe(true)
    const sorted = values.slice().sort()
    const want = reference([...values], QUARTILES)
    QUARTILES.forEach((q, i) =>
      expect(Math.abs(got.values[i]! - want[i]!)).toBeLessThanOrEqual(allowed(sorted, q)),
    )
  })
})

describe('the exact pool', () => {
  it('trackers sharing a pool never hold more than it, the pool counts what they hold, figures stay right', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({max: 3}), fc.constantFrom('add', 'add', 'add', 'compact', 'merge')), {
          maxLength: 400,
        }),
        fc.integer({min: 0, max: 200}),
        (ops, size) => {
          const pool = new ExactPool(size)
          const ts = [0, 1, 2, 3].map(() => new QuantileTracker(120, pool))
          const all: number[][] = [[], [], [], []]
          for (const [k, op] of ops) {
            if (op === 'add') {
              const v = 1 + ((all[k]!.length * 37 + k) % 101)
              ts[k]!.add(v)
              all[k]!.push(v)
            } else if (op === 'merge') {
              const j = (k + 1) % 4
              ts[k]!.merge(ts[j]!)
              all[k]!.push(...all[j]!)
            } else ts[k]!.compact(10)
            expect(pool.held).toBe(ts.reduce((s, t) => s + t.held, 0))
            expect(pool.held).toBeLessThanOrEqual(size)
          }
          ts.forEach((t, k) => {
            expect(t.count).toBe(all[k]!.length)
            if (!all[k]!.length) return
            const got = t.quantiles(QUARTILES).values
            const want = reference(all[k]!, QUARTILES)
            const sorted = Float64Array.from(all[k]!).sort()
            // exact while it never went to its sketch; within the stated bound once it did
            QUARTILES.forEach((q, i) =>
              t.approximate
                ? expect(Math.abs(got[i]! - want[i]!)).toBeLessThanOrEqual(allowed(sorted, q))
                : expect(got[i]).toBe(want[i]),
            )
          })
        },
      ),
      {numRuns: 300},
    )
  })

  it('a merge the pool cannot hold goes to the sketch, even when some slots are free', () => {
    const pool = new ExactPool(100)
    const a = new QuantileTracker(1_000, pool)
    const b = new QuantileTracker(1_000, pool)
    for (let i = 0; i < 10; i++) a.add(i) // 16 slots
    for (let i = 0; i < 40; i++) b.add(100 + i) // 64 slots: 20 left, 34 needed for a to take b's 40
    a.merge(b)
    expect(a.approximate).toBe(true)
    expect(a.count).toBe(50)
    expect(pool.held).toBe(64)
    expect(b.quantiles([0.5])).toEqual({count: 40, values: [119.5], approximate: false})
  })

  it('an accumulator holds at most three values per record of its bound, however many loan types', () => {
    const acc = new StatsAccumulator(100)
    for (let i = 0; i < 1_000; i++)
      acc.add({...empty(), finalValue: i, loan: true, loanType: `T${i % 30}`, rate: i, equity: i})
    expect(acc.held).toBeLessThanOrEqual(300)
    const r = acc.report()
    expect(r.FinalValue.approximate).toBe(true)
    // the first loan types took their share before the pool ran out; later ones went to their sketches
    const loanFigures = r.assumableLoans.flatMap((l) => [l.EstimatedInterestRate, l.EstimatedEquity])
    expect(loanFigures.filter((f) => !f.approximate).length).toBeGreaterThan(0)
    expect(loanFigures.filter((f) => f.approximate).length).toBeGreaterThan(0)
    expect(r.assumableLoans.reduce((n, l) => n + l.EstimatedEquity.count, 0)).toBe(1_000)
  })
})

describe('ConfidenceScore: a histogram, exact at any size', () => {
  it('for any multiset of scores (some outside 0-100 or not integers), the median is the reference', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            {weight: 9, arbitrary: fc.integer({min: 0, max: 100})},
            {weight: 1, arbitrary: fc.double({min: -50, max: 150, noNaN: true})},
          ),
          {minLength: 1, maxLength: 400},
        ),
        fc.nat(),
        (values, cut) => {
          const a = new IntHistogram(0, 100)
          const b = new IntHistogram(0, 100)
          const at = cut % (values.length + 1)
          values.forEach((v, i) => (i < at ? a : b).add(v))
          a.merge(b)
          // a score of -0 is the score 0 (toEqual tells them apart; the histogram rightly does not)
          expect(a.quantiles(QS)).toEqual({
            count: values.length,
            values: reference(values, QS).map((v) => v + 0),
            approximate: false,
          })
        },
      ),
      {numRuns: 300},
    )
  })

  it('three million scores, a bound of one: still exact, in the same memory', () => {
    const h = new IntHistogram(0, 100, 1)
    const counts = new Array<number>(101).fill(0)
    for (let i = 0; i < 3_000_000; i++) {
      const v = (i * 7) % 101 < 60 ? 90 + (i % 11) : i % 90
      h.add(v)
      counts[v]!++
    }
    // the median by counting up to rank 1,499,999.5
    let seen = 0
    let lo = -1
    let hi = -1
    for (let v = 0; v <= 100; v++) {
      seen += counts[v]!
      if (lo < 0 && seen > 1_499_999) lo = v
      if (hi < 0 && seen > 1_500_000) hi = v
    }
    expect(h.quantiles([0.5])).toEqual({count: 3_000_000, values: [(lo + hi) / 2], approximate: false})
    expect(h.held).toBe(0)
  })

  it('out-of-range scores past the bound make the figure approximate (and within 1%)', () => {
    const h = new IntHistogram(0, 100, 2)
    for (const v of [50, 60, 70, 500, 600, 700]) h.add(v)
    const q = h.quantiles([0.5])
    expect(q.approximate).toBe(true)
    // exact: (70 + 500) / 2; within 1% of each of the two
    expect(Math.abs(q.values[0]! - 285)).toBeLessThanOrEqual(allowed(Float64Array.of(70, 500), 0.5))
  })
})
