import {describe, expect, it} from 'vitest'

import {baseUrlProblem, isMissingEndpoint} from '../../src/api/endpoint-check.js'

describe('base URL version segment (spec 4, 9.1)', () => {
  it.each([
    ['https://api.example.com/v1', undefined],
    ['https://api.example.com/v1/', undefined],
    ['http://127.0.0.1:8787/v2', undefined],
  ])('%s is fine', (url, out) => {
    expect(baseUrlProblem(url)).toBe(out)
  })
  it('a base URL without /v1 gets the fix', () => {
    expect(baseUrlProblem('https://api.example.com')).toContain('use --base-url https://api.example.com/v1')
    expect(baseUrlProblem('https://api.example.com/special-financing')).toContain(
      'use --base-url https://api.example.com/v1 ',
    )
  })
  it('a base URL that has its version and the endpoint path after it is told to drop the path, not to add /v1', () => {
    const p = baseUrlProblem('https://api.example.com/v1/special-financing')!
    expect(p).toBe(
      'the base URL https://api.example.com/v1/special-financing ends in the endpoint path /special-financing, which sfl adds to every request (spec 4: {base_url}/special-financing); drop it: use --base-url https://api.example.com/v1 (or SFL_BASE_URL, or `sfl keys set --base-url`)',
    )
    expect(p).not.toContain('version segment')
    expect(baseUrlProblem('https://api.example.com/v2/special-financing/')).toContain(
      'drop it: use --base-url https://api.example.com/v2 ',
    )
  })
  it('tells an endpoint 404 from a property 404', () => {
    expect(isMissingEndpoint('no such endpoint: GET /x; use GET /v1/special-financing')).toBe(true)
    expect(isMissingEndpoint('Cannot GET /special-financing')).toBe(true)
    expect(isMissingEndpoint('No property matches the given parameters.')).toBe(false)
  })
})
