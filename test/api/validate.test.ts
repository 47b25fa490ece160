import {describe, expect, it} from 'vitest'

import {UsageError} from '../../src/errors.js'
import {apiKeyProblem, fipsProblem, validateLookup} from '../../src/api/validate.js'

describe('fips validation', () => {
  it.each([
    ['06067', undefined],
    ['48201', undefined],
    ['72001', undefined],
    ['6067', 'must be exactly 5 digits'],
    ['060670', 'must be exactly 5 digits'],
    ['0606A', 'must be exactly 5 digits'],
    ['03001', 'starts with 03, which is not a US state or territory code'],
    ['99001', 'starts with 99'],
    ['00000', 'starts with 00'],
  ])('%s → %s', (fips, problem) => {
    const got = fipsProblem(fips)
    if (problem === undefined) expect(got).toBeUndefined()
    else expect(got).toContain(problem)
  })
})

describe('validateLookup', () => {
  const ok = (input: Parameters<typeof validateLookup>[0]) => validateLookup(input)
  const bad = (input: Parameters<typeof validateLookup>[0]) => {
    try {
      validateLookup(input)
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError)
      return (error as Error).message
    }
    throw new Error('expected a UsageError')
  }

  it('accepts exactly one lookup key with a valid county', () => {
    expect(ok({fips: '06067', address: '3526 HIGH ST, SACRAMENTO, CA 95838'})).toEqual({
      fips: '06067',
      by: {kind: 'address', value: '3526 HIGH ST, SACRAMENTO, CA 95838'},
    })
    expect(ok({fips: '06067', apn: '078-0123-045'}).by).toEqual({kind: 'apn', value: '078-0123-045'})
    // pasted with stray spaces: the same parcel, the same property
    expect(ok({fips: '06067', apn: ' 078-0123-045 '}).by).toEqual({kind: 'apn', value: '078-0123-045'})
    expect(ok({fips: '06067', propertyId: ' 30000000006\t'}).by).toEqual({
      kind: 'property_id',
      value: '30000000006',
    })
    expect(bad({fips: '06067', apn: '   '})).toBe('--apn must not be empty')
    expect(ok({fips: '06067', propertyId: '0030000000006'}).by).toEqual({
      kind: 'property_id',
      value: '30000000006',
    })
  })

  it('names the flag and the rule for each bad input', () => {
    expect(bad({address: 'x'})).toBe('--fips is required (a 5-digit county code such as 06067)')
    expect(bad({fips: '6067', address: 'x'})).toMatch(/^--fips "6067" must be exactly 5 digits/)
    expect(bad({fips: '06067'})).toBe('give exactly one of --address, --apn or --property-id; none was given')
    expect(bad({fips: '06067', address: 'x', apn: 'y'})).toBe(
      'give exactly one of --address, --apn or --property-id; got --address and --apn',
    )
    expect(bad({fips: '06067', apn: 'A'.repeat(46)})).toBe(
      '--apn is 46 characters; the service allows at most 45',
    )
    expect(bad({fips: '06067', propertyId: '-5'})).toBe('--property-id must be a positive whole number')
    expect(bad({fips: '06067', propertyId: '0'})).toBe('--property-id must be a positive whole number')
    expect(bad({fips: '06067', propertyId: '12.5'})).toBe('--property-id must be a positive whole number')
    expect(bad({fips: '06067', propertyId: '123456789012'})).toBe('--property-id must be at most 11 digits')
    expect(bad({fips: '06067', address: '   '})).toBe('--address must not be empty')
  })

  it('accepts an APN of exactly 45 characters', () => {
    expect(ok({fips: '06067', apn: 'A'.repeat(45)}).by.kind).toBe('apn')
  })

  it('reports column names in batch mode', () => {
    const names = {
      fips: 'column fips',
      address: 'column address',
      apn: 'column apn',
      propertyId: 'column property_id',
    }
    expect(() => validateLookup({fips: '1', address: 'x'}, names)).toThrow(/^column fips "1"/)
  })
})

describe('spec sizes and key characters are checked before anything is sent', () => {
  it('refuses an address over 100 characters (spec 2.1: CompleteStreetAddress is varchar 100)', () => {
    expect(() => validateLookup({fips: '06067', address: 'A'.repeat(101)})).toThrow(
      '--address is 101 characters; the service stores at most 100 (spec 2.1)',
    )
    expect(validateLookup({fips: '06067', address: 'A'.repeat(100)}).by.kind).toBe('address')
  })

  it('refuses control characters in an address or an APN', () => {
    expect(() => validateLookup({fips: '06067', address: '1 MAIN ST\r\nX: y'})).toThrow(
      '--address contains a control character',
    )
    expect(() => validateLookup({fips: '06067', apn: '078\x1b[2J'})).toThrow(
      '--apn contains a control character',
    )
  })

  it('apiKeyProblem names the problem and never the key', () => {
    const key = 'sk_live_0123456789'
    expect(apiKeyProblem(key)).toBeUndefined()
    for (const bad of [
      `${key}\r\n`,
      `${key}\n`,
      `${key}\t`,
      `${key}\x1b`,
      `${key}\x00`,
      `${key}é`,
      `sk live`,
    ])
      expect(apiKeyProblem(bad)).not.toContain('sk_')
    expect(apiKeyProblem(`${key}\r\n`)).toMatch(/control character/)
    expect(apiKeyProblem(`${key}é`)).toMatch(/outside printable ASCII/)
    expect(apiKeyProblem('sk live')).toMatch(/space/)
  })
})
