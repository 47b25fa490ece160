/**
 * The sandbox's synthetic counties. Names, state and CBSA codes are public facts; FHALoanLimit is the
 * real 2026 FHA one-unit figure where the county sits at the national floor ($541,287, 65% of the
 * $832,750 conforming baseline) or ceiling ($1,249,125, 150% of it); elsewhere it is a synthetic,
 * plausible value (marked `fhaLimitSynthetic`). Every record is synthetic.
 */
export interface County {
  fips: string
  name: string
  state: string
  msa: string
  fhaLoanLimit: number
  fhaLimitSynthetic: boolean
  /** Median automated value, dollars (synthetic). */
  median: number
  /** First ServicePropertyID of the county; record i has id idBase + i. */
  idBase: number
  /** Records when `--records` does not apply to this county. */
  defaultRecords: number
  /** Share of condo (attached residential) records. */
  condoShare: number
  /** Share of addresses in a USDA rural area. */
  ruralShare: number
  cities: ReadonlyArray<{name: string; zips: readonly string[]}>
  streets: readonly string[]
}

const SUFFIXES = ['ST', 'AVE', 'DR', 'CT', 'WAY', 'LN', 'BLVD', 'CIR'] as const

function streets(names: readonly string[]): string[] {
  const out: string[] = []
  for (const suffix of SUFFIXES) for (const n of names) out.push(`${n} ${suffix}`)
  return out
}

const COMMON = [
  'OAK', 'MAPLE', 'CEDAR', 'PINE', 'ELM', 'WILLOW', 'ASPEN', 'BIRCH', 'SPRUCE', 'HICKORY', 'MAGNOLIA', 'JUNIPER',
  'LAUREL', 'SYCAMORE', 'POPLAR', 'ALDER', 'CYPRESS', 'REDWOOD', 'SEQUOIA', 'CHESTNUT', 'WALNUT', 'HAZEL',
  'MEADOW', 'RIDGE', 'VALLEY', 'SUMMIT', 'HARBOR', 'LAKESIDE', 'RIVERBEND', 'SUNSET', 'SUNRISE', 'HILLCREST',
  'FAIRVIEW', 'PARKSIDE', 'GARDEN', 'ORCHARD', 'VINEYARD', 'CANYON', 'MESA', 'PRAIRIE',
] // prettier-ignore

/** The large county whose size `--records` sets. */
export const LARGE_COUNTY = '48201'

export const COUNTIES: readonly County[] = [
  {
    fips: '06067', name: 'Sacramento County', state: 'CA', msa: '40900', fhaLoanLimit: 667_000, fhaLimitSynthetic: true,
    median: 485_000, idBase: 30_000_000_000, defaultRecords: 2_000, condoShare: 0.12, ruralShare: 0.08,
    cities: [
      {name: 'SACRAMENTO', zips: ['95815', '95820', '95822', '95823', '95838', '95842']},
      {name: 'ELK GROVE', zips: ['95624', '95757', '95758']},
      {name: 'CITRUS HEIGHTS', zips: ['95610', '95621']},
      {name: 'RANCHO CORDOVA', zips: ['95670']},
      {name: 'FOLSOM', zips: ['95630']},
    ],
    streets: streets(COMMON),
  },
  {
    fips: '06037', name: 'Los Angeles County', state: 'CA', msa: '31080', fhaLoanLimit: 1_249_125, fhaLimitSynthetic: false,
    median: 905_000, idBase: 10_000_000_000, defaultRecords: 3_000, condoShare: 0.25, ruralShare: 0.01,
    cities: [
      {name: 'LOS ANGELES', zips: ['90012', '90026', '90042', '90066']},
      {name: 'LONG BEACH', zips: ['90802', '90805', '90815']},
      {name: 'PASADENA', zips: ['91101', '91104']},
      {name: 'GLENDALE', zips: ['91201', '91205']},
      {name: 'TORRANCE', zips: ['90501', '90503']},
    ],
    streets: streets(COMMON),
  },
  {
    fips: '48201', name: 'Harris County', state: 'TX', msa: '26420', fhaLoanLimit: 541_287, fhaLimitSynthetic: false,
    median: 305_000, idBase: 50_000_000_000, defaultRecords: 100_000, condoShare: 0.08, ruralShare: 0.1,
    cities: [
      {name: 'HOUSTON', zips: ['77002', '77008', '77019', '77036', '77084']},
      {name: 'PASADENA', zips: ['77502', '77506']},
      {name: 'BAYTOWN', zips: ['77520', '77521']},
      {name: 'KATY', zips: ['77449', '77494']},
      {name: 'SPRING', zips: ['77373', '77379']},
    ],
    streets: streets(COMMON),
  },
  {
    fips: '12086', name: 'Miami-Dade County', state: 'FL', msa: '33100', fhaLoanLimit: 654_350, fhaLimitSynthetic: true,
    median: 560_000, idBase: 70_000_000_000, defaultRecords: 2_000, condoShare: 0.45, ruralShare: 0.03,
    cities: [
      {name: 'MIAMI', zips: ['33125', '33130', '33131', '33137']},
      {name: 'MIAMI BEACH', zips: ['33139', '33140']},
      {name: 'HIALEAH', zips: ['33010', '33012']},
      {name: 'HOMESTEAD', zips: ['33030', '33033']},
      {name: 'CORAL GABLES', zips: ['33134', '33146']},
    ],
    streets: streets(COMMON),
  },
] // prettier-ignore

export function countyByFips(fips: string): County | undefined {
  return COUNTIES.find((c) => c.fips === fips)
}
