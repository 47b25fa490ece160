import type {HttpClient, HttpResponse} from '../api/client.js'
import {ForbiddenError, HttpStatusError, InvalidKeyError} from '../errors.js'
import {nextLink} from '../api/link.js'
import {countyUrl} from '../api/query.js'
import {redactUrl} from '../api/secrets.js'
import type {Scheduler} from '../schedule/scheduler.js'
import type {RecordFacts} from '../stats/accumulator.js'
import {IdSet} from './ids.js'
import {canonicalUrl, Pagination, repeatsOnly} from './pages.js'
import {PageSpool, type SpoolEnv, type StreamSink} from './sinks.js'
import type {PagePart} from './spool.js'
import type {RecordView} from './view.js'
import {readBody, type RecordStages} from './stages.js'

/**
 * The pages stage for one county: its pages fetched in order through the scheduler (budget, retries),
 * each read through the record stages into its part files (or, at the head of a streamed run, to stdout),
 * the pagination followed by src/pipeline/pages.ts's rules. A page is handed on (`onPage`: journal,
 * stream) only once its body was read to the end and its envelope found whole; a page whose attempt fails
 * leaves nothing behind (its part files removed, its ServicePropertyIDs forgotten) and is retried whole.
 */
export interface CountyUnit {
  fips: string
  pages: PagePart[]
  /** The next page to fetch (a rerun continues there). */
  next?: string | undefined
  /** Records the service said the county holds (X-Total-Count), for the ETA. */
  expected?: number | undefined
  /** The ServicePropertyIDs taken so far (rebuilt from the part files when a run resumes). */
  ids: IdSet
}

export interface CountyEnv {
  client: HttpClient
  scheduler: Scheduler
  baseUrl: string
  stages: RecordStages
  spool: SpoolEnv
  /** The run's own signal (Ctrl-C, or a stop): aborts requests in flight. */
  signal: AbortSignal
  throwIfStopped(): void
}

/**
 * Where a page's records go instead of part files (a batch's scan matches them against its rows and keeps
 * none, src/jobs/batch-scan.ts): the same promise as the spool, whole or nothing. `close` is called once the
 * page was read to the end and its envelope found whole; `discard` when its attempt failed.
 */
export interface PageSink {
  record(view: RecordView): Promise<void> | undefined
  close(): Promise<void>
  discard(): Promise<void>
}

export interface CountyHooks {
  /** The stdout sink when this county may stream now (the head of a streamed run, caught up), else undefined. */
  stream(): StreamSink | undefined
  /** A sink of the caller's for each page (no part files, no stream); absent: the spool. */
  pageSink?: ((n: number) => PageSink) | undefined
  /** Asked before each page after the first, with the pages fetched so far: false stops (`next` stays set). */
  more?: ((fetched: number) => boolean) | undefined
  /** A page's statistics, fresh for each attempt (absent: no statistics). */
  pageStats?: (() => {add(f: RecordFacts): void}) | undefined
  /** A page is whole: journal it, count it, stream what may go out. */
  onPage(part: PagePart, streamed: boolean, stats: unknown): Promise<void>
}

/** Fetch what is left of a county. Throws what ends it (the caller makes it the county's outcome). */
export async function fetchCounty(unit: CountyUnit, env: CountyEnv, hooks: CountyHooks): Promise<void> {
  const pagination = new Pagination(env.baseUrl)
  for (const p of unit.pages) if (p.url) pagination.start(p.url)
  let url = unit.next ?? (unit.pages.length === 0 ? countyUrl(env.baseUrl, unit.fips) : undefined)
  if (url !== undefined) pagination.start(url)
  while (url !== undefined) {
    env.throwIfStopped()
    if (unit.pages.length > 0 && hooks.more?.(unit.pages.length) === false) return
    const n = unit.pages.length + 1
    const pageUrl: string = url
    // records of this page already streamed by an attempt that then failed: not written again
    const streamed = {records: 0}
    const page = await env.scheduler.run(
      () => env.client.get(pageUrl, env.signal),
      (res) => readPage(unit, env, hooks, res, n, streamed),
      // the run's signal ends the page's waits and retries too, not only the request in flight
      env.signal,
    )
    // the page's records as fetched: those --where dropped are records too (a page of only repeats is a loop)
    const fetched = page.part.records + (page.part.duplicates ?? 0) + (page.part.filtered ?? 0)
    const loop = repeatsOnly(n, fetched, page.part.duplicates ?? 0)
    if (loop) throw loop
    const next = pagination.next(page.next, n)
    unit.pages.push(page.part)
    unit.next = next
    await hooks.onPage(page.part, page.direct, page.stats)
    url = next
  }
}

interface PageRead {
  part: PagePart
  next: string | undefined
  /** The page went straight to stdout (no part file to copy later). */
  direct: boolean
  stats: unknown
}

/** One attempt at a page: its body through the stages into its spool (or stdout), whole or not at all. */
async function readPage(
  unit: CountyUnit,
  env: CountyEnv,
  hooks: CountyHooks,
  res: HttpResponse,
  n: number,
  /** Records written to stdout by this page's earlier attempts (updated as this one writes more). */
  streamed: {records: number},
): Promise<PageRead> {
  const total = Number(res.headers['x-total-count'])
  if (Number.isSafeInteger(total) && total > 0) unit.expected = total
  const own = hooks.pageSink?.(n)
  const spool = own ?? new PageSpool(env.spool, unit.fips, n)
  const stats = hooks.pageStats?.()
  const stream = own ? undefined : hooks.stream()
  // a page streams only when its envelope said success before its first record; otherwise it is spooled
  // and copied when whole, so nothing of a page whose status comes last (and says error) reaches stdout
  let direct: boolean | undefined
  let skip = streamed.records
  unit.ids.begin()
  try {
    const body = await readBody(
      res.body,
      env.stages,
      {
        record(view, statusOk) {
          direct ??= stream !== undefined && statusOk
          if (!direct) return spool.record(view)
          if (skip > 0) {
            skip--
            return undefined
          }
          streamed.records++
          return stream!.record(view)
        },
        facts: stats && ((f) => stats.add(f)),
      },
      unit.ids,
    )
    const files =
      spool instanceof PageSpool ? (direct ? {file: spool.file} : await spool.close()) : await ownClose(spool)
    const part: PagePart = {
      n,
      records: body.records,
      ...files,
      ...(body.rejected.length ? {rejected: body.rejected} : {}),
      ...(body.duplicates ? {duplicates: body.duplicates} : {}),
      ...(body.filtered ? {filtered: body.filtered} : {}),
      ...(body.filteredIds ? {filteredIds: body.filteredIds} : {}),
      ...(body.violations.size ? {violations: byName(env.stages, body.violations)} : {}),
      ...storedUrl(res.url),
    }
    return {part, next: nextLink(res.headers['link'], res.url), direct: direct === true, stats}
  } catch (error) {
    await spool.discard()
    unit.ids.fail()
    throw error
  }
}

/** A caller's page sink closed: no part file to name. */
async function ownClose(sink: PageSink): Promise<{file: string}> {
  await sink.close()
  return {file: ''}
}

/** The page's canonical URL for the journal, unless storing it would keep something credential-like (src/api/secrets.ts). */
function storedUrl(url: string): {url?: string} {
  const canonical = canonicalUrl(url)
  return redactUrl(canonical) === canonical ? {url: canonical} : {}
}

function byName(stages: RecordStages, counts: Map<number, number>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [id, c] of counts) out[stages.fields.list[id]!.name] = c
  return out
}

/**
 * A 4xx on a page after the first: the service's pagination was cut off (a link to a page it will not
 * serve). The county is not empty and not written in part: it fails, and a rerun continues from that page.
 */
export function cutOff(error: unknown): string | undefined {
  if (!(error instanceof HttpStatusError) || error instanceof InvalidKeyError) return undefined
  if (error.status < 400 || error.status >= 500 || error.status === 429) return undefined
  return error instanceof ForbiddenError
    ? 'a later page was refused (403) after earlier pages were served'
    : `a later page answered HTTP ${error.status}: the pagination was cut off`
}
