import {mkdtempSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {sfl} from '../helpers/cli.js'
import {get, readLog} from '../helpers/sandbox.js'

let sb: Sandbox
let log: string
const dir = mkdtempSync(join(tmpdir(), 'sfl-e2e-lookup-'))
const env = (key = 'sandbox-full') => ({SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: key})
const HIGH = ['--fips', '06067', '--address', '3526 HIGH ST, SACRAMENTO, CA 95838']

beforeAll(async () => {
  log = join(dir, 'requests.ndjson')
  writeFileSync(log, '')
  sb = await startSandbox({log})
})
afterAll(async () => sb.close())

describe('sfl lookup (built CLI against the sandbox over HTTP)', () => {
  it('prints the data record exactly as the service sent it (json is the default in a pipe)', async () => {
    const r = await sfl(['lookup', ...HIGH], {env: env()})
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const direct = await get(sb.baseUrl, 'fips=06067&property_id=30000000006', 'sandbox-full')
    expect(JSON.parse(r.stdout)).toEqual(direct.body.data)
  })

  it('ndjson prints one line', async () => {
    const r = await sfl(['lookup', '--fips', '06067', '--apn', '078-0123-045', '-o', 'ndjson'], {env: env()})
    expect(r.code).toBe(0)
    expect(r.stdout.split('\n')).toHaveLength(2)
    expect(JSON.parse(r.stdout).APN).toBe('078-0123-045')
  })

  it('csv prints a header and one row, options flattened to dot paths when the key has them', async () => {
    const full = await sfl(['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'csv'], {
      env: env(),
    })
    const [header, row, end] = full.stdout.split('\r\n')
    expect(header!.startsWith('Fips,ServicePropertyID,APN,')).toBe(true)
    expect(header).toContain(',AssumableMortgage.LoanType,AssumableMortgage.FinancingType,')
    expect(header).toContain(',FHACondoEligibility.ApprovalStatus,')
    expect(row!.startsWith('06067,30000000006,078-0123-045,')).toBe(true)
    expect(end).toBe('')
    const basic = await sfl(['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'csv'], {
      env: env('sandbox-basic'),
    })
    expect(basic.stdout).not.toContain('AssumableMortgage')
    expect(basic.stdout).not.toContain('FHACondoEligibility')
  })

  it('the table tells "not included with this key" from "none for this property"', async () => {
    const basic = await sfl(['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'table'], {
      env: env('sandbox-basic'),
    })
    expect(basic.stdout).toMatch(/ASSUMABLE MORTGAGE\n\s+not included with this key/)
    expect(basic.stdout).not.toMatch(/FHA CONDO/) // a house: the condo group does not apply
    const condo = await sfl(['lookup', '--fips', '06067', '--property-id', '30000000007', '-o', 'table'], {
      env: env('sandbox-basic'),
    })
    expect(condo.stdout).toMatch(/FHA CONDO\n\s+not included with this key/)
    const full = await sfl(['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'table'], {
      env: env(),
    })
    expect(full.stdout).not.toMatch(/FHA CONDO/) // a house: the condo group does not apply
    expect(full.stdout).toMatch(/Loan type\s+FHA, fixed rate/)
    expect(full.stdout).toMatch(
      /Estimated value\s+\$[\d,]+ \(range \$[\d,]+ – \$[\d,]+, confidence \d+\/100\)/,
    )
  })

  it('explains a Caution condo and flags owner occupancy under 35 percent', async () => {
    const r = await sfl(
      ['lookup', '--fips', '06067', '--address', '1150 River Oaks Dr #114', '-o', 'table'],
      {env: env()},
    )
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(
      /Unit eligibility\s+Caution: approved, but an owner-occupancy or concentration violation\s+may block FHA loan approval/,
    )
    expect(r.stdout).toMatch(/Owner occupancy\s+31\.5% FLAGGED: below the 35% minimum/)
  })

  it('--sandbox runs the embedded sandbox with a notice on stderr', async () => {
    const r = await sfl(['lookup', '--sandbox', ...HIGH, '-o', 'json'])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(
      /^sfl: using the embedded sandbox at http:\/\/127\.0\.0\.1:\d+\/v1 \(synthetic data, key sandbox-full\)\n$/,
    )
    expect(JSON.parse(r.stdout).ServicePropertyID).toBe(30000000006)
  })
})

describe('sfl lookup exit codes', () => {
  const requestsSince = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const before = readLog(log).length
    const out = await fn()
    return [out, readLog(log).length - before]
  }

  it.each([
    [['--fips', '6067', '--apn', '1'], /--fips "6067" must be exactly 5 digits/],
    [['--fips', '06067'], /give exactly one of --address, --apn or --property-id; none was given/],
    [['--fips', '06067', '--apn', '1', '--address', 'x'], /got --address and --apn/],
    [['--fips', '06067', '--property-id', 'abc'], /--property-id must be a positive whole number/],
    [['--fips', '06067', '--apn', 'x'.repeat(46)], /--apn is 46 characters/],
    [['--fips', '06067', '--apn', '1', '--output', 'xml'], /Expected --output=xml to be one of/],
    [['--address', ''], /^Error: --address must not be empty\n$/],
    [['--fips', '06067', '--address', ''], /^Error: --address must not be empty\n$/],
    [['--fips', '06067', '--address', '', '--apn', '1'], /^Error: --address must not be empty\n$/],
    [['--fips', '06067', '--apn', '  '], /^Error: --apn must not be empty\n$/],
  ])('bad input %j: exit 2, a message naming the flag, and no request sent', async (args, message) => {
    const [r, sent] = await requestsSince(() => sfl(['lookup', ...args], {env: env()}))
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(message)
    expect(r.stdout).toBe('')
    expect(sent).toBe(0)
  })

  it('404: exit 3 with the service message', async () => {
    const r = await sfl(['lookup', '--fips', '06067', '--address', '1 NOWHERE RD'], {env: env()})
    expect(r.code).toBe(3)
    expect(r.stderr).toBe(
      'Error: no property matches in Sacramento County, CA (06067) (HTTP 404: No property matches the given parameters.): tried "1 NOWHERE RD" (standardised). Try the parcel number (--apn), check the county (--fips or --county), or spell the street as the county records it\n',
    )
  })

  it('401: exit 4 saying how to set a key; the key is not echoed', async () => {
    const r = await sfl(['lookup', ...HIGH], {env: env('sk_live_SECRET_0123456789')})
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(
      /the API key is invalid or missing \(HTTP 401\).*The key came from SFL_API_KEY: fix SFL_API_KEY/,
    )
    expect(r.stderr + r.stdout).not.toContain('sk_live_SECRET_0123456789')
  })

  it('403: exit 4 for a county the key may not use', async () => {
    const r = await sfl(['lookup', '--fips', '48201', '--property-id', '50000000001'], {
      env: env('sandbox-restricted'),
    })
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/not permitted .*HTTP 403/)
  })

  it('no key at all: exit 4 and no request', async () => {
    const [r, sent] = await requestsSince(() => sfl(['lookup', ...HIGH], {env: {SFL_BASE_URL: sb.baseUrl}}))
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/no API key: set SFL_API_KEY, run `sfl keys set`/)
    expect(sent).toBe(0)
  })

  it('refuses to send the key over plain http to a non-loopback host: exit 2', async () => {
    const r = await sfl(['lookup', ...HIGH], {
      env: {SFL_BASE_URL: 'http://api.example.com/v1', SFL_API_KEY: 'k-123456'},
    })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/refusing to send the API key over plain http:\/\/ to api\.example\.com/)
  })

  it('warns that --api-key lands in shell history, and never prints the key', async () => {
    const r = await sfl(['lookup', ...HIGH, '--api-key', 'sandbox-full', '--debug'], {
      env: {SFL_BASE_URL: sb.baseUrl},
    })
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/Warning: --api-key puts the key in your shell history/)
    expect(r.stderr).toMatch(/X-Api-Key: sand…/)
    expect(r.stderr).not.toContain('sandbox-full')
  })

  it('429 beyond --max-wait: exit 5', async () => {
    const tight = await startSandbox({limit: 1, windowSeconds: 3600, windowOrigin: Date.now()})
    try {
      const e = {SFL_BASE_URL: tight.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      expect((await sfl(['lookup', ...HIGH], {env: e})).code).toBe(0)
      const r = await sfl(['lookup', ...HIGH, '--max-wait', '1'], {env: e})
      expect(r.code).toBe(5)
      expect(r.stderr).toMatch(/rate limit/)
    } finally {
      await tight.close()
    }
  })

  it('5xx that outlives the retries: exit 6 after 1 + --retries requests', async () => {
    const flog = join(dir, 'fail.ndjson')
    const failing = await startSandbox({failRate: 1, log: flog})
    try {
      const r = await sfl(['lookup', ...HIGH, '--retries', '2'], {
        env: {SFL_BASE_URL: failing.baseUrl, SFL_API_KEY: 'sandbox-basic'},
      })
      expect(r.code).toBe(6)
      expect(r.stderr).toMatch(/server error \(HTTP 500\).*gave up after 2 retries/)
      expect(readLog(flog)).toHaveLength(3)
    } finally {
      await failing.close()
    }
  })

  it('a record that breaks the schema: a warning and exit 0, or exit 1 with --strict', async () => {
    const bad = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json')
      res.end(
        JSON.stringify({status: 'success', data: {Fips: '06067', ConfidenceScore: 150, NewField: 'kept'}}),
      )
    })
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r))
    const base = `http://127.0.0.1:${(bad.address() as AddressInfo).port}/v1`
    try {
      const lax = await sfl(['lookup', ...HIGH], {env: {SFL_BASE_URL: base, SFL_API_KEY: 'k-123456'}})
      expect(lax.code).toBe(0)
      expect(lax.stderr).toMatch(
        /^Warning: record \(no ServicePropertyID\) does not match the spec's rules: ConfidenceScore: 150 is over the maximum 100; .*\n$/,
      )
      expect(JSON.parse(lax.stdout)).toEqual({Fips: '06067', ConfidenceScore: 150, NewField: 'kept'})
      const strict = await sfl(['lookup', ...HIGH, '--strict'], {
        env: {SFL_BASE_URL: base, SFL_API_KEY: 'k-123456'},
      })
      expect(strict.code).toBe(1)
      expect(strict.stdout).toBe('')
    } finally {
      bad.close()
    }
  })
})
