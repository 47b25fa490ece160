import {appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {HttpClient} from '../../src/api/client.js'
import {dryRun} from '../../src/lib/dry-run.js'
import type {Context} from '../../src/cli/service-command.js'
import {runCountyExport, type ExportFormat} from '../../src/jobs/county-export.js'
import {Scheduler, type SchedulerOptions} from '../../src/schedule/scheduler.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {readLog} from '../helpers/sandbox.js'
import {paged, startScenario} from '../helpers/scenario-server.js'

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

async function tightSandbox(clock: Clock): Promise<{sb: Sandbox; sent: () => number; dir: string}> {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-plan-run-'))
  const log = join(dir, 'requests.ndjson')
  writeFileSync(log, '')
  mkdirSync(join(dir, 'out'))
  // 06067 and 12086 hold 2,000 records; 48201 is given 2,000 too; 01001 has none (404)
  const sb = await startSandbox({
    pageSize: 200,
    limit: 30,
    windowSeconds: 20,
    records: 2000,
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
    const {sb, sent, dir} = await tightSandbox(clock)
    const fips = ['06067', '12086', '48201', '01001']
    const probe = context(sb.baseUrl, 'sandbox-full', clock, {maxWaitMs: 0})
    const {plan, text, json, exitCode} = await dryRun(planRequest(fips, async () => probe, clock))
    expect(exitCode).toBe(0)
    expect(sent()).toBe(1) // the probe: one request, read to the end of its page
    expect(text.split('\n')[0]).toBe(
      "4 counties, about 40 requests (at least 13): about 15 s of waiting (at least none): 1 window (now 29 of 30 left, resets 08:25:20 UTC) plus 1 more at 30 a window, plus the time the last window's requests take",
    )
    expect(text).toContain(
      'Requests   10 for 06067: 10 pages of 200 (X-Total-Count 2,000); about 30 for the 3 other counties, assumed alike (at least 3: a smaller county takes fewer pages)',
    )
    expect(text).not.toContain('within the current window')
    expect(json).toMatchObject({requests: 13, requestsEstimate: 40, waitSeconds: 0, waitSecondsEstimate: 15})

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
    expect(s.counties.map((c) => c.outcome?.kind)).toEqual(['done', 'done', 'done', 'empty'])
    const used = run.scheduler.stats.requests
    expect(used).toBe(31) // 10 + 10 + 10 pages, and one 404
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
    expect(text).toContain(
      'Requests   at least 2 for 06067: it comes in pages, but the service did not say how many records it holds (no X-Total-Count); at least 1 for 1 county of unknown size (06067 is paged but did not say its size)',
    )
    expect(json).toMatchObject({
      requests: 3,
      requestsEstimate: null,
      probe: {fips: '06067', answer: 'records', next: true, total: null, pageRecords: 2},
    })
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
