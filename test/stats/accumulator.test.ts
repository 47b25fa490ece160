import {describe, expect, it} from 'vitest'

import {flattenRecord as flatOf} from '../../src/io/export-reader.js'
import {readBody, RecordStages} from '../../src/pipeline/stages.js'
import {MAX_CATEGORIES, OTHER, StatsAccumulator} from '../../src/stats/accumulator.js'
import {factsOfFlat} from '../../src/stats/facts.js'
import {GroupedStats} from '../../src/stats/grouped.js'

/** Six hand-made records; the expected figures below are worked out by hand from them. */
const RECORDS: Array<Record<string, unknown>> = [
  {
    Fips: '06067',
    FinalValue: 100000,
    ConfidenceScore: 90,
    CRAEligible: 'Low',
    FHAEligible: true,
    VAEligible: true,
    USDAAreaEligible: false,
    Assumable: true,
    FHACondoEligible: null,
    AssumableMortgage: {LoanType: 'FHA', EstimatedInterestRate: 3.5, EstimatedEquity: 40000},
  },
  {
    Fips: '06067',
    FinalValue: 200000,
    ConfidenceScore: 80,
    CRAEligible: 'Middle',
    FHAEligible: true,
    VAEligible: null,
    USDAAreaEligible: false,
    Assumable: true,
    FHACondoEligible: true,
    AssumableMortgage: {LoanType: 'FHA', EstimatedInterestRate: 2.5, EstimatedEquity: 120000},
  },
  {
    Fips: '06067',
    FinalValue: 300000,
    ConfidenceScore: 70,
    CRAEligible: 'Middle',
    FHAEligible: false,
    VAEligible: false,
    USDAAreaEligible: null,
    Assumable: true,
    FHACondoEligible: false,
    AssumableMortgage: {LoanType: 'VA', EstimatedInterestRate: 4.0, EstimatedEquity: -5000},
  },
  {
    Fips: '06067',
    FinalValue: 400000,
    ConfidenceScore: 60,
    CRAEligible: 'Not Available',
    FHAEligible: false,
    VAEligible: false,
    USDAAreaEligible: false,
    Assumable: false,
    FHACondoEligible: null,
    AssumableMortgage: null,
  },
  {
    Fips: '48201',
    FinalValue: 1000000,
    ConfidenceScore: 50,
    CRAEligible: 'Weird, "level"',
    FHAEligible: true,
    VAEligible: true,
    USDAAreaEligible: true,
    Assumable: null,
    FHACondoEligible: null,
    AssumableMortgage: {LoanType: 'FHA', EstimatedInterestRate: 3.0, EstimatedEquity: 80000},
  },
  {
    Fips: '48201',
    FinalValue: null,
    CRAEligible: null,
    FHAEligible: true,
    VAEligible: true,
    USDAAreaEligible: false,
    Assumable: false,
    FHACondoEligible: null,
  },
]

const EXPECTED = {
  records: 6,
  flags: {
    FHAEligible: {true: 4, false: 2, unknown: 0, percent: 66.7},
    VAEligible: {true: 3, false: 2, unknown: 1, percent: 60},
    USDAAreaEligible: {true: 1, false: 4, unknown: 1, percent: 20},
    Assumable: {true: 3, false: 2, unknown: 1, percent: 60},
    FHACondoEligible: {true: 1, false: 1, unknown: 4, percent: 50},
  },
  CRAEligible: {
    levels: [
      {level: 'Low', count: 1, percent: 16.7},
      {level: 'Middle', count: 2, percent: 33.3},
      {level: 'Not Available', count: 1, percent: 16.7},
      {level: 'Weird, "level"', count: 1, percent: 16.7},
    ],
    unknown: 1,
  },
  // 100k 200k 300k 400k 1M: p25 = rank 1, median rank 2, p75 rank 3
  FinalValue: {count: 5, p25: 200000, median: 300000, p75: 400000, approximate: false},
  // 90 80 70 60 50
  ConfidenceScore: {count: 5, median: 70, approximate: false},
  assumableLoans: [
    {
      LoanType: 'FHA',
      count: 3,
      EstimatedInterestRate: {count: 3, median: 3.0, approximate: false},
      EstimatedEquity: {count: 3, median: 80000, approximate: false},
    },
    {
      LoanType: 'VA',
      count: 1,
      EstimatedInterestRate: {count: 1, median: 4.0, approximate: false},
      EstimatedEquity: {count: 1, median: -5000, approximate: false},
    },
  ],
}

/** The records through the export's record pipeline, read where the walk found their values (src/pipeline/facts.ts). */
async function viaPipeline(
  records: Array<Record<string, unknown>>,
  pretty = false,
): Promise<StatsAccumulator> {
  const acc = new StatsAccumulator()
  const body = Buffer.from(JSON.stringify({status: 'success', data: records}, null, pretty ? 1 : undefined))
  async function* chunks() {
    // cut anywhere: the facts must not depend on where a chunk ends
    for (let i = 0; i < body.length; i += 7) yield body.subarray(i, i + 7)
  }
  await readBody(chunks(), new RecordStages({strict: false, apiKey: undefined}), {
    record: () => undefined,
    facts: (f) => acc.add(f),
  })
  return acc
}

/** The records as `sfl stats` reads a CSV export: every column on every row, text cells, null for empty. */
function viaCsvText(records: Array<Record<string, unknown>>): StatsAccumulator {
  const flats = records.map(flatOf)
  const cols = [...new Set(flats.flatMap((f) => Object.keys(f)))]
  const acc = new StatsAccumulator()
  for (const f of flats)
    acc.add(
      factsOfFlat(
        Object.fromEntries(cols.map((c) => [c, f[c] === undefined || f[c] === null ? null : String(f[c])])),
      ),
    )
  return acc
}

describe('run statistics', () => {
  it.each([
    ['the export pipeline (compact bytes, cut into 7-byte chunks)', () => viaPipeline(RECORDS)],
    ['the export pipeline (pretty-printed bytes)', () => viaPipeline(RECORDS, true)],
    [
      'flat records (sfl stats on NDJSON)',
      () => {
        const acc = new StatsAccumulator()
        for (const r of RECORDS) acc.add(factsOfFlat(flatOf(r)))
        return acc
      },
    ],
    ['text cells (sfl stats on CSV)', () => viaCsvText(RECORDS)],
  ])('six known records read as %s give the hand-computed figures', async (_name, make) => {
    expect((await make()).report()).toEqual(EXPECTED)
  })

  it('merging two halves gives the same report as one pass', async () => {
    const a = await viaPipeline(RECORDS.slice(0, 3))
    a.merge(await viaPipeline(RECORDS.slice(3)))
    expect(a.report()).toEqual(EXPECTED)
  })

  it('a CRA value that a spreadsheet would run as a formula is counted as sent, by every reader', async () => {
    const rec = [{CRAEligible: '=Low'}]
    expect((await viaPipeline(rec)).report().CRAEligible.levels[0]!.level).toBe('=Low')
    expect(viaCsvText(rec).report().CRAEligible.levels[0]!.level).toBe('=Low')
  })

  it('an AssumableMortgage object with every member null is no loan; one member set is', async () => {
    const recs = [
      {AssumableMortgage: {LoanType: null, EstimatedEquity: null}},
      {AssumableMortgage: {LoanType: null, EstimatedEquity: 5}},
    ]
    const want = [
      {
        LoanType: '(none)',
        count: 1,
        EstimatedInterestRate: {count: 0, median: null, approximate: false},
        EstimatedEquity: {count: 1, median: 5, approximate: false},
      },
    ]
    expect((await viaPipeline(recs)).report().assumableLoans).toEqual(want)
    expect(viaCsvText(recs).report().assumableLoans).toEqual(want)
  })

  it('no more than MAX_CATEGORIES CRA values are kept by name; the rest count as (other)', () => {
    const acc = new StatsAccumulator()
    const recs = Array.from({length: MAX_CATEGORIES + 10}, (_, i) => ({CRAEligible: `v${i}`}))
    for (const r of recs) acc.add(factsOfFlat(r))
    const levels = acc.report().CRAEligible.levels
    expect(levels).toHaveLength(MAX_CATEGORIES + 1)
    expect(levels.find((l) => l.level === OTHER)!.count).toBe(10)
    expect(levels.reduce((n, l) => n + l.count, 0)).toBe(MAX_CATEGORIES + 10)
  })

  it('no records: counts zero, figures null', () => {
    const r = new StatsAccumulator().report()
    expect(r.records).toBe(0)
    expect(r.flags.FHAEligible).toEqual({true: 0, false: 0, unknown: 0, percent: null})
    expect(r.FinalValue).toEqual({count: 0, p25: null, median: null, p75: null, approximate: false})
  })

  it('grouped by Fips: each county and the whole, exact for a county passed by and not back', () => {
    const g = new GroupedStats()
    for (const r of RECORDS) g.add(String(r['Fips']), factsOfFlat(flatOf(r)))
    expect(g.all.report()).toEqual(EXPECTED)
    const [a, b] = g.reports()
    expect(a!.key).toBe('06067')
    expect(a!.report.records).toBe(4)
    expect(a!.report.FinalValue).toEqual({
      count: 4,
      p25: 175000,
      median: 250000,
      p75: 325000,
      approximate: false,
    })
    expect(b!.key).toBe('48201')
    expect(b!.report.records).toBe(2)
    expect(b!.report.assumableLoans.map((l) => [l.LoanType, l.count])).toEqual([['FHA', 1]])
  })

  it('a county that comes back after another goes on counting (from its set-aside accumulator)', () => {
    const g = new GroupedStats()
    const order = [0, 4, 1, 5, 2, 3]
    for (const i of order) g.add(String(RECORDS[i]!['Fips']), factsOfFlat(flatOf(RECORDS[i]!)))
    const [a] = g.reports()
    expect(a!.report.records).toBe(4)
    expect(a!.report.ConfidenceScore).toEqual({count: 4, median: 75, approximate: false})
  })
})
