import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import CountyExport from '../../src/commands/county-export.js'

import {clearSecrets} from '../../src/api/secrets.js'
import {
  createClient,
  InterruptedError,
  InvalidKeyError,
  NotFoundError,
  ServerError,
  SflError,
  UsageError,
  type ClientOptions,
  type ExportItem,
  type SflClient,
} from '../../src/lib/index.js'
import {startSandbox} from '../../src/sandbox/server.js'
import {startHangingServer} from '../helpers/hanging-server.js'
import {paged, startScenario, type Reply, type ScenarioRequest} from '../helpers/scenario-server.js'
import {runCommand} from '../helpers/run-command.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * The library in process (src/lib/client.ts, src/lib/export.ts), as a program uses it: lookups, the
 * verdicts, the key check and whole counties (resumed from a position, stopped early, a 404 county, a
 * failure mid-county, strict), against the sandbox and scripted loopback servers. An abort ends the call
 * with InterruptedError whatever it was doing (a request in flight, a rate-limit wait, a page between
 * two); every error out is the library's own, worded with its option and field names.
 */
const KEY = 'sandbox-full'
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
  clearSecrets()
})

async function sandboxClient(extra: ClientOptions = {}): Promise<SflClient> {
  const sb = await startSandbox({port: 0, records: 600, pageSize: 200})
  cleanups.push(() => sb.close())
  return createClient({baseUrl: sb.baseUrl, apiKey: KEY, configDir: tempDir(), ...extra})
}

async function scenarioClient(
  answer: (r: ScenarioRequest) => Reply,
  extra: ClientOptions = {},
): Promise<{sfl: SflClient; requests: ScenarioRequest[]}> {
  const s = await startScenario(answer)
  cleanups.push(() => s.close())
  const sfl = await createClient({baseUrl: s.baseUrl, apiKey: 'k-lib-123456', configDir: tempDir(), ...extra})
  return {sfl, requests: s.requests}
}

/** Every item of an export, or the error it ended with. */
async function drain(items: AsyncIterable<ExportItem>): Promise<{items: ExportItem[]; error?: unknown}> {
  const seen: ExportItem[] = []
  try {
    for await (const item of items) seen.push(item)
    return {items: seen}
  } catch (error) {
    return {items: seen, error}
  }
}

const pagesOf = (items: ExportItem[]) =>
  items.flatMap((i) => (i.kind === 'page' ? [[i.page.page, i.page.records] as const] : []))
const idsOf = (items: ExportItem[]) =>
  items.flatMap((i) => (i.kind === 'record' ? [i.record.ServicePropertyID] : []))

describe('lookup, explain and checkKey', () => {
  it('looks up by address, by APN and by property ID, and explains the record', async () => {
    const sfl = await sandboxClient()
    const byAddress = await sfl.lookup({fips: '06067', address: '3526 High St, Sacramento, CA 95838'})
    expect(byAddress.record.ServicePropertyID).toBe(30000000006)
    expect(byAddress.match).toEqual({
      status: 'matched',
      tried: [{address: '3526 HIGH ST, SACRAMENTO, CA 95838', form: 'standardised'}],
    })
    const byApn = await sfl.lookup({county: 'Sacramento, CA', apn: byAddress.record.APN})
    expect(byApn.record.ServicePropertyID).toBe(30000000006)
    const byId = await sfl.lookup({fips: '06067', propertyId: 30000000006})
    expect(byId.raw).toHaveLength(1)
    expect(byId.problems).toEqual([[]])
    const verdicts = sfl.explain(byId.record, {marketRate: 6.5})
    expect(verdicts.map((v) => v.program)).toEqual(['FHA', 'USDA', 'VA', 'Assumable', 'CRA'])
    expect(verdicts[0]).toMatchObject({outcome: 'eligible', codes: ['FHA_ELIGIBLE']})
  })

  it('a property the service does not know is a NotFoundError in the library words: fields, no flags', async () => {
    const sfl = await sandboxClient()
    const byId = await sfl.lookup({fips: '06067', propertyId: '99999999999'}).catch((e: unknown) => e)
    expect(byId).toBeInstanceOf(NotFoundError)
    expect((byId as NotFoundError).code).toBe('NOT_FOUND')
    expect((byId as Error).message).toMatch(
      /^no property matches propertyId 99999999999 in Sacramento County, CA \(06067\) \(HTTP 404: .*\)\. Check that fips \(or county\) names the county the parcel is in, or look it up by address$/,
    )
    const byAddress = await sfl
      .lookup({fips: '06067', address: '1 Nowhere Rd', fallback: false})
      .catch((e: unknown) => e)
    expect((byAddress as Error).message).toMatch(
      /tried "1 NOWHERE RD" \(standardised\) \(fallback: false, so no other form was tried\)\. Try the parcel number \(apn\), check the county \(fips or county\)/,
    )
    for (const e of [byId, byAddress]) expect((e as Error).message).not.toContain('--')
  })

  it('a 401 says so once, with one full stop, and names apiKey, not a flag', async () => {
    const sfl = await sandboxClient({apiKey: 'not-a-sandbox-key'})
    const e = await sfl.lookup({fips: '06067', apn: '1'}).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(InvalidKeyError)
    const message = (e as Error).message
    expect(message).toMatch(
      /^the API key is invalid or missing \(HTTP 401\): .*[^.]\. Give a valid apiKey, set SFL_API_KEY, or store one with `sfl keys set`$/,
    )
    expect(message).not.toContain('..')
    expect(message).not.toContain('--')
  })

  it('checkKey reports the key, its permission and its options from one request per county', async () => {
    const sfl = await sandboxClient()
    const r = await sfl.checkKey({fips: ['06067', '48201']})
    expect(r).toMatchObject({
      valid: true,
      counties: {'06067': 'permitted', '48201': 'permitted'},
      options: {AssumableMortgage: 'included', FHACondoEligibility: 'included'},
      requestsUsed: 2,
    })
    const bad = await sfl.checkKey({fips: '6067'}).catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(UsageError)
    expect((bad as Error).message).toBe(
      'fips "6067" must be exactly 5 digits (2-digit state code + 3-digit county code)',
    )
  })
})

describe('exportCounty', () => {
  it('hands over every page whole, each with the position to continue from', async () => {
    const {sfl, requests} = await scenarioClient((r) => paged(r, 3, 4))
    const {items, error} = await drain(sfl.exportCounty({fips: '06067'}))
    expect(error).toBeUndefined()
    expect(pagesOf(items)).toEqual([
      [1, 4],
      [2, 4],
      [3, 4],
    ])
    expect(new Set(idsOf(items)).size).toBe(12)
    const last = items.at(-1)!
    expect(last.kind === 'page' && last.page.position).toEqual({fips: '06067', page: 3, next: undefined})
    expect(requests.map((r) => r.page)).toEqual([1, 2, 3])
  })

  it('resumes from a position: the pages after it, none of the records before', async () => {
    const {sfl, requests} = await scenarioClient((r) => paged(r, 3, 4))
    let position
    for await (const item of sfl.exportCounty({fips: '06067'}))
      if (item.kind === 'page') {
        position = item.page.position
        break
      }
    expect(position).toMatchObject({fips: '06067', page: 1})
    const before = requests.length
    const rest = await drain(sfl.exportCounty({fips: '06067', from: position!}))
    expect(rest.error).toBeUndefined()
    expect(pagesOf(rest.items)).toEqual([
      [2, 4],
      [3, 4],
    ])
    expect(requests.slice(before).map((r) => r.page)).toEqual([2, 3])
    // a position whose county is complete sends nothing
    const done = rest.items.at(-1)!
    const after = requests.length
    expect(
      await drain(
        sfl.exportCounty({fips: '06067', from: done.kind === 'page' ? done.page.position : undefined!}),
      ),
    ).toEqual({items: []})
    expect(requests.length).toBe(after)
  })

  it('a position naming another origin is refused before anything is sent (the key stays home)', async () => {
    const {sfl, requests} = await scenarioClient((r) => paged(r, 3, 4))
    const forged = {
      fips: '06067',
      page: 1,
      next: 'https://evil.example/v1/special-financing?fips=06067&page=2',
    }
    const r = await drain(sfl.exportCounty({fips: '06067', from: forged}))
    expect(r.error).toBeInstanceOf(UsageError)
    expect((r.error as Error).message).toBe(
      "from.next is not a link of the service's own origin; give a position this library returned",
    )
    expect(requests).toHaveLength(0)
  })

  it('stopped early (break), it sends nothing more', async () => {
    const {sfl, requests} = await scenarioClient((r) => paged(r, 5, 4))
    let records = 0
    for await (const item of sfl.exportCounty({fips: '06067'}))
      if (item.kind === 'record' && ++records === 2) break
    // the page being read, one waiting for the reader, one in flight: no more
    expect(requests.length).toBeLessThanOrEqual(3)
    const sent = requests.length
    await sfl.checkKey({fips: '06067'})
    expect(requests.length).toBe(sent + 1)
  })

  it('a county the service answers with 404 is empty, not an error', async () => {
    const {sfl} = await scenarioClient(() => ({
      status: 404,
      body: {status: 'error', message: 'No property matches the given parameters.'},
    }))
    expect(await drain(sfl.exportCounty({fips: '06067'}))).toEqual({items: []})
  })

  it('a failure mid-county keeps the whole pages before it; the last position continues once the server heals', async () => {
    let failing = true
    const {sfl, requests} = await scenarioClient(
      (r) => (r.page === 2 && failing ? {status: 503} : paged(r, 3, 4)),
      {retries: 1},
    )
    const {items, error} = await drain(sfl.exportCounty({fips: '06067'}))
    expect(pagesOf(items)).toEqual([[1, 4]])
    expect(error).toBeInstanceOf(ServerError)
    expect((error as ServerError).code).toBe('SERVER')
    expect((error as Error).message).toBe('server error (HTTP 503): HTTP 503 (gave up after 1 retries)')
    expect(requests.map((r) => r.page)).toEqual([1, 2, 2])
    failing = false
    const last = items.at(-1)!
    const rest = await drain(
      sfl.exportCounty({fips: '06067', from: last.kind === 'page' ? last.page.position : undefined!}),
    )
    expect(rest.error).toBeUndefined()
    expect(pagesOf(rest.items)).toEqual([
      [2, 4],
      [3, 4],
    ])
    expect(new Set([...idsOf(items), ...idsOf(rest.items)]).size).toBe(12)
  })

  it('strict: records that break the spec are rejected, not handed over', async () => {
    // the scripted records lack fields the spec requires (City, State...): kept and counted unless strict
    const {sfl} = await scenarioClient((r) => paged(r, 1, 3))
    const lenient = await drain(sfl.exportCounty({fips: '06067'}))
    expect(idsOf(lenient.items)).toHaveLength(3)
    const page = lenient.items.at(-1)!
    expect(page.kind === 'page' && Object.keys(page.page.violations).length).toBeGreaterThan(0)
    const strict = await drain(sfl.exportCounty({fips: '06067', strict: true}))
    expect(idsOf(strict.items)).toHaveLength(0)
    const report = strict.items.at(-1)!
    expect(report.kind === 'page' && report.page.rejected).toHaveLength(3)
  })
})

describe('exportCounty where', () => {
  const FILTER = "FHAEligible = true and (FinalValue < 400000 or CRAEligible in ('Low', 'Moderate'))"

  it('keeps the records county-export --where writes, in its order, and counts the others per page', async () => {
    const sb = await startSandbox({port: 0, records: 600, pageSize: 200})
    cleanups.push(() => sb.close())
    const out = join(tempDir(), 'cli.ndjson')
    const cli = await runCommand(
      CountyExport,
      ['--fips', '06067', '--where', FILTER, '-o', 'ndjson', '--out', out],
      {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY},
    )
    expect(cli.exitCode).toBe(0)
    const written = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const sfl = await createClient({baseUrl: sb.baseUrl, apiKey: KEY, configDir: tempDir()})
    const {items, error} = await drain(sfl.exportCounty({fips: '06067', where: FILTER}))
    expect(error).toBeUndefined()
    const kept = items.flatMap((i) => (i.kind === 'record' ? [i.record] : []))
    expect(kept).toEqual(written)
    const pages = items.flatMap((i) => (i.kind === 'page' ? [i.page] : []))
    const fetched = pages.reduce((n, p) => n + p.records + p.filtered + p.duplicates, 0)
    expect(pages.reduce((n, p) => n + p.records, 0)).toBe(kept.length)
    // a real filter: some kept, some not
    expect(kept.length).toBeGreaterThan(20)
    expect(kept.length).toBeLessThan(fetched - 20)
    const n = (x: number) => x.toLocaleString('en-US')
    expect(cli.stderr).toContain(`${n(fetched)} records fetched, ${n(kept.length)} kept by --where`)
  })

  it("a bad filter is refused in the library's words before any request, as the CLI refuses it", async () => {
    const {sfl, requests} = await scenarioClient((r) => paged(r, 1, 3))
    const cases: Array<[unknown, RegExp]> = [
      [
        'FHAEligble = true',
        /^where: "FHAEligble" is not a field of the spec's records \(did you mean FHAEligible\?\) at character 1/,
      ],
      ["FinalValue < 'cheap'", /^where: .* at character 14/],
      ['FHAEligible = true and', /^where: a field name expected at character 23/],
      ['', /^where: an empty filter at character 1/],
      [42, /^where must be a string; got a number$/],
      // 8 characters of the key ('k-lib-123456'): records are masked before the filter, so it matches nothing
      ["City like '%lib-1234%'", /^where holds your API key \(or 8 or more of its characters\)/],
    ]
    for (const [where, message] of cases) {
      const r = await drain(sfl.exportCounty({fips: '06067', where: where as string}))
      expect(r.error).toBeInstanceOf(UsageError)
      expect((r.error as Error).message).toMatch(message)
      expect((r.error as Error).message).not.toContain('--where')
    }
    expect(requests).toHaveLength(0)
    const cli = await runCommand(CountyExport, ['--fips', '06067', '--where', 'FHAEligble = true'], {
      SFL_BASE_URL: 'http://127.0.0.1:9/v1',
      SFL_API_KEY: KEY,
    })
    expect(cli.exitCode).toBe(2)
    expect(cli.stderr).toMatch(
      /--where: "FHAEligble" is not a field of the spec's records \(did you mean FHAEligible\?\)/,
    )
  })
})

describe('abort', () => {
  // the request timeout is the default 30 s and the test allows 10: only the abort can end these calls
  it('mid-lookup: the request in flight is dropped and the call rejects with InterruptedError', async () => {
    const server = await startHangingServer()
    cleanups.push(() => server.close())
    const controller = new AbortController()
    const sfl = await createClient({
      baseUrl: server.baseUrl,
      apiKey: 'k-lib-123456',
      configDir: tempDir(),
      signal: controller.signal,
    })
    const call = sfl.lookup({fips: '06067', apn: '1'}).catch((e: unknown) => e)
    await server.arrived(1)
    controller.abort()
    const error = await call
    expect(error).toBeInstanceOf(InterruptedError)
    expect((error as InterruptedError).code).toBe('INTERRUPTED')
    await server.closed(1) // the connection was given up, not left to time out
    expect(server.requests).toHaveLength(1)
  }, 10_000)

  it("a call's own signal ends that call only", async () => {
    const server = await startHangingServer()
    cleanups.push(() => server.close())
    const sfl = await createClient({baseUrl: server.baseUrl, apiKey: 'k-lib-123456', configDir: tempDir()})
    const controller = new AbortController()
    const call = sfl.checkKey({fips: '06067'}, {signal: controller.signal}).catch((e: unknown) => e)
    await server.arrived(1)
    controller.abort()
    expect(await call).toBeInstanceOf(InterruptedError)
    await server.closed(1)
  }, 10_000)

  it('mid-export: the page in flight is dropped and the loop rejects with InterruptedError, an SflError', async () => {
    const server = await startHangingServer()
    cleanups.push(() => server.close())
    const controller = new AbortController()
    const sfl = await createClient({
      baseUrl: server.baseUrl,
      apiKey: 'k-lib-123456',
      configDir: tempDir(),
      signal: controller.signal,
    })
    const run = drain(sfl.exportCounty({fips: '06067'}))
    await server.arrived(1)
    controller.abort()
    const {items, error} = await run
    expect(items).toEqual([])
    expect(error).toBeInstanceOf(InterruptedError)
    expect(error).toBeInstanceOf(SflError)
    await server.closed(1)
  }, 10_000)

  it('during a rate-limit wait: the wait ends at once with InterruptedError', async () => {
    const controller = new AbortController()
    const waits: number[] = []
    const {sfl, requests} = await scenarioClient(
      () => ({status: 429, headers: {'retry-after': '50'}, body: {status: 'error', message: 'slow down'}}),
      {
        signal: controller.signal,
        // the abort comes once the scheduler has begun to wait out the 429's 50 s
        onEvent: (e) => {
          if (e.type === 'wait') {
            waits.push(e.ms)
            setImmediate(() => controller.abort())
          }
        },
      },
    )
    expect(await sfl.lookup({fips: '06067', apn: '1'}).catch((e: unknown) => e)).toBeInstanceOf(
      InterruptedError,
    )
    expect(waits).toHaveLength(1)
    expect(waits[0]).toBeGreaterThan(49_000)
    expect(requests).toHaveLength(1)
  }, 10_000)
})
