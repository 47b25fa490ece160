import {describe, expect, it} from 'vitest'

import {allCounties} from '../../src/address/counties.js'
import {countiesOfStates, selectCounties, stateCode, stateCodes} from '../../src/address/county-select.js'

describe('--state and --all-counties select from the shipped county table', () => {
  it('state codes are matched case-insensitively', () => {
    expect(stateCode('ca')).toBe('CA')
    expect(stateCode(' Tx ')).toBe('TX')
  })

  it('the table knows the 50 states, DC and the territories', () => {
    expect(stateCodes()).toHaveLength(56)
    expect(stateCodes()).toEqual(expect.arrayContaining(['CA', 'DC', 'PR', 'GU']))
  })

  it('an unknown code is a usage error with the codes one letter away', () => {
    expect(() => stateCode('CX')).toThrow(
      '--state "CX": no county in the FHFA county list has the state code CX; did you mean CA, CO, CT, TX?',
    )
    expect(() => stateCode('California')).toThrow(
      /--state "California": give the two-letter postal code, e.g. --state CA/,
    )
  })

  it('a state gives its counties in FIPS order: 58 in California, 3 in Delaware', () => {
    const ca = countiesOfStates(['CA'])
    expect(ca).toHaveLength(58)
    expect(ca[0]).toBe('06001')
    expect(ca.at(-1)).toBe('06115')
    expect(countiesOfStates(['DE'])).toEqual(['10001', '10003', '10005'])
  })

  it('named counties come first, then the states; duplicates removed, the first place kept', () => {
    expect(selectCounties({named: ['48201', '10003'], states: ['de', 'DE'], all: false})).toEqual([
      '48201',
      '10003',
      '10001',
      '10005',
    ])
  })

  it('--all-counties is every county of the table once', () => {
    const all = selectCounties({named: ['06067'], states: ['CA'], all: true})
    expect(all).toHaveLength(allCounties().length)
    expect(all[0]).toBe('06067')
    expect(new Set(all).size).toBe(all.length)
  })
})
