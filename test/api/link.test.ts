import {describe, expect, it} from 'vitest'

import {nextLink} from '../../src/api/link.js'

describe('nextLink (RFC 8288)', () => {
  const req = 'http://127.0.0.1:9/v1/special-financing?fips=06067&page=1'
  it.each([
    [
      '<http://127.0.0.1:9/v1/special-financing?fips=06067&page=2>; rel="next"',
      'http://127.0.0.1:9/v1/special-financing?fips=06067&page=2',
    ],
    ['<?fips=06067&page=3>; rel=next', 'http://127.0.0.1:9/v1/special-financing?fips=06067&page=3'],
    ['<http://h/first>; rel="first", <http://h/n>; rel="prev next"', 'http://h/n'],
    ['<http://h/last>; title="x, y"; rel="last"', undefined],
    ['', undefined],
  ])('%s → %s', (header, expected) => {
    expect(nextLink(header, req)).toBe(expected)
  })
})
