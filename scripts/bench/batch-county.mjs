// The county of the planner's benchmark (scripts/bench-batch-plan.mjs), built the same way by the script
// and by its server (scripts/bench/serve-batch.mjs): COUNTY_RECORDS records of county 06067, every one with
// the spec's standard fields (spec 2.1), a distinct street line, APN and ServicePropertyID.
export const FIPS = '06067'
export const COUNTY_RECORDS = Number(process.env.BENCH_COUNTY_RECORDS ?? 200_000)
export const PAGE_SIZE = Number(process.env.BENCH_PAGE_SIZE ?? 500)

const STREETS = [
  'HIGH ST',
  'OAK AVE',
  'RIVER OAKS DR',
  'ELM CT',
  'N MAIN ST',
  'PINE LN',
  'LAGUNA BLVD',
  'WALNUT WAY',
]
const CITIES = ['SACRAMENTO', 'ELK GROVE', 'FOLSOM', 'CITRUS HEIGHTS']

/** Record i: a street line of its own (number, street; every fifth with a unit). */
export function record(i) {
  const unit = i % 5 === 4 ? ` UNIT ${100 + (i % 90)}` : ''
  const line = `${100 + Math.floor(i / STREETS.length)} ${STREETS[i % STREETS.length]}${unit}`
  return {
    Fips: FIPS,
    ServicePropertyID: 30_000_000_000 + i,
    APN: `${String(100 + Math.floor(i / 10_000)).padStart(3, '0')}-${String(Math.floor(i / 10) % 1000).padStart(4, '0')}-${String(i % 10).padStart(3, '0')}`,
    CompleteStreetAddress: line,
    StandardizeStreetAddress: line,
    City: CITIES[i % CITIES.length],
    State: 'CA',
    Zip: String(95800 + (i % 60)),
    FinalValue: 250_000 + (i % 5000) * 100,
    HighValue: 275_000 + (i % 5000) * 100,
    LowValue: 225_000 + (i % 5000) * 100,
    ConfidenceScore: 40 + (i % 60),
    StandardDeviation: 0.18,
    ValuationDate: '2026-10-01T00:00:00',
    CRAEligible: i % 3 === 0 ? 'Moderate' : 'Upper',
    FHAEligible: i % 4 !== 0,
    FHALoanLimit: 498_257,
    FHACondoEligible: null,
    USDAAreaEligible: false,
    VAEligible: true,
    Assumable: i % 9 === 0,
    TractIncomeLevel: 'Middle',
    TractMinorityPopulationPercent: 38.5,
  }
}

/** The address as a row of the batch gives it (and as sfl sends it: already in its Pub 28 form). */
export function addressOf(r) {
  return `${r.StandardizeStreetAddress}, ${r.City}, CA ${r.Zip}`
}
