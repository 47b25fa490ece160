import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {createClient} from '../../src/lib/index.js'
import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {startScenario, type Scenario} from '../helpers/scenario-server.js'

/**
 * Issue 31 in the library: `county` is optional when the address ends in a ZIP, and the result says which
 * county was used and whether the record carries the unit asked for. Against a loopback server that
 * answers only at the exact (fips, address) it holds.
 */
const rec = {...new Dataset(1, 10).record(countyByFips('06067')!, 3, {assumable: false, condo: false}), StandardizeStreetAddress: '3526 HIGH ST'} // prettier-ignore
let server: Scenario
beforeAll(async () => {
  server = await startScenario((r) =>
    r.fips === '06067' && r.query.get('address') === '3526 HIGH ST APT 9, SACRAMENTO, CA 95838'
      ? {status: 200, body: {status: 'success', data: rec}}
      : {
          status: 404,
          body: {status: 'error', code: 404, message: 'No property matches the given parameters.'},
        },
  )
})
afterAll(() => server.close())

describe('the library: a ZIP is enough, and honest matches', () => {
  it('lookup without a county finds it from the ZIP and says so; the unit asked for is compared', async () => {
    const client = await createClient({baseUrl: server.baseUrl, apiKey: 'lib-key-0123456789', retries: 0})
    const r = await client.lookup({address: '3526 High St Apt 9, Sacramento, CA 95838', fallback: false})
    expect(server.requests.map((q) => [q.fips, q.query.get('address')])).toEqual([
      ['06067', '3526 HIGH ST APT 9, SACRAMENTO, CA 95838'],
    ])
    expect(r.match).toEqual({
      status: 'matched_without_unit',
      tried: [{address: '3526 HIGH ST APT 9, SACRAMENTO, CA 95838', form: 'standardised'}],
      unit: {asked: 'APT 9', address: '3526 HIGH ST'},
      county: {fips: '06067', label: 'Sacramento County, CA (06067)', zip: '95838', rank: 1, of: 1},
    })
  })

  it('an address without a ZIP and no county is refused in the library’s words, nothing sent', async () => {
    const client = await createClient({baseUrl: server.baseUrl, apiKey: 'lib-key-0123456789', retries: 0})
    const before = server.requests.length
    await expect(client.lookup({address: '3526 High St, Sacramento'})).rejects.toThrow(
      /fips \(a 5-digit code such as 06067\) or county \("Sacramento, CA"\), unless the address ends in a ZIP code/,
    )
    expect(server.requests.length).toBe(before)
  })
})
