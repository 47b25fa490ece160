import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {recordProblems} from '../../src/pipeline/stages.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {get} from '../helpers/sandbox.js'

/**
 * The sandbox against the spec, rule by rule, over real HTTP. Each test name starts with the spec rule it
 * checks; docs/sandbox.md's "Conformance" table lists the same rules.
 */
let sb: Sandbox
let base: string
beforeAll(async () => {
  sb = await startSandbox({records: 5000, seed: 1})
  base = sb.baseUrl
})
afterAll(async () => sb.close())

const HIGH_ST = 'fips=06067&address=3526+HIGH+ST%2C+SACRAMENTO%2C+CA+95838'

describe('spec 2.1: the standard package', () => {
  it('2.1 a lookup returns {status: success, data} with every standard field, within its type and size', async () => {
    const r = await get(base, HIGH_ST, 'sandbox-basic')
    expect(r.status).toBe(200)
    expect(r.body.status).toBe('success')
    expect(recordProblems(r.body.data)).toEqual([])
    for (const f of [
      'Fips',
      'ServicePropertyID',
      'APN',
      'FinalValue',
      'ConfidenceScore',
      'CRAEligible',
      'TractMinorityPopulationPercent',
    ])
      expect(r.body.data).toHaveProperty(f)
  })
})

describe('spec 2.2: Assumable Mortgage option', () => {
  it('2.2 rule 1: Assumable is true and the option carries the FHA/VA/USDA loan detail', async () => {
    const r = await get(base, 'fips=06067&property_id=30000000006', 'sandbox-assumable')
    expect(r.body.data.Assumable).toBe(true)
    expect(r.body.data.AssumableMortgage.LoanType).toBe('FHA')
  })
  it('2.2 rule 2: omitted entirely when the key lacks the option', async () => {
    for (const key of ['sandbox-basic', 'sandbox-condo']) {
      const r = await get(base, 'fips=06067&property_id=30000000006', key)
      expect(r.body.data).not.toHaveProperty('AssumableMortgage')
    }
  })
  it('2.2 rule 3: null when the key has the option but the property has no assumable mortgage', async () => {
    const r = await get(base, 'fips=06067&property_id=30000000009', 'sandbox-full')
    expect(r.body.data.Assumable).toBeNull()
    expect(r.body.data).toHaveProperty('AssumableMortgage', null)
  })
})

describe('spec 2.3: FHA Condo Eligibility option', () => {
  it('2.3 rule 1: omitted entirely when the key lacks the option', async () => {
    const r = await get(base, 'fips=06067&property_id=30000000007', 'sandbox-assumable')
    expect(r.body.data).not.toHaveProperty('FHACondoEligibility')
  })
  it('2.3 rule 2: null when the property is not a condo', async () => {
    const r = await get(base, 'fips=06067&property_id=30000000006', 'sandbox-condo')
    expect(r.body.data).toHaveProperty('FHACondoEligibility', null)
    expect(r.body.data.FHACondoEligible).toBeNull()
  })
  it('2.3 rule 3: a condo that is not eligible still returns a populated object', async () => {
    const r = await get(base, 'fips=06067&property_id=30000000008', 'sandbox-condo')
    expect(r.body.data.FHACondoEligibility).toMatchObject({ApprovalStatus: 'Not Approved'})
    expect(['Ineligible', 'Eligible For Review']).toContain(r.body.data.FHACondoEligibility.EligibilityStatus)
    expect(r.body.data.FHACondoEligible).toBe(false)
  })
  it('2.3 rule 4: the option carries the measurements behind FHACondoEligible', async () => {
    const r = await get(base, 'fips=06067&property_id=30000000007', 'sandbox-condo')
    const c = r.body.data.FHACondoEligibility
    expect(r.body.data.FHACondoEligible).toBe(true)
    expect(c.ApprovalStatus).toBe('Caution')
    expect(c.EligibilityStatus).toBe('Caution')
    expect(c.OwnerOccupancyPercentage).toBe(31.5)
    expect(c.OwnerOccupancyViolation).toBe(true) // spec 8.5: below the 35 percent minimum
  })
})

describe('spec 4: the endpoint', () => {
  it('4 the address travels form-encoded and matches however the user typed it', async () => {
    for (const a of [
      '3526+high+street',
      '3526++High+St.%2C+Sacramento%2C+CA+95838',
      '3526+HIGH+ST+SACRAMENTO+CA+95838',
    ]) {
      const r = await get(base, `fips=06067&address=${a}`, 'sandbox-basic')
      expect(r.status, a).toBe(200)
      expect(r.body.data.ServicePropertyID).toBe(30000000006)
    }
  })
  it('4 a unit must match: the condo answers with its unit, not without it', async () => {
    expect(
      (await get(base, 'fips=06067&address=1150+River+Oaks+Drive+Apt+114', 'sandbox-basic')).status,
    ).toBe(200)
    expect((await get(base, 'fips=06067&address=1150+RIVER+OAKS+DR+%23114', 'sandbox-basic')).status).toBe(
      200,
    )
    expect((await get(base, 'fips=06067&address=1150+RIVER+OAKS+DR+UNIT+115', 'sandbox-basic')).status).toBe(
      404,
    )
  })
  it('4 lookups by apn and by property_id find the same property', async () => {
    const a = await get(base, 'fips=06067&apn=078-0123-045', 'sandbox-basic')
    const b = await get(base, 'fips=06067&property_id=30000000006', 'sandbox-basic')
    expect(a.body.data).toEqual(b.body.data)
  })
  it('4 (gap, documented) precedence: property_id, then apn, then address', async () => {
    const r = await get(
      base,
      'fips=06067&property_id=30000000009&apn=078-0123-045&address=3526+HIGH+ST',
      'sandbox-basic',
    )
    expect(r.body.data.ServicePropertyID).toBe(30000000009)
    const s = await get(base, 'fips=06067&apn=078-0123-046&address=3526+HIGH+ST', 'sandbox-basic')
    expect(s.body.data.ServicePropertyID).toBe(30000000007)
  })
  it('4 leaving out the address returns every record of the county as one array (page size 0)', async () => {
    const r = await get(base, 'fips=06067', 'sandbox-basic')
    expect(r.status).toBe(200)
    expect(r.body.data).toHaveLength(2000)
    expect(new Set(r.body.data.map((d: {ServicePropertyID: number}) => d.ServicePropertyID)).size).toBe(2000)
    expect(r.headers.get('link')).toBeNull()
  })
  it('4 (gap, documented) page and page_size paginate with an RFC 8288 Link next, none on the last page', async () => {
    const seen = new Set<number>()
    let url: string | null = `${base}/special-financing?fips=06067&page_size=600`
    let pages = 0
    while (url) {
      const res = await fetch(url, {headers: {'x-api-key': 'sandbox-basic'}})
      const body = (await res.json()) as {data: Array<{ServicePropertyID: number}>}
      for (const d of body.data) seen.add(d.ServicePropertyID)
      pages++
      const link = res.headers.get('link')
      url = link ? /<([^>]+)>; rel="next"/.exec(link)![1]! : null
    }
    expect(pages).toBe(4)
    expect(seen.size).toBe(2000)
  })
})

describe('spec 5: authentication', () => {
  it('5.1 / 5.4 a missing key gives 401 saying the key is invalid or missing', async () => {
    const r = await get(base, HIGH_ST)
    expect(r.status).toBe(401)
    expect(r.body).toEqual({status: 'error', code: 401, message: expect.stringMatching(/invalid or missing/)})
  })
  it('5.4 an unknown key gives 401 and no rate-limit headers', async () => {
    const r = await get(base, HIGH_ST, 'not-a-key')
    expect(r.status).toBe(401)
    expect(r.headers.get('x-ratelimit-limit')).toBeNull()
  })
  it('5.3 / 5.4 a key without permission for the county gives 403', async () => {
    expect((await get(base, 'fips=06067&property_id=30000000006', 'sandbox-restricted')).status).toBe(200)
    const r = await get(base, 'fips=48201&property_id=50000000001', 'sandbox-restricted')
    expect(r.status).toBe(403)
    expect(r.body).toMatchObject({status: 'error', code: 403})
  })
})

describe('spec 7: errors', () => {
  it.each([
    ['', 'missing fips'],
    ['fips=6067&apn=1', 'fips not 5 digits'],
    ['fips=99001&apn=1', 'fips with no such state'],
    [`fips=06067&apn=${'A'.repeat(46)}`, 'apn over 45 characters'],
    ['fips=06067&property_id=12x', 'property_id not an integer'],
  ])('7 400 with the error body for %s (%s)', async (q) => {
    const r = await get(base, q, 'sandbox-basic')
    expect(r.status).toBe(400)
    expect(r.body).toEqual({status: 'error', code: 400, message: expect.any(String)})
  })
  it('7 404 when nothing matches', async () => {
    const r = await get(base, 'fips=06067&address=1+NOWHERE+RD', 'sandbox-basic')
    expect(r.status).toBe(404)
    expect(r.body).toEqual({status: 'error', code: 404, message: 'No property matches the given parameters.'})
  })
})

describe('spec 8: limits', () => {
  it('8.3 every response to a valid key carries X-RateLimit-Limit, -Remaining and a future Unix -Reset', async () => {
    for (const q of [HIGH_ST, 'fips=06067&address=1+NOWHERE+RD', '']) {
      const r = await get(base, q, 'sandbox-condo')
      expect(Number(r.headers.get('x-ratelimit-limit'))).toBe(1000) // 8.2 default
      expect(Number(r.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0)
      const reset = Number(r.headers.get('x-ratelimit-reset'))
      expect(reset).toBeGreaterThan(Date.now() / 1000)
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 3600)
    }
  })
  it('8.1 limits are per key; 429 with Retry-After once a key is spent', async () => {
    const tight = await startSandbox({limit: 3, windowSeconds: 60, windowOrigin: Date.now()})
    try {
      const remaining: number[] = []
      for (let i = 0; i < 3; i++)
        remaining.push(
          Number((await get(tight.baseUrl, HIGH_ST, 'sandbox-basic')).headers.get('x-ratelimit-remaining')),
        )
      expect(remaining).toEqual([2, 1, 0])
      const r = await get(tight.baseUrl, HIGH_ST, 'sandbox-basic')
      expect(r.status).toBe(429)
      expect(r.body).toMatchObject({status: 'error', code: 429})
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(60)
      expect((await get(tight.baseUrl, HIGH_ST, 'sandbox-full')).status).toBe(200) // another key is untouched
    } finally {
      await tight.close()
    }
  })
  it('8.3 windows counted from an origin turn one window after it, not on the clock', async () => {
    let now = Date.UTC(2026, 10, 23, 12, 59, 59)
    const origin = Date.UTC(2026, 10, 23, 12, 30, 0)
    const tight = await startSandbox({limit: 1, windowSeconds: 3600, windowOrigin: origin, now: () => now})
    try {
      const first = await get(tight.baseUrl, HIGH_ST, 'sandbox-basic')
      expect(Number(first.headers.get('x-ratelimit-reset'))).toBe(Date.UTC(2026, 10, 23, 13, 30, 0) / 1000)
      now = Date.UTC(2026, 10, 23, 13, 0, 1) // the clock hour turned, the window did not
      expect((await get(tight.baseUrl, HIGH_ST, 'sandbox-basic')).status).toBe(429)
    } finally {
      await tight.close()
    }
  })
  it('8.1 the window resets: a spent key is refused until the reset it announced, then admitted', async () => {
    // the sandbox's clock is the test's: the window turns when the test says, no sleeping
    let now = Date.UTC(2026, 10, 23, 12, 0, 10)
    const tight = await startSandbox({limit: 1, windowSeconds: 60, now: () => now})
    try {
      const first = await get(tight.baseUrl, HIGH_ST, 'sandbox-basic')
      expect(first.status).toBe(200)
      const reset = Number(first.headers.get('x-ratelimit-reset'))
      expect(reset).toBe(Date.UTC(2026, 10, 23, 12, 1, 0) / 1000)
      now = reset * 1000 - 1
      expect((await get(tight.baseUrl, HIGH_ST, 'sandbox-basic')).status).toBe(429)
      now = reset * 1000
      expect((await get(tight.baseUrl, HIGH_ST, 'sandbox-basic')).status).toBe(200)
    } finally {
      await tight.close()
    }
  })
})
