import {describe, expect, it} from 'vitest'

import {recordFromFlat} from '../../src/plan/export-record.js'

/** A record as the service sent it, made from an export's flat record (`lookup --from`). */
describe('recordFromFlat', () => {
  it('types a CSV cell by the spec and gathers option columns into their object, in its place', () => {
    const rec = recordFromFlat(
      {
        Fips: '06067',
        ServicePropertyID: '7',
        'AssumableMortgage.LoanType': 'FHA',
        'AssumableMortgage.EstimatedInterestRate': '3.25',
        FHAEligible: 'true',
      },
      true,
    )
    expect(JSON.stringify(rec)).toBe(
      '{"Fips":"06067","ServicePropertyID":7,"AssumableMortgage":{"LoanType":"FHA","EstimatedInterestRate":3.25},"FHAEligible":true}',
    )
  })

  it("keeps a field named as Object.prototype's own as a field, in an option object too", () => {
    // JSON.parse makes __proto__ a member, as an export's reader does; an assignment would make it the
    // record's prototype and lose it
    const flat = JSON.parse(
      '{"Fips":"06067","__proto__":"P","constructor":"K","AssumableMortgage.__proto__":"Q"}',
    ) as Record<string, string>
    const rec = recordFromFlat(flat, false)
    expect(Object.keys(rec)).toEqual(['Fips', '__proto__', 'constructor', 'AssumableMortgage'])
    expect(rec['__proto__']).toBe('P')
    expect(JSON.stringify(rec)).toBe(
      '{"Fips":"06067","__proto__":"P","constructor":"K","AssumableMortgage":{"__proto__":"Q"}}',
    )
  })
})
