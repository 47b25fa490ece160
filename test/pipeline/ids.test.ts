import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {IdSet} from '../../src/pipeline/ids.js'

describe('IdSet: the ServicePropertyIDs a county has taken', () => {
  it('takes an id once: the second time, on the same page or a later one, is a repeat', () => {
    const ids = new IdSet()
    ids.begin()
    expect(ids.add(30000000007)).toBe(true)
    expect(ids.add(30000000007)).toBe(false)
    ids.begin()
    expect(ids.add(30000000007)).toBe(false)
    expect(ids.add(99_999_999_999)).toBe(true)
    expect(ids.add(1)).toBe(true)
    expect(ids.size).toBe(3)
  })

  it('release forgets every id (a finished county frees its table) and the set still works after', () => {
    const ids = new IdSet()
    ids.begin()
    for (let i = 1; i <= 5000; i++) ids.add(40_000_000_000 + i)
    ids.release()
    expect(ids.size).toBe(0)
    ids.begin()
    expect(ids.add(40_000_000_001)).toBe(true)
    expect(ids.add(40_000_000_001)).toBe(false)
    ids.fail()
    expect(ids.size).toBe(0)
  })

  it('forgets what a failed page attempt took, so its retry is not counted as repeats', () => {
    const ids = new IdSet()
    ids.begin()
    expect(ids.add(10)).toBe(true)
    ids.begin()
    expect(ids.add(11)).toBe(true)
    expect(ids.add(12)).toBe(true)
    ids.fail()
    ids.begin()
    expect(ids.add(11)).toBe(true)
    expect(ids.add(12)).toBe(true)
    expect(ids.add(10)).toBe(false)
    expect(ids.add(11)).toBe(false)
  })

  it('keeps every id through growth, and drops the failed ones there', () => {
    const ids = new IdSet()
    ids.begin()
    for (let i = 1; i <= 5000; i++) expect(ids.add(50_000_000_000 + i)).toBe(true)
    ids.begin()
    for (let i = 1; i <= 5000; i++) expect(ids.add(60_000_000_000 + i)).toBe(true)
    ids.fail()
    ids.begin()
    for (let i = 1; i <= 20_000; i++) ids.add(70_000_000_000 + i)
    for (let i = 1; i <= 5000; i++) expect(ids.add(50_000_000_000 + i)).toBe(false)
    for (let i = 1; i <= 5000; i++) expect(ids.add(60_000_000_000 + i)).toBe(true)
  })

  it('keeps what earlier attempts took when the attempts are renumbered (past 65,536 pages of a county)', () => {
    const ids = new IdSet()
    ids.begin()
    expect(ids.add(99_999_999_999)).toBe(true)
    for (let page = 0; page < 70_000; page++) {
      ids.begin()
      if (page % 10_000 === 0) expect(ids.add(80_000_000_000 + page)).toBe(true)
    }
    expect(ids.add(12)).toBe(true)
    ids.fail()
    ids.begin()
    expect(ids.add(12)).toBe(true)
    expect(ids.add(99_999_999_999)).toBe(false)
    for (let page = 0; page < 70_000; page += 10_000) expect(ids.add(80_000_000_000 + page)).toBe(false)
    expect(ids.size).toBe(9)
  })

  it('refuses what is no ServicePropertyID (spec 2.1: a whole number of at most 11 digits)', () => {
    const ids = new IdSet()
    ids.begin()
    for (const bad of [0, -5, 1.5, 100_000_000_000, Number.NaN])
      expect(() => ids.add(bad)).toThrow(RangeError)
    expect(ids.size).toBe(0)
  })

  it('behaves as a set of ids per attempt, for any sequence of pages, ids and failures', () => {
    type Step = {op: 'begin'} | {op: 'fail'} | {op: 'add'; id: number}
    const step: fc.Arbitrary<Step> = fc.oneof(
      {weight: 1, arbitrary: fc.constant({op: 'begin' as const})},
      {weight: 1, arbitrary: fc.constant({op: 'fail' as const})},
      {
        weight: 12,
        arbitrary: fc
          .oneof(fc.integer({min: 1, max: 60}), fc.integer({min: 1, max: 99_999_999_999}))
          .map((id) => ({op: 'add' as const, id})),
      },
    )
    fc.assert(
      fc.property(fc.array(step, {maxLength: 3000}), (steps) => {
        const ids = new IdSet()
        const model = new Map<number, number>()
        const failed = new Set<number>()
        let attempt = 0
        ids.begin()
        attempt++
        for (const s of steps) {
          if (s.op === 'begin') {
            ids.begin()
            attempt++
          } else if (s.op === 'fail') {
            ids.fail()
            failed.add(attempt)
            // a failed attempt is followed by a new one (the contract: begin before the next add)
            ids.begin()
            attempt++
          } else {
            const owner = model.get(s.id)
            const taken = owner !== undefined && !failed.has(owner)
            expect(ids.add(s.id)).toBe(!taken)
            if (!taken) model.set(s.id, attempt)
          }
        }
      }),
      {numRuns: 300},
    )
  })
})
