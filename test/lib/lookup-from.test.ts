import {existsSync} from 'node:fs'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {clearSecrets} from '../../src/api/secrets.js'
import {createClient, UsageError} from '../../src/lib/index.js'
import {startSandbox} from '../../src/sandbox/server.js'
import {sfl} from '../helpers/cli.js'
import {readLog} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * The library's `lookup({..., from})` (issue 33): an `--out-dir` export on disk answers a lookup it matches
 * exactly, with no request, and says so in `fromExport`; anything else is asked of the service.
 */
const KEY = 'sandbox-full'
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
  clearSecrets()
})

async function setUp() {
  const log = join(tempDir('sfl-lib-from-'), 'requests.ndjson')
  const sb = await startSandbox({port: 0, log})
  cleanups.push(() => sb.close())
  const dir = join(tempDir('sfl-lib-from-'), 'exports')
  const r = await sfl(['county-export', '--fips', '06067', '--out-dir', dir, '--quiet', '--no-stats'], {
    env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY},
  })
  expect(r.code, r.stderr).toBe(0)
  const client = await createClient({baseUrl: sb.baseUrl, apiKey: KEY, configDir: tempDir('sfl-lib-cfg-')})
  const sent = () => (existsSync(log) ? readLog(log).length : 0)
  return {dir, client, sent}
}

describe('lookup({..., from}) in the library', () => {
  it('a property the export holds is answered from it with no request, the record the service gives, its date said', async () => {
    const {dir, client, sent} = await setUp()
    const before = sent()
    const offline = await client.lookup({fips: '06067', propertyId: 30000000006, from: dir})
    expect(sent() - before).toBe(0)
    expect(offline.fromExport).toEqual({dir, fetchedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string})
    const online = await client.lookup({fips: '06067', propertyId: 30000000006})
    expect(online.fromExport).toBeUndefined()
    expect(offline.record).toEqual(online.record)
  })

  it('no exact match in the export: the service answers (one request), and fromExport is absent', async () => {
    const {dir, client, sent} = await setUp()
    const before = sent()
    const r = await client.lookup({fips: '06067', address: '3526 High St', from: dir})
    // a street line without a city or ZIP names a property in more than one town: never answered locally
    expect(sent() - before).toBe(1)
    expect(r.fromExport).toBeUndefined()
  })

  it('from without a county, and maxAge without from, are UsageErrors naming the options, nothing sent', async () => {
    const {dir, client, sent} = await setUp()
    const before = sent()
    await expect(client.lookup({address: '3526 High St, Sacramento, CA 95838', from: dir})).rejects.toThrow(
      new UsageError('from needs the county: give fips or county (the export is read by county)'),
    )
    await expect(client.lookup({fips: '06067', propertyId: 1, maxAge: '7d'})).rejects.toThrow(
      new UsageError('maxAge applies to from (the export whose counties it ages)'),
    )
    expect(sent() - before).toBe(0)
  })
})
