import {describe, expect, it} from 'vitest'

import {emptyFacts, type RecordFacts} from '../../src/stats/accumulator.js'
import {GroupedStats} from '../../src/stats/grouped.js'
import {EXACT_BOUND} from '../../src/stats/quantiles.js'

/** A record of county k, number i: a value, and a loan on every other record. */
function rec(k: number, i: number): RecordFacts {
  const loan = i % 2 === 0
  return {
    ...emptyFacts(),
    finalValue: 100_000 + k * 1_000 + ((i * 7919) % 997),
    confidence: (k + i) % 101,
    loan,
    loanType: loan ? 'FHA' : null,
    rate: loan ? 2 + (i % 50) / 10 : undefined,
    equity: loan ? 5_000 * ((i % 13) - 3) : undefined,
  }
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const r = (s.length - 1) / 2
  return (s[Math.floor(r)]! + s[Math.ceil(r)]!) / 2
}

const fips = (k: number) => String(1001 + k).padStart(5, '0')

describe('statistics per county in bounded memory', () => {
  it('3,235 counties in order: one shared pool, never more held than it, every county exact', () => {
    // scaled down 1,000 times: bound 1,000 values per metric, a pool of 3,000 for all counties together
    const g = new GroupedStats(1_000)
    let most = 0
    for (let k = 0; k < 3_235; k++)
      for (let i = 0; i < 40; i++) {
        g.add(fips(k), rec(k, i))
        most = Math.max(most, g.held)
      }
    expect(most).toBeLessThanOrEqual(3_000)
    expect(most).toBeGreaterThan(2_000) // the pool is used, not left idle
    const reports = g.reports()
    expect(reports).toHaveLength(3_235)
    for (const [k, {key, report}] of reports.entries()) {
      expect(key).toBe(fips(k))
      const values = Array.from({length: 40}, (_, i) => rec(k, i).finalValue!)
      expect(report.FinalValue.approximate).toBe(false)
      expect(report.FinalValue.median).toBe(median(values))
      expect(report.assumableLoans[0]!.EstimatedEquity.approximate).toBe(false)
    }
    // the run: 129,400 values past its own bound of 1,000, so a sketch; the score a histogram, exact
    expect(g.all.report().FinalValue.approximate).toBe(true)
    expect(g.all.report().ConfidenceScore.approximate).toBe(false)
  })

  it('by default a county of 1,000,000 records, each with a loan, is exact in every metric (24 MB pool)', () => {
    const g = new GroupedStats()
    for (let i = 0; i < 1_000; i++) g.add('06001', rec(1, i)) // a small county first, then passed by
    for (let i = 0; i < EXACT_BOUND; i++)
      g.add('06037', {...rec(0, i), loan: true, loanType: 'VA', rate: i % 977, equity: i})
    expect(g.held).toBeLessThanOrEqual(3 * EXACT_BOUND)
    const [small, big] = g.reports()
    // folded to make room for the big one, its figures taken first: exact
    expect(small!.report.FinalValue).toMatchObject({count: 1_000, approximate: false})
    expect(small!.report.FinalValue.median).toBe(
      median(Array.from({length: 1_000}, (_, i) => rec(1, i).finalValue!)),
    )
    expect(big!.report.FinalValue).toMatchObject({count: EXACT_BOUND, approximate: false})
    expect(big!.report.assumableLoans[0]!.EstimatedInterestRate.approximate).toBe(false)
    expect(big!.report.assumableLoans[0]!.EstimatedEquity).toEqual({
      count: EXACT_BOUND,
      median: (EXACT_BOUND - 1) / 2,
      approximate: false,
    })
  })

  it('counties in no order that fit the pool are all exact', () => {
    const g = new GroupedStats(1_000, 3_000)
    // 20 counties interleaved record by record (a batch input): 20 x 40 x 2 values fit 3,000
    for (let i = 0; i < 40; i++) for (let k = 0; k < 20; k++) g.add(fips(k), rec(k, i))
    for (const [k, {report}] of g.reports().entries()) {
      expect(report.FinalValue).toMatchObject({count: 40, approximate: false})
      expect(report.FinalValue.median).toBe(median(Array.from({length: 40}, (_, i) => rec(k, i).finalValue!)))
    }
  })

  it('counties in no order past the pool: the ones folded and met again are approximate, within 1%', () => {
    const g = new GroupedStats(1_000, 600)
    for (let i = 0; i < 40; i++) for (let k = 0; k < 20; k++) g.add(fips(k), rec(k, i))
    expect(g.held).toBeLessThanOrEqual(600)
    const reports = g.reports()
    expect(reports.some((r) => r.report.FinalValue.approximate)).toBe(true)
    for (const [k, {report}] of reports.entries()) {
      // counts stay exact whatever happened to the values
      expect(report.records).toBe(40)
      const exact = median(Array.from({length: 40}, (_, i) => rec(k, i).finalValue!))
      expect(Math.abs(report.FinalValue.median! - exact)).toBeLessThanOrEqual(0.01 * exact)
      if (!report.FinalValue.approximate) expect(report.FinalValue.median).toBe(exact)
    }
  })

  it('a county passed by and folded keeps the exact figures it had when it was folded', () => {
    const g = new GroupedStats(1_000, 100)
    for (let i = 0; i < 60; i++) g.add('A', rec(1, i))
    for (let i = 0; i < 60; i++) g.add('B', rec(2, i)) // B's growth folds A's values
    const [a, b] = g.reports()
    expect(a!.report.FinalValue).toMatchObject({count: 60, approximate: false})
    expect(a!.report.FinalValue.median).toBe(
      median(Array.from({length: 60}, (_, i) => rec(1, i).finalValue!)),
    )
    expect(b!.report.FinalValue.approximate).toBe(false)
  })

  it('a county opened with no records is reported, with 0 records, in its place', () => {
    const g = new GroupedStats()
    g.open('06001')
    g.add('06003', rec(0, 0))
    g.open('06005')
    expect(g.reports().map((r) => [r.key, r.report.records])).toEqual([
      ['06001', 0],
      ['06003', 1],
      ['06005', 0],
    ])
    expect(g.all.records).toBe(1)
  })
})

describe("the whole's report beside the counties'", () => {
  it("one county that took every record: the whole's report is that county's, made once", () => {
    const g = new GroupedStats()
    for (let i = 0; i < 5000; i++) g.add(fips(0), rec(0, i))
    const reports = g.reports()
    const run = g.runReport(reports)
    expect(run).toBe(reports[0]!.report)
    expect(run).toEqual(g.all.report())
  })

  it("two counties: the whole's own figures, not either county's", () => {
    const g = new GroupedStats()
    for (let i = 0; i < 3000; i++) g.add(fips(i % 2), rec(i % 2, i))
    const reports = g.reports()
    const run = g.runReport(reports)
    expect(run).toEqual(g.all.report())
    expect(run.records).toBe(3000)
    expect(reports.map((r) => r.report.records)).toEqual([1500, 1500])
  })

  it('one county opened empty beside records of none: the whole is counted on its own', () => {
    const g = new GroupedStats()
    g.open(fips(0))
    g.all.add(rec(1, 1))
    const reports = g.reports()
    expect(g.runReport(reports).records).toBe(1)
    expect(reports[0]!.report.records).toBe(0)
  })
})
