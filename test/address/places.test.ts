import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {
  placeAtEnd,
  placeKey,
  placesFromText,
  shippedPlaces,
  type PlaceNames,
} from '../../src/address/places.js'
import {splitWithoutCommas} from '../../src/address/split-tail.js'
import {standardiseAddress} from '../../src/address/standardise.js'
import {ROOT} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

/** The generator run on rows of its two public-domain sources (test/fixtures). */
function generateSample(): {text: string; table: Map<string, Set<string>>} {
  const out = join(tempDir(), 'places.txt')
  execFileSync(process.execPath, [
    join(ROOT, 'scripts', 'gen-places.mjs'),
    join(ROOT, 'test', 'fixtures', 'gaz-places-sample.txt'),
    join(ROOT, 'test', 'fixtures', 'sub-est2019-sample.csv'),
    out,
  ])
  const text = readFileSync(out, 'utf8')
  return {text, table: placesFromText(text)}
}

const table = (byState: Record<string, string[]>): PlaceNames => {
  const m = new Map(Object.entries(byState).map(([s, names]) => [s, new Set(names.map(placeKey))]))
  return (state) => m.get(state)
}
const split = (typed: string, places: PlaceNames) =>
  splitWithoutCommas(typed.toUpperCase().split(' '), places).map((p) => p.join(' '))

describe('the place list (Census Gazetteer places, incorporated places of 2,500 people or more)', () => {
  it('keeps places of 2,500 people or more and consolidated cities, by name without the legal description', () => {
    const {text, table: t} = generateSample()
    expect([...t.get('CA')!]).toEqual([
      'CITRUS HEIGHTS',
      'ELK GROVE',
      // Latin-1 in the source: "La Cañada Flintridge", accent dropped
      'LA CANADA FLINTRIDGE',
      'SACRAMENTO',
      'SAN BUENAVENTURA',
      'VENTURA',
    ])
    // Akron, AL (328 people) and Arden-Arcade (a CDP, not in the estimates) are left out
    expect(t.get('AL')).toBeUndefined()
    expect(text).not.toMatch(/ARDEN/)
    expect([...t.get('IN')!]).toEqual(['INDIANAPOLIS'])
    // "Nashville-Davidson metropolitan government (balance)": both names, front-coded in the file
    expect(text).toMatch(/^TN:NASHVILLE\|i-DAVIDSON$/m)
    expect([...t.get('TN')!]).toEqual(['NASHVILLE', 'NASHVILLE DAVIDSON'])
    expect([...t.get('HI')!]).toEqual(['HONOLULU', 'URBAN HONOLULU'])
    expect([...t.get('MO')!]).toEqual(['ST LOUIS'])
    expect(text).toMatch(/^# Sources \(public domain\): US Census Bureau, Gazetteer Files/m)
  })

  it('the shipped list holds the cities of the issue, and is read only when asked', () => {
    for (const [state, name] of [
      ['CA', 'SAN JOSE'],
      ['CA', 'ELK GROVE'],
      ['NY', 'NEW YORK'],
      ['WA', 'LAKE FOREST PARK'],
      ['IN', 'INDIANAPOLIS'],
      ['DC', 'WASHINGTON'],
    ] as const)
      expect(shippedPlaces(state)?.has(name)).toBe(true)
    expect(shippedPlaces('ZZ')).toBeUndefined()
  })

  it('refuses a malformed or truncated file with a line that names it', () => {
    expect(() => placesFromText('CA SACRAMENTO\n')).toThrow('places.txt: expected "ST:names"')
    // a shared prefix longer than the name before it (a truncated or edited line)
    expect(() => placesFromText('CA:ELK|zGROVE\n')).toThrow('places.txt: a bad name in CA after "ELK"')
    expect(() => placesFromText('CA:ELK|\n')).toThrow('a bad name in CA')
    expect(() => placesFromText('CA:el grove\n')).toThrow('a bad name in CA')
    expect(placesFromText('# only comments\n\n').size).toBe(0)
  })

  it('placeAtEnd takes the longest listed name, leaves the street its words, and reads SAINT as ST', () => {
    const names = new Set(['NEW YORK', 'YORK', 'ST LOUIS', 'WINSTON SALEM', 'FORT WORTH'].map(placeKey))
    expect(placeAtEnd(['100', 'BROADWAY', 'NEW', 'YORK'], names, 2)).toBe(2)
    expect(placeAtEnd(['100', 'NEW', 'YORK'], names, 2)).toBe(1)
    expect(placeAtEnd(['12', 'MAIN', 'ST', 'SAINT', 'LOUIS'], names, 2)).toBe(2)
    expect(placeAtEnd(['12', 'MAIN', 'ST', 'WINSTON-SALEM'], names, 2)).toBe(1)
    expect(placeAtEnd(['12', 'MAIN', 'ST', 'FT', 'WORTH'], names, 2)).toBe(2)
    expect(placeAtEnd(['12', 'MAIN', 'ST'], names, 2)).toBe(0)
    expect(placeAtEnd([], names, 2)).toBe(0)
  })
})

describe('addresses without commas: the city is the longest place of the state that ends the words', () => {
  const places = table({
    NY: ['NEW YORK', 'YORK'],
    WA: ['LAKE FOREST PARK', 'MOUNTLAKE TERRACE'],
    CA: ['SAN JOSE', 'SACRAMENTO'],
    VA: ['BROADWAY'],
  })

  it.each([
    ['100 broadway new york ny 10007', ['100 BROADWAY', 'NEW YORK', 'NY 10007']],
    ['100 broadway new york ny', ['100 BROADWAY', 'NEW YORK', 'NY']],
    ['100 broadway new york new york 10007', ['100 BROADWAY', 'NEW YORK', 'NY 10007']],
    ['12 ocean view ave san jose ca', ['12 OCEAN VIEW AVE', 'SAN JOSE', 'CA']],
    ['5 lake forest park dr lake forest park wa', ['5 LAKE FOREST PARK DR', 'LAKE FOREST PARK', 'WA']],
    // TERRACE would end the street by the suffix rule; the list says it is the city's
    ['12 main mountlake terrace wa 98043', ['12 MAIN', 'MOUNTLAKE TERRACE', 'WA 98043']],
    // the street's sure end comes first: the words between stay with the city, as without the list
    ['12 main st north sacramento ca 95815', ['12 MAIN ST', 'NORTH SACRAMENTO', 'CA 95815']],
    ['1 main st apt 5 sacramento ca', ['1 MAIN ST APT 5', 'SACRAMENTO', 'CA']],
  ])('%j → %j', (typed, parts) => {
    expect(split(typed, places)).toEqual(parts)
  })

  it.each([
    // "CT" is a court here: no Connecticut place ends the words
    ['100 oak ct', ['100 OAK CT']],
    // the street keeps a name word: not street "100 E", city BROADWAY
    ['100 e broadway va 22815', ['100 E BROADWAY', 'VA 22815']],
    // no state, a state's name alone, or a state the list lacks: not split by the list
    ['100 broadway new york', ['100 BROADWAY NEW YORK']],
    ['100 broadway gotham zz', ['100 BROADWAY GOTHAM ZZ']],
    ['100 broadway toledo oh', ['100 BROADWAY TOLEDO OH']],
  ])('%j is not split by the list: %j', (typed, parts) => {
    expect(split(typed, places)).toEqual(parts)
  })

  it('the shipped list splits what is sent, and standardising twice changes nothing', () => {
    for (const [typed, sent] of [
      ['12 ocean view ave san jose ca', '12 OCEAN VIEW AVE, SAN JOSE, CA'],
      ['100 broadway new york ny', '100 BROADWAY, NEW YORK, NY'],
      ['5 lake forest park dr lake forest park wa', '5 LAKE FOREST PARK DR, LAKE FOREST PARK, WA'],
      ['1 broadway sacramento ca 95818', '1 BROADWAY, SACRAMENTO, CA 95818'],
      ['12 main st saint louis mo 63101', '12 MAIN ST, SAINT LOUIS, MO 63101'],
      [
        '5201 laguna oaks dr unit 140 elk grove ca 95758',
        '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE, CA 95758',
      ],
    ]) {
      expect(standardiseAddress(typed!).text).toBe(sent)
      expect(standardiseAddress(sent!).text).toBe(sent)
    }
  })
})
