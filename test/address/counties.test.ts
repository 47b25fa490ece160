import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {
  allCounties,
  countyByFips,
  explainResolution,
  resolveCounty,
  searchCounties,
} from '../../src/address/counties.js'
import {ROOT} from '../helpers/sandbox.js'

describe('the counties table (FHFA 2026 list)', () => {
  it('holds every county and equivalent, unique by FIPS', () => {
    const all = allCounties()
    expect(all).toHaveLength(3235)
    expect(new Set(all.map((c) => c.fips)).size).toBe(all.length)
    expect(countyByFips('06067')).toEqual({fips: '06067', state: 'CA', name: 'Sacramento County'})
    expect(countyByFips('12086')?.name).toBe('Miami-Dade County')
    expect(countyByFips('06999')).toBeUndefined()
  })

  const raw = join(
    ROOT,
    '..',
    'shared',
    'data',
    'raw',
    'fhfa_conforming_loan_limits',
    'FullCountyLoanLimitList2026_from_xlsx.csv',
  )
  it.skipIf(!existsSync(raw))(
    'matches its source file row for row (skipped when ../shared/data/raw is absent)',
    () => {
      const codes = readFileSync(raw, 'utf8')
        .split(/\r?\n/)
        .slice(2)
        .filter((l) => l.trim())
        .map((l) => l.slice(0, 2) + l.slice(3, 6))
      expect(allCounties().map((c) => c.fips)).toEqual([...codes].sort())
    },
  )
})

describe('resolveCounty', () => {
  it.each([
    ['Sacramento, CA', '06067'],
    ['sacramento county ca', '06067'],
    ['Sacramento County, CA', '06067'],
    ['06067', '06067'],
    ['Harris, TX', '48201'],
    ['Baltimore City, MD', '24510'],
    ['Baltimore County, MD', '24005'],
    ['Saint Louis City, MO', '29510'],
    ['Doña Ana, NM', '35013'],
    ['Sacramento', '06067'],
  ])('%j → %s', (text, fips) => {
    expect(resolveCounty(text)).toMatchObject({fips})
  })

  it.each([
    ['Yolo County, California', '06113'],
    ['yolo county california', '06113'],
    ['Nevada County California', '06057'],
    ['Orleans Parish, Louisiana', '22071'],
    ['Juneau Borough, AK', '02110'],
    ['Matanuska-Susitna Borough, Alaska', '02170'],
    ['Sac, IA', '19161'],
    ['Sac County, Iowa', '19161'],
    ['District of Columbia', '11001'],
    ['New York', '36061'],
  ])('state names and County/Parish/Borough: %j → %s', (text, fips) => {
    expect(resolveCounty(text)).toMatchObject({fips})
  })

  it('a name that is also the start of others is never a silent pick: `sac` lists Sac, IA and Sacramento, CA', () => {
    const r = resolveCounty('sac')
    expect('error' in r && explainResolution(r)).toBe(
      '"sac" is the name of a county and the start of 1 more; say which (add the state: "Name, ST"); did you mean Sac County, IA (19161); Sacramento County, CA (06067)?',
    )
  })

  it('the start of several names lists them; the start of one is suggested, not picked', () => {
    const several = resolveCounty('Monon')
    expect('error' in several && several.suggestions.map((c) => c.fips)).toEqual(['19133', '54061'])
    expect('error' in several && several.error).toBe(
      '"Monon" is the start of 2 county names; say which (add the state: "Name, ST")',
    )
    const one = resolveCounty('sacra, ca')
    expect('error' in one && explainResolution(one)).toBe(
      'no county named "sacra" in CA; did you mean Sacramento County, CA (06067)?',
    )
  })

  it('a long candidate list is cut at 10 and says how to see all', () => {
    const r = resolveCounty('Washington')
    expect('error' in r && r.suggestions).toHaveLength(10)
    expect('error' in r && r.error).toBe(
      '"Washington" names 31 counties; say which (add the state: "Name, ST") (10 shown; `sfl counties Washington` lists all)',
    )
  })

  it('an ambiguous name lists every candidate', () => {
    const r = resolveCounty('Baltimore, MD')
    expect('error' in r && r.suggestions.map((c) => c.fips)).toEqual(['24005', '24510'])
  })

  it('a near miss gets did-you-mean', () => {
    const r = resolveCounty('Sacremento, CA')
    expect('error' in r && explainResolution(r)).toBe(
      'no county named "Sacremento" in CA; did you mean Sacramento County, CA (06067)?',
    )
  })

  it('a FIPS code that names no county is an error with nearby codes', () => {
    const r = resolveCounty('06999')
    expect('error' in r && r.error).toBe('no US county has the FIPS code 06999 (FHFA county list)')
    expect('error' in r && r.suggestions[0]?.state).toBe('CA')
  })
})

describe('searchCounties', () => {
  it('finds names containing the text, in a state when one is given', () => {
    expect(searchCounties('sacramento').matches.map((c) => c.fips)).toEqual(['06067'])
    expect(searchCounties('Orange, FL').matches.map((c) => c.fips)).toEqual(['12095'])
    expect(searchCounties('orange florida').matches.map((c) => c.fips)).toEqual(['12095'])
    expect(searchCounties('060').matches).toHaveLength(50)
  })
  it('suggests near misses when nothing contains it', () => {
    const r = searchCounties('Sacremento')
    expect(r.matches).toEqual([])
    expect(r.didYouMean.map((c) => c.fips)).toContain('06067')
  })
})
