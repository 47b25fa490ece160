import {describe, expect, it} from 'vitest'

import {verdicts} from '../../src/render/verdicts.js'

/**
 * Issue 31, "reasons that claim no more than the record": every flag value the spec allows (true, false,
 * null, omitted) against every form of its option object (omitted: the key lacks the option; null: spec
 * 2.2 rule 3 / 2.3 rule 2; populated), and for each reason a list of claims with the fields that must be
 * in the record for the claim to be made. A reason that asserts a fact the record lacks fails.
 */
type Rec = Record<string, unknown>
const FLAGS = [true, false, null, undefined] as const
const MORTGAGE = {
  LoanType: 'VA',
  EstimatedLoanBalance: 388_051,
  EstimatedInterestRate: 2.954,
  EstimatedEquity: 178_949,
  EstimatedMonthlyPayment: 1878,
  LoanDueDate: '2051-06-01',
  RemainingYears: 25,
}
const APPROVED = {CondoName: 'Birch Towers', ApprovalStatus: 'Approved', EligibilityStatus: 'Eligible', OwnerOccupancyPercentage: 60, LastUpdated: '2026-08-16'} // prettier-ignore
const REFUSED = {...APPROVED, ApprovalStatus: 'Not Approved', EligibilityStatus: 'Ineligible'}
const OBJECTS = {omitted: undefined, null: null, populated: 'populated'} as const

function record(flagField: string, flag: (typeof FLAGS)[number], objField: string, obj: unknown): Rec {
  const r: Rec = {FinalValue: 266_000, FHALoanLimit: 667_000, FHAEligible: true, CRAEligible: 'Middle'}
  if (flag !== undefined) r[flagField] = flag
  if (obj !== undefined) r[objField] = obj
  return r
}
const textOf = (r: Rec, program: string) =>
  verdicts(r, {marketRate: 6.5, today: '2026-11-26'}).find((v) => v.program === program)?.text

/** [what a reason may say, when the record allows it]. */
type Claim = [RegExp, (r: Rec) => boolean]

const ASSUMABLE_CLAIMS: Claim[] = [
  // false says no assumable loan attached; never which loan it is, nor that there is one
  [/is not an FHA, VA or USDA loan|first mortgage is not/, () => false],
  [/loan of \$|\$[\d,]+ of equity|a month less|no saving/, (r) => typeof r['AssumableMortgage'] === 'object' && r['AssumableMortgage'] !== null], // prettier-ignore
  [/\bVA loan\b/, (r) => (r['AssumableMortgage'] as Rec | null | undefined)?.['LoanType'] === 'VA'],
  [/lacks the Assumable Mortgage option/, (r) => !('AssumableMortgage' in r)],
  [/no reliable balance/, (r) => r['AssumableMortgage'] === null],
  [/an FHA, VA or USDA loan is attached/, (r) => r['Assumable'] === true],
  [/no assumable FHA, VA or USDA first mortgage on record/, (r) => r['Assumable'] === false],
]

const CONDO_CLAIMS: Claim[] = [
  [/project is not FHA-approved|without FHA approval/, () => false],
  [/Not approved and not eligible/, (r) => (r['FHACondoEligibility'] as Rec | null | undefined)?.['EligibilityStatus'] === 'Ineligible'], // prettier-ignore
  [/Birch Towers|project data \(updated|Approved\/Eligible/, (r) => typeof r['FHACondoEligibility'] === 'object' && r['FHACondoEligibility'] !== null], // prettier-ignore
  [
    /no FHA condo project data for this property, or not a condo listing/,
    (r) => r['FHACondoEligibility'] === null,
  ],
  [/lacks the FHA Condo option/, (r) => !('FHACondoEligibility' in r)],
  [/says this unit is FHA condo eligible/, (r) => r['FHACondoEligible'] === true],
  [/says this unit is not FHA condo eligible/, (r) => r['FHACondoEligible'] === false],
]

function check(text: string | undefined, r: Rec, claims: Claim[]): string[] {
  if (text === undefined) return []
  return claims.filter(([re, allowed]) => re.test(text) && !allowed(r)).map(([re]) => `${re} in "${text}"`)
}

describe('no reason asserts a fact absent from the record', () => {
  it('Assumable: every flag × AssumableMortgage omitted, null, populated', () => {
    const bad: string[] = []
    let seen = 0
    for (const flag of FLAGS)
      for (const [form, obj] of Object.entries(OBJECTS)) {
        const r = record('Assumable', flag, 'AssumableMortgage', obj === 'populated' ? MORTGAGE : obj)
        const text = textOf(r, 'Assumable')
        expect(text, `${String(flag)} × ${form}`).toMatch(
          flag === true ? /^Yes/ : flag === false ? /^No/ : /^Unknown/,
        )
        bad.push(...check(text, r, ASSUMABLE_CLAIMS))
        seen++
      }
    expect(seen).toBe(12)
    expect(bad).toEqual([])
  })

  it('FHA condo: every flag × FHACondoEligibility omitted, null, approved, not approved (and the FHA line beside it)', () => {
    const bad: string[] = []
    let shown = 0
    for (const flag of FLAGS)
      for (const obj of [undefined, null, APPROVED, REFUSED]) {
        const r = record('FHACondoEligible', flag, 'FHACondoEligibility', obj)
        const text = textOf(r, 'FHA condo')
        if (text !== undefined) shown++
        if (flag === false) expect(text).toMatch(/^No/)
        bad.push(...check(text, r, CONDO_CLAIMS))
        // the FHA line beside it quotes the condo flag, never a reason of its own
        bad.push(...check(textOf({...r, FHAEligible: false}, 'FHA'), r, CONDO_CLAIMS.slice(0, 1)))
      }
    // a house (flag null or omitted, no project data) has no condo line; everything else has one
    expect(shown).toBe(12)
    expect(bad).toEqual([])
  })

  it('the two lines the issue found, as they now read', () => {
    expect(textOf(record('Assumable', false, 'AssumableMortgage', null), 'Assumable')).toBe(
      'No: no assumable FHA, VA or USDA first mortgage on record (spec 2.2 rule 1)',
    )
    expect(textOf(record('FHACondoEligible', false, 'FHACondoEligibility', null), 'FHA condo')).toBe(
      'No: no FHA condo project data for this property, or not a condo listing (spec 2.3 rule 2)',
    )
    expect(textOf(record('FHACondoEligible', false, 'FHACondoEligibility', undefined), 'FHA condo')).toBe(
      'No: the service says this unit is not FHA condo eligible (this key lacks the FHA Condo option, which would say why)',
    )
  })
})
