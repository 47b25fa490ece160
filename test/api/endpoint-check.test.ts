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
    expect(baseUrlProblem('https://api.example.com/v1/special-financing')).toContain(
      'use --base-url https://api.example.com/v1 ',
    )
  })
  it('tells an endpoint 404 from a property 404', () => {
    expect(isMissingEndpoint('no such endpoint: GET /x; use GET /v1/special-financing')).toBe(true)
    expect(isMissingEndpoint('Cannot GET /special-financing')).toBe(true)
    expect(isMissingEndpoint('No property matches the given parameters.')).toBe(false)
  })
})
