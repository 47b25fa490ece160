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
    // a "#" unit in a comma part of its own joins the street line, as "UNIT 140" does (issue 22)
    ['4800 Westlake Pkwy, #2109', '4800 WESTLAKE PKWY UNIT 2109'],
    [
      '4800 Westlake Pkwy, # 2109, Sacramento, CA 95833',
      '4800 WESTLAKE PKWY UNIT 2109, SACRAMENTO, CA 95833',
    ],
    ['4800 Westlake Pkwy, Apt #2109', '4800 WESTLAKE PKWY APT 2109'],
    // no commas: the tail CITY STATE ZIP is split from the end
    ['3526 high st sacramento ca 95838', '3526 HIGH ST, SACRAMENTO, CA 95838'],
    ['3526 high st sacramento california 95838', '3526 HIGH ST, SACRAMENTO, CA 95838'],
    ['3526 High Street Sacramento CA 95838-1234', '3526 HIGH ST, SACRAMENTO, CA 95838-1234'],
    ['5201 laguna oaks dr unit 140 elk grove ca 95758', '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE, CA 95758'],
    ['4800 Westlake Pkwy #2109 Sacramento CA 95833', '4800 WESTLAKE PKWY UNIT 2109, SACRAMENTO, CA 95833'],
    ['9 pine rd apt b sacramento ca 95838', '9 PINE RD APT B, SACRAMENTO, CA 95838'],
    ['100 old court rd sacramento ca 95838', '100 OLD COURT RD, SACRAMENTO, CA 95838'],
    ['500 lake shore dr chicago il 60611', '500 LAKE SHORE DR, CHICAGO, IL 60611'],
    ['100 park ave salt lake city ut 84101', '100 PARK AVE, SALT LAKE CITY, UT 84101'],
    ['100 main st st louis mo 63101', '100 MAIN ST, ST LOUIS, MO 63101'],
    ['10 main st n sacramento ca 95838', '10 MAIN ST N, SACRAMENTO, CA 95838'],
    ['10 main st west sacramento ca 95691', '10 MAIN ST, WEST SACRAMENTO, CA 95691'],
    ['1 main st new york new york 10001', '1 MAIN ST, NEW YORK, NY 10001'],
    ['12 mill creek springfield il 62701', '12 MILL CRK, SPRINGFIELD, IL 62701'],
    ['123 ocean dr key west fl 33040', '123 OCEAN DR, KEY WEST, FL 33040'],
    ['3526 high st ca 95838', '3526 HIGH ST, CA 95838'],
    // a street without a suffix: the state's place list (places.txt) says where the city starts; a
    // spelled-out state with nothing before it may be the city, so it is kept as typed
    ['1 broadway new york ny 10001', '1 BROADWAY, NEW YORK, NY 10001'],
    ['1 broadway gotham ny 10001', '1 BROADWAY GOTHAM, NY 10001'],
    ['1 main st new york 10001', '1 MAIN ST, NEW YORK 10001'],
    ['1 broadway new york 10001', '1 BROADWAY NEW YORK 10001'],
    ['3526 high st sacramento', '3526 HIGH ST SACRAMENTO'],
    // commas typed: a state's name becomes its code after a city; "FL 33040" is never a floor
    ['3526 High St, Sacramento, California 95838', '3526 HIGH ST, SACRAMENTO, CA 95838'],
    ['123 Main St, New York 10001', '123 MAIN ST, NEW YORK 10001'],
    ['123 Ocean Dr, Key West, FL 33040', '123 OCEAN DR, KEY WEST, FL 33040'],
    ['5201 Main St, Apt 5, FL 33101', '5201 MAIN ST APT 5, FL 33101'],
  ])("people's spellings: %j → %j", (input, out) => {
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
      // the forms of issue 22: a city after a suffix, state names and codes, units of a letter
      'Westlake',
      'pkwy',
      '#2109',
      'sacramento',
      'california',
      'New',
      'York',
      'key',
      'west',
      'FL',
      'rd',
      'b',
      '95838',
      // issue 31: city names after a street without commas, units before the number and after the city
      'citrus',
      'heights',
      'springs',
      'unit 140',
      'apt 9',
    ],
  ]
  const messy = fc
    .array(fc.oneof(fc.constantFrom(...words, ',', ',,', ' ', '  ', '.'), fc.string({maxLength: 4})), {
      maxLength: 14,
    })
    .map((xs) => xs.join(' '))

  // without commas, ending in a state and a ZIP: the no-comma split decides where the street ends
  const tail = fc
    .tuple(
      fc.array(fc.oneof(fc.constantFrom(...words), fc.string({maxLength: 4})), {maxLength: 10}),
      fc.constantFrom('CA', 'ca', 'california', 'New York', 'NY', 'FL', 'West Virginia', 'ZZ', 'NE'),
      fc.constantFrom('95838', '10001', '33040-1234', '123'),
    )
    .map(([xs, st, zip]) => [...xs, st, zip].join(' '))

  it('standardising twice changes nothing (property)', () => {
    fc.assert(
      fc.property(messy, (s) => std(std(s)) === std(s)),
      {numRuns: 3000},
    )
    fc.assert(
      fc.property(tail, (s) => std(std(s)) === std(s)),
      {numRuns: 3000},
    )
    fc.assert(
      fc.property(fc.string(), (s) => std(std(s)) === std(s)),
      {numRuns: 2000},
    )
  })

  it('the form without the unit is itself standard (property)', () => {
    fc.assert(
      fc.property(fc.oneof(messy, tail), (s) => {
        const bare = standardWithoutUnit(standardiseAddress(s))
        return bare === undefined || std(bare) === bare
      }),
      {numRuns: 2000},
    )
  })
})

describe('addresses typed without commas, and units where people write them (issue 31)', () => {
  it.each([
    ['5201 laguna oaks dr unit 140 elk grove', '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE'],
    ['12 main st citrus heights', '12 MAIN ST, CITRUS HEIGHTS'],
    ['100 Palm Canyon Dr Palm Springs', '100 PALM CANYON DR, PALM SPRINGS'],
    ['unit 140 5201 laguna oaks dr, elk grove', '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE'],
    ['#140 5201 laguna oaks dr elk grove', '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE'],
    ['5201 laguna oaks dr, elk grove #140', '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE'],
    [
      '5201 laguna oaks dr, elk grove, ca 95758, unit 140',
      '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE, CA 95758',
    ],
    ['5201 laguna oaks dr elk grove ca 95758 #140', '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE, CA 95758'],
    // the state and ZIP a trailing unit hid are split off once the unit has gone (found by the property
    // "standardising twice changes nothing": `( /, $ AA 95838 FL 123` took the comma only on a second pass)
    ['5201 laguna oaks dr, elk grove ca 95758 #140', '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE, CA 95758'],
    ['( /, $ AA 95838 FL 123', '( / FL 123, $, AA 95838'],
    ['apt # 5 12 main st', '12 MAIN ST APT 5'],
  ])('%j → %j', (typed, sent) => {
    expect(std(typed)).toBe(sent)
    expect(std(sent)).toBe(sent)
  })

  it.each([
    // nothing says where a city starts, or the words would not change on the street line: kept as typed
    ['1 park ave south', '1 PARK AVE S'],
    ['1 mill creek park', '1 MILL CREEK PARK'],
    ['12 main st west sacramento', '12 MAIN ST WEST SACRAMENTO'],
    ['100 old court rd', '100 OLD COURT RD'],
    ['1 Main St, Key West, FL 33040', '1 MAIN ST, KEY WEST, FL 33040'],
    ['3526 High St Apt 9', '3526 HIGH ST APT 9'],
  ])('%j is not split: %j', (typed, sent) => {
    expect(std(typed)).toBe(sent)
  })

  it('the unit of every form is the one asked for, so the ladder can drop it', () => {
    for (const typed of [
      'unit 140 5201 laguna oaks dr, elk grove',
      '5201 laguna oaks dr, elk grove #140',
      '5201 laguna oaks dr, elk grove, ca 95758, unit 140',
    ])
      // prettier-ignore
      expect(standardiseAddress(typed).unit).toBe('UNIT 140')
    expect(standardWithoutUnit(standardiseAddress('unit 140 5201 laguna oaks dr, elk grove'))).toBe(
      '5201 LAGUNA OAKS DR, ELK GROVE',
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
