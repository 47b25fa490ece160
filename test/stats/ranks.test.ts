import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {QuantileTracker} from '../../src/stats/quantiles.js'
import {selectRanks} from '../../src/stats/ranks.js'

/** The values a sorted copy holds at `ranks`, -0 read as 0 (the two are one number in every output). */
const sortedAt = (values: number[], ranks: number[]) => {
  const sorted = Float64Array.from(values).sort()
  return ranks.map((r) => sorted[r]! + 0)
}

describe('values picked by rank without sorting', () => {
  it('are the values a sorted copy holds there, whatever the ranks (repeated, in any order)', () => {
    fc.assert(
      fc.property(
        // few distinct values (many equal ones, the hard case of a partition) or any doubles
        fc.oneof(
          fc.array(fc.integer({min: -3, max: 3}), {minLength: 1, maxLength: 300}),
          fc.array(fc.double({noNaN: true}), {minLength: 1, maxLength: 300}),
        ),
        fc.array(fc.nat(), {minLength: 1, maxLength: 6}),
        (values, at) => {
          const ranks = at.map((r) => r % values.length)
          const input = Float64Array.from(values)
          expect(selectRanks(input, ranks).map((x) => x + 0)).toEqual(sortedAt(values, ranks))
          expect([...input]).toEqual(values) // the caller's values untouched
        },
      ),
      {numRuns: 500},
    )
  })

  it('a tracker that was given NaN answers as a sorted copy does (NaN last), merged or not', () => {
    const t = new QuantileTracker()
    for (const x of [3, NaN, 1, 2]) t.add(x)
    expect(t.quantiles([0, 0.5, 1]).values).toEqual([1, 2.5, NaN])
    const u = new QuantileTracker()
    u.add(5)
    u.merge(t)
    expect(u.quantiles([0, 0.75, 1]).values).toEqual([1, 5, NaN])
  })

  it('a million values, ranks at the quartiles', () => {
    const values = Array.from({length: 1_000_000}, (_, i) => (i * 7919) % 1_000_003)
    expect(selectRanks(Float64Array.from(values), [249_999, 500_000, 750_000])).toEqual(
      sortedAt(values, [249_999, 500_000, 750_000]),
    )
  })
})
