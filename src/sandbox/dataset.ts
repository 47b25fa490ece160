import {COUNTIES, type County, countyByFips, LARGE_COUNTY} from './counties.js'
import {lenientKey, type MatchMode, strictMatch} from './match.js'
import {APPROVAL_VALUES as APPROVAL_STATUSES, CRA_VALUES as CRA_LEVELS} from './rules.js'

/**
 * Deterministic, lazy synthetic records: record i of a county is a pure function of (seed, fips, i), so a
 * million-record county costs nothing until it is read, and every run with the same seed sees the same
 * data. Addresses, APNs and IDs are bijective with i, so lookups need no index.
 */

/** The date the synthetic valuations and loan balances are "as of". Fixed, so data does not drift. */
export const AS_OF = {year: 2026, month: 10, day: 1}

/** mulberry32: a small, fast, well-distributed 32-bit PRNG. */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function hash(...parts: number[]): number {
  let h = 0x811c9dc5
  for (const p of parts) {
    h = Math.imul(h ^ (p & 0xffff), 0x01000193)
    h = Math.imul(h ^ (p >>> 16), 0x01000193)
  }
  return h >>> 0
}

const pad = (n: number, w: number) => String(n).padStart(w, '0')
const round2 = (n: number) => Math.round(n * 100) / 100
const round1 = (n: number) => Math.round(n * 10) / 10
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!

/** Approximate average 30-year fixed rates by year of recording (percent), for plausible synthetic loans. */
const RATE_BY_YEAR: Record<number, number> = {
  2012: 3.66, 2013: 3.98, 2014: 4.17, 2015: 3.85, 2016: 3.65, 2017: 3.99, 2018: 4.54, 2019: 3.94,
  2020: 3.11, 2021: 2.96, 2022: 5.34, 2023: 6.81, 2024: 6.72, 2025: 6.6, 2026: 6.3,
} // prettier-ignore

const LENDERS = [
  'Summit Ridge Mortgage', 'Harborview Home Loans', 'Granite Peak Lending', 'Blue Heron Bank',
  'Prairie State Mortgage Co', 'Lighthouse Federal Credit Union', 'Northstar Home Finance', 'Cedar Grove Savings',
] // prettier-ignore

/** Fixed demo properties of 06067, so the README's examples find something. */
interface Traits {
  line?: string
  unit?: string
  city?: string
  zip?: string
  condo?: boolean
  loan?: 'FHA' | 'VA' | 'USDA' | 'CONV' | 'NONE'
  project?: {approval: (typeof APPROVAL_STATUSES)[number]; owner: number; conc: number}
}
const DEMO: Record<string, Record<number, Traits>> = {
  '06067': {
    6: {line: '3526 HIGH ST', city: 'SACRAMENTO', zip: '95838', condo: false, loan: 'FHA'},
    7: {
      line: '1150 RIVER OAKS DR', unit: '114', city: 'RANCHO CORDOVA', zip: '95670', condo: true, loan: 'VA',
      project: {approval: 'Approved', owner: 31.5, conc: 22.4},
    },
    8: {
      line: '5201 LAGUNA OAKS DR', unit: '140', city: 'ELK GROVE', zip: '95758', condo: true, loan: 'CONV',
      project: {approval: 'Not Approved', owner: 48.2, conc: 12.1},
    },
    9: {line: '7325 TENTH ST', city: 'RIO LINDA', zip: '95673', condo: false, loan: 'NONE'},
  },
} // prettier-ignore

export interface KeyOptions {
  assumable: boolean
  condo: boolean
  /**
   * Send the flat FHA project fields (spec 2.1, presence "not shown") as null on non-condo records, as some
   * servers do; otherwise they are left out of non-condo records.
   */
  nullFlatFields?: boolean
}

export interface Located {
  county: County
  index: number
}

/** Spec 2.1 flat FHA project fields, whose presence the spec leaves open ("not shown"). */
const FLAT_FIELDS = [
  'FHAOwnerOccupancyViolation',
  'FHAOwnerOccupancyPercentage',
  'FHAConcentration',
  'FHAConcentrationViolation',
  'FHAExpirationDate',
] as const

/** APN layout BBB-PPPP-NNN; record i of 06067 is parcel number i + 123039, so record 6 is 078-0123-045. */
const APN_OFFSET = 123_039
const APN_BOOK_BASE = 78

export class Dataset {
  constructor(
    readonly seed: number,
    /** Records of the large county (LARGE_COUNTY), the one export and memory tests use. */
    readonly largeRecords: number,
  ) {}

  counties(): readonly County[] {
    return COUNTIES
  }

  count(fips: string): number {
    const c = countyByFips(fips)
    if (!c) return 0
    return c.fips === LARGE_COUNTY ? this.largeRecords : c.defaultRecords
  }

  byId(id: string): Located | undefined {
    const n = Number(id)
    for (const county of COUNTIES) {
      const i = n - county.idBase
      if (i >= 0 && i < this.count(county.fips)) return {county, index: i}
    }
    return undefined
  }

  apn(i: number): string {
    const k = i + APN_OFFSET
    return `${pad(APN_BOOK_BASE + Math.floor(k / 10_000_000), 3)}-${pad(Math.floor(k / 1000) % 10_000, 4)}-${pad(k % 1000, 3)}`
  }

  byApn(fips: string, apn: string): number | undefined {
    const m = /^(\d{3})-?(\d{4})-?(\d{3})$/.exec(apn.trim())
    if (!m) return undefined
    const i = (Number(m[1]) - APN_BOOK_BASE) * 10_000_000 + Number(m[2]) * 1000 + Number(m[3]) - APN_OFFSET
    return i >= 0 && i < this.count(fips) ? i : undefined
  }

  /** House number and street of record i: streets cycle, house numbers climb by two (odd side). */
  private location(
    county: County,
    i: number,
  ): {line: string; unit?: string; city: string; zip: string; streetIdx: number} {
    const demo = DEMO[county.fips]?.[i]
    const ns = county.streets.length
    const streetIdx = i % ns
    const house = 101 + Math.floor(i / ns) * 2
    const r = rng(hash(this.seed, 7, Number(county.fips), streetIdx))
    const city = county.cities[Math.floor(r() * county.cities.length)]!
    const zip = pick(r, city.zips)
    const condo = demo?.condo ?? this.isCondo(county, i)
    const out: {line: string; unit?: string; city: string; zip: string; streetIdx: number} = {
      line: demo?.line ?? `${house} ${county.streets[streetIdx]}`,
      city: demo?.city ?? city.name,
      zip: demo?.zip ?? zip,
      streetIdx,
    }
    const unit = demo?.unit ?? (condo ? String(100 + (hash(this.seed, 11, i) % 400)) : undefined)
    if (unit !== undefined) out.unit = unit
    return out
  }

  private isCondo(county: County, i: number): boolean {
    return rng(hash(this.seed, 3, Number(county.fips), i))() < county.condoShare
  }

  /**
   * Find the record an address names. Lenient mode forgives spellings (match.ts); strict mode then also
   * requires the service's standardised form exactly. A unit must match when the record has one.
   */
  byAddress(fips: string, address: string, mode: MatchMode = 'lenient'): number | undefined {
    const county = countyByFips(fips)
    if (!county) return undefined
    const i = this.lenientIndex(county, address)
    if (i === undefined || mode === 'lenient') return i
    const loc = this.location(county, i)
    const standardized = loc.line + (loc.unit ? ` UNIT ${loc.unit}` : '')
    return strictMatch(address, {standardized, city: loc.city}) ? i : undefined
  }

  private lenientIndex(county: County, address: string): number | undefined {
    const fips = county.fips
    const norm = lenientKey(
      address,
      county.cities.map((c) => c.name),
    )
    if (!norm) return undefined
    const demos = DEMO[fips] ?? {}
    for (const [k, t] of Object.entries(demos)) {
      if (t.line === `${norm.number} ${norm.street}`)
        return unitMatches(t.unit, norm.unit) ? Number(k) : undefined
    }
    const streetIdx = county.streets.indexOf(norm.street)
    const house = Number(norm.number)
    if (streetIdx < 0 || !Number.isInteger(house) || house < 101 || (house - 101) % 2 !== 0) return undefined
    const i = ((house - 101) / 2) * county.streets.length + streetIdx
    if (i >= this.count(fips) || demos[i]) return undefined
    return unitMatches(this.location(county, i).unit, norm.unit) ? i : undefined
  }

  /**
   * Record i of a county, with the add-on options a key includes (spec 2.2 rule 2 and 2.3 rule 1: the
   * field is omitted when the key lacks the option; rule 3 / rule 2: null when there is no data).
   */
  record(county: County, i: number, options: KeyOptions): Record<string, unknown> {
    const r = rng(hash(this.seed, Number(county.fips), i, 0x5eed))
    const demo = DEMO[county.fips]?.[i]
    const loc = this.location(county, i)
    const condo = demo?.condo ?? this.isCondo(county, i)
    const tractRng = rng(hash(this.seed, 13, Number(county.fips), Math.floor(loc.streetIdx / 4)))
    const tract = pad(1000 + Math.floor(tractRng() * 8000), 4) + pad(Math.floor(tractRng() * 100), 2)
    const cra = pickWeighted(tractRng, CRA_LEVELS, [0.1, 0.4, 0.2, 0.27, 0.03])
    const minority = round1(5 + tractRng() * 85)

    // valuation: log-normal around the county median, with a confidence-dependent range (spec 2.1)
    const value = Math.max(
      40_000,
      Math.round((county.median * Math.exp(gauss(r) * 0.42) * (condo ? 0.7 : 1)) / 1000) * 1000,
    )
    const confidence = 35 + Math.floor(r() * 64)
    const sd = round4(0.02 + ((100 - confidence) / 100) * 0.2)
    const low = Math.floor((value * (1 - 1.5 * sd)) / 1000) * 1000
    const high = Math.ceil((value * (1 + 1.5 * sd)) / 1000) * 1000
    const valuationDay = 1 + Math.floor(r() * 28)

    const rural = r() < county.ruralShare
    const usda = r() < 0.02 ? null : rural
    const va = r() < 0.02 ? null : value <= county.fhaLoanLimit * 2.5

    const project = condo ? this.project(county, loc.streetIdx, demo?.project) : undefined
    const condoApproved = project ? project.approval === 'Approved' || project.approval === 'Caution' : false
    const fhaEligible = value * 0.965 <= county.fhaLoanLimit && (!condo || condoApproved)

    const loanKind =
      demo?.loan ??
      pickWeighted(r, ['FHA', 'VA', 'USDA', 'CONV', 'NONE'] as const, [
        0.22,
        0.09,
        rural ? 0.08 : 0,
        0.5,
        0.11,
      ])
    const assumable = loanKind === 'NONE' ? null : loanKind !== 'CONV'

    const rec: Record<string, unknown> = {
      Fips: county.fips,
      ServicePropertyID: county.idBase + i,
      APN: this.apn(i),
      CompleteStreetAddress: titleCase(loc.line) + (loc.unit ? ` Unit ${loc.unit}` : ''),
      StandardizeStreetAddress: loc.line + (loc.unit ? ` UNIT ${loc.unit}` : ''),
      City: loc.city,
      State: county.state,
      Zip: loc.zip,
      Tract: tract,
      StateFips: county.fips.slice(0, 2),
      CountyFips: county.fips.slice(2),
      MSACode: county.msa,
      FinalValue: value,
      HighValue: high,
      LowValue: low,
      ConfidenceScore: confidence,
      StandardDeviation: sd,
      ValuationDate: `${AS_OF.year}-${pad(AS_OF.month - 1, 2)}-${pad(valuationDay, 2)}T00:00:00`,
      CRAEligible: cra,
      FHAEligible: fhaEligible,
      FHALoanLimit: county.fhaLoanLimit,
      FHACondoEligible: condo ? condoApproved : null,
    }
    if (project) {
      // spec 2.1 flat project fields ("not shown" whether present): the sandbox sends them for condos only
      rec['FHAOwnerOccupancyViolation'] = project.owner < 35 ? 'Y' : 'N'
      rec['FHAOwnerOccupancyPercentage'] = project.owner.toFixed(1)
      rec['FHAConcentration'] = project.conc.toFixed(1)
      rec['FHAConcentrationViolation'] = project.conc > 50 ? 'Y' : 'N'
      rec['FHAExpirationDate'] = `${project.expires}T00:00:00`
    } else if (options.nullFlatFields) {
      for (const f of FLAT_FIELDS) rec[f] = null
    }
    rec['USDAAreaEligible'] = usda
    rec['VAEligible'] = va
    rec['Assumable'] = assumable
    rec['TractIncomeLevel'] = cra
    rec['TractMinorityPopulationPercent'] = minority
    if (options.assumable) {
      rec['AssumableMortgage'] =
        assumable === true && r() < 0.92 ? mortgage(r, loanKind as 'FHA' | 'VA' | 'USDA', value) : null
    }
    if (options.condo) {
      rec['FHACondoEligibility'] = project
        ? {
            ApprovalStatus: project.approval,
            EligibilityStatus: project.eligibility,
            CondoName: project.name,
            CondoID: project.id,
            TotalUnits: project.units,
            OwnerOccupancyPercentage: project.owner,
            OwnerOccupancyViolation: project.owner < 35,
            FHAConcentration: project.conc,
            FHAConcentrationViolation: project.conc > 50,
            ExpirationDate: project.expires,
            LastUpdated: project.updated,
          }
        : null
    }
    return rec
  }

  /** One FHA condo project per street segment; a few condos have no project data (option null, spec 2.3 rule 2). */
  private project(county: County, streetIdx: number, forced?: Traits['project']) {
    const r = rng(hash(this.seed, 17, Number(county.fips), streetIdx))
    if (!forced && r() < 0.1) return undefined
    const owner = forced?.owner ?? round1(20 + r() * 75)
    const conc = forced?.conc ?? round1(r() * 65)
    let approval: (typeof APPROVAL_STATUSES)[number] =
      forced?.approval ?? pickWeighted(r, APPROVAL_STATUSES, [0.6, 0, 0.3, 0.1])
    const violation = owner < 35 || conc > 50
    if (approval === 'Approved' && violation) approval = 'Caution'
    const eligibility =
      approval === 'Caution'
        ? 'Caution'
        : approval === 'Approved'
          ? r() < 0.15
            ? 'New Construction'
            : 'Eligible'
          : approval === 'Not Approved'
            ? r() < 0.5
              ? 'Ineligible'
              : 'Eligible For Review'
            : 'Eligible For Review'
    const expYear = 2025 + Math.floor(r() * 4)
    return {
      approval,
      eligibility,
      owner,
      conc,
      name: `${titleCase(county.streets[streetIdx]!.split(' ')[0]!)} ${pick(r, ['Villas', 'Terrace', 'Lofts', 'Commons', 'Towers'])}`,
      id: `P${county.fips}${pad(streetIdx, 4)}`,
      units: 24 + Math.floor(r() * 300),
      expires: `${expYear}-${pad(1 + Math.floor(r() * 12), 2)}-${pad(1 + Math.floor(r() * 28), 2)}`,
      updated: `${AS_OF.year}-${pad(AS_OF.month - 1 - Math.floor(r() * 3), 2)}-${pad(1 + Math.floor(r() * 28), 2)}`,
    }
  }
}

function unitMatches(recordUnit: string | undefined, asked: string | undefined): boolean {
  return (recordUnit ?? '') === (asked ?? '')
}

/** Spec 2.2 arithmetic: amortized balance and payment, LTV to one decimal, equity to whole dollars. */
export function mortgage(
  r: () => number,
  loanType: 'FHA' | 'VA' | 'USDA',
  value: number,
): Record<string, unknown> {
  const year = 2012 + Math.floor(r() * 15)
  const month = 1 + Math.floor(r() * (year === 2026 ? 6 : 12))
  const day = 1 + Math.floor(r() * 28)
  const term = r() < 0.88 ? 360 : 180
  const adj = r() < 0.08
  const rate = round3(Math.max(2, (RATE_BY_YEAR[year] ?? 6) + (r() - 0.5) * 0.75 - (term === 180 ? 0.6 : 0)))
  // the value at recording: back off appreciation of ~4% a year from today's value
  const ageYears = AS_OF.year - year + (AS_OF.month - month) / 12
  const valueThen = value / Math.pow(1.04, Math.max(0, ageYears))
  const ltvThen = loanType === 'VA' || loanType === 'USDA' ? 1 : 0.965
  const original = Math.round((valueThen * ltvThen) / 100) * 100
  const elapsed = Math.min(term, monthsBetween({year, month, day}, AS_OF))
  const {payment, balance} = amortize(original, rate, term, elapsed)
  const due = addMonths({year, month, day}, term)
  const second = r() < 0.12
  return {
    LoanType: loanType,
    FinancingType: adj ? 'ADJ' : 'FIX',
    Lender: pick(r, LENDERS),
    OriginalLoanAmount: original,
    RecordingDate: isoDate({year, month, day}),
    TermMonths: term,
    LoanDueDate: isoDate(due),
    RemainingYears: due.year - AS_OF.year,
    EstimatedLoanBalance: balance,
    EstimatedInterestRate: rate,
    EstimatedMonthlyPayment: payment,
    EstimatedLTV: round1((balance / value) * 100),
    EstimatedEquity: Math.round(value - balance),
    IsRefinance: r() < 0.2,
    SecondMortgageBalance: second ? Math.round(value * (0.03 + r() * 0.1)) : null,
    SecondMortgageInterestRate: second ? round3(7 + r() * 3) : null,
  }
}

/** Standard amortization: payment P·i/(1−(1+i)^−n); balance after k payments P(1+i)^k − pay·((1+i)^k−1)/i. */
export function amortize(principal: number, ratePercent: number, termMonths: number, paid: number) {
  const i = ratePercent / 100 / 12
  const payment = round2((principal * i) / (1 - Math.pow(1 + i, -termMonths)))
  const g = Math.pow(1 + i, paid)
  const balance = Math.max(0, round2(principal * g - (payment * (g - 1)) / i))
  return {payment, balance}
}

interface YMD {
  year: number
  month: number
  day: number
}
export function addMonths(d: YMD, months: number): YMD {
  const total = d.year * 12 + (d.month - 1) + months
  const year = Math.floor(total / 12)
  const month = (total % 12) + 1
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate()
  return {year, month, day: Math.min(d.day, last)}
}
function monthsBetween(a: YMD, b: YMD): number {
  return Math.max(0, (b.year - a.year) * 12 + (b.month - a.month) - (b.day < a.day ? 1 : 0))
}
export function isoDate(d: YMD): string {
  return `${d.year}-${pad(d.month, 2)}-${pad(d.day, 2)}`
}
function round3(n: number): number {
  return Math.round(n * 1000) / 1000
}
function round4(n: number): number {
  return Math.round(n * 10_000) / 10_000
}
function gauss(r: () => number): number {
  // Box-Muller, clipped to ±3σ so values stay plausible
  const g = Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())
  return Math.max(-3, Math.min(3, g))
}
function pickWeighted<T>(r: () => number, xs: readonly T[], weights: readonly number[]): T {
  const total = weights.reduce((a, b) => a + b, 0)
  let x = r() * total
  for (let k = 0; k < xs.length; k++) {
    x -= weights[k]!
    if (x < 0) return xs[k]!
  }
  return xs[xs.length - 1]!
}
function titleCase(s: string): string {
  return s.toLowerCase().replace(/\b([a-z])/g, (c) => c.toUpperCase())
}
