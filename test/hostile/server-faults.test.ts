import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {expectOneErrorLine} from './expect.js'
import {startHostileServer, type HostileMode, type HostileServer} from './server.js'

/**
 * Network-side faults end a lookup with exit 6 and one line that says what the server did (README
 * "Exit codes"); nothing ends in exit 1 or a stack trace. Runs the built CLI (npm run build first).
 */
const KEY = 'sk_live_HOSTILE_0123456789abcdef'
let server: HostileServer
beforeAll(async () => {
  server = await startHostileServer()
})
afterAll(async () => server.close())

function lookup(mode: HostileMode, extra: string[] = [], env: Record<string, string> = {}) {
  // no retries unless a test asks: one request per fault keeps the suite fast
  const retries = extra.includes('--retries') ? [] : ['--retries', '0']
  return sfl(
    ['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json', ...retries, ...extra],
    {
      env: {SFL_BASE_URL: server.baseUrl(mode), SFL_API_KEY: KEY, ...env},
    },
  )
}

describe('a hostile server cannot hold a lookup past --timeout', () => {
  it('a body dripping one byte a second ends at --timeout as a network failure (exit 6)', async () => {
    const r = await lookup('drip', ['--timeout', '2'])
    expectOneErrorLine(
      r,
      6,
      /no complete answer from 127\.0\.0\.1:\d+ within --timeout 2 s \(connect, headers and body\)/,
    )
    expect(r.stdout).toBe('')
  }, 20_000)

  it('the deadline counts as retryable: each retry gets its own deadline, then exit 6', async () => {
    const before = server.requests.length
    const r = await lookup('drip', ['--timeout', '1', '--retries', '1'])
    expectOneErrorLine(r, 6, /within --timeout 1 s .*gave up after 1 retries/)
    expect(server.requests.length - before).toBe(2)
  }, 20_000)
})

describe('network-side faults are exit 6 with one line', () => {
  const cases: Array<[HostileMode, RegExp]> = [
    ['huge-headers', /response headers larger than allowed \(UND_ERR_HEADERS_OVERFLOW\)/],
    ['gzip', /Content-Encoding: gzip, which sfl did not ask for/],
    ['gone', /unexpected HTTP 410 from the service: this API version is gone/],
    ['redirect-no-location', /HTTP 302 without a usable Location header/],
    [
      'non-json',
      /answered 200 with a body that is not a JSON object \(spec 4\): "<html><body>Welcome to the captive portal/,
    ],
    ['data-null', /answered 200 with `data` null instead of a record object/],
    ['data-string', /answered 200 with `data` "no records" instead of a record object/],
    ['data-number', /answered 200 with `data` a number \(42\) instead of a record object/],
    ['data-empty-array', /empty `data` list; spec 7 answers a lookup that matches nothing with 404/],
    ['status-not-success', /answered 200 with status "error" instead of "success"/],
    ['deep', /a record that cannot be read: nested deeper than 64 levels/],
  ]
  for (const [mode, pattern] of cases)
    it(`${mode}: exit 6, nothing on stdout`, async () => {
      const r = await lookup(mode)
      expectOneErrorLine(r, 6, pattern)
      expect(r.stdout).toBe('') // never `[]` or `null` printed as a success
    })

  it('the control case (a well-formed record) still prints it with exit 0', async () => {
    const r = await lookup('ok')
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({Fips: '06067', City: 'SACRAMENTO'})
    expect(r.stderr).toBe('')
  })
})

describe('local usage faults are exit 2 and nothing is sent', () => {
  it('a key with CR/LF is refused before sending, naming no part of it', async () => {
    const before = server.requests.length
    const r = await lookup('ok', [], {SFL_API_KEY: `${KEY}\r\nX-Injected: 1`})
    expectOneErrorLine(r, 2, /the API key \(from SFL_API_KEY\) contains a control character/)
    expect(r.stderr.toLowerCase()).not.toContain('sk_l')
    expect(server.requests.length).toBe(before)
  })

  it('a key with an ESC in the profile-less flag is refused the same way', async () => {
    const before = server.requests.length
    const r = await sfl(['lookup', '--fips', '06067', '--property-id', '1', '--api-key', `${KEY}\x1b`], {
      env: {SFL_BASE_URL: server.baseUrl('ok')},
    })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^Error: the API key \(from --api-key\) contains a control character/m)
    expect(server.requests.length).toBe(before)
  })

  it('an address over 100 characters (spec 2.1) is refused before sending', async () => {
    const before = server.requests.length
    const r = await sfl(['lookup', '--fips', '06067', '--address', `1 ${'A'.repeat(100_000)} ST`], {
      env: {SFL_BASE_URL: server.baseUrl('ok'), SFL_API_KEY: KEY},
    })
    expectOneErrorLine(r, 2, /--address is 100005 characters; the service stores at most 100/)
    expect(server.requests.length).toBe(before)
  })

  it('an APN over 45 characters (spec 8.4) is refused before sending', async () => {
    const before = server.requests.length
    const r = await sfl(['lookup', '--fips', '06067', '--apn', '1'.repeat(46)], {
      env: {SFL_BASE_URL: server.baseUrl('ok'), SFL_API_KEY: KEY},
    })
    expectOneErrorLine(r, 2, /--apn is 46 characters; the service allows at most 45/)
    expect(server.requests.length).toBe(before)
  })
})

describe('--api-key', () => {
  it('as a value warns about the shell history and the process list', async () => {
    const r = await sfl(
      ['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json', '--api-key', KEY],
      {
        env: {SFL_BASE_URL: server.baseUrl('ok')},
      },
    )
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(
      /^Warning: --api-key puts the key in your shell history and in the process list \(`ps`\).*`--api-key -`/,
    )
  })

  it('`--api-key -` reads the key from stdin (first line, trimmed), sends it, and warns about nothing', async () => {
    const before = server.requests.length
    const r = await sfl(
      ['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json', '--api-key', '-'],
      {
        env: {SFL_BASE_URL: server.baseUrl('ok')},
        input: `  ${KEY}  \nsecond line ignored\n`,
      },
    )
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(server.requests.slice(before).map((q) => q.headers['x-api-key'])).toEqual([KEY])
  })

  it('`--api-key -` with an empty stdin is a usage error', async () => {
    const r = await sfl(['lookup', '--fips', '06067', '--property-id', '1', '--api-key', '-'], {
      env: {SFL_BASE_URL: server.baseUrl('ok')},
      input: '',
    })
    expectOneErrorLine(r, 2, /--api-key - found no key on stdin/)
  })
})
