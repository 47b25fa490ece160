import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {expectOneErrorLine, leakedRun} from './expect.js'
import {ESC_PAYLOAD, startHostileServer, type HostileMode, type HostileServer} from './server.js'

/**
 * A server that echoes the key back, whole, cut, lower-cased or minus a character, must not get any run
 * of 8+ of its characters onto the terminal; records are data and keep an echoed key, with a warning.
 * Server-supplied ESC sequences never reach the terminal raw; JSON keeps them as sent.
 */
const KEY = 'sk_live_HOSTILE_0123456789abcdef'
let server: HostileServer
beforeAll(async () => {
  server = await startHostileServer()
})
afterAll(async () => server.close())

function lookup(mode: HostileMode, output = 'json', extra: string[] = []) {
  return sfl(
    ['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', output, '--retries', '0', ...extra],
    {env: {SFL_BASE_URL: server.baseUrl(mode), SFL_API_KEY: KEY}},
  )
}

describe('the key echoed by a server never reaches the terminal', () => {
  const cases: Array<[HostileMode, string]> = [
    ['key-echo-cut', 'an HTML error page cut at 120 characters, 20 of them the key'],
    ['key-lower', 'the key lower-cased'],
    ['key-minus-one', 'the key minus its last character'],
  ]
  for (const [mode, what] of cases)
    for (const debug of [false, true])
      it(`${what}${debug ? ' (--debug)' : ''}: exit 4, no 8-character run of the key`, async () => {
        const r = await lookup(mode, 'json', debug ? ['--debug'] : [])
        expect(r.code).toBe(4)
        expect(leakedRun(r.stderr, KEY)).toBeUndefined()
        expect(leakedRun(r.stdout, KEY)).toBeUndefined()
        if (!debug) expectOneErrorLine(r, 4, /the API key is invalid or missing \(HTTP 401\)/)
      })
})

describe('a key inside a record is the server’s doing: masked in the output, warned about once', () => {
  it('json output has the key masked with * (same length, still valid JSON) and stderr says the server echoed it', async () => {
    const r = await lookup('key-in-record')
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).APN).toBe(`echo-${'*'.repeat(KEY.length)}`)
    expect(leakedRun(r.stdout, KEY)).toBeUndefined()
    const warnings = r.stderr.split('\n').filter((l) => l.includes('echoed your API key'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(
      /^Warning: the service echoed your API key \(whole, or 8 or more of its characters\) 1 time in its answers; it is masked .*Rotate the key/,
    )
    expect(leakedRun(r.stderr, KEY)).toBeUndefined()
  })
})

describe('server-supplied escape sequences never reach the terminal raw', () => {
  it('an error message with OSC 52, title and clear-screen sequences is one line with them shown escaped (exit 2)', async () => {
    const r = await lookup('esc-error')
    expectOneErrorLine(
      r,
      2,
      /HTTP 400\): bad request\\x1b\]0;pwned\\x07\\x1b\[2J\\x1b\[H\\x1b\]52;c;cm0gLXJmIH4=\\x07\\x9b31m done$/,
    )
    // eslint-disable-next-line no-control-regex -- ESC, BEL and 8-bit CSI are what must not appear
    expect(r.stderr).not.toMatch(/[\x1b\x07\x9b]/)
  })

  it('the table view shows record fields (and field names) with controls escaped', async () => {
    const r = await lookup('esc-record', 'table')
    expect(r.code).toBe(0)
    // eslint-disable-next-line no-control-regex -- no C0/C1 control but newline may reach the terminal
    expect(r.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/)
    expect(r.stdout).toContain('SACRAMENTO\\x1b]0;pwned\\x07')
    expect(r.stdout).toContain('x\\x0dy\\u202ez')
  })

  it('json output keeps the data exactly as sent (it is for programs, not terminals)', async () => {
    const r = await lookup('esc-record', 'json')
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).City).toBe(`SACRAMENTO${ESC_PAYLOAD}`)
  })

  it('--debug lines show a hostile error body escaped too', async () => {
    const r = await lookup('esc-error', 'json', ['--debug'])
    expect(r.code).toBe(2)
    // eslint-disable-next-line no-control-regex -- ESC, BEL and 8-bit CSI are what must not appear
    expect(r.stderr).not.toMatch(/[\x1b\x07\x9b]/)
    expect(r.stderr).toMatch(/^\[debug\] /m)
  })
})
