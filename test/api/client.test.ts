import {MockAgent} from 'undici'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {assertSafeBaseUrl, describeErrorBody, errorFromResponse, HttpClient} from '../../src/api/client.js'
import {
  BadRequestError,
  ForbiddenError,
  InvalidKeyError,
  NotFoundError,
  UsageError,
} from '../../src/errors.js'
import {fetchLookup} from '../../src/lookup/fetch-lookup.js'
import {Scheduler} from '../../src/schedule/scheduler.js'

const KEY = 'sk_live_0123456789abcdef'
const ORIGIN = 'https://api.example.test'

let agent: MockAgent
beforeEach(() => {
  agent = new MockAgent()
  agent.disableNetConnect() // a request that escapes the mock fails the test
})
afterEach(async () => {
  agent.assertNoPendingInterceptors()
  await agent.close()
})

function ctx(debug?: (l: string) => void) {
  const client = new HttpClient({
    apiKey: KEY,
    timeoutMs: 1000,
    userAgent: 'sfl-test',
    dispatcher: agent,
    debug,
  })
  const scheduler = new Scheduler({concurrency: 1, retries: 2, maxWaitMs: 1000, sleep: async () => undefined})
  return {client, scheduler, baseUrl: `${ORIGIN}/v1`}
}

describe('HttpClient against undici MockAgent', () => {
  it('sends the key only in X-Api-Key, never in the URL, with Accept: application/json', async () => {
    const seen: Array<Record<string, string>> = []
    agent
      .get(ORIGIN)
      .intercept({path: '/v1/special-financing?fips=06067&address=3526+HIGH+ST%2C+SACRAMENTO', method: 'GET'})
      .reply(200, (opts) => {
        seen.push(opts.headers as Record<string, string>)
        return {status: 'success', data: {Fips: '06067', Extra: 1}}
      })
    const {records} = await fetchLookup(ctx(), {
      fips: '06067',
      by: {kind: 'address', value: '3526 HIGH ST, SACRAMENTO'},
    })
    expect(records).toEqual([{Fips: '06067', Extra: 1}])
    expect(seen[0]!['x-api-key']).toBe(KEY)
    expect(seen[0]!['accept']).toBe('application/json')
  })

  it('does not forward the key on a redirect to another origin', async () => {
    const seen: Array<Record<string, string>> = []
    agent
      .get(ORIGIN)
      .intercept({path: '/v1/special-financing?fips=06067&apn=1', method: 'GET'})
      .reply(302, '', {headers: {location: 'https://elsewhere.example.test/x'}})
    agent
      .get('https://elsewhere.example.test')
      .intercept({path: '/x', method: 'GET'})
      .reply(200, (opts) => {
        seen.push(opts.headers as Record<string, string>)
        return {status: 'success', data: {}}
      })
    await fetchLookup(ctx(), {fips: '06067', by: {kind: 'apn', value: '1'}})
    expect(seen).toHaveLength(1)
    expect(seen[0]!['x-api-key']).toBeUndefined()
  })

  it('keeps the key on a same-origin redirect', async () => {
    const seen: Array<Record<string, string>> = []
    agent
      .get(ORIGIN)
      .intercept({path: '/v1/special-financing?fips=06067&apn=2'})
      .reply(307, '', {headers: {location: '/v2/x'}})
    agent
      .get(ORIGIN)
      .intercept({path: '/v2/x'})
      .reply(200, (opts) => {
        seen.push(opts.headers as Record<string, string>)
        return {status: 'success', data: {}}
      })
    await fetchLookup(ctx(), {fips: '06067', by: {kind: 'apn', value: '2'}})
    expect(seen[0]!['x-api-key']).toBe(KEY)
  })

  it('masks the key in --debug lines', async () => {
    const lines: string[] = []
    agent
      .get(ORIGIN)
      .intercept({path: '/v1/special-financing?fips=06067&apn=3'})
      .reply(200, {status: 'success', data: {}})
    await fetchLookup(
      ctx((l) => lines.push(l)),
      {fips: '06067', by: {kind: 'apn', value: '3'}},
    )
    expect(lines.join('\n')).toContain('X-Api-Key: sk_l…')
    expect(lines.join('\n')).not.toContain(KEY)
  })

  it('retries a 500 and then succeeds', async () => {
    const pool = agent.get(ORIGIN)
    pool
      .intercept({path: '/v1/special-financing?fips=06067&apn=4'})
      .reply(500, {status: 'error', code: 500, message: 'boom'})
    pool
      .intercept({path: '/v1/special-financing?fips=06067&apn=4'})
      .reply(200, {status: 'success', data: {APN: '4'}})
    const c = ctx()
    expect((await fetchLookup(c, {fips: '06067', by: {kind: 'apn', value: '4'}})).records).toEqual([
      {APN: '4'},
    ])
    expect(c.scheduler.stats.retries).toBe(1)
  })

  it.each([
    [400, BadRequestError, 'Invalid fips'],
    [401, InvalidKeyError, 'key is invalid'],
    [403, ForbiddenError, 'not permitted'],
    [404, NotFoundError, 'No property'],
  ])('maps HTTP %i to %o with the service message', async (status, cls, message) => {
    agent
      .get(ORIGIN)
      .intercept({path: '/v1/special-financing?fips=06067&apn=5'})
      .reply(status, {status: 'error', code: status, message})
    const error = await fetchLookup(ctx(), {fips: '06067', by: {kind: 'apn', value: '5'}}).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(cls)
    expect((error as Error).message).toContain(message)
    expect((error as Error).message).toContain(`HTTP ${status}`)
  })

  it('turns an HTML error page from a proxy into one readable line', async () => {
    agent
      .get(ORIGIN)
      .intercept({path: '/v1/special-financing?fips=06067&apn=6'})
      .reply(
        403,
        '<html><head><style>x{}</style></head><body><h1>Access denied</h1> by proxy</body></html>',
        {
          headers: {'content-type': 'text/html'},
        },
      )
    const error = (await fetchLookup(ctx(), {fips: '06067', by: {kind: 'apn', value: '6'}}).catch(
      (e: unknown) => e,
    )) as Error
    expect(error.message).toBe(
      'the API key is not permitted for this resource (HTTP 403): non-JSON response (text/html) from the server or a proxy in between: "Access denied by proxy"',
    )
  })

  it('never repeats the key from an error body', async () => {
    agent
      .get(ORIGIN)
      .intercept({path: '/v1/special-financing?fips=06067&apn=7'})
      .reply(401, {status: 'error', code: 401, message: `key ${KEY} revoked`})
    const {registerSecret} = await import('../../src/api/secrets.js')
    registerSecret(KEY)
    const error = (await fetchLookup(ctx(), {fips: '06067', by: {kind: 'apn', value: '7'}}).catch(
      (e: unknown) => e,
    )) as Error
    expect(error.message).not.toContain(KEY)
    expect(error.message).toContain('sk_l…')
  })
})

describe('assertSafeBaseUrl', () => {
  it.each([
    'http://localhost:8787/v1',
    'http://127.0.0.1:1/v1',
    'http://[::1]:1/v1',
    'https://api.example.com/v1',
  ])('allows %s', (u) => {
    expect(() => assertSafeBaseUrl(u)).not.toThrow()
  })
  it.each([
    ['http://api.example.com/v1', /refusing to send the API key over plain http/],
    ['ftp://x/v1', /must use https/],
    ['not a url', /is not a valid URL/],
  ])('refuses %s', (u, msg) => {
    expect(() => assertSafeBaseUrl(u)).toThrow(UsageError)
    expect(() => assertSafeBaseUrl(u)).toThrow(msg)
  })
})

describe('describeErrorBody', () => {
  it('prefers the JSON message', () => {
    expect(
      describeErrorBody(400, 'application/json', '{"status":"error","code":400,"message":"Missing fips"}'),
    ).toBe('Missing fips')
  })
  it('describes an empty body', () => {
    expect(describeErrorBody(502, undefined, '')).toBe('empty response body')
  })
  it('is used by errorFromResponse for 5xx', async () => {
    const e = await errorFromResponse({
      status: 502,
      url: '',
      headers: {},
      body: (async function* () {})(),
      text: async () => 'Bad Gateway',
      dump: async () => undefined,
      cancel: () => undefined,
    })
    expect(e.message).toBe(
      'server error (HTTP 502): non-JSON response (unknown type) from the server or a proxy in between: "Bad Gateway"',
    )
  })
})
