import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {APPROVAL_STATUSES, ELIGIBILITY_STATUSES} from '../../src/api/spec.js'
import {CONFLICT, OUTCOME_WORD, verdicts, type Outcome, type Verdict} from '../../src/render/verdicts.js'
import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'

/** Issue 22: the service's flag is the verdict; the option objects explain it (spec 2.3 rule 4). */
type Rec = Record<string, unknown>
const ds = new Dataset(1, 10)
const sac = countyByFips('06067')!
const full = (i: number) => ds.record(sac, i, {assumable: true, condo: true})
const of = (r: Rec, program: string) => verdicts(r).find((v) => v.program === program)
const without = (r: Rec, key: string): Rec => Object.fromEntries(Object.entries(r).filter(([k]) => k !== key))

/** An approved condo (record 7 is the Caution one; record 8 the Not Approved one), made to disagree. */
const approved = full(7)
const unapproved = full(8)
const projectOf = (r: Rec) => r['FHACondoEligibility'] as Rec

describe('the FHA condo flag is the verdict', () => {
  it('flag false with project data that says Approved/Eligible: No, the conflict in words and a CONFLICT code', () => {
    const r = {
      ...approved,
      FHACondoEligible: false,
      FHACondoEligibility: {
        ...projectOf(approved),
        ApprovalStatus: 'Approved',
        EligibilityStatus: 'Eligible',
      },
    }
    expect(of(r, 'FHA condo')).toEqual({
      program: 'FHA condo',
      outcome: 'not eligible',
      codes: ['CONDO_NOT_ELIGIBLE', CONFLICT, 'CONDO_STATUS_ELIGIBLE', 'CONDO_OWNER_OCCUPANCY_LOW'],
      text: `No (Birch Towers): the service says this unit is not FHA condo eligible; its project data (updated ${projectOf(approved)['LastUpdated'] as string}) says Approved/Eligible: confirm with the FHA condo list; owner occupancy 31.5% is under the 35% minimum`,
    })
    // the same unit without the option: still No, never Yes
    expect(of(without(r, 'FHACondoEligibility'), 'FHA condo')!.outcome).toBe('not eligible')
  })

  it('flag true with project data that says Not Approved/Ineligible: never No; a Caution that names the conflict', () => {
    const r = {...unapproved, FHACondoEligible: true}
    const v = of(r, 'FHA condo')!
    expect(v.outcome).toBe('caution')
    expect(v.codes).toEqual(['CONDO_ELIGIBLE', CONFLICT, 'CONDO_STATUS_INELIGIBLE'])
    expect(v.text).toBe(
      `Caution (${projectOf(unapproved)['CondoName'] as string}): the service says this unit is FHA condo eligible; its project data (updated ${projectOf(unapproved)['LastUpdated'] as string}) says Not Approved/Ineligible: confirm with the FHA condo list`,
    )
    // without the option the same unit is no stronger (it was "Yes" before issue 22)
    expect(of(without(r, 'FHACondoEligibility'), 'FHA condo')!.outcome).toBe('caution')
  })

  it('a consistent record has no CONFLICT code: an Eligible unit reads Yes, an Ineligible one No', () => {
    const eligible = {
      ...approved,
      FHAOwnerOccupancyPercentage: '60.0',
      FHACondoEligibility: {...projectOf(approved), EligibilityStatus: 'Eligible', ApprovalStatus: 'Approved', OwnerOccupancyPercentage: 60}, // prettier-ignore
    }
    expect(of(eligible, 'FHA condo')).toMatchObject({
      outcome: 'eligible',
      codes: ['CONDO_ELIGIBLE', 'CONDO_STATUS_ELIGIBLE'],
      text: 'Yes (Birch Towers): project approved; unit eligible for FHA financing',
    })
    expect(of(unapproved, 'FHA condo')).toMatchObject({
      outcome: 'not eligible',
      codes: ['CONDO_NOT_ELIGIBLE', 'CONDO_STATUS_INELIGIBLE'],
      text: `No (${projectOf(unapproved)['CondoName'] as string}): Ineligible: not approved and not eligible`,
    })
  })

  it('a null condo flag beside project data is Unknown with a CONFLICT code; a house (null, nothing else) has no condo line', () => {
    const r = {...approved, FHACondoEligible: null}
    expect(of(r, 'FHA condo')).toMatchObject({outcome: 'unknown', codes: ['CONDO_UNKNOWN', CONFLICT, 'CONDO_STATUS_CAUTION', 'CONDO_OWNER_OCCUPANCY_LOW']}) // prettier-ignore
    expect(of(r, 'FHA condo')!.text).toMatch(
      /^Unknown \(Birch Towers\): the service gives no FHA condo answer/,
    )
    expect(of(full(6), 'FHA condo')).toBeUndefined()
  })

  it('a key with the option but no project data (null): a Yes flag is a Caution, a No flag stays No', () => {
    expect(of({...approved, FHACondoEligibility: null}, 'FHA condo')).toMatchObject({
      outcome: 'caution',
      codes: ['CONDO_ELIGIBLE', 'CONDO_NO_PROJECT_DATA', 'CONDO_OWNER_OCCUPANCY_LOW'],
    })
    expect(of({...unapproved, FHACondoEligibility: null}, 'FHA condo')!.outcome).toBe('not eligible')
  })
})

describe('the assumable flag is the verdict', () => {
  const house = full(6) // Assumable true, an FHA loan with figures
  it('flag false beside loan detail: No, the conflict in words', () => {
    const v = of({...house, Assumable: false}, 'Assumable')!
    expect(v.outcome).toBe('not eligible')
    expect(v.codes).toEqual(['NOT_ASSUMABLE', CONFLICT])
    expect(v.text).toBe(
      'No: the service says the loan is not assumable; its mortgage data shows an FHA loan of $462,672 recorded 2024-09-16: confirm with the loan servicer',
    )
  })

  it('flag true beside a loan type that is not assumable: Yes, the conflict in words', () => {
    const m = {...(house['AssumableMortgage'] as Rec), LoanType: 'CONV'}
    const v = of({...house, AssumableMortgage: m}, 'Assumable')!
    expect(v.outcome).toBe('eligible')
    expect(v.codes).toEqual(['ASSUMABLE', CONFLICT])
    expect(v.text).toMatch(
      /^Yes: the service says the loan is assumable; its mortgage data shows a CONV loan of/,
    )
  })

  it('a null flag beside loan detail: Unknown with a CONFLICT code', () => {
    expect(of({...house, Assumable: null}, 'Assumable')!.codes).toEqual(['ASSUMABLE_UNKNOWN', CONFLICT])
  })

  it('--market-rate with no figures to price says so instead of being dropped', () => {
    const basic = ds.record(sac, 6, {assumable: false, condo: false})
    const v = verdicts(basic, {marketRate: 6.5}).find((x) => x.program === 'Assumable')!
    expect(v.codes).toEqual(['ASSUMABLE', 'ASSUMABLE_NO_DETAIL_OPTION', 'ASSUMABLE_NOT_PRICED'])
    expect(v.text).toMatch(/; no loan figures to price against the 6\.5% market rate$/)
  })
})

describe('a null flag (spec boolean?) is Unknown, never Yes or No', () => {
  it.each([
    ['FHAEligible', 'FHA', 'FHA_UNKNOWN'],
    ['USDAAreaEligible', 'USDA', 'USDA_UNKNOWN'],
    ['VAEligible', 'VA', 'VA_UNKNOWN'],
    ['Assumable', 'Assumable', 'ASSUMABLE_UNKNOWN'],
    ['CRAEligible', 'CRA', 'CRA_UNKNOWN'],
  ])('%s null: %s Unknown', (field, program, code) => {
    for (const value of [null, undefined, 'true', 1]) {
      const r = value === undefined ? without(full(17), field) : {...full(17), [field]: value}
      const v = of({...r, AssumableMortgage: null}, program)!
      expect(v.outcome, `${field}=${String(value)}`).toBe('unknown')
      expect(v.codes[0]).toBe(code)
      expect(v.text.startsWith('Unknown')).toBe(true)
    }
  })
})

// ---- properties over any record: flags, statuses and option objects in every combination ----

const RANK: Record<Outcome, number> = {eligible: 3, caution: 2, unknown: 1, 'not eligible': 0}
const flag = fc.constantFrom<unknown>(true, false, null, undefined, 'true')
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, {nil: undefined})
const condoObject = fc.record({
  ApprovalStatus: maybe(fc.constantFrom<string>(...APPROVAL_STATUSES, 'Pending')),
  EligibilityStatus: maybe(fc.constantFrom<string>(...ELIGIBILITY_STATUSES, 'Odd')),
  CondoName: maybe(fc.string({maxLength: 8})),
  OwnerOccupancyPercentage: maybe(fc.double({min: 0, max: 100, noNaN: true})),
  FHAConcentrationViolation: maybe(fc.boolean()),
  LastUpdated: maybe(fc.constant('2026-05-01')),
})
const mortgageObject = fc.record({
  LoanType: maybe(fc.constantFrom('FHA', 'VA', 'USDA', 'CONV')),
  EstimatedLoanBalance: maybe(fc.integer({min: 0, max: 900_000})),
  EstimatedMonthlyPayment: maybe(fc.integer({min: 1, max: 9000})),
  EstimatedEquity: maybe(fc.integer({min: -50_000, max: 500_000})),
  RemainingYears: maybe(fc.integer({min: 0, max: 30})),
})
const record = fc
  .record({
    FinalValue: maybe(fc.integer({min: 50_000, max: 2_000_000})),
    FHALoanLimit: maybe(fc.constantFrom(541_287, 667_000, 1_249_125)),
    FHAEligible: flag,
    FHACondoEligible: flag,
    USDAAreaEligible: flag,
    VAEligible: flag,
    Assumable: flag,
    CRAEligible: maybe(fc.constantFrom('Low', 'Moderate', 'Middle', 'Upper', 'Not Available')),
    FHAOwnerOccupancyPercentage: maybe(fc.constantFrom('20.0', '60.0', null)),
    FHAConcentrationViolation: maybe(fc.constantFrom('Y', 'N')),
    FHACondoEligibility: fc.oneof(fc.constant(null), condoObject),
    AssumableMortgage: fc.oneof(fc.constant(null), mortgageObject),
  })
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)))
const marketRate = maybe(fc.constantFrom(3, 6.5, 12))

describe('properties of every verdict', () => {
  it('the outcome follows the flag: true is Yes or Caution, false is No, anything else Unknown', () => {
    const FLAG: Record<string, string> = {
      FHA: 'FHAEligible',
      'FHA condo': 'FHACondoEligible',
      USDA: 'USDAAreaEligible',
      VA: 'VAEligible',
      Assumable: 'Assumable',
    }
    fc.assert(
      fc.property(record, marketRate, (r, rate) => {
        for (const v of verdicts(r, {marketRate: rate})) {
          const field = FLAG[v.program]
          if (field === undefined) continue
          const f = r[field]
          const allowed: Outcome[] =
            f === true ? ['eligible', 'caution'] : f === false ? ['not eligible'] : ['unknown']
          expect(allowed, `${v.program} flag ${String(f)}: ${v.text}`).toContain(v.outcome)
        }
      }),
    )
  })

  it('a key without an option never gets a stronger answer than the same record with it', () => {
    const rank = (vs: Verdict[], program: string) => {
      const v = vs.find((x) => x.program === program)
      return v === undefined ? -1 : RANK[v.outcome]
    }
    fc.assert(
      fc.property(record, marketRate, (r, rate) => {
        const withIt = verdicts(r, {marketRate: rate})
        for (const key of ['FHACondoEligibility', 'AssumableMortgage']) {
          const less = verdicts(without(r, key), {marketRate: rate})
          for (const program of ['FHA', 'FHA condo', 'USDA', 'VA', 'Assumable', 'CRA'])
            expect(rank(less, program), `${program} without ${key}`).toBeLessThanOrEqual(
              rank(withIt, program),
            )
        }
      }),
    )
  })

  it('every line starts with its outcome word, and its first code is the flag’s', () => {
    fc.assert(
      fc.property(record, marketRate, (r, rate) => {
        for (const v of verdicts(r, {marketRate: rate})) {
          expect(v.text).toMatch(new RegExp(`^${OUTCOME_WORD[v.outcome]}[:( ]`))
          expect(v.codes.indexOf(CONFLICT)).not.toBe(0)
          expect(v.codes.length).toBeGreaterThan(0)
        }
      }),
    )
  })
})
