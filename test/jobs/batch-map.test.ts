import {describe, expect, it} from 'vitest'

import {UsageError} from '../../src/api/errors.js'
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
    expect(joinAddress(parts)).toBe(line)
  })
})

describe('padFips', () => {
  it.each([
    ['6067', {fips: '06067', note: 'fips 6067 read as 06067 (leading zero restored)'}],
    ['123', {fips: '00123', note: 'fips 123 read as 00123 (leading zero restored)'}],
    ['06067', {fips: '06067'}],
    ['67', {fips: '67'}],
    ['606777', {fips: '606777'}],
    ['6067.0', {fips: '6067.0'}],
    ['6O67', {fips: '6O67'}],
  ])('%j is %j', (value, result) => {
    expect(padFips(value)).toEqual(result)
  })
})
