import {describe, expect, it} from 'vitest'

import {normalizeAddress, withoutUnit} from '../../src/api/address.js'

describe('normalizeAddress: tolerant the way users type', () => {
  const same = {number: '3526', street: 'HIGH ST'}
  it.each([
    '3526 HIGH ST',
    '3526 high street',
    '3526  High   St.',
    '3526 HIGH ST, SACRAMENTO, CA 95838',
    '3526 High Street, Sacramento CA 95838-1234',
  ])('%j → 3526 HIGH ST', (input) => {
    expect(normalizeAddress(input)).toEqual(same)
  })

  it('strips a trailing city, state and ZIP without commas when the city is known', () => {
    expect(normalizeAddress('3526 HIGH ST SACRAMENTO CA 95838', ['SACRAMENTO'])).toEqual(same)
  })

  it.each([
    ['1150 River Oaks Drive Apartment 114', '114'],
    ['1150 RIVER OAKS DR APT 114', '114'],
    ['1150 RIVER OAKS DR UNIT 114', '114'],
    ['1150 RIVER OAKS DR #114', '114'],
    ['1150 RIVER OAKS DR # 114, RANCHO CORDOVA, CA 95670', '114'],
    ['1150 RIVER OAKS DR STE 0114', '114'],
  ])('%j has unit %s', (input, unit) => {
    expect(normalizeAddress(input)).toEqual({number: '1150', street: 'RIVER OAKS DR', unit})
  })

  it('abbreviates directionals and suffixes', () => {
    expect(normalizeAddress('10 North Main Avenue')).toEqual({number: '10', street: 'N MAIN AVE'})
  })

  it('returns undefined when there is no house number', () => {
    expect(normalizeAddress('HIGH ST')).toBeUndefined()
    expect(normalizeAddress('')).toBeUndefined()
  })
})

describe('withoutUnit', () => {
  it('drops the unit designator and keeps the rest', () => {
    expect(withoutUnit('1150 RIVER OAKS DR UNIT 114, RANCHO CORDOVA, CA 95670')).toBe(
      '1150 RIVER OAKS DR, RANCHO CORDOVA, CA 95670',
    )
    expect(withoutUnit('1150 River Oaks Dr #114')).toBe('1150 River Oaks Dr')
  })
  it('returns undefined for an address without a unit', () => {
    expect(withoutUnit('3526 HIGH ST, SACRAMENTO, CA 95838')).toBeUndefined()
  })
})

describe('unit designators are whole words', () => {
  it.each(['12 Steele, Austin, TX', '400 Nobel', '55 Aptos', '9 Unity Way'])(
    '%j keeps its street and has no unit to drop',
    (input) => {
      expect(withoutUnit(input)).toBeUndefined()
      expect(normalizeAddress(input)?.unit).toBeUndefined()
    },
  )
  it('still finds "STE 200", "UNIT #4" and "#4"', () => {
    expect(withoutUnit('9 Pine Rd STE 200')).toBe('9 Pine Rd')
    expect(withoutUnit('9 Pine Rd UNIT #4')).toBe('9 Pine Rd')
    expect(withoutUnit('9 Pine Rd #4')).toBe('9 Pine Rd')
  })
})
