import {describe, expect, it} from 'vitest'

import {UsageError} from '../../src/errors.js'
import {joinAddress, mapParams, padFips, parseMap, resolveSources} from '../../src/jobs/batch-map.js'

describe('--map parsing', () => {
  it.each([
    [['address=street,city,state,zip'], {address: ['street', 'city', 'state', 'zip']}],
    [['address=Street', 'fips=County FIPS'], {address: ['Street'], fips: ['County FIPS']}],
    [['address=street, city ,fips=county'], {address: ['street', 'city'], fips: ['county']}],
    [['Property-ID=id', 'APN=Parcel'], {property_id: ['id'], apn: ['Parcel']}],
    [[], {}],
  ])('%j is %j', (values, map) => {
    expect(parseMap(values)).toEqual(map)
  })

  it.each([
    [
      ['street=address'],
      '--map "street=address": "street" is not a lookup field; map one of address, apn, property_id, fips (e.g. --map address=street,city,state,zip --map fips=county)',
    ],
    [
      ['street'],
      '--map "street": expected FIELD=COLUMN, e.g. --map address=street,city,state,zip --map fips=county',
    ],
    [
      ['address='],
      '--map "address=": no column given for address; e.g. --map address=street,city,state,zip --map fips=county',
    ],
    [
      ['address=a,,b'],
      '--map "address=a,,b": an empty column name; e.g. --map address=street,city,state,zip --map fips=county',
    ],
    [['apn=a,b'], '--map apn takes one column (got a, b); only address joins several columns'],
    [['fips=a', 'FIPS=b'], '--map names fips twice; give its columns once'],
  ])('%j is a usage error', (values, message) => {
    expect(() => parseMap(values)).toThrow(UsageError)
    expect(() => parseMap(values)).toThrow(message)
  })

  it('gives the checkpoint a canonical form: header spellings, field order, only mapped fields', () => {
    const cols = ['STREET', 'City', 'County', 'apn']
    const params = (values: string[]) => {
      const map = parseMap(values)
      return mapParams(map, resolveSources(map, cols, 'in.csv'))
    }
    expect(params(['fips=county', 'address=street,city'])).toEqual(['address=STREET,City', 'fips=County'])
    expect(params(['address=Street,CITY,fips=County'])).toEqual(['address=STREET,City', 'fips=County'])
    expect(params(['address=city,street', 'fips=county'])).toEqual(['address=City,STREET', 'fips=County'])
    expect(params([])).toEqual([])
  })
})

describe('lookup sources', () => {
  const cols = ['Street', 'City', 'FIPS', 'Property ID', 'Notes']

  it('reads unmapped fields from the column named after them, ignoring case, spaces and dashes', () => {
    expect(resolveSources({}, cols, 'in.csv')).toEqual({property_id: 'Property ID', fips: 'FIPS'})
  })

  it('maps columns ignoring case, preferring an exact match, in the order given', () => {
    expect(resolveSources({address: ['city', 'STREET']}, cols, 'in.csv')).toEqual({
      address: ['City', 'Street'],
      property_id: 'Property ID',
      fips: 'FIPS',
    })
    expect(resolveSources({apn: ['notes']}, ['notes', 'Notes', 'fips'], 'x')).toMatchObject({apn: 'notes'})
    expect(resolveSources({apn: ['Notes']}, ['notes', 'Notes', 'fips'], 'x')).toMatchObject({apn: 'Notes'})
  })

  it('a column not in the input is a usage error with a did-you-mean from the header', () => {
    expect(() => resolveSources({address: ['Stret']}, cols, 'in.csv')).toThrow(
      '--map address: no column "Stret" in in.csv; did you mean "Street"?',
    )
    expect(() => resolveSources({fips: ['county']}, cols, 'in.csv')).toThrow(
      '--map fips: no column "county" in in.csv; the columns are: Street, City, FIPS, Property ID, Notes',
    )
  })
})

describe('joinAddress', () => {
  it.each([
    [['3526 HIGH ST', 'SACRAMENTO', 'CA', '95838'], '3526 HIGH ST, SACRAMENTO, CA 95838'],
    [[' 3526 HIGH ST ', '', 'SACRAMENTO ', 'CA', '95838-1234'], '3526 HIGH ST, SACRAMENTO, CA 95838-1234'],
    [
      ['1150 RIVER OAKS DR', 'APT 114', 'SACRAMENTO', 'CA', '958311234'],
      '1150 RIVER OAKS DR, APT 114, SACRAMENTO, CA 958311234',
    ],
    [['3526 HIGH ST, SACRAMENTO, CA 95838'], '3526 HIGH ST, SACRAMENTO, CA 95838'],
    [['', ' '], ''],
    [['95838'], '95838'],
  ])('%j is %j', (parts, line) => {
    expect(joinAddress(parts)).toEqual({line})
  })

  it.each([
    [
      ['1 MAIN ST', 'BOSTON', 'MA', '2134'],
      '1 MAIN ST, BOSTON, MA 02134',
      'zip 2134 read as 02134 (leading zero restored)',
    ],
    [
      ['1 CALLE SOL', 'SAN JUAN', 'PR', '901'],
      '1 CALLE SOL, SAN JUAN, PR 00901',
      'zip 901 read as 00901 (leading zero restored)',
    ],
    [
      ['1 ELM ST', 'NEWARK', 'nj', '7102.0'],
      '1 ELM ST, NEWARK, nj 07102',
      'zip 7102.0 read as 07102 (leading zero restored)',
    ],
  ])('a ZIP a spreadsheet made a number, %j, is padded back after the state', (parts, line, note) => {
    expect(joinAddress(parts)).toEqual({line, note})
  })

  it.each([
    // a street number or unit is not a ZIP: only 3-4 digits right after a two-letter state are
    [['1234', 'MAIN ST', 'BOSTON', 'MA', '02134'], '1234, MAIN ST, BOSTON, MA 02134'],
    [['1 MAIN ST', 'APT', '2134', 'BOSTON'], '1 MAIN ST, APT, 2134, BOSTON'],
    [['1 MAIN ST', 'BOSTON', 'MA', '21345'], '1 MAIN ST, BOSTON, MA 21345'],
  ])('%j is left as typed', (parts, line) => {
    expect(joinAddress(parts)).toEqual({line})
  })
})

describe('padFips', () => {
  it.each([
    ['6067', {fips: '06067', note: 'fips 6067 read as 06067 (leading zero restored)'}],
    ['123', {fips: '00123', note: 'fips 123 read as 00123 (leading zero restored)'}],
    ['06067', {fips: '06067'}],
    ['67', {fips: '67'}],
    ['606777', {fips: '606777'}],
    ['6067.0', {fips: '06067', note: "fips 6067.0 read as 06067 (a spreadsheet's number)"}],
    ['48201.00', {fips: '48201', note: "fips 48201.00 read as 48201 (a spreadsheet's number)"}],
    ['6067.5', {fips: '6067.5'}],
    ['.0', {fips: '.0'}],
    ['6O67', {fips: '6O67'}],
  ])('%j is %j', (value, result) => {
    expect(padFips(value)).toEqual(result)
  })
})
