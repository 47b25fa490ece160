import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it, onTestFinished} from 'vitest'

import {
  allCounties,
  countyByFips,
  countyLine,
  explainResolution,
  resolveCounty,
  searchCounties,
} from '../../src/address/counties.js'
import {COUNTY_ROWS} from '../../src/address/counties-data.js'
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

  // the generator on a sample of its source's rows (test/fixtures/fhfa-2026-sample.csv: FHFA's 2026 list,
  // public domain, with the names its title-casing must get right): each row it makes is the table's row
  it('holds each county of its source as scripts/gen-counties.mjs makes it from the source row', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-counties-'))
    onTestFinished(() => rmSync(dir, {recursive: true, force: true}))
    const out = join(dir, 'counties-data.ts')
    execFileSync(process.execPath, [
      join(ROOT, 'scripts', 'gen-counties.mjs'),
      join(ROOT, 'test', 'fixtures', 'fhfa-2026-sample.csv'),
      out,
    ])
    const rows = /`([^`]*)`/.exec(readFileSync(out, 'utf8'))![1]!.split('\n')
    expect(rows).toHaveLength(17)
    for (const row of rows) {
      const [fips, state, name] = row.split('\t')
      expect(countyByFips(fips!)).toEqual({fips, state, name})
    }
    expect(rows).toContain('35013\tNM\tDona Ana County')
    expect(rows).toContain('29510\tMO\tSt. Louis City')
  })

  it('finds one county by its line, before the table is parsed, exactly as the parsed table has it', () => {
    for (const c of allCounties()) expect(countyLine(COUNTY_ROWS, c.fips)).toEqual(c)
    // the first and last lines, which have no newline on one side
    expect(countyLine('01001\tAL\tAutauga County', '01001')).toEqual({
      fips: '01001',
      state: 'AL',
      name: 'Autauga County',
    })
    // not a code, a code no county has, a code's digits inside another field, a prefix of a code
    const rows = '01001\tAL\tA 06067\n02002\tAK\tB'
    for (const fips of ['06067', '0100', '01001 ', '99999', '', '\t', '1001'])
      expect(countyLine(rows, fips)).toBeUndefined()
    expect(countyLine(rows, '02002')).toEqual({fips: '02002', state: 'AK', name: 'B'})
  })
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

  it.each([
    ['Sacramento, Calif', '06067'],
    ['Sacramento Calif.', '06067'],
    ['Dade County, Fla', '12086'],
    ['Erie, Penn', '42049'],
    ['County of Sacramento, CA', '06067'],
    ['Sacramento Co., CA', '06067'],
    ['Parish of Orleans, LA', '22071'],
    ['Brooklyn, NY', '36047'],
    ['Brooklyn', '36047'],
    ['Manhattan, New York', '36061'],
    ['Staten Island, NY', '36085'],
    ['The Bronx', '36005'],
    ['Dade, FL', '12086'],
    ['Dade County, FL', '12086'],
    ["Prince George's County, MD", '24033'],
    ['Prince Georges, MD', '24033'],
    ['St. Mary’s, MD', '24037'],
    ['Saint Marys County, Maryland', '24037'],
    ['Sainte Genevieve, MO', '29186'],
    ['Shannon County, SD', '46102'],
    ['Sacramento, N.Y.', undefined],
  ])('counties as people write them (issue 31): %j → %s', (text, fips) => {
    const r = resolveCounty(text)
    if (fips === undefined) expect(r).toHaveProperty('error')
    else expect(r).toMatchObject({fips})
  })

  it('a did-you-mean prefers a name holding the words typed: "Miami, FL" suggests Miami-Dade first', () => {
    const r = resolveCounty('Miami, FL')
    expect('error' in r && r.suggestions[0]?.fips).toBe('12086')
    // an alias is for its own state only: Dade of Georgia and Missouri are counties of their own
    expect(resolveCounty('Dade, GA')).toMatchObject({fips: '13083'})
  })

  it('`sfl counties brooklyn` lists Kings County; `dade` lists Miami-Dade', () => {
    expect(searchCounties('brooklyn').matches.map((c) => c.fips)).toEqual(['36047'])
    expect(searchCounties('dade').matches.map((c) => c.fips)).toContain('12086')
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
