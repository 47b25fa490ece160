import type {HttpClient, HttpResponse} from '../api/client.js'
import {ForbiddenError, InvalidKeyError, NotFoundError, RateLimitExceededError} from '../errors.js'
import {countyUrl, endpointUrl, buildQueryString} from '../api/query.js'
import {nextLink} from '../api/link.js'
import {OPTION_NAMES, type OptionName} from '../api/spec.js'
import {readBody, RecordStages, type BodyOutcome} from '../pipeline/stages.js'
import type {RecordView} from '../pipeline/view.js'
import type {Scheduler} from '../schedule/scheduler.js'

export type Permission = 'permitted' | 'not permitted'
export type OptionState = 'included' | 'not included' | 'unknown'

/** The stable `keys check --output json` object (README "keys check"). */
export type KeySource = 'flag' | 'env' | 'profile' | 'sandbox'

export interface KeyReport {
  valid: boolean
  profile: string
  /** Where the key came from: --api-key, SFL_API_KEY, the profile, or the sandbox's demo key. */
  keySource: KeySource
  rateLimit: {limit: number | null; remaining: number | null; reset: number | null}
  /** true when the window's requests are spent (HTTP 429): the report still shows the limit and reset. */
  windowSpent: boolean
  /** The county the first request actually went to, with its name when the counties table knows it. */
  probed: {fips: string; name: string | null; why: 'asked' | 'profile default' | 'sandbox demo county'} | null
  counties: Record<string, Permission>
  options: Record<OptionName, OptionState>
  requestsUsed: number
  /** With `countPages` (the --dry-run probe): what the first county's answer said about its size. */
  firstPage?: PageFinding & {fips: string}
}

/** What the first answer for a county says about the county's size (the --dry-run plan, src/jobs/plan.ts). */
export interface PageFinding {
  /** The answer linked a next page (RFC 8288 Link rel="next"): the service pages the county. */
  next: boolean
  /** X-Total-Count: the records the service says the county holds; null when it did not say. */
  total: number | null
  /** Records on the page, counted to its end when it linked a next page; null when not counted. */
  pageRecords: number | null
}

/** A page is read to its end to count its records only up to this size (a page, not a county). */
export const PAGE_COUNT_MAX_BYTES = 32 * 1024 * 1024

export type Probe = {kind: 'apn' | 'property_id' | 'address'; value: string}

/** The county checked with --sandbox when none is given: the sandbox's demo county (README "keys check"). */
export const SANDBOX_CHECK_FIPS = '06067'

/** Spec 2.2 rule 2 / 2.3 rule 1: an option is included exactly when its field is present (object or null). */
export function optionsOf(record: Record<string, unknown> | undefined): Record<OptionName, OptionState> {
  const out = {} as Record<OptionName, OptionState>
  for (const o of OPTION_NAMES)
    out[o] = record === undefined ? 'unknown' : o in record ? 'included' : 'not included'
  return out
}

/**
 * The body read through the stages every path reads bodies with (src/pipeline/stages.ts `readBody`: the
 * key masked wherever it is echoed, one validating scan, the spec's checks), keeping the first record that
 * passes them, until `enough` says so; then the connection is dropped. Returns the first record and what
 * the stages counted.
 */
async function readFirst(
  res: HttpResponse,
  apiKey: string | undefined,
  enough: (seen: {record: boolean; bytes: number}) => boolean,
): Promise<{record: Record<string, unknown> | undefined; outcome: BodyOutcome}> {
  // a probe writes nothing: the records are looked at (which options they carry), never kept or printed
  const stages = new RecordStages({strict: false, apiKey})
  let record: Record<string, unknown> | undefined
  let bytes = 0
  const counted = {
    async *[Symbol.asyncIterator]() {
      for await (const chunk of res.body) {
        bytes += chunk.length
        yield chunk
      }
    },
  }
  const sink = {
    record: (view: RecordView) => {
      record ??= JSON.parse(view.bytes.toString('utf8')) as Record<string, unknown>
      return undefined
    },
  }
  const outcome = await readBody(counted, stages, sink, undefined, () =>
    enough({record: record !== undefined, bytes}),
  )
  if (outcome.stopped) res.cancel()
  return {record, outcome}
}

/** Read records until the first one, then drop the connection: a county page costs one record of bandwidth. */
async function firstRecord(res: HttpResponse, apiKey?: string): Promise<Record<string, unknown> | undefined> {
  return (await readFirst(res, apiKey, (seen) => seen.record)).record
}

/**
 * The first record, and what the answer says about the county's size: X-Total-Count, a next link, and,
 * when there is a next link, the records on this page (read to its end, at most PAGE_COUNT_MAX_BYTES; a
 * page costs no more requests to read whole). Without a next link the answer is the whole county (or its
 * only page): the first record is enough.
 */
async function firstPage(
  res: HttpResponse,
  apiKey?: string,
): Promise<{record: Record<string, unknown> | undefined; page: PageFinding}> {
  const next = nextLink(res.headers['link'], res.url) !== undefined
  const t = res.headers['x-total-count']?.trim()
  const total = t !== undefined && /^\d{1,15}$/.test(t) ? Number(t) : null
  if (!next) return {record: await firstRecord(res, apiKey), page: {next, total, pageRecords: null}}
  // a page cut short is not counted as a page size: the scan throws (the probe failed)
  const {record, outcome} = await readFirst(res, apiKey, (seen) => seen.bytes > PAGE_COUNT_MAX_BYTES)
  const pageRecords = outcome.stopped ? null : outcome.records + outcome.rejected.length
  return {record, page: {next, total, pageRecords}}
}

/**
 * As few requests as the answer needs: one per county (the first record of a one-record page, which says
 * both whether the key may use the county and which options it carries), or one probe lookup.
 */
export async function checkKey(
  deps: {client: HttpClient; scheduler: Scheduler; baseUrl: string; apiKey?: string | undefined},
  opts: {
    profile: string
    keySource: KeySource
    /** The counties asked for (--fips, or the profile's default county). */
    fips: string[]
    /** Why the first county was chosen. */
    why: 'asked' | 'profile default' | 'sandbox demo county'
    probe?: Probe | undefined
    countyName?: (fips: string) => string | undefined
    /** Also count the first county's page (firstPage): the --dry-run probe, which sizes the run. */
    countPages?: boolean
    /** The caller's cancel or deadline: the request in flight, its waits and retries end with it. */
    signal?: AbortSignal | undefined
  },
): Promise<KeyReport> {
  const report: KeyReport = {
    valid: true,
    profile: opts.profile,
    keySource: opts.keySource,
    rateLimit: {limit: null, remaining: null, reset: null},
    windowSpent: false,
    probed: null,
    counties: {},
    options: optionsOf(undefined),
    requestsUsed: 0,
  }
  let sample: Record<string, unknown> | undefined
  const note = (res: HttpResponse) => {
    const n = (h: string) => (res.headers[h] === undefined ? null : Number(res.headers[h]))
    if (res.headers['x-ratelimit-remaining'] !== undefined)
      report.rateLimit = {
        limit: n('x-ratelimit-limit'),
        remaining: n('x-ratelimit-remaining'),
        reset: n('x-ratelimit-reset'),
      }
  }
  const send = (url: string) => async () => {
    report.requestsUsed++
    const res = await deps.client.get(url, opts.signal)
    note(res)
    return res
  }
  const asked = opts.why !== 'sandbox demo county'
  for (const [i, fips] of opts.fips.entries()) {
    // the county form as the spec defines it (fips only, spec 4): no page or page_size, which the spec does
    // not define and a strict server refuses; firstRecord reads one record and drops the connection
    const url =
      i === 0 && opts.probe
        ? `${endpointUrl(deps.baseUrl)}?${buildQueryString([
            ['fips', fips],
            [opts.probe.kind, opts.probe.value],
          ])}`
        : countyUrl(deps.baseUrl, fips)
    if (i === 0) report.probed = {fips, name: opts.countyName?.(fips) ?? null, why: opts.why}
    try {
      let rec: Record<string, unknown> | undefined
      if (i === 0 && opts.countPages && !opts.probe) {
        const first = await deps.scheduler.run(send(url), (res) => firstPage(res, deps.apiKey), opts.signal)
        rec = first.record
        report.firstPage = {fips, ...first.page}
      } else rec = await deps.scheduler.run(send(url), (res) => firstRecord(res, deps.apiKey), opts.signal)
      sample ??= rec
      if (asked) report.counties[fips] = 'permitted'
    } catch (error) {
      if (error instanceof InvalidKeyError) {
        report.valid = false
        report.counties = {}
        break
      }
      if (error instanceof RateLimitExceededError) {
        // the key is valid (a 429 is counted per key, spec 8) but its window is spent: report what we read
        report.windowSpent = true
        break
      }
      if (error instanceof ForbiddenError) {
        if (asked) report.counties[fips] = 'not permitted'
      } else if (error instanceof NotFoundError) {
        if (asked) report.counties[fips] = 'permitted'
      } else throw error
    }
  }
  if (report.valid) report.options = optionsOf(sample)
  return report
}

/** Exit 0 when the key is valid and every asked county is permitted; 4 otherwise. */
/**
 * The report as `keys check --json` prints it: `profile` is the profile the key came from, null when it
 * came from elsewhere (SFL_API_KEY, --api-key, the sandbox): a profile was selected, but naming it would
 * say the key is its. `keySource` says where the key came from.
 */
export type KeyDocument = Omit<KeyReport, 'profile'> & {profile: string | null}

export function reportDocument(r: KeyReport): KeyDocument {
  return {...r, profile: r.keySource === 'profile' ? r.profile : null}
}

/**
 * The one line for a CI log when the check fails (stderr, beside the JSON document on stdout); undefined
 * when the key is valid and permitted everywhere asked.
 */
export function reportProblem(r: KeyReport): string | undefined {
  const from = SOURCE_TEXT[r.keySource](r.profile)
  if (r.windowSpent)
    return `the key's rate-limit window is spent (HTTP 429)${r.rateLimit.reset === null ? '' : `; it resets at ${new Date(r.rateLimit.reset * 1000).toISOString()}`}; the key came ${from}`
  if (!r.valid) return `the API key is invalid or missing (HTTP 401); the key came ${from}`
  const refused = Object.entries(r.counties).filter(([, p]) => p !== 'permitted')
  if (refused.length === 0) return undefined
  return `the key is not permitted for ${refused.map(([fips, p]) => `${fips} (${p})`).join(', ')}; the key came ${from}`
}

export function reportOk(r: KeyReport): boolean {
  return r.valid && Object.values(r.counties).every((p) => p === 'permitted')
}

const SOURCE_TEXT: Record<KeySource, (profile: string) => string> = {
  flag: () => 'from --api-key',
  env: () => 'from SFL_API_KEY',
  profile: (p) => `from profile ${p}`,
  sandbox: () => "the sandbox's demo key",
}

/** "in 23 min", "in 2 h 05 min", "now". */
export function relative(resetUnix: number, nowMs: number): string {
  const s = Math.max(0, Math.round(resetUnix - nowMs / 1000))
  if (s < 60) return s === 0 ? 'now' : `in ${s} s`
  const m = Math.round(s / 60)
  return m < 60 ? `in ${m} min` : `in ${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`
}

export function renderReport(
  r: KeyReport,
  nowMs: number,
  maskedKey: string,
  order: readonly string[],
): string {
  const lines = [
    `Key          ${r.valid ? 'valid' : 'INVALID or missing'} (${SOURCE_TEXT[r.keySource](r.profile)}, key ${maskedKey})`,
  ]
  if (r.rateLimit.remaining !== null) {
    const reset = r.rateLimit.reset
    const when =
      reset === null
        ? 'unknown'
        : `${new Date(reset * 1000).toLocaleTimeString()} (${relative(reset, nowMs)})`
    lines.push(
      `Rate limit   ${r.rateLimit.remaining} of ${r.rateLimit.limit ?? '?'} left this window, resets ${when}`,
    )
  }
  if (r.windowSpent)
    lines.push('             SPENT: this window has no requests left (HTTP 429); wait for the reset above')
  if (r.probed)
    lines.push(
      `Probed       ${r.probed.fips}${r.probed.name ? ` ${r.probed.name}` : ''}${r.probed.why === 'asked' ? '' : ` (${r.probed.why})`}`,
    )
  // in the order asked (a JSON object would put integer-like codes such as 48201 first)
  const counties = order.filter((f) => r.counties[f] !== undefined)
  if (counties.length) lines.push(`Counties     ${counties.map((f) => `${f} ${r.counties[f]}`).join(', ')}`)
  if (r.valid) {
    const opts = Object.entries(r.options)
    lines.push(`Options      ${opts.map(([o, s]) => `${o} ${s}`).join(', ')}`)
    if (opts.some(([, s]) => s === 'unknown') && !r.windowSpent)
      lines.push(
        '             (no record to look at: pass --fips for a county with data, or a --probe-* flag)',
      )
  } else
    lines.push(
      '             Set a valid key with SFL_API_KEY or `sfl keys set` (keys are issued in the partner portal).',
    )
  lines.push(`Requests     ${r.requestsUsed} used by this check`)
  return `${lines.join('\n')}\n`
}
