import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {countyByFips} from '../../src/address/counties.js'
import {addressZip} from '../../src/address/standardise.js'
import {dataDirs, readZipTable, zipTableFromText} from '../../src/address/zip-counties.js'
import {ROOT} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

/** The generator run on rows of its public-domain source (test/fixtures/zcta-county-rel-10-sample.txt). */
function generateSample(): Map<string, string[]> {
  const out = join(tempDir(), 'zip-counties.txt')
  execFileSync(process.execPath, [
    join(ROOT, 'scripts', 'gen-zip-counties.mjs'),
    join(ROOT, 'test', 'fixtures', 'zcta-county-rel-10-sample.txt'),
    out,
  ])
  return zipTableFromText(readFileSync(out, 'utf8'))
}

/** The shipped table, as the code that runs from src/ finds it. */
const countiesOfZip = readZipTable(
  dataDirs(new URL('../../src/address/zip-counties.ts', import.meta.url).href),
)
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_'
const decodeZipCounties = (zips: string, counties: string) =>
  zipTableFromText(`${ALPHABET}\n${zips}\n${counties}\n`)

describe('the ZIP-to-county table (Census 2010 ZCTA to County Relationship File)', () => {
  it('orders the counties of a ZIP that spans several by their share of its housing units, parts under 10% left out', () => {
    const sample = generateSample()
    // 30517 (Braselton, GA): Jackson 41.62%, Gwinnett 25.2%, Hall 24.25%; Barrow's 8.93% is left out
    expect(sample.get('30517')).toEqual(['13157', '13135', '13139'])
    // 77494 (Katy, TX): Fort Bend 90.13%; Harris 9.55% and Waller 0.32% are slivers
    expect(sample.get('77494')).toEqual(['48157'])
    // 00601 (Adjuntas, PR): Adjuntas 99.37%; Utuado's 0.63% is a sliver
    expect(sample.get('00601')).toEqual(['72001'])
    expect(sample.get('95838')).toEqual(['06067'])
    expect(sample.get('95762')).toEqual(['06017']) // El Dorado Hills: El Dorado County, not Sacramento
    expect(sample.get('95691')).toEqual(['06113']) // West Sacramento: Yolo
  })

  it('carries renamed and merged counties to their current codes and leaves out ZIPs of counties since split or replaced', () => {
    const sample = generateSample()
    expect(sample.get('99585')).toEqual(['02158']) // Wade Hampton → Kusilvak Census Area
    expect(sample.get('57770')).toEqual(['46102']) // Shannon → Oglala Lakota County
    expect(sample.get('24523')).toEqual(['51019']) // Bedford city's 33.33% joined Bedford County's 66.67%
    expect(sample.has('99686')).toBe(false) // Valdez-Cordova, split in 2019
    expect(sample.has('06001')).toBe(false) // Connecticut: counties replaced by planning regions in 2022
    expect(sample.has('00960')).toBe(false) // no housing units: no homes to look up
    // nothing else is made up: every ZIP of the sample and no other
    expect([...sample.keys()].sort()).toEqual(
      ['00601', '10001', '11201', '24523', '30517', '33139', '57770', '77494', '95621', '95630', '95691', '95758', '95762', '95838', '99585'], // prettier-ignore
    )
  })

  it('the shipped table says for each sample ZIP what the generator says from the source rows', () => {
    for (const [zip, counties] of generateSample()) expect(countiesOfZip(zip)).toEqual(counties)
    expect(countiesOfZip('95838-1234')).toEqual(['06067'])
    expect(countiesOfZip('00000')).toBeUndefined()
    expect(countiesOfZip('06001')).toBeUndefined()
  })

  it('names only counties of the shipped county list', () => {
    const zips = ['10001', '11201', '33139', '95838', '30517', '77494', '99585', '57770', '24523']
    for (const zip of zips) for (const fips of countiesOfZip(zip)!) expect(countyByFips(fips)).toBeDefined()
  })

  it('a folder without the data file is passed over; none holding it is an error naming the fix', () => {
    const table = readZipTable([
      tempDir(),
      ...dataDirs(new URL('../../src/address/zip-counties.ts', import.meta.url).href),
    ])
    expect(table('95838')).toEqual(['06067'])
    expect(() => readZipTable([tempDir()])).toThrow(/zip-counties.txt\) is missing from .*: reinstall sfl/)
  })

  it('refuses a table whose strings do not line up, rather than reading counties off the wrong ZIPs', () => {
    expect(() => decodeZipCounties('~95838', '!06067+!0606')).toThrow(/five-digit/)
    expect(() => decodeZipCounties('~958381', '!06067')).toThrow(/no county/)
    expect(() => decodeZipCounties('~95838', '!060670')).toThrow(/left over/)
    expect(decodeZipCounties('~958381', '!06067+!06061!06017+0')).toEqual(
      new Map([
        ['95838', ['06067', '06061']],
        ['95839', ['06017', '06067']],
      ]),
    )
  })

  it('finds the ZIP an address ends with, after its state', () => {
    expect(addressZip('5201 laguna oaks dr, elk grove, ca 95758')).toBe('95758')
    expect(addressZip('5201 laguna oaks dr elk grove ca 95758-1234')).toBe('95758')
    expect(addressZip('5201 laguna oaks dr, elk grove, ca')).toBeUndefined()
    expect(addressZip('95758 laguna oaks dr, elk grove')).toBeUndefined()
  })
})
