import {describe, expect, it} from 'vitest'

import {countyFromFlags} from '../../src/address/county-flags.js'

describe('--fips / --county to one checked county', () => {
  it('a code or a name resolves', () => {
    expect(countyFromFlags({fips: '06067'}, {countyFlag: false})).toEqual({
      fips: '06067',
      label: 'Sacramento County, CA (06067)',
    })
    expect(countyFromFlags({county: 'Sacramento, CA'}, {countyFlag: true})?.fips).toBe('06067')
    expect(countyFromFlags({}, {countyFlag: true})).toBeUndefined()
  })

  it('a code that lost its leading zero suggests it back, on every command', () => {
    for (const countyFlag of [true, false])
      expect(() => countyFromFlags({fips: '6067'}, {countyFlag})).toThrow(
        '--fips "6067" must be exactly 5 digits (2-digit state code + 3-digit county code); did you mean 06067 (Sacramento County, CA, its leading zero restored)?',
      )
  })

  it('a name given to --fips points at --county only where the command has it', () => {
    expect(() => countyFromFlags({fips: 'Yolo'}, {countyFlag: true})).toThrow(
      'to give a name, use --county "Yolo"',
    )
    expect(() => countyFromFlags({fips: 'Yolo'}, {countyFlag: false})).toThrow(
      /must be exactly 5 digits \(2-digit state code \+ 3-digit county code\); find a code with `sfl counties NAME`$/,
    )
    expect(() => countyFromFlags({fips: '123456'}, {countyFlag: false})).not.toThrow(/--county/)
    expect(() => countyFromFlags({fips: '123456'}, {countyFlag: true})).toThrow(
      /use --county "Sacramento, CA"/,
    )
  })
})
