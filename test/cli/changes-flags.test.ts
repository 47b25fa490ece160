import {describe, expect, it} from 'vitest'

import {changeFormat, changesOutFor, countyList, ignoreList} from '../../src/cli/changes-flags.js'

describe("the comparison's flags", () => {
  it('--fips: codes checked and de-duplicated; absent, every county', () => {
    expect(countyList(undefined)).toBeUndefined()
    expect(countyList(['06067', ' 48201', '06067'])).toEqual(['06067', '48201'])
    expect(() => countyList(['6067'])).toThrow(/--fips "6067" must be exactly 5 digits/)
    expect(() => countyList(['99001'])).toThrow(/--fips "99001" starts with 99/)
  })

  it('--ignore-fields: spec names in any case, none for every field, unknown names refused', () => {
    expect(ignoreList(undefined)).toEqual(['ValuationDate'])
    expect(ignoreList(['valuationdate', ' assumablemortgage.lender'])).toEqual([
      'ValuationDate',
      'AssumableMortgage.Lender',
    ])
    expect(ignoreList(['none'])).toEqual([])
    expect(() => ignoreList(['Bogus'])).toThrow(/--ignore-fields: unknown column "Bogus"/)
  })

  it('formats and default names of the change file', () => {
    expect(changeFormat(undefined, 'x.ndjson')).toBe('ndjson')
    expect(changeFormat(undefined, 'x.json')).toBe('json')
    expect(changeFormat(undefined, 'x.txt')).toBe('csv')
    expect(changeFormat('json', 'x.csv')).toBe('json')
    expect(changeFormat(undefined, 'x', 'ndjson')).toBe('ndjson')
    expect(changesOutFor('/d/nov.csv', 'csv')).toBe('/d/nov.changes.csv')
    expect(changesOutFor('/d/nov.ndjson', 'ndjson')).toBe('/d/nov.changes.ndjson')
    expect(changesOutFor('/d/nov', 'json')).toBe('/d/nov.changes.json')
  })
})
