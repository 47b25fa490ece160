import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {withSandbox} from '../helpers/sandbox.js'
import {expectOneErrorLine} from '../hostile/expect.js'
import {startHostileServer, type HostileServer} from '../hostile/server.js'

/**
 * Addresses, parcel numbers and counties as people type them (issue 22), sent in the form the service
 * matches. A loopback server records the query each lookup sent; the sandbox in strict mode (it matches only
 * the service's standardised form) proves a no-comma address is found.
 */
const KEY = 'sk_live_SPELLINGS_0123456789abcdef'
let server: HostileServer
beforeAll(async () => {
  server = await startHostileServer()
})
afterAll(async () => server.close())

/** Run a lookup against the recording server; the query parameters of the one request it sent. */
async function sent(args: string[]): Promise<Record<string, string>> {
  const before = server.requests.length
  const r = await sfl(['lookup', '-o', 'json', '--no-fallback', ...args], {
    env: {SFL_BASE_URL: server.baseUrl('ok'), SFL_API_KEY: KEY},
  })
  expect(r.code, r.stderr).toBe(0)
  const got = server.requests.slice(before)
  expect(got).toHaveLength(1)
  return Object.fromEntries(new URL(got[0]!.url, 'http://x').searchParams)
}

describe('what is sent for what people type', () => {
  it('"4800 Westlake Pkwy, #2109": the # unit in its own comma part joins the street line as UNIT', async () => {
    expect(await sent(['--fips', '06067', '--address', '4800 Westlake Pkwy, #2109'])).toMatchObject({
      address: '4800 WESTLAKE PKWY UNIT 2109',
    })
  })

  it('"3526 high st sacramento ca 95838": no commas, split from the end', async () => {
    expect(await sent(['--fips', '06067', '--address', '3526 high st sacramento ca 95838'])).toMatchObject({
      address: '3526 HIGH ST, SACRAMENTO, CA 95838',
    })
  })

  it('an APN and a property ID with stray spaces are trimmed', async () => {
    expect(await sent(['--fips', '06067', '--apn', ' 078-0123-045 '])).toEqual({
      fips: '06067',
      apn: '078-0123-045',
    })
    expect(await sent(['--fips', '06067', '--property-id', ' 30000000006 '])).toEqual({
      fips: '06067',
      property_id: '30000000006',
    })
  })

  it('--county with the state spelled out and "County": "Yolo County, California" is 06113', async () => {
    expect(await sent(['--county', 'Yolo County, California', '--apn', '1'])).toMatchObject({fips: '06113'})
    expect(await sent(['--county', 'Orleans Parish, Louisiana', '--apn', '1'])).toMatchObject({
      fips: '22071',
    })
  })

  it('--county sac is exit 2 listing Sac County, IA and Sacramento County, CA; nothing is sent', async () => {
    const before = server.requests.length
    const r = await sfl(['lookup', '--county', 'sac', '--apn', '1'], {
      env: {SFL_BASE_URL: server.baseUrl('ok'), SFL_API_KEY: KEY},
    })
    expectOneErrorLine(
      r,
      2,
      /^Error: --county "sac": "sac" is the name of a county and the start of 1 more; say which \(add the state: "Name, ST"\); did you mean Sac County, IA \(19161\); Sacramento County, CA \(06067\)\?$/,
    )
    expect(server.requests.length - before).toBe(0)
  })
})

describe('found by a server that matches only its own standard form', () => {
  it('"3526 high st sacramento ca 95838" is found with one request', async () => {
    await withSandbox({match: 'strict'}, async (sb) => {
      const r = await sfl(
        [
          'lookup',
          '--fips',
          '06067',
          '--address',
          '3526 high st sacramento ca 95838',
          '-o',
          'json',
          '--no-fallback',
        ],
        {env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}},
      )
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({
        StandardizeStreetAddress: '3526 HIGH ST',
        City: 'SACRAMENTO',
      })
    })
  })
})
