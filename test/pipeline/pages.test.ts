import fc from 'fast-check'
import {afterEach, describe, expect, it} from 'vitest'

import {clearSecrets, containsSecret, registerSecret} from '../../src/api/secrets.js'
import {BadResponseError} from '../../src/errors.js'
import {canonicalUrl, MAX_PAGES, Pagination, repeatsOnly, VOLATILE_PARAMS} from '../../src/pipeline/pages.js'

const BASE = 'https://api.example.test/v1'
const PAGE1 = `${BASE}/special-financing?fips=06067`
const KEY = 'sk_live_0123456789abcdef'

afterEach(() => clearSecrets())

/** What `next` threw (or undefined). */
function refusal(p: Pagination, link: string, page: number): BadResponseError | undefined {
  try {
    p.next(link, page)
  } catch (error) {
    return error as BadResponseError
  }
  return undefined
}

describe('canonicalUrl: two links to the same page look the same', () => {
  it('sorts the query parameters', () => {
    expect(canonicalUrl(`${BASE}/special-financing?page=2&fips=06067`)).toBe(
      canonicalUrl(`${BASE}/special-financing?fips=06067&page=2`),
    )
    expect(canonicalUrl(`${BASE}/x?b=1&a=2&a=1`)).toBe(`${BASE}/x?a=1&a=2&b=1`)
  })

  it('drops the cache busters a server or proxy adds to every link, in any case', () => {
    for (const p of ['_', 'ts', 'TS', 'nonce', 'cb', 'cachebust', 'rand', 'timestamp'])
      expect(canonicalUrl(`${PAGE1}&${p}=1700000000123`)).toBe(canonicalUrl(PAGE1))
    expect(VOLATILE_PARAMS.has('page')).toBe(false)
  })

  it('keeps a real page parameter, a cursor, the path and the origin', () => {
    expect(canonicalUrl(`${PAGE1}&page=2`)).not.toBe(canonicalUrl(`${PAGE1}&page=3`))
    expect(canonicalUrl(`${PAGE1}&cursor=abc`)).not.toBe(canonicalUrl(`${PAGE1}&cursor=abd`))
    expect(canonicalUrl(`${PAGE1}&offset=100`)).not.toBe(canonicalUrl(PAGE1))
    expect(canonicalUrl(`${BASE}/a?x=1`)).not.toBe(canonicalUrl(`${BASE}/b?x=1`))
    expect(canonicalUrl('https://a.test/x')).not.toBe(canonicalUrl('https://a.test:8443/x'))
    // the default port and an empty query are the same page; a fragment is no part of it
    expect(canonicalUrl('https://a.test:443/x?')).toBe(canonicalUrl('https://a.test/x#top'))
  })

  it('is the same for any order of the parameters and any cache busters added', () => {
    const param = fc.tuple(
      fc.constantFrom('fips', 'page', 'cursor', 'size', 'a b'),
      fc.string({maxLength: 5}),
    )
    fc.assert(
      fc.property(
        fc.array(param, {maxLength: 5}),
        fc.array(fc.tuple(fc.constantFrom(...VOLATILE_PARAMS), fc.string({maxLength: 8})), {maxLength: 3}),
        fc.integer(),
        (params, busters, seed) => {
          const q = (ps: Array<[string, string]>) => new URLSearchParams(ps).toString()
          const shuffled = [...params, ...busters].sort(() => ((seed = (seed * 16807) % 2147483647) % 3) - 1)
          expect(canonicalUrl(`${BASE}/x?${q(shuffled)}`)).toBe(canonicalUrl(`${BASE}/x?${q(params)}`))
        },
      ),
      {numRuns: 300},
    )
  })
})

describe('Pagination: which next links are followed', () => {
  it('follows a new page on the same origin, and ends without a link', () => {
    const p = new Pagination(BASE)
    p.start(PAGE1)
    expect(p.next(`${PAGE1}&page=2`, 1)).toBe(`${PAGE1}&page=2`)
    expect(p.next(`${PAGE1}&page=3`, 2)).toBe(`${PAGE1}&page=3`)
    expect(p.next(undefined, 3)).toBeUndefined()
  })

  const FIRST = `${BASE}/special-financing?fips=06067&size=100`
  it.each([
    ['the first page again', FIRST],
    ['the first page under a reordered query', `${BASE}/special-financing?size=100&fips=06067`],
    ['the first page with _=123 added', `${BASE}/special-financing?_=123&fips=06067&size=100`],
    ['page 2 under a reordered query', `${BASE}/special-financing?page=2&size=100&fips=06067`],
    ['page 2 with _=123 added', `${FIRST}&page=2&_=123`],
    ['page 2 with a timestamp added', `${FIRST}&ts=1700000000&page=2`],
  ])('refuses a link back to a page already fetched: %s', (_what, link) => {
    const p = new Pagination(BASE)
    p.start(FIRST)
    expect(p.next(`${FIRST}&page=2`, 1)).toBe(`${FIRST}&page=2`)
    const e = refusal(p, link, 2)
    expect(e).toBeInstanceOf(BadResponseError)
    expect(e!.message).toBe(
      "the next-page link after page 2 leads back to a page already fetched; the service's pagination loops",
    )
  })

  it('refuses a link to another origin: the key would go with it', () => {
    const p = new Pagination(BASE)
    p.start(PAGE1)
    for (const link of [
      'https://evil.example.test/v1/special-financing?fips=06067&page=2',
      'http://api.example.test/v1/special-financing?fips=06067&page=2',
      'https://api.example.test:8443/v1/special-financing?fips=06067&page=2',
    ])
      expect(refusal(p, link, 1)?.message).toMatch(/leads to another origin \(.*\); not followed/)
  })

  it('refuses a link carrying the key, and never says the key', () => {
    registerSecret(KEY)
    const p = new Pagination(BASE)
    p.start(PAGE1)
    for (const link of [`${PAGE1}&page=2&api_key=${KEY}`, `${PAGE1}&page=2&x=${KEY.slice(2, 14)}`]) {
      const e = refusal(p, link, 1)
      expect(e?.message).toMatch(/next-page link carries the API key; not stored or followed/)
      expect(containsSecret(e!.message)).toBe(false)
    }
  })

  it(`refuses to go past ${MAX_PAGES.toLocaleString('en-US')} pages`, () => {
    const p = new Pagination(BASE)
    p.start(PAGE1)
    expect(p.next(`${PAGE1}&page=${MAX_PAGES}`, MAX_PAGES - 1)).toBeDefined()
    expect(refusal(p, `${PAGE1}&page=${MAX_PAGES + 1}`, MAX_PAGES)?.message).toMatch(
      /more than 100,000 pages; taken as a pagination loop/,
    )
  })
})

describe('repeatsOnly: a page of records all taken already is a loop', () => {
  it.each([
    [2, 10, 10, true],
    [5, 3, 3, true],
    [1, 10, 10, false],
    [2, 10, 9, false],
    [2, 0, 0, false],
  ])('page %i with %i records, %i of them repeats: a loop %s', (page, records, duplicates, loop) => {
    const e = repeatsOnly(page, records, duplicates)
    expect(e !== undefined).toBe(loop)
    if (e) {
      expect(e).toBeInstanceOf(BadResponseError)
      expect(e.message).toBe(
        `page ${page} holds only records already taken from earlier pages (${records} of them); the service's pagination loops`,
      )
    }
  })
})
