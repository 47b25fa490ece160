import {describe, expect, it} from 'vitest'

import {countyUrl, formEncode, lookupUrl} from '../../src/api/query.js'

describe('query encoding (spec 4: URL-encoded, spaces as +)', () => {
  it('encodes spaces as + and keeps the address readable', () => {
    expect(
      lookupUrl('https://api.example.com/v1', {
        fips: '06067',
        by: {kind: 'address', value: '3526 HIGH ST, SACRAMENTO, CA 95838'},
      }),
    ).toBe(
      'https://api.example.com/v1/special-financing?fips=06067&address=3526+HIGH+ST%2C+SACRAMENTO%2C+CA+95838',
    )
  })

  it.each([
    '12 MAIN ST # 4B, SACRAMENTO, CA 95814',
    'A & B TOWERS UNIT 7',
    '1 PLAZA DE LA ESPAÑA, SAN JOSÉ, CA 95113',
    '50% OFF LN + 2ND=3',
    '  leading and trailing  ',
  ])('%j survives the round trip through a form decoder', (address) => {
    const url = new URL(lookupUrl('https://h/v1', {fips: '06067', by: {kind: 'address', value: address}}))
    expect(url.searchParams.get('address')).toBe(address)
    expect(url.search).not.toContain(' ')
    expect(url.search).not.toMatch(/#/)
  })

  it('percent-encodes a literal + so it is not read as a space', () => {
    expect(formEncode('1+1')).toBe('1%2B1')
  })

  it('appends /special-financing to the base URL once, whatever its trailing slash', () => {
    expect(countyUrl('http://127.0.0.1:1/v1/', '48201')).toBe(
      'http://127.0.0.1:1/v1/special-financing?fips=48201',
    )
    expect(countyUrl('http://127.0.0.1:1/v1', '48201', [['page', '2']])).toBe(
      'http://127.0.0.1:1/v1/special-financing?fips=48201&page=2',
    )
  })
})
