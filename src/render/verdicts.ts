import {ELIGIBILITY_MEANING, OWNER_OCCUPANCY_MIN} from '../api/spec.js'
import {money, percent} from './format.js'

/**
 * Explained verdicts: one line per special-financing program, with the reason taken from the record's
 * own figures, for a loan officer who must answer "why?". Pure. The table shows `text`; `--explain` adds
 * the same verdicts (code and text) to json/ndjson output beside the record, never inside it.
 */
export type Program = 'FHA' | 'FHA condo' | 'USDA' | 'VA' | 'Assumable' | 'CRA'
export type Outcome = 'eligible' | 'not eligible' | 'caution' | 'unknown'

export interface Verdict {
  program: Program
  outcome: Outcome
  /** Stable machine-readable reasons, e.g. ["FHA_OVER_LIMIT"]. */
  codes: string[]
  /** One line for a person: "No: the value $812,000 is over the county's FHA limit of $667,000 (by $145,000)". */
  text: string
}

export interface VerdictOptions {
  /** `--market-rate R`: the percent rate of a new loan, to price an assumable loan's advantage. */
  marketRate?: number | undefined
}

type Rec = Record<string, unknown>
const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : undefined
const obj = (v: unknown): Rec | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : undefined

/** Every verdict that applies to the record; programs that do not apply (condo for a house) are left out. */
export function verdicts(r: Rec, opts: VerdictOptions = {}): Verdict[] {
  return [fha(r), fhaCondo(r), usda(r), va(r), assumable(r, opts), cra(r)].filter(
    (v): v is Verdict => v !== undefined,
  )
}

/** A condo, as the record says: the condo flag or the condo option is set (spec 2.1 FHACondoEligible: null when not applicable). */
function isCondo(r: Rec): boolean {
  return typeof r['FHACondoEligible'] === 'boolean' || obj(r['FHACondoEligibility']) !== undefined
}

/** Spec 2.1 FHAEligible: "within FHA loan limits and its property type is FHA-eligible". */
function fha(r: Rec): Verdict {
  const value = num(r['FinalValue'])
  const limit = num(r['FHALoanLimit'])
  const flag = r['FHAEligible']
  const figures = value !== undefined && limit !== undefined
  if (flag === true)
    return {
      program: 'FHA',
      outcome: 'eligible',
      codes: ['FHA_ELIGIBLE'],
      text: figures
        ? value <= limit
          ? `Yes: the value ${money(value)} is within the county's FHA loan limit of ${money(limit)}`
          : `Yes: the loan fits the county's FHA loan limit of ${money(limit)} with a down payment, though the value ${money(value)} is above it`
        : 'Yes: within the FHA loan limit, and the property type is FHA-eligible',
    }
  if (flag === false && figures && value > limit)
    return {
      program: 'FHA',
      outcome: 'not eligible',
      codes: ['FHA_OVER_LIMIT'],
      text: `No: the value ${money(value)} is over the county's FHA loan limit of ${money(limit)} (by ${money(value - limit)})`,
    }
  if (flag === false && figures) {
    // within the limit yet not eligible: by the spec's definition of the flag, the property type rules it out
    const condo = isCondo(r) && r['FHACondoEligible'] === false
    return {
      program: 'FHA',
      outcome: 'not eligible',
      codes: condo ? ['FHA_PROPERTY_TYPE', 'FHA_CONDO_NOT_APPROVED'] : ['FHA_PROPERTY_TYPE'],
      text: `No: the value ${money(value)} is within the county's FHA loan limit of ${money(limit)}, so the property type rules it out${condo ? ' (a condo in a project without FHA approval)' : ''}`,
    }
  }
  if (flag === false)
    return {program: 'FHA', outcome: 'not eligible', codes: ['FHA_NOT_ELIGIBLE'], text: 'No'}
  return {
    program: 'FHA',
    outcome: 'unknown',
    codes: ['FHA_UNKNOWN'],
    text: 'Unknown: the service gave no answer',
  }
}

/** Spec 2.3: the status meanings, and the 35% owner-occupancy minimum (spec 8.5). */
function fhaCondo(r: Rec): Verdict | undefined {
  if (!isCondo(r)) return undefined // a house: the row does not apply
  const c = obj(r['FHACondoEligibility'])
  const codes: string[] = []
  const reasons: string[] = []
  const owner = num(c ? c['OwnerOccupancyPercentage'] : r['FHAOwnerOccupancyPercentage'])
  if (owner !== undefined && owner < OWNER_OCCUPANCY_MIN) {
    codes.push('CONDO_OWNER_OCCUPANCY_LOW')
    reasons.push(`owner occupancy ${percent(owner)} is under the ${OWNER_OCCUPANCY_MIN}% minimum`)
  }
  const concViolation = c ? c['FHAConcentrationViolation'] === true : r['FHAConcentrationViolation'] === 'Y'
  if (concViolation) {
    codes.push('CONDO_FHA_CONCENTRATION_HIGH')
    reasons.push(
      `FHA concentration ${percent(num(c ? c['FHAConcentration'] : r['FHAConcentration']))} is over the project limit`,
    )
  }
  const status = c?.['EligibilityStatus']
  const meaning =
    typeof status === 'string' ? ELIGIBILITY_MEANING[status as keyof typeof ELIGIBILITY_MEANING] : undefined
  const why = reasons.length ? `; ${reasons.join('; ')}` : ''
  if (typeof status === 'string' && meaning) {
    const outcome: Outcome =
      status === 'Eligible'
        ? 'eligible'
        : status === 'Ineligible'
          ? 'not eligible'
          : status === 'Eligible For Review'
            ? 'not eligible'
            : 'caution'
    const name = typeof c?.['CondoName'] === 'string' ? ` (${c['CondoName']})` : ''
    return {
      program: 'FHA condo',
      outcome,
      codes: [`CONDO_${status.toUpperCase().replace(/ /g, '_')}`, ...codes],
      text: `${status}${name}: ${meaning}${why}`,
    }
  }
  const flag = r['FHACondoEligible']
  if (flag === true)
    return {
      program: 'FHA condo',
      outcome: reasons.length ? 'caution' : 'eligible',
      codes: ['CONDO_APPROVED', ...codes],
      text: `Yes: the project is FHA-approved${why}`,
    }
  return {
    program: 'FHA condo',
    outcome: 'not eligible',
    codes: ['CONDO_NOT_APPROVED', ...codes],
    text: `No: the project is not FHA-approved${why}`,
  }
}

function usda(r: Rec): Verdict {
  const v = r['USDAAreaEligible']
  return v === true
    ? {
        program: 'USDA',
        outcome: 'eligible',
        codes: ['USDA_RURAL'],
        text: 'Yes: the address is in a USDA-approved rural area',
      }
    : v === false
      ? {
          program: 'USDA',
          outcome: 'not eligible',
          codes: ['USDA_NOT_RURAL'],
          text: 'No: the address is not in a USDA-approved rural area',
        }
      : {
          program: 'USDA',
          outcome: 'unknown',
          codes: ['USDA_UNKNOWN'],
          text: 'Unknown: the service has no USDA area answer for this address',
        }
}

function va(r: Rec): Verdict {
  const v = r['VAEligible']
  return v === true
    ? {
        program: 'VA',
        outcome: 'eligible',
        codes: ['VA_ELIGIBLE'],
        text: 'Yes: the address and property type are VA loan-limit eligible',
      }
    : v === false
      ? {
          program: 'VA',
          outcome: 'not eligible',
          codes: ['VA_NOT_ELIGIBLE'],
          text: 'No: the address or property type is not VA loan-limit eligible',
        }
      : {
          program: 'VA',
          outcome: 'unknown',
          codes: ['VA_UNKNOWN'],
          text: 'Unknown: the service has no VA answer for this property',
        }
}

/** Monthly principal and interest of `principal` at `ratePercent` over `months` (standard amortization). */
export function monthlyPayment(principal: number, ratePercent: number, months: number): number {
  const i = ratePercent / 100 / 12
  if (i === 0) return principal / months
  return (principal * i) / (1 - Math.pow(1 + i, -months))
}

/** Spec 2.2: FHA, VA and USDA first mortgages are assumable; EstimatedEquity is the gap a buyer covers. */
function assumable(r: Rec, opts: VerdictOptions): Verdict | undefined {
  const flag = r['Assumable']
  if (flag === false)
    return {
      program: 'Assumable',
      outcome: 'not eligible',
      codes: ['NOT_ASSUMABLE'],
      text: 'No: the first mortgage is not an FHA, VA or USDA loan',
    }
  if (flag !== true) return undefined // null: no mortgage on record, so the row does not apply
  if (!('AssumableMortgage' in r))
    return {
      program: 'Assumable',
      outcome: 'eligible',
      codes: ['ASSUMABLE_NO_DETAIL_OPTION'],
      text: 'Yes: an FHA, VA or USDA loan is attached (this key lacks the Assumable Mortgage option for its figures)',
    }
  const m = obj(r['AssumableMortgage'])
  if (!m)
    return {
      program: 'Assumable',
      outcome: 'eligible',
      codes: ['ASSUMABLE_NO_RELIABLE_BALANCE'],
      text: 'Yes: an FHA, VA or USDA loan is attached, but the service has no reliable balance for it',
    }
  const balance = num(m['EstimatedLoanBalance'])
  const rate = num(m['EstimatedInterestRate'])
  const equity = num(m['EstimatedEquity'])
  const payment = num(m['EstimatedMonthlyPayment'])
  const parts = [
    `Yes: ${typeof m['LoanType'] === 'string' ? m['LoanType'] : 'a'} loan of ${money(balance)} at ${percent(rate, 3)}`,
  ]
  const codes = ['ASSUMABLE']
  if (equity !== undefined && equity > 0) {
    codes.push('ASSUMABLE_EQUITY_GAP')
    parts.push(`the buyer covers ${money(equity)} of equity in cash or a second loan`)
  }
  const months = Math.max(12, (num(m['RemainingYears']) ?? 30) * 12)
  if (opts.marketRate !== undefined && balance !== undefined && payment !== undefined) {
    // like for like: the same balance over the same remaining term, at the market rate instead
    const fresh = monthlyPayment(balance, opts.marketRate, months)
    const saved = fresh - payment
    codes.push(saved > 0 ? 'ASSUMABLE_SAVES' : 'ASSUMABLE_NO_SAVING')
    parts.push(
      saved > 0
        ? `${money(saved)} a month less than a new loan at ${opts.marketRate}% (${money(payment)} vs ${money(fresh)})`
        : `no saving against a new loan at ${opts.marketRate}% (${money(payment)} vs ${money(fresh)})`,
    )
  }
  return {program: 'Assumable', outcome: 'eligible', codes, text: parts.join('; ')}
}

/** Spec 2.1 CRAEligible levels; Low and Moderate tracts are the ones that count toward CRA lending goals. */
function cra(r: Rec): Verdict | undefined {
  const level = r['CRAEligible']
  if (typeof level !== 'string') return undefined
  const minority = num(r['TractMinorityPopulationPercent'])
  const tail = minority === undefined ? '' : ` (tract minority population ${percent(minority)})`
  if (level === 'Low' || level === 'Moderate')
    return {
      program: 'CRA',
      outcome: 'eligible',
      codes: [`CRA_${level.toUpperCase()}`],
      text: `Yes: a ${level.toLowerCase()}-income tract, where loans count toward a lender's CRA goals${tail}`,
    }
  if (level === 'Middle' || level === 'Upper')
    return {
      program: 'CRA',
      outcome: 'not eligible',
      codes: [`CRA_${level.toUpperCase()}`],
      text: `No: ${level === 'Upper' ? 'an upper' : 'a middle'}-income tract, not low or moderate income${tail}`,
    }
  return {program: 'CRA', outcome: 'unknown', codes: ['CRA_NOT_AVAILABLE'], text: `Unknown: ${level}${tail}`}
}

/**
 * Spec 2.1 gives StandardDeviation no unit. Read as a share of the value (below 1), a percent (1–100) or
 * dollars (above 100), and say what it means for the estimate.
 */
export function standardDeviationMeaning(sd: unknown, value: unknown): string | undefined {
  const s = num(sd)
  const v = num(value)
  if (s === undefined) return undefined
  const share = s < 1 ? s : s <= 100 ? s / 100 : v ? s / v : undefined
  if (share === undefined) return `${s}`
  const dollars = v === undefined ? '' : `, ±${money(Math.round((share * v) / 1000) * 1000)}`
  return `${s}: the estimate is typically within ±${(share * 100).toFixed(1)}% of the true value${dollars} (about two times in three)`
}
