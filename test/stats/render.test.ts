import {describe, expect, it} from 'vitest'

import {flattenRecord as flatOf} from '../../src/io/export-reader.js'
import {StatsAccumulator} from '../../src/stats/accumulator.js'
import {factsOfFlat} from '../../src/stats/facts.js'
import {renderStats, statsDocument} from '../../src/stats/render.js'

const recs = [
  {
    FinalValue: 100000,
    ConfidenceScore: 90,
    CRAEligible: 'Low',
    FHAEligible: true,
    VAEligible: null,
    Assumable: true,
    AssumableMortgage: {LoanType: 'FHA', EstimatedInterestRate: 3.25, EstimatedEquity: 40000},
  },
  {
    FinalValue: 300000,
    ConfidenceScore: 81,
    CRAEligible: 'Upper',
    FHAEligible: false,
    VAEligible: true,
    Assumable: false,
  },
]

function accOf(bound?: number): StatsAccumulator {
  const acc = new StatsAccumulator(bound)
  for (const r of recs) acc.add(factsOfFlat(flatOf(r)))
  return acc
}

describe('stats rendering', () => {
  it('the table: shares of known values, CRA levels, value spread, loans by type, within 80 columns', () => {
    const lines = renderStats('sfl stats', accOf().report())
    expect(lines).toEqual([
      'sfl stats: 2 records',
      '                             true  of known',
      '  FHAEligible                   1     50.0%',
      '  VAEligible                    1    100.0%   (1 unknown)',
      '  USDAAreaEligible              0         -   (2 unknown)',
      '  Assumable                     1     50.0%',
      '  FHACondoEligible              0         -   (2 unknown)',
      '  CRAEligible         Low                       1   50.0%',
      '                      Upper                     1   50.0%',
      '  FinalValue          p25 $150,000   median $200,000   p75 $250,000',
      '  ConfidenceScore     median 85.5',
      '  Assumable loans     LoanType          count  median rate  median equity',
      '                      FHA                   1        3.25%        $40,000',
    ])
    expect(lines.every((l) => l.length <= 80)).toBe(true)
  })

  it('a figure a double holds but no line does (a FinalValue of 1e300) is written with an exponent, within 80 columns', () => {
    const acc = new StatsAccumulator()
    for (const v of [1e300, 2e300, 3e300])
      acc.add(
        factsOfFlat(
          flatOf({
            FinalValue: v,
            Assumable: true,
            AssumableMortgage: {LoanType: 'VA', EstimatedInterestRate: v, EstimatedEquity: v},
          }),
        ),
      )
    const lines = renderStats('run', acc.report())
    expect(lines.find((l) => l.includes('FinalValue'))).toBe(
      '  FinalValue          p25 $1.50e+300   median $2.00e+300   p75 $2.50e+300',
    )
    expect(lines.find((l) => l.includes('VA '))).toBe(
      '                      VA                    3   2.00e+300%     $2.00e+300',
    )
    expect(lines.every((l) => l.length <= 80 && !/\d{16}/.test(l))).toBe(true)
  })

  it('figures from the sketch carry ≈ and the table says how close they are; ConfidenceScore never does', () => {
    const lines = renderStats('run', accOf(1).report())
    // a histogram: exact whatever the bound
    expect(lines.find((l) => l.includes('ConfidenceScore'))).toBe('  ConfidenceScore     median 85.5')
    expect(lines.at(-1)).toBe('  ≈ from a sketch, past the exact values kept: within 1% of the exact figure')
    const fv = lines.find((l) => l.includes('FinalValue'))!
    expect(fv).toMatch(/^ {2}FinalValue {10}p25 ≈\$[\d,]+ {3}median ≈\$[\d,]+ {3}p75 ≈\$[\d,]+$/)
    // within 1% of $200,000
    expect(
      Math.abs(Number(/median ≈\$([\d,]+)/.exec(fv)![1]!.replace(/,/g, '')) - 200_000),
    ).toBeLessThanOrEqual(2_000)
    expect(lines.every((l) => l.length <= 80)).toBe(true)
  })

  it('150,000 ConfidenceScore values whose exact median is 69 print 69 (no ≈, no footnote)', () => {
    // skewed: 40% at 95-100, the rest spread low, arranged so ranks 74,999 and 75,000 are both 69
    const acc = new StatsAccumulator()
    const scores: number[] = []
    for (let i = 0; i < 60_000; i++) scores.push(95 + (i % 6))
    for (let i = 0; i < 16_000; i++) scores.push(69)
    for (let i = 0; i < 74_000; i++) scores.push(i % 69)
    for (const s of scores) acc.add(factsOfFlat({ConfidenceScore: s}))
    const sorted = [...scores].sort((a, b) => a - b)
    expect([sorted[74_999], sorted[75_000]]).toEqual([69, 69])
    const r = acc.report()
    expect(r.ConfidenceScore).toEqual({count: 150_000, median: 69, approximate: false})
    const lines = renderStats('run', r)
    expect(lines).toContain('  ConfidenceScore     median 69')
    expect(lines.join('\n')).not.toContain('≈')
  })

  it('the JSON document: version, accuracy, the run and each county', () => {
    const report = accOf().report()
    const doc = statsDocument(report, [{fips: '06067', report}])
    expect(doc.version).toBe(1)
    expect(doc.relativeError).toBe(0.01)
    expect(doc.exactBound).toBe(1_000_000)
    expect(doc.run.records).toBe(2)
    expect(doc.counties).toEqual([{fips: '06067', ...report}])
  })
})
