import {describe, expect, it} from 'vitest'

import {assertVersionedBaseUrl, baseUrlProblem, isMissingEndpoint} from '../../src/api/endpoint-check.js'
import {cliMessage} from '../../src/cli/error-words.js'
import {SflError} from '../../src/errors.js'

/** The CLI's words for the refusal of a base URL (src/cli/error-words.ts), as `sfl` prints it. */
function cliRefusal(url: string): string {
  try {
    assertVersionedBaseUrl(url)
  } catch (e) {
    return cliMessage(e as SflError)
  }
  return 'accepted'
}

describe('base URL version segment (spec 4, 9.1)', () => {
  it.each([
    ['https://api.example.com/v1', undefined],
    ['https://api.example.com/v1/', undefined],
    ['http://127.0.0.1:8787/v2', undefined],
  ])('%s is fine', (url, out) => {
    expect(baseUrlProblem(url)).toBe(out)
  })
  it('a base URL without /v1 gets the fix', () => {
    expect(baseUrlProblem('https://api.example.com')).toEqual({
      baseUrl: 'https://api.example.com',
      fixed: 'https://api.example.com/v1',
      endpointPath: false,
    })
    expect(cliRefusal('https://api.example.com')).toContain('use --base-url https://api.example.com/v1')
    expect(cliRefusal('https://api.example.com/special-financing')).toContain(
      'use --base-url https://api.example.com/v1 ',
    )
  })
  it('a base URL that has its version and the endpoint path after it is told to drop the path, not to add /v1', () => {
    const p = cliRefusal('https://api.example.com/v1/special-financing')
    expect(p).toBe(
      'the base URL https://api.example.com/v1/special-financing ends in the endpoint path /special-financing, which sfl adds to every request (spec 4: {base_url}/special-financing); drop it: use --base-url https://api.example.com/v1 (or SFL_BASE_URL, or `sfl keys set --base-url`)',
    )
    expect(p).not.toContain('version segment')
    expect(cliRefusal('https://api.example.com/v2/special-financing/')).toContain(
      'drop it: use --base-url https://api.example.com/v2 ',
    )
    // the refusal's own message names no flag: each caller words the fix (the library: baseUrl)
    expect(() => assertVersionedBaseUrl('https://api.example.com/v2/special-financing/')).toThrow(
      'the base URL https://api.example.com/v2/special-financing/ ends in the endpoint path /special-financing, which sfl adds to every request (spec 4: {base_url}/special-financing); drop it; the base URL should be https://api.example.com/v2',
    )
  })
  it('tells an endpoint 404 from a property 404', () => {
    expect(isMissingEndpoint('no such endpoint: GET /x; use GET /v1/special-financing')).toBe(true)
    expect(isMissingEndpoint('Cannot GET /special-financing')).toBe(true)
    expect(isMissingEndpoint('No property matches the given parameters.')).toBe(false)
  })
})
