import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {QuantileTracker} from '../../src/stats/quantiles.js'
import {LogSketch, RELATIVE_ERROR} from '../../src/stats/sketch.js'

/** The "linear" quantile (numpy's default), computed here independently of the module. */
function exactQuantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b)
  const r = q * (s.length - 1)
  const lo = Math.floor(r)
  const hi = Math.ceil(r)
  return s[lo]! + (s[hi]! - s[lo]!) * (r - lo)
}

/** The error the sketch promises for an interpolated figure: a of the values interpolated between. */
function allowed(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b)
  const r = q * (s.length - 1)
  const lo = Math.floor(r)
  const w = r - lo
  return RELATIVE_ERROR * ((1 - w) * Math.abs(s[lo]!) + w * Math.abs(s[Math.ceil(r)]!)) * (1 + 1e-9) + 1e-9
}

const QS = [0, 0.25, 0.5, 0.75, 0.9, 1]

describe('LogSketch and QuantileTracker', () => {
  it('a sketched quantile is within the stated relative error of the exact one, for any values', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({min: -1e9, max: 1e9, noNaN: true}), {minLength: 1, maxLength: 400}),
        (values) => {
          const t = new QuantileTracker(0) // sketch from the first value
          for (const v of values) t.add(v)
          const got = t.quantiles(QS)
          expect(got.approximate).toBe(true)
          QS.forEach((q, i) => {
            expect(Math.abs(got.values[i]! - exactQuantile(values, q))).toBeLessThanOrEqual(
              allowed(values, q),
            )
          })
        },
      ),
      {numRuns: 300},
    )
  })

  it('up to the bound the quantiles are exact and say so; beyond it they are approximate', () => {
    const t = new QuantileTracker(5)
    for (const v of [10, 40, 20, 30, 50]) t.add(v)
    expect(t.quantiles([0.25, 0.5, 0.75])).toEqual({count: 5, values: [20, 30, 40], approximate: false})
    const even = new QuantileTracker(5)
    for (const v of [1, 2, 3, 4]) even.add(v)
    // median of an even count: halfway between the middle two; p25 a quarter of the way from 1 to 2
    expect(even.quantiles([0.5, 0.25]).values).toEqual([2.5, 1.75])
    t.add(60)
    const q = t.quantiles([0.5])
    expect(q.approximate).toBe(true)
    expect(Math.abs(q.values[0]! - 35)).toBeLessThanOrEqual(35 * RELATIVE_ERROR)
  })

  it('merging gives the same sketch as adding the values in any order (deterministic, mergeable)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({min: 0.5, max: 1e7, noNaN: true}), {minLength: 2, maxLength: 300}),
        (values) => {
          const whole = new LogSketch()
          for (const v of values) whole.add(v)
          const a = new LogSketch()
          const b = new LogSketch()
          values.forEach((v, i) => (i % 2 ? a : b).add(v))
          b.merge(a)
          const ranks = [0, Math.floor(values.length / 2), values.length - 1]
          expect(b.atRanks(ranks)).toEqual(whole.atRanks(ranks))
          expect(b.count).toBe(values.length)
        },
      ),
    )
  })

  it('a million values spread over $1 to $1e9 take about a thousand buckets', () => {
    const s = new LogSketch()
    for (let i = 0; i < 1_000_000; i++) s.add(Math.exp((i / 1_000_000) * Math.log(1e9)))
    expect(s.count).toBe(1_000_000)
    expect(s.buckets).toBeLessThan(1_100)
    expect(s.buckets).toBeGreaterThan(1_000)
  })

  it('merging trackers keeps exact values while the total stays within the bound', () => {
    const a = new QuantileTracker(4)
    const b = new QuantileTracker(4)
    a.add(1)
    a.add(3)
    b.add(2)
    b.add(4)
    a.merge(b)
    expect(a.quantiles([0.5])).toEqual({count: 4, values: [2.5], approximate: false})
    const c = new QuantileTracker(4)
    c.add(100)
    a.merge(c)
    expect(a.quantiles([0.5]).approximate).toBe(true)
    expect(a.count).toBe(5)
  })
})
