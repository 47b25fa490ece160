import {appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {countiesOfStates} from '../../src/address/county-select.js'
import {readCountyHousing} from '../../src/address/county-housing.js'
import {dataDirs} from '../../src/address/zip-counties.js'
import {HttpClient} from '../../src/api/client.js'
import {dryRun} from '../../src/lib/dry-run.js'
import type {Context} from '../../src/cli/service-command.js'
import {runCountyExport, type ExportFormat} from '../../src/jobs/county-export.js'
import {Scheduler, type SchedulerOptions} from '../../src/schedule/scheduler.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {readLog} from '../helpers/sandbox.js'
import {paged, records, startScenario, type Reply, type ScenarioRequest} from '../helpers/scenario-server.js'

/**
 * The --dry-run plan against the run that follows it, on the same sandbox: a paged service (200 a page)
 * and a tight key (30 requests per 20 s). Time is a virtual clock shared by the sandbox and the CLI's
 * scheduler, so a window's wait costs nothing real; the sandbox's request log counts the requests.
 */
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A virtual clock: a sleep moves it forward; sleepers waiting for the same moment move it once. */
function virtualClock(startMs: number) {
  let t = startMs
  return {
    now: () => t,
    sleep: async (ms: number) => {
      const until = t + ms
      await Promise.resolve()
      t = Math.max(t, until)
    },
  }
}

type Clock = ReturnType<typeof virtualClock>

function context(baseUrl: string, apiKey: string, clock: Clock, opts: Partial<SchedulerOptions>): Context {
  return {
    baseUrl,
    profile: 'default',
    apiKey,
    client: new HttpClient({apiKey, timeoutMs: 30_000, userAgent: 'sfl-test'}),
    scheduler: new Scheduler({
      concurrency: 1,
      retries: 0,
      maxWaitMs: 3_600_000,
      now: clock.now,
      sleep: clock.sleep,
      random: () => 0.5,
      ...opts,
    }),
  }
}

async function tightSandbox(
  clock: Clock,
  records = 2000,
): Promise<{sb: Sandbox; sent: () => number; dir: string}> {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-plan-run-'))
  const log = join(dir, 'requests.ndjson')
  writeFileSync(log, '')
  mkdirSync(join(dir, 'out'))
  // 06067 and 12086 hold 2,000 records; 48201 is given `records`; 01001 has none (404)
  const sb = await startSandbox({
    pageSize: 200,
    limit: 30,
    windowSeconds: 20,
    records,
    log,
    now: clock.now,
  })
  cleanups.push(
    () => rmSync(dir, {recursive: true, force: true}),
    () => sb.close(),
  )
  return {sb, sent: () => readLog(log).length, dir}
}

const planRequest = (fips: string[], probe: () => Promise<Context>, clock: Clock) => ({
  fips,
  format: 'ndjson',
  restart: false,
  baseUrl: undefined,
  reserve: 0,
  probe,
  now: clock.now,
})

describe('a paged service and a tight key: the plan against the run that follows', () => {
  it("the run's requests fall within the plan's stated range, and its wait is the one the plan said", async () => {
    // 08:25:05 UTC: the sandbox's 20-s window turns at 08:25:20
    const clock = virtualClock(Date.parse('2026-11-22T08:25:05Z'))
    // Harris given 5,600 records: 1 for every 286 of its 1,600,000 homes, as Sacramento's 2,000 to 560,000
    const {sb, sent, dir} = await tightSandbox(clock, 5600)
    const fips = ['06067', '48201', '01001']
    const probe = context(sb.baseUrl, 'sandbox-full', clock, {maxWaitMs: 0})
    const {plan, text, json, exitCode} = await dryRun(planRequest(fips, async () => probe, clock))
    expect(exitCode).toBe(0)
    expect(sent()).toBe(1) // the probe: one request, read to the end of its page
    expect(text.split('\n')[0]).toBe(
      "3 counties, about 39 requests (at least 30): about 15 s of waiting: 1 window (now 29 of 30 left, resets 08:25:20 UTC) plus 1 more at 30 a window, plus the time the last window's requests take",
    )
    expect(text).toContain(
      'Requests   28 for 48201 (the most homes of the 3 to fetch): 28 pages of 200 (X-Total-Count 5,600); about 11 for the 2 other counties, assumed to hold records in proportion to their housing units as 48201 does (5,600 records to 1,600,000 homes in the 2010 Census), in pages of 200 (at least 2: one request each)',
    )
    expect(text).not.toContain('within the current window')
    expect(json).toMatchObject({requests: 30, requestsEstimate: 39, waitSeconds: 15, waitSecondsEstimate: 15})

    const started = clock.now()
    const run = context(sb.baseUrl, 'sandbox-full', clock, {concurrency: 4})
    const s = await runCountyExport(
      {...run, signal: new AbortController().signal, notice: () => undefined},
      {
        fips,
        outDir: join(dir, 'out'),
        format: 'ndjson',
        restart: false,
        bom: false,
        escapeFormulas: true,
        stats: false,
      },
    )
    expect(s.counties.map((c) => c.outcome?.kind)).toEqual(['done', 'done', 'empty'])
    const used = run.scheduler.stats.requests
    expect(used).toBe(39) // 10 + 28 pages, and one 404
    expect(used).toBeGreaterThanOrEqual(plan.requests)
    expect(used).toBeLessThanOrEqual(plan.estimate!)
    expect(run.scheduler.stats.rateLimited).toBe(0)
    // 29 fit the window the probe left; the rest waited for the one reset the plan named (plus jitter)
    const waited = clock.now() - started
    expect(waited).toBeGreaterThanOrEqual(json.waitSecondsEstimate! * 1000)
    expect(waited).toBeLessThan(json.waitSecondsEstimate! * 1000 + 1000)
  })

  it('a 403 on the probe: the county is named and budgeted at its one refused request; the run stays in range', async () => {
    const clock = virtualClock(Date.parse('2026-11-22T08:25:05Z'))
    const {sb, sent, dir} = await tightSandbox(clock)
    const fips = ['06001', '06067']
    const probe = context(sb.baseUrl, 'sandbox-restricted', clock, {maxWaitMs: 0})
    const {plan, text, json} = await dryRun(planRequest(fips, async () => probe, clock))
    expect(sent()).toBe(1)
    expect(text.split('\n')[0]).toBe(
      '2 counties (1 not permitted), at least 2 requests (page counts unknown): the current window holds 2 (now 29 of 30 left, resets 08:25:20 UTC); more windows if the counties take more pages',
    )
    expect(text).toContain(
      'Refused    Alameda County, CA (06001): not permitted for this key (HTTP 403 to the probe): 1 request (the refusal), no data.',
    )
    expect(text).toContain(
      'Budget     29 of 30 left this window, resets 08:25:20 UTC (from one probe request to 06001, refused with 403)',
    )
    expect(json).toMatchObject({notPermitted: ['06001'], requests: 2, requestsEstimate: null})

    const run = context(sb.baseUrl, 'sandbox-restricted', clock, {concurrency: 4})
    const s = await runCountyExport(
      {...run, signal: new AbortController().signal, notice: () => undefined},
      {
        fips,
        outDir: join(dir, 'out'),
        format: 'ndjson',
        restart: false,
        bom: false,
        escapeFormulas: true,
        stats: false,
      },
    )
    expect(s.counties.map((c) => c.outcome?.kind)).toEqual(['forbidden', 'done'])
    expect(run.scheduler.stats.requests).toBe(11)
    expect(run.scheduler.stats.requests).toBeGreaterThanOrEqual(plan.requests)
  })
})

describe('a paged service that does not say its size', () => {
  it('the plan gives the least requests and the least wait, and says why nothing is assumed', async () => {
    // three pages of two, a next link, no X-Total-Count
    const server = await startScenario((r) => paged(r, 3, 2))
    cleanups.push(() => server.close())
    const clock = virtualClock(Date.parse('2026-11-22T08:25:05Z'))
    const probe = context(server.baseUrl, 'test-key-123', clock, {maxWaitMs: 0})
    const {text, json} = await dryRun(planRequest(['06067', '12086'], async () => probe, clock))
    expect(server.requests).toHaveLength(1)
    expect(text.split('\n')[0]).toBe(
      '2 counties, at least 3 requests (page counts unknown): the current window holds 3 (now 900 of 1,000 left); more windows if the counties take more pages',
    )
    // Miami-Dade (990,000 homes) before Sacramento (560,000)
    expect(text).toContain(
      'Requests   at least 2 for 12086 (the most homes of the 2 to fetch): it comes in pages, but the service did not say how many records it holds (no X-Total-Count); at least 1 for 1 county of unknown size (12086 is paged but did not say its size)',
    )
    expect(json).toMatchObject({
      requests: 3,
      requestsEstimate: null,
      probe: {fips: '12086', answer: 'records', next: true, total: null, pageRecords: 2},
    })
  })
})

/** The shipped housing table, as the code run from src/ finds it. */
const housing = readCountyHousing(
  dataDirs(new URL('../../src/address/county-housing.ts', import.meta.url).href),
)

/**
 * A service that holds records in proportion to housing units, `perHome` a home, in pages of 200 with
 * X-Total-Count; a county of no records is a 404, and so is `empty` whatever its size.
 */
function proportional(perHome: number, empty: ReadonlySet<string> = new Set()) {
  return (r: ScenarioRequest): Reply => {
    const total = empty.has(r.fips) ? 0 : Math.ceil((housing(r.fips) ?? 0) * perHome)
    if (total === 0) return {status: 404, body: {status: 'error', code: 404, message: 'No records'}}
    const from = (r.page - 1) * 200
    const n = Math.min(200, total - from)
    return {
      page: {records: records(r.fips, from, n), next: from + n < total ? r.page + 1 : undefined},
      headers: {'x-total-count': String(total)},
    }
  }
}

describe('the probe goes where paging shows (issue 32)', () => {
  it('Texas, its first county empty: the probe asks Harris, and the likely requests are what the run then sends', async () => {
    // 2,000 records in Harris's 1,600,000 homes; Anderson (48001), first of the state, empty
    const server = await startScenario(proportional(2000 / 1_600_000, new Set(['48001'])))
    cleanups.push(() => server.close())
    const clock = virtualClock(Date.parse('2026-11-22T08:25:05Z'))
    const fips = countiesOfStates(['TX'])
    expect([fips.length, fips[0]]).toEqual([254, '48001'])
    const probe = context(server.baseUrl, 'test-key-123', clock, {maxWaitMs: 0})
    const {plan, text, json} = await dryRun(planRequest(fips, async () => probe, clock))

    // one request, the county form of spec 4 (fips alone, no paging parameters), to the largest county
    expect(server.requests).toHaveLength(1)
    expect([...server.requests[0]!.query]).toEqual([['fips', '48201']])
    expect(text.split('\n')[0]).toBe(
      '254 counties, about 284 requests (at least 263): within the current window (now 900 of 1,000 left)',
    )
    expect(text).toContain(
      'Requests   10 for 48201 (the most homes of the 254 to fetch): 10 pages of 200 (X-Total-Count 2,000); about 274 for the 253 other counties, assumed to hold records in proportion to their housing units as 48201 does (2,000 records to 1,600,000 homes in the 2010 Census), in pages of 200 (at least 253: one request each)\n',
    )
    expect(json).toMatchObject({
      requests: 263,
      requestsEstimate: 284,
      probeChosenBy: 'housing units',
      probe: {fips: '48201', answer: 'records', next: true, total: 2000, pageRecords: 200},
    })

    // the run: where records follow housing units, the plan's likely figure is what it sends
    const dir = mkdtempSync(join(tmpdir(), 'sfl-plan-tx-'))
    mkdirSync(join(dir, 'out'))
    cleanups.push(() => rmSync(dir, {recursive: true, force: true}))
    const run = context(server.baseUrl, 'test-key-123', clock, {concurrency: 4})
    const s = await runCountyExport(
      {...run, signal: new AbortController().signal, notice: () => undefined},
      {
        fips,
        outDir: join(dir, 'out'),
        format: 'ndjson',
        restart: false,
        bom: false,
        escapeFormulas: true,
        stats: false,
      },
    )
    expect(s.counties.filter((c) => c.outcome?.kind === 'empty').map((c) => c.fips)).toEqual(['48001'])
    expect(run.scheduler.stats.requests).toBe(plan.estimate)
  })

  it('one county: the probe asks it, and the plan is exact', async () => {
    const server = await startScenario(proportional(2000 / 1_600_000))
    cleanups.push(() => server.close())
    const clock = virtualClock(Date.parse('2026-11-22T08:25:05Z'))
    const probe = context(server.baseUrl, 'test-key-123', clock, {maxWaitMs: 0})
    const {text, json} = await dryRun(planRequest(['06067'], async () => probe, clock))
    expect(server.requests.map((r) => [...r.query])).toEqual([[['fips', '06067']]])
    // 560,000 homes: 700 records, 4 pages
    expect(text).toContain('Requests   4 for 06067: 4 pages of 200 (X-Total-Count 700)\n')
    expect(json).toMatchObject({requests: 4, requestsExact: true, requestsEstimate: 4})
  })

  it("an earlier run's manifest: the county it found the most records in is probed, the fresh one skipped", async () => {
    const server = await startScenario(proportional(2000 / 1_600_000))
    cleanups.push(() => server.close())
    const dir = mkdtempSync(join(tmpdir(), 'sfl-plan-manifest-'))
    cleanups.push(() => rmSync(dir, {recursive: true, force: true}))
    const entry = (fips: string, records: number, pages: number) => ({
      fips,
      state: 'TX',
      name: fips,
      path: `state=TX/fips=${fips}/data.ndjson`,
      records,
      pages,
      finishedAt: '2026-11-01T00:00:00.000Z',
    })
    // Travis held more than Harris last time (the service's data, not the homes, decides)
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({
        version: 1,
        format: 'ndjson',
        counties: [entry('48201', 2000, 10), entry('48453', 3000, 15)],
      }),
    )
    const clock = virtualClock(Date.parse('2026-11-22T08:25:05Z'))
    const probe = context(server.baseUrl, 'test-key-123', clock, {maxWaitMs: 0})
    const {text, json} = await dryRun({
      ...planRequest(['48001', '48201', '48453'], async () => probe, clock),
      outDir: dir,
    })
    expect(server.requests.map((r) => [...r.query])).toEqual([[['fips', '48453']]])
    expect(json).toMatchObject({probeChosenBy: 'last run', probe: {fips: '48453'}})
    expect(text).toContain('for 48453 (the most records in the last run of the 3 to fetch)')
  })

  it('a manifest whose record counts are not counts: they size nothing, and the most homes decide', async () => {
    const server = await startScenario(proportional(2000 / 1_600_000))
    cleanups.push(() => server.close())
    const dir = mkdtempSync(join(tmpdir(), 'sfl-plan-junk-'))
    cleanups.push(() => rmSync(dir, {recursive: true, force: true}))
    const entry = (fips: string, records: unknown) => ({
      fips,
      state: 'TX',
      name: fips,
      path: `state=TX/fips=${fips}/data.ndjson`,
      records,
      pages: 1,
      finishedAt: '2026-11-01T00:00:00.000Z',
    })
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({
        version: 1,
        format: 'ndjson',
        counties: [entry('48001', '9e9'), entry('48453', 1e300), entry('48029', -5)],
      }),
    )
    const clock = virtualClock(Date.parse('2026-11-22T08:25:05Z'))
    const probe = context(server.baseUrl, 'test-key-123', clock, {maxWaitMs: 0})
    const {json} = await dryRun({
      ...planRequest(['48001', '48453', '48029', '48201'], async () => probe, clock),
      outDir: dir,
    })
    expect(server.requests.map((r) => [...r.query])).toEqual([[['fips', '48201']]])
    expect(json).toMatchObject({probeChosenBy: 'housing units', probe: {fips: '48201'}})
  })

  it('--no-probe: nothing sent, and no county chosen', async () => {
    const clock = virtualClock(Date.parse('2026-11-22T08:25:05Z'))
    const {json} = await dryRun({
      ...planRequest(
        ['48001', '48201'],
        async () => {
          throw new Error('no connection expected')
        },
        clock,
      ),
      probe: undefined,
    })
    expect(json).toMatchObject({probeRequests: 0, probe: null, probeChosenBy: null})
  })
})

describe('counties the last run was refused', () => {
  it('a 403 recorded in the checkpoint is named, not asked again, and listed as not permitted', async () => {
    // 06001 refused (403); 06067 fails (500) so the run stays open and keeps its checkpoint
    const server = await startScenario((r) => (r.fips === '06001' ? {status: 403} : {status: 500}))
    cleanups.push(() => server.close())
    const dir = mkdtempSync(join(tmpdir(), 'sfl-plan-refused-'))
    cleanups.push(() => rmSync(dir, {recursive: true, force: true}))
    const out = join(dir, 'o.ndjson')
    const clock = virtualClock(Date.parse('2026-11-22T08:25:05Z'))
    const run = context(server.baseUrl, 'test-key-123', clock, {})
    const s = await runCountyExport(
      {...run, signal: new AbortController().signal, notice: () => undefined},
      {fips: ['06001', '06067'], out, format: 'ndjson', restart: false, bom: false, escapeFormulas: true},
    )
    expect(s.counties.map((c) => c.outcome?.kind)).toEqual(['forbidden', 'failed'])
    const before = server.requests.length
    const {text, json} = await dryRun({
      ...planRequest(['06001', '06067'], async () => run, clock),
      out,
      probe: undefined,
    })
    expect(server.requests).toHaveLength(before)
    expect(text).toContain('Counties   2 asked; 1 already ended in the checkpoint; 1 to fetch')
    expect(text).toContain(
      "Refused    Alameda County, CA (06001): not permitted for this key (HTTP 403 in the checkpoint's run); not asked again",
    )
    expect(json).toMatchObject({notPermitted: ['06001'], endedInCheckpoint: ['06001'], toFetch: ['06067']})
  })
})

/** The error `p` rejects with; a test failure when it resolves. */
async function failure(p: Promise<unknown>): Promise<Error & {exitCode?: number}> {
  const r = await p.then(
    () => undefined,
    (e: unknown) => e as Error & {exitCode?: number},
  )
  if (r === undefined) throw new Error('expected a refusal, got a result')
  return r
}

describe('the plan reads the checkpoint as the run does (one decoder, one header check)', () => {
  /** A stopped run: 06001 refused (403), 06067 failing (500), so its checkpoint stays; and a way to rerun it. */
  async function stoppedRun() {
    const server = await startScenario((r) => (r.fips === '06001' ? {status: 403} : {status: 500}))
    cleanups.push(() => server.close())
    const dir = mkdtempSync(join(tmpdir(), 'sfl-plan-agrees-'))
    cleanups.push(() => rmSync(dir, {recursive: true, force: true}))
    const out = join(dir, 'o.ndjson')
    const clock = virtualClock(Date.parse('2026-11-22T08:25:05Z'))
    const fips = ['06001', '06067']
    const run = (o: {strict?: boolean; fields?: string[]; format?: ExportFormat} = {}) =>
      runCountyExport(
        {
          ...context(server.baseUrl, 'test-key-123', clock, {}),
          signal: new AbortController().signal,
          notice: () => undefined,
        },
        {fips, out, format: o.format ?? 'ndjson', restart: false, bom: false, escapeFormulas: true, ...o},
      )
    const first = await run()
    expect(first.counties.map((c) => c.outcome?.kind)).toEqual(['forbidden', 'failed'])
    const plan = (o: Partial<Parameters<typeof dryRun>[0]> = {}) =>
      dryRun({
        ...planRequest(fips, async () => context(server.baseUrl, 'k', clock, {}), clock),
        out,
        probe: undefined,
        baseUrl: server.baseUrl,
        ...o,
      })
    return {server, out, run, plan, dir}
  }

  it("--strict after a run without it: the plan refuses the checkpoint with the run's own message (exit 2), nothing sent", async () => {
    const {server, run, plan, out} = await stoppedRun()
    const sent = server.requests.length
    const planned = await failure(plan({strict: true}))
    const ran = await failure(run({strict: true}))
    expect(planned.message).toBe(ran.message)
    expect(planned.message).toBe(
      `the checkpoint ${out}.sfl-checkpoint belongs to a different run (fips 06001,06067; format ndjson; baseUrl ${server.baseUrl}); rerun with those arguments to finish it, or add --restart to discard it and start over`,
    )
    expect([planned.exitCode, ran.exitCode]).toEqual([2, 2])
    expect(server.requests).toHaveLength(sent)
  })

  it.each([
    ['other fields', {fields: ['Fips']}],
    ['another format', {format: 'csv'}],
    ['another base URL', {baseUrl: 'https://api.example.com/v1'}],
    ['the counties in another order', {fips: ['06067', '06001']}],
  ])('%s: refused as the run refuses', async (_name, o) => {
    const {plan} = await stoppedRun()
    await expect(plan(o)).rejects.toThrow(/belongs to a different run/)
  })

  it('the same arguments: read, not refused; without a base URL of its own the plan takes the recorded one', async () => {
    const {plan} = await stoppedRun()
    expect((await plan({baseUrl: undefined})).json).toMatchObject({
      endedInCheckpoint: ['06001'],
      toFetch: ['06067'],
    })
    expect((await plan()).json).toMatchObject({endedInCheckpoint: ['06001'], toFetch: ['06067']})
  })

  it("an event this version does not write: the plan refuses it with the decoder's message, as the run does", async () => {
    const {plan, run, out} = await stoppedRun()
    appendFileSync(
      `${out}.sfl-checkpoint`,
      '{"t":"page","u":"06067","n":1,"records":2,"file":"../../etc/x","next":null}\n',
    )
    const planned = await failure(plan())
    const ran = await failure(run())
    expect(planned.message).toBe(ran.message)
    expect(planned.message).toMatch(/holds an event this version of sfl does not write \("page": file\)/)
  })

  it('a last line cut short by a crash is dropped by both, and what comes before it is read', async () => {
    const {plan, out} = await stoppedRun()
    appendFileSync(`${out}.sfl-checkpoint`, '{"t":"end","u":"06067","outc')
    expect((await plan()).json).toMatchObject({endedInCheckpoint: ['06001'], toFetch: ['06067']})
  })
})
