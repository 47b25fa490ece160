import {describe, expect, it} from 'vitest'

import {recordProblems} from '../../src/pipeline/stages.js'
import {COUNTIES} from '../../src/sandbox/counties.js'
import {AS_OF, Dataset} from '../../src/sandbox/dataset.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- records are checked field by field below
type Obj = Record<string, any>

const ds = new Dataset(1, 20_000)
const FULL = {assumable: true, condo: true}

/** Independent re-derivation of spec 2.2's arithmetic, not the generator's own helpers. */
function expectedMortgage(m: Obj, finalValue: number) {
  const i = m.EstimatedInterestRate / 1200
  const n = m.TermMonths
  const payment = (m.OriginalLoanAmount * i) / (1 - (1 + i) ** -n)
  const [ry, rm, rd] = (m.RecordingDate as string).split('-').map(Number) as [number, number, number]
  const dueMonths = ry * 12 + (rm - 1) + n
  const dueYear = Math.floor(dueMonths / 12)
  const dueMonth = (dueMonths % 12) + 1
  const lastDay = new Date(Date.UTC(dueYear, dueMonth, 0)).getUTCDate()
  const paid = (AS_OF.year - ry) * 12 + (AS_OF.month - rm) - (AS_OF.day < rd ? 1 : 0)
  const g = (1 + i) ** paid
  // the balance follows the payment actually charged, rounded to cents
  const balance = m.OriginalLoanAmount * g - (m.EstimatedMonthlyPayment * (g - 1)) / i
  return {
    payment,
    balance,
    due: `${dueYear}-${String(dueMonth).padStart(2, '0')}-${String(Math.min(rd, lastDay)).padStart(2, '0')}`,
    remainingYears: dueYear - AS_OF.year,
    ltv: Math.round((m.EstimatedLoanBalance / finalValue) * 1000) / 10,
    equity: Math.round(finalValue - m.EstimatedLoanBalance),
  }
}

describe.each(COUNTIES.map((c) => [c.fips, c] as const))(
  'every generated record of county %s',
  (_fips, county) => {
    const n = ds.count(county.fips)
    const records = Array.from({length: n}, (_, i) => ds.record(county, i, FULL))

    it('conforms to the spec schema (types, sizes, allowed values, score 0-100)', () => {
      const bad = records.map((r, i) => [i, recordProblems(r)] as const).filter(([, p]) => p.length > 0)
      expect(bad.slice(0, 3)).toEqual([])
    })

    it('keeps LowValue ≤ FinalValue ≤ HighValue and the county FHA limit', () => {
      for (const r of records) {
        expect(r['LowValue'] as number).toBeLessThanOrEqual(r['FinalValue'] as number)
        expect(r['FinalValue'] as number).toBeLessThanOrEqual(r['HighValue'] as number)
        expect(r['FHALoanLimit']).toBe(county.fhaLoanLimit)
      }
    })

    it('obeys spec 2.2 arithmetic in every assumable mortgage', () => {
      let checked = 0
      for (const r of records) {
        const m = r['AssumableMortgage'] as Obj | null
        if (m === null) continue
        checked++
        expect(r['Assumable']).toBe(true) // rule 1
        expect(['FHA', 'VA', 'USDA']).toContain(m.LoanType)
        const e = expectedMortgage(m, r['FinalValue'] as number)
        expect(m.EstimatedMonthlyPayment).toBeCloseTo(e.payment, 1)
        expect(Math.abs(m.EstimatedLoanBalance - e.balance)).toBeLessThanOrEqual(0.01)
        expect(m.LoanDueDate).toBe(e.due)
        expect(m.RemainingYears).toBe(e.remainingYears)
        expect(m.EstimatedLTV).toBe(e.ltv)
        expect(m.EstimatedEquity).toBe(e.equity)
      }
      expect(checked).toBeGreaterThan(n * 0.1)
    })

    it('keeps condo data consistent (spec 2.3 rules 2-4, 8.5)', () => {
      let condos = 0
      for (const r of records) {
        const c = r['FHACondoEligibility'] as Obj | null
        if (r['FHACondoEligible'] === null) expect(c).toBeNull()
        if (c === null) continue
        condos++
        expect(c.OwnerOccupancyViolation).toBe(c.OwnerOccupancyPercentage < 35)
        expect(c.FHAConcentrationViolation).toBe(c.FHAConcentration > 50)
        expect(r['FHACondoEligible']).toBe(c.ApprovalStatus === 'Approved' || c.ApprovalStatus === 'Caution')
        if (c.EligibilityStatus === 'Caution')
          expect(c.OwnerOccupancyViolation || c.FHAConcentrationViolation).toBe(true)
      }
      expect(condos).toBeGreaterThan(n * county.condoShare * 0.5)
    })

    it('has unique IDs, APNs and addresses, each of which finds its record again', () => {
      const ids = new Set(records.map((r) => r['ServicePropertyID']))
      const apns = new Set(records.map((r) => r['APN']))
      const addrs = new Set(records.map((r) => r['StandardizeStreetAddress']))
      expect(ids.size).toBe(n)
      expect(apns.size).toBe(n)
      expect(addrs.size).toBe(n)
      for (let i = 0; i < n; i += 97) {
        const r = records[i]!
        expect(ds.byId(String(r['ServicePropertyID']))).toEqual({county, index: i})
        expect(ds.byApn(county.fips, r['APN'] as string)).toBe(i)
        expect(
          ds.byAddress(county.fips, `${r['CompleteStreetAddress']}, ${r['City']}, ${r['State']} ${r['Zip']}`),
        ).toBe(i)
      }
    })
  },
)

describe('dataset', () => {
  it('is deterministic for a seed and different for another', () => {
    const c = COUNTIES[0]!
    expect(new Dataset(1, 10).record(c, 42, FULL)).toEqual(ds.record(c, 42, FULL))
    expect(new Dataset(2, 10).record(c, 42, FULL)).not.toEqual(ds.record(c, 42, FULL))
  })

  it('uses the real 2026 FHA floor for Harris County and the ceiling for Los Angeles County', () => {
    expect(COUNTIES.find((c) => c.fips === '48201')!.fhaLoanLimit).toBe(541_287)
    expect(COUNTIES.find((c) => c.fips === '06037')!.fhaLoanLimit).toBe(1_249_125)
  })

  it('serves any record of a county without generating the ones before it', () => {
    // nine billion records could not be generated up front (nor held): only a record made from its index can be served
    const huge = new Dataset(1, 9_000_000_000)
    const harris = COUNTIES.find((c) => c.fips === '48201')!
    const last = huge.record(harris, 8_999_999_999, FULL)
    expect(last['ServicePropertyID']).toBe(58_999_999_999)
    // the same index gives the same record in a dataset of another size: it depends on the index alone
    const r = new Dataset(1, 1_000_000).record(harris, 999_999, FULL)
    expect(r['ServicePropertyID']).toBe(50_000_999_999)
    expect(huge.record(harris, 999_999, FULL)).toEqual(r)
  })
})
