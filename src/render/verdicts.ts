import {fhaCondo} from './condo-verdict.js'
import {money, percent} from './format.js'
import {CONFLICT, flagOf, num, obj, str, verdict, type Rec, type Verdict} from './verdict-parts.js'
import type {LookupMatch, SentForm} from '../lookup/address-lookup.js'

export {
  CONFLICT,
  OUTCOME_WORD,
  PROGRAM_LABEL,
  type Outcome,
  type Program,
  type Verdict,
} from './verdict-parts.js'

/**
 * Explained verdicts: one line per special-financing program, for a loan officer who must answer "why?".
 * Pure. The service's flag is the verdict; the record's figures and option objects explain it
 * (verdict-parts.ts states the rule). The table shows `text`; `--explain` adds the same verdicts (code and
 * text) to json/ndjson output beside the record, never inside it.
 */
export interface VerdictOptions {
  /** `--market-rate R`: the percent rate of a new loan, to price an assumable loan's advantage. */
  marketRate?: number | undefined
  /**
   * Today's date, YYYY-MM-DD, from the caller's clock (the rules read no clock): the months left on an
   * assumable loan run from it to LoanDueDate. Without it the term falls back to RemainingYears.
   */
  today?: string | undefined
}

/** Every verdict that applies to the record; the condo program is left out for a house. */
export function verdicts(r: Rec, opts: VerdictOptions = {}): Verdict[] {
  return [fha(r), fhaCondo(r), usda(r), va(r), assumable(r, opts), cra(r)].filter(
    (v): v is Verdict => v !== undefined,
  )
}

/** Spec 2.1 FHAEligible: "within FHA loan limits and its property type is FHA-eligible". */
function fha(r: Rec): Verdict {
  const value = num(r['FinalValue'])
  const limit = num(r['FHALoanLimit'])
  const flag = flagOf(r['FHAEligible'])
  const figures = value !== undefined && limit !== undefined
  if (flag === true)
    return verdict(
      'FHA',
      'eligible',
      ['FHA_ELIGIBLE'],
      figures
        ? value <= limit
          ? `the value ${money(value)} is within the county's FHA loan limit of ${money(limit)}`
          : `the loan fits the county's FHA loan limit of ${money(limit)} with a down payment, though the value ${money(value)} is above it`
        : 'within the FHA loan limit, and the property type is FHA-eligible',
    )
  if (flag === undefined)
    return verdict('FHA', 'unknown', ['FHA_UNKNOWN'], 'the service gave no FHA answer for this property')
  if (figures && value > limit)
    return verdict(
      'FHA',
      'not eligible',
      ['FHA_NOT_ELIGIBLE', 'FHA_OVER_LIMIT'],
      `the value ${money(value)} is over the county's FHA loan limit of ${money(limit)} (by ${money(value - limit)})`,
    )
  if (figures) {
    // within the limit yet not eligible: by the spec's definition of the flag (2.1 FHAEligible), the
    // property type rules it out; a condo's own flag is quoted, not read as a reason it does not give
    const condo = r['FHACondoEligible'] === false
    return verdict(
      'FHA',
      'not eligible',
      ['FHA_NOT_ELIGIBLE', 'FHA_PROPERTY_TYPE', ...(condo ? ['FHA_CONDO_NOT_APPROVED'] : [])],
      `the value ${money(value)} is within the county's FHA loan limit of ${money(limit)}, so the property type rules it out (spec 2.1)${condo ? '; the service also says this unit is not FHA condo eligible' : ''}`,
    )
  }
  return verdict(
    'FHA',
    'not eligible',
    ['FHA_NOT_ELIGIBLE'],
    'the service says the property is not FHA-eligible',
  )
}

function usda(r: Rec): Verdict {
  const v = flagOf(r['USDAAreaEligible'])
  return v === true
    ? verdict('USDA', 'eligible', ['USDA_RURAL'], 'the address is in a USDA-approved rural area')
    : v === false
      ? verdict(
          'USDA',
          'not eligible',
          ['USDA_NOT_RURAL'],
          'the address is not in a USDA-approved rural area',
        )
      : verdict('USDA', 'unknown', ['USDA_UNKNOWN'], 'the service has no USDA area answer for this address')
}

function va(r: Rec): Verdict {
  const v = flagOf(r['VAEligible'])
  return v === true
    ? verdict('VA', 'eligible', ['VA_ELIGIBLE'], 'the address and property type are VA loan-limit eligible')
    : v === false
      ? verdict(
          'VA',
          'not eligible',
          ['VA_NOT_ELIGIBLE'],
          'the address or property type is not VA loan-limit eligible',
        )
      : verdict('VA', 'unknown', ['VA_UNKNOWN'], 'the service has no VA answer for this property')
}

/**
 * Monthly principal and interest of `principal` at `ratePercent` over `months` (standard amortization,
 * docs/lookup.md "The arithmetic"): P = B·i / (1 − (1 + i)^−n), with i the monthly rate, R / 100 / 12.
 */
export function monthlyPayment(principal: number, ratePercent: number, months: number): number {
  const i = ratePercent / 100 / 12
  if (i === 0) return principal / months
  return (principal * i) / (1 - Math.pow(1 + i, -months))
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})/

/**
 * The monthly payments left on a loan due `due` (spec 2.2 LoanDueDate, YYYY-MM-DD) as of `today`: one on
 * each monthly date of the due date's day that falls after today, up to and including the due date
 * ("2035-02-20" from "2026-11-26": December 2026 to February 2035, 99). Zero when the loan is due;
 * undefined when a date cannot be read. Pure. RemainingYears is not used: spec 2.2 defines it as a
 * calendar-year difference (9 for that loan: 108 months, nine too many).
 *
 * @example paymentsLeft('2035-02-20', '2026-11-26') // 99
 */
export function paymentsLeft(due: string, today: string): number | undefined {
  const d = DATE.exec(due)
  const t = DATE.exec(today)
  if (!d || !t) return undefined
  const months = (Number(d[1]) - Number(t[1])) * 12 + (Number(d[2]) - Number(t[2]))
  // this month's payment date is still ahead when today's day is before the due date's day
  const left = months + (Number(t[3]) < Number(d[3]) ? 1 : 0)
  return Math.max(0, left)
}

/** The term to price over: the payments left to LoanDueDate, else RemainingYears × 12 (said), else none. */
function termOf(m: Rec, today: string | undefined): {months: number; from: string} | undefined {
  const due = str(m['LoanDueDate'])
  const left = due === undefined || today === undefined ? undefined : paymentsLeft(due, today)
  if (left !== undefined) return {months: left, from: `the ${left} months left to ${due}`}
  const years = num(m['RemainingYears'])
  if (years === undefined || years <= 0) return undefined
  const why =
    due === undefined
      ? 'no LoanDueDate'
      : today === undefined
        ? 'no date to count from'
        : 'an unreadable LoanDueDate'
  return {
    months: years * 12,
    from: `${years * 12} months (${years} RemainingYears, a calendar-year difference: ${why})`,
  }
}

/** Spec 2.2 rule 1: the loan types that are assumable. */
const ASSUMABLE_TYPES: ReadonlySet<string> = new Set(['FHA', 'VA', 'USDA'])
const SERVICER = 'confirm with the loan servicer'

/** "an FHA", "a VA": an initialism is read letter by letter (F is "ef"), a word by its first vowel. */
function article(word: string): string {
  return (/^[A-Z]+$/.test(word) ? /^[AEFHILMNORSX]/ : /^[aeiou]/i).test(word) ? 'an' : 'a'
}

/** "a VA loan of $388,051 recorded 2021-05-03": what a mortgage object shows, for a conflict line. */
function loanShown(m: Rec): string {
  const type = str(m['LoanType'])
  const balance = num(m['EstimatedLoanBalance'])
  const recorded = str(m['RecordingDate'])
  return `${type === undefined ? 'a' : `${article(type)} ${type}`} loan${balance === undefined ? '' : ` of ${money(balance)}`}${recorded === undefined ? '' : ` recorded ${recorded}`}`
}

/**
 * Spec 2.2: FHA, VA and USDA first mortgages are assumable (the Assumable flag); the option gives the loan
 * and EstimatedEquity, the gap a buyer covers. A populated object means an assumable loan (rule 1; rule 3
 * makes it null otherwise), so one beside a flag that is not true, or naming another loan type beside a
 * true flag, is a conflict.
 */
function assumable(r: Rec, opts: VerdictOptions): Verdict {
  const flag = flagOf(r['Assumable'])
  const m = obj(r['AssumableMortgage'])
  const shows = m ? `its mortgage data shows ${loanShown(m)}` : ''
  if (flag === undefined)
    return m
      ? verdict('Assumable', 'unknown', ['ASSUMABLE_UNKNOWN', CONFLICT], `the service gives no assumable-loan answer for this property; ${shows}: ${SERVICER}`) // prettier-ignore
      : verdict('Assumable', 'unknown', ['ASSUMABLE_UNKNOWN'], 'the service gives no assumable-loan answer for this property') // prettier-ignore
  // false: no assumable loan attached (spec 2.1), which is also what a property without a mortgage on
  // record gets; the record does not say which, so neither is claimed (spec 2.2 rules 1 and 3)
  if (flag === false)
    return m
      ? verdict('Assumable', 'not eligible', ['NOT_ASSUMABLE', CONFLICT], `the service says the loan is not assumable; ${shows}: ${SERVICER}`) // prettier-ignore
      : verdict('Assumable', 'not eligible', ['NOT_ASSUMABLE'], 'no assumable FHA, VA or USDA first mortgage on record (spec 2.2 rule 1)') // prettier-ignore
  // nothing to price: say so rather than drop --market-rate without a word
  const unpriced = (codes: string[], text: string): Verdict =>
    opts.marketRate === undefined
      ? verdict('Assumable', 'eligible', codes, text)
      : verdict('Assumable', 'eligible', [...codes, 'ASSUMABLE_NOT_PRICED'], `${text}; no loan figures to price against the ${opts.marketRate}% market rate`) // prettier-ignore
  if (!('AssumableMortgage' in r))
    return unpriced(['ASSUMABLE', 'ASSUMABLE_NO_DETAIL_OPTION'], 'an FHA, VA or USDA loan is attached (this key lacks the Assumable Mortgage option for its figures)') // prettier-ignore
  if (!m)
    return unpriced(['ASSUMABLE', 'ASSUMABLE_NO_RELIABLE_BALANCE'], 'an FHA, VA or USDA loan is attached, but the service has no reliable balance for it') // prettier-ignore
  const type = str(m['LoanType'])
  if (type !== undefined && !ASSUMABLE_TYPES.has(type))
    return verdict('Assumable', 'eligible', ['ASSUMABLE', CONFLICT], `the service says the loan is assumable; ${shows}, and only FHA, VA and USDA loans are (spec 2.2 rule 1): ${SERVICER}`) // prettier-ignore
  return assumableFigures(m, opts)
}

/** A true flag with the loan's figures: balance, rate, the equity gap, and the saving at --market-rate. */
function assumableFigures(m: Rec, opts: VerdictOptions): Verdict {
  const balance = num(m['EstimatedLoanBalance'])
  const rate = num(m['EstimatedInterestRate'])
  const equity = num(m['EstimatedEquity'])
  const parts = [`${str(m['LoanType']) ?? 'a'} loan of ${money(balance)} at ${percent(rate, 3)}`]
  const codes = ['ASSUMABLE']
  if (equity !== undefined && equity > 0) {
    codes.push('ASSUMABLE_EQUITY_GAP')
    parts.push(`the buyer covers ${money(equity)} of equity in cash or a second loan`)
  }
  if (opts.marketRate !== undefined) parts.push(priced(m, opts.marketRate, opts.today, codes))
  return verdict('Assumable', 'eligible', codes, parts.join('; '))
}

/**
 * The assumable loan's payment against a new loan of the same balance over the same remaining term at the
 * market rate. Each amount is rounded to whole dollars once and the difference is taken from the rounded
 * figures, so the line adds up as printed ("$786 a month less ... ($1,878 vs $2,664)").
 */
function priced(m: Rec, rate: number, today: string | undefined, codes: string[]): string {
  const balance = num(m['EstimatedLoanBalance'])
  const payment = num(m['EstimatedMonthlyPayment'])
  const term = termOf(m, today)
  if (balance === undefined || payment === undefined || term === undefined || term.months === 0) {
    codes.push('ASSUMABLE_NOT_PRICED')
    const missing =
      balance === undefined || payment === undefined
        ? 'no balance and payment'
        : term?.months === 0
          ? 'the loan is due, no term left'
          : 'no term (LoanDueDate or RemainingYears)'
    return `${missing} to price against the ${rate}% market rate`
  }
  if (!term.from.startsWith('the ')) codes.push('ASSUMABLE_TERM_FROM_YEARS')
  const theirs = Math.round(payment)
  const fresh = Math.round(monthlyPayment(balance, rate, term.months))
  const saved = fresh - theirs
  codes.push(saved > 0 ? 'ASSUMABLE_SAVES' : 'ASSUMABLE_NO_SAVING')
  const vs = `(${money(theirs)} vs ${money(fresh)} over ${term.from})`
  return saved > 0
    ? `${money(saved)} a month less than a new loan at ${rate}% ${vs}`
    : `no saving against a new loan at ${rate}% ${vs}`
}

/** Spec 2.1 CRAEligible levels; Low and Moderate tracts are the ones that count toward CRA lending goals. */
function cra(r: Rec): Verdict {
  const level = r['CRAEligible']
  const minority = num(r['TractMinorityPopulationPercent'])
  const tail = minority === undefined ? '' : ` (tract minority population ${percent(minority)})`
  if (typeof level !== 'string' || level === '')
    return verdict('CRA', 'unknown', ['CRA_UNKNOWN'], `the service gives no CRA level for this tract${tail}`)
  if (level === 'Low' || level === 'Moderate')
    return verdict('CRA', 'eligible', [`CRA_${level.toUpperCase()}`], `a ${level.toLowerCase()}-income tract, where loans count toward a lender's CRA goals${tail}`) // prettier-ignore
  if (level === 'Middle' || level === 'Upper')
    return verdict('CRA', 'not eligible', [`CRA_${level.toUpperCase()}`], `${level === 'Upper' ? 'an upper' : 'a middle'}-income tract, not low or moderate income${tail}`) // prettier-ignore
  return verdict('CRA', 'unknown', [level === 'Not Available' ? 'CRA_NOT_AVAILABLE' : 'CRA_UNKNOWN'], `${level}${tail}`) // prettier-ignore
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

const sentValue = (s: SentForm): string => ('address' in s ? s.address : 'apn' in s ? s.apn : s.property_id)

/**
 * What the table's Address group, stderr and the short answer say of a match that is not the unit asked
 * for (src/address/unit-match.ts). Undefined for any other match.
 * - the ladder's last step: `Without the unit: "5201 LAGUNA OAKS DR UNIT 999" matched nothing; this record
 *   matched "5201 LAGUNA OAKS DR"`;
 * - an earlier step, the record without a unit: `Without the unit: APT 9 was asked for; this record ("3526
 *   HIGH ST") has no unit`;
 * - another unit: `Another unit: APT 9 was asked for; this record is UNIT 12 ("3526 HIGH ST UNIT 12")`.
 */
export function withoutUnitText(match: LookupMatch | undefined): string | undefined {
  if (match?.status !== 'matched_without_unit') return undefined
  const first = match.tried[0]
  const last = match.tried.at(-1)
  const u = match.unit
  if (last && 'form' in last && last.form === 'without the unit' && first) {
    const other = u?.other === undefined ? '' : `; its unit is ${u.other}`
    return `Without the unit: "${sentValue(first)}" matched nothing; this record matched "${sentValue(last)}"${other}`
  }
  if (u === undefined) return undefined
  return u.other === undefined
    ? `Without the unit: ${u.asked} was asked for; this record ("${u.address}") has no unit`
    : `Another unit: ${u.asked} was asked for; this record is ${u.other} ("${u.address}")`
}
