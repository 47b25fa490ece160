import {describe, expect, it} from 'vitest'

import {monthlyPayment, standardDeviationMeaning, verdicts} from '../../src/render/verdicts.js'
import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'

const ds = new Dataset(1, 10)
const sac = countyByFips('06067')!
/** The clock the months left on a loan count from (injected: the rules read none). */
const TODAY = '2026-11-26'
const rec = (i: number) => ds.record(sac, i, {assumable: true, condo: true})
const line = (r: Record<string, unknown>, program: string, marketRate?: number) =>
  verdicts(r, {marketRate, today: TODAY}).find((v) => v.program === program)

describe('explained verdicts, from the record’s own figures', () => {
  it('value over the county FHA limit', () => {
    const v = line(rec(17), 'FHA')!
    expect(v.codes).toEqual(['FHA_NOT_ELIGIBLE', 'FHA_OVER_LIMIT'])
    expect(v.text).toBe(
      "No: the value $959,000 is over the county's FHA loan limit of $667,000 (by $292,000)",
    )
  })

  it('within the limit yet not eligible: the property type (a condo without FHA approval)', () => {
    const v = line(rec(8), 'FHA')!
    expect(v.codes).toEqual(['FHA_NOT_ELIGIBLE', 'FHA_PROPERTY_TYPE', 'FHA_CONDO_NOT_APPROVED'])
    expect(v.text).toBe(
      "No: the value $266,000 is within the county's FHA loan limit of $667,000, so the property type rules it out (spec 2.1); the service also says this unit is not FHA condo eligible",
    )
    const house = {...rec(6), FHAEligible: false}
    expect(line(house, 'FHA')!.text).toBe(
      "No: the value $532,000 is within the county's FHA loan limit of $667,000, so the property type rules it out (spec 2.1)",
    )
  })

  it('a Caution condo with owner occupancy under 35%', () => {
    const v = line(rec(7), 'FHA condo')!
    expect(v.outcome).toBe('caution')
    expect(v.codes).toEqual(['CONDO_ELIGIBLE', 'CONDO_STATUS_CAUTION', 'CONDO_OWNER_OCCUPANCY_LOW'])
    expect(v.text).toBe(
      'Caution (Birch Towers): approved, but an owner-occupancy or concentration violation may block FHA loan approval; owner occupancy 31.5% is under the 35% minimum',
    )
  })

  it('without the condo option a Yes is a Caution, its figures from the flat fields', () => {
    const basic = ds.record(sac, 7, {assumable: false, condo: false})
    expect(line(basic, 'FHA condo')).toEqual({
      program: 'FHA condo',
      outcome: 'caution',
      codes: ['CONDO_ELIGIBLE', 'CONDO_NO_DETAIL_OPTION', 'CONDO_OWNER_OCCUPANCY_LOW'],
      text: 'Caution: the service says this unit is FHA condo eligible; its own status is not shown (this key lacks the FHA Condo option); owner occupancy 31.5% is under the 35% minimum',
    })
  })

  it('assumable with an equity gap, and the monthly saving against a market rate', () => {
    const v = line(rec(7), 'Assumable', 6.5)!
    expect(v.codes).toEqual(['ASSUMABLE', 'ASSUMABLE_EQUITY_GAP', 'ASSUMABLE_SAVES'])
    expect(v.text).toBe(
      'Yes: VA loan of $586,080 at 6.321%; the buyer covers $11,920 of equity in cash or a second loan; $76 a month less than a new loan at 6.5% ($3,649 vs $3,725 over the 354 months left to 2056-05-12)',
    )
    expect(line(rec(7), 'Assumable')!.text).toBe(
      'Yes: VA loan of $586,080 at 6.321%; the buyer covers $11,920 of equity in cash or a second loan',
    )
  })

  it('leaves out the condo program for a house; an assumable flag of null is Unknown, not left out', () => {
    expect(verdicts(rec(6)).map((v) => v.program)).toEqual(['FHA', 'USDA', 'VA', 'Assumable', 'CRA'])
    expect(rec(9)['Assumable']).toBeNull()
    expect(line(rec(9), 'Assumable')).toEqual({
      program: 'Assumable',
      outcome: 'unknown',
      codes: ['ASSUMABLE_UNKNOWN'],
      text: 'Unknown: the service gives no assumable-loan answer for this property',
    })
  })

  it('CRA: low and moderate tracts count; middle and upper do not', () => {
    expect(line(rec(17), 'CRA')!.text).toBe(
      'No: an upper-income tract, not low or moderate income (tract minority population 10.2%)',
    )
    expect(line(rec(8), 'CRA')!.text).toBe(
      "Yes: a moderate-income tract, where loans count toward a lender's CRA goals (tract minority population 85.6%)",
    )
  })

  it('standard deviation gets its meaning', () => {
    expect(standardDeviationMeaning(0.102, 532000)).toBe(
      '0.102: the estimate is typically within ±10.2% of the true value, ±$54,000 (about two times in three)',
    )
    expect(standardDeviationMeaning(13.2, 373400)).toBe(
      '13.2: the estimate is typically within ±13.2% of the true value, ±$49,000 (about two times in three)',
    )
  })

  it('monthly payment is standard amortization', () => {
    expect(monthlyPayment(100_000, 6, 360)).toBeCloseTo(599.55, 2)
  })
})
