import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {addressLadder, describeAttempts} from '../../src/address/ladder.js'
import {ALONE_UNITS, DIRECTIONALS, RANGED_UNITS, SUFFIXES} from '../../src/address/pub28.js'
import {standardiseAddress, standardWithoutUnit} from '../../src/address/standardise.js'

const std = (s: string) => standardiseAddress(s).text

describe('standardiseAddress (USPS Publication 28)', () => {
  it.each([
    '5201 Laguna Oaks Dr #140, Elk Grove',
    '5201 Laguna Oaks Drive Unit 140, Elk Grove',
    '5201 laguna oaks dr., unit 140,, elk grove',
    '5201  LAGUNA OAKS DRV  # 140 ,ELK GROVE',
    '5201 Laguna Oaks Dr. Unit #140, Elk Grove',
  ])('%j → 5201 LAGUNA OAKS DR UNIT 140, ELK GROVE', (input) => {
    expect(std(input)).toBe('5201 LAGUNA OAKS DR UNIT 140, ELK GROVE')
  })

  it('writes the three issue spellings without a city the same way', () => {
    expect(std('5201 Laguna Oaks Dr #140')).toBe('5201 LAGUNA OAKS DR UNIT 140')
    expect(std('5201 Laguna Oaks Drive Unit 140')).toBe('5201 LAGUNA OAKS DR UNIT 140')
  })

  it.each([
    ['3526 high street, sacramento, ca 95838', '3526 HIGH ST, SACRAMENTO, CA 95838'],
    ['3526 High Street, Sacramento CA 95838-1234', '3526 HIGH ST, SACRAMENTO, CA 95838-1234'],
    ['10 north main avenue', '10 N MAIN AVE'],
    ['10 Main Street North', '10 MAIN ST N'],
    ['100 North Street', '100 NORTH ST'],
    ['77 Southwest Park Boulevard', '77 SW PARK BLVD'],
    ['12 Elm Apartment 5', '12 ELM APT 5'],
    ['9 Pine Suite 200', '9 PINE STE 200'],
    ['9 Pine Ste. #200', '9 PINE STE 200'],
    ['9 Pine Rd Rear', '9 PINE RD REAR'],
    ["1 O'Farrell Street", '1 OFARRELL ST'],
    ['123 1/2 Main Street', '123 1/2 MAIN ST'],
    ['8 Park Avenue', '8 PARK AVE'],
    [
      '1150 River Oaks Dr, Apt 114, Rancho Cordova, CA 95670',
      '1150 RIVER OAKS DR APT 114, RANCHO CORDOVA, CA 95670',
    ],
  ])('%j → %j', (input, out) => {
    expect(std(input)).toBe(out)
  })

  it.each([
    ['12 Steele, Austin, TX', '12 STEELE, AUSTIN, TX'],
    ['400 Nobel', '400 NOBEL'],
    ['55 Aptos', '55 APTOS'],
    ['7 Unity Way', '7 UNITY WAY'],
  ])('a designator inside a word is not a unit: %j keeps its street', (input, out) => {
    const a = standardiseAddress(input)
    expect(a.text).toBe(out)
    expect(a.unit).toBeUndefined()
    expect(standardWithoutUnit(a)).toBeUndefined()
  })

  it('separates street, unit and last line', () => {
    expect(standardiseAddress('5201 Laguna Oaks Dr #140, Elk Grove, CA 95758')).toEqual({
      text: '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE, CA 95758',
      street: '5201 LAGUNA OAKS DR',
      unit: 'UNIT 140',
      lastLine: 'ELK GROVE, CA 95758',
    })
  })

  it('every standard abbreviation maps to itself (what makes a second pass a no-op)', () => {
    for (const t of [SUFFIXES, DIRECTIONALS, RANGED_UNITS, ALONE_UNITS])
      for (const abbreviation of t.values()) expect(t.get(abbreviation)).toBe(abbreviation)
    expect(SUFFIXES.get('DRIVE')).toBe('DR')
    expect(SUFFIXES.get('BOULEVARD')).toBe('BLVD')
    expect(RANGED_UNITS.get('SUITE')).toBe('STE')
  })

  const words = [
    ...[
      '5201',
      '12',
      '1/2',
      '#',
      '#140',
      'UNIT',
      'unit',
      'Apt',
      'APARTMENT',
      'ste.',
      'rear',
      'FRONT',
      'N',
      'north',
    ],
    ...[
      'Drive',
      'dr.',
      'ST',
      'street',
      'Laguna',
      'oaks',
      'Steele',
      'CA',
      '95758',
      '95758-1234',
      'Elk',
      'Grove',
    ],
  ]
  const messy = fc
    .array(fc.oneof(fc.constantFrom(...words, ',', ',,', ' ', '  ', '.'), fc.string({maxLength: 4})), {
      maxLength: 14,
    })
    .map((xs) => xs.join(' '))

  it('standardising twice changes nothing (property)', () => {
    fc.assert(
      fc.property(messy, (s) => std(std(s)) === std(s)),
      {numRuns: 3000},
    )
    fc.assert(
      fc.property(fc.string(), (s) => std(std(s)) === std(s)),
      {numRuns: 2000},
    )
  })

  it('the form without the unit is itself standard (property)', () => {
    fc.assert(
      fc.property(messy, (s) => {
        const bare = standardWithoutUnit(standardiseAddress(s))
        return bare === undefined || std(bare) === bare
      }),
      {numRuns: 2000},
    )
  })
})

describe('addressLadder: at most two extra requests', () => {
  it('standardised, then as typed, then without the unit', () => {
    expect(addressLadder('5201 Laguna Oaks Dr #140, Elk Grove')).toEqual([
      {address: '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE', label: 'standardised', withoutUnit: false},
      {address: '5201 Laguna Oaks Dr #140, Elk Grove', label: 'as typed', withoutUnit: false},
      {address: '5201 LAGUNA OAKS DR, ELK GROVE', label: 'without the unit', withoutUnit: true},
    ])
  })

  it('skips a step that would repeat a request', () => {
    expect(addressLadder('3526 HIGH ST, SACRAMENTO').map((a) => a.label)).toEqual(['standardised'])
  })

  it('--no-fallback keeps the first request only; --address-as-typed sends the text unchanged', () => {
    expect(addressLadder('5201 Laguna Oaks Dr #140', {fallback: false})).toHaveLength(1)
    expect(addressLadder('5201 laguna oaks dr #140', {asTyped: true, fallback: false})).toEqual([
      {address: '5201 laguna oaks dr #140', label: 'as typed', withoutUnit: false},
    ])
    expect(addressLadder('5201 laguna oaks dr #140', {asTyped: true}).map((a) => a.address)).toEqual([
      '5201 laguna oaks dr #140',
      '5201 LAGUNA OAKS DR',
    ])
  })

  it('says what was tried', () => {
    expect(describeAttempts(addressLadder('1 Elm Street #2'))).toBe(
      '"1 ELM ST UNIT 2" (standardised), "1 Elm Street #2" (as typed), "1 ELM ST" (without the unit)',
    )
  })
})
