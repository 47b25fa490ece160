import type {HttpClient, HttpResponse} from '../api/client.js'
import {ForbiddenError, InvalidKeyError, NotFoundError} from '../api/errors.js'
import {countyUrl, endpointUrl, buildQueryString} from '../api/query.js'
import {OPTION_NAMES, type OptionName} from '../api/spec.js'
import {DataScanner} from '../io/data-scanner.js'
import type {Scheduler} from '../schedule/scheduler.js'

export type Permission = 'permitted' | 'not permitted'
export type OptionState = 'included' | 'not included' | 'unknown'

/** The stable `keys check --output json` object (README "keys check"). */
export interface KeyReport {
  valid: boolean
  profile: string
  rateLimit: {limit: number | null; remaining: number | null; reset: number | null}
  counties: Record<string, Permission>
  options: Record<OptionName, OptionState>
  requestsUsed: number
}

export type Probe = {kind: 'apn' | 'property_id' | 'address'; value: string}

/** The county checked when none is given: the sandbox's demo county (documented in the README). */
export const DEFAULT_CHECK_FIPS = '06067'

/** Spec 2.2 rule 2 / 2.3 rule 1: an option is included exactly when its field is present (object or null). */
export function optionsOf(record: Record<string, unknown> | undefined): Record<OptionName, OptionState> {
  const out = {} as Record<OptionName, OptionState>
  for (const o of OPTION_NAMES)
    out[o] = record === undefined ? 'unknown' : o in record ? 'included' : 'not included'
  return out
}

/** Read records until the first one, then drop the connection: a county page costs one record of bandwidth. */
async function firstRecord(res: HttpResponse): Promise<Record<string, unknown> | undefined> {
  const scanner = new DataScanner()
  for await (const chunk of res.body) {
    const [first] = scanner.push(chunk)
    if (first) {
      res.cancel()
      return JSON.parse(first.toString('utf8')) as Record<string, unknown>
    }
  }
  scanner.end()
  return undefined
}

/**
 * As few requests as the answer needs: one per county (the first record of a one-record page, which says
 * both whether the key may use the county and which options it carries), or one probe lookup.
 */
export async function checkKey(
  deps: {client: HttpClient; scheduler: Scheduler; baseUrl: string},
  opts: {profile: string; fips: string[]; probe?: Probe | undefined},
): Promise<KeyReport> {
  const report: KeyReport = {
    valid: true,
    profile: opts.profile,
    rateLimit: {limit: null, remaining: null, reset: null},
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
    const res = await deps.client.get(url)
    note(res)
    return res
  }
  const counties = opts.fips.length ? opts.fips : [DEFAULT_CHECK_FIPS]
  for (const [i, fips] of counties.entries()) {
    const url =
      i === 0 && opts.probe
        ? `${endpointUrl(deps.baseUrl)}?${buildQueryString([
            ['fips', fips],
            [opts.probe.kind, opts.probe.value],
          ])}`
        : countyUrl(deps.baseUrl, fips, [
            ['page', '1'],
            ['page_size', '1'],
          ])
    try {
      const rec = await deps.scheduler.run(send(url), firstRecord)
      sample ??= rec
      if (opts.fips.length) report.counties[fips] = 'permitted'
    } catch (error) {
      if (error instanceof InvalidKeyError) {
        report.valid = false
        report.counties = {}
        break
      }
      if (error instanceof ForbiddenError) {
        if (opts.fips.length) report.counties[fips] = 'not permitted'
      } else if (error instanceof NotFoundError) {
        if (opts.fips.length) report.counties[fips] = 'permitted'
      } else throw error
    }
  }
  if (report.valid) report.options = optionsOf(sample)
  return report
}

/** Exit 0 when the key is valid and every asked county is permitted; 4 otherwise. */
export function reportOk(r: KeyReport): boolean {
  return r.valid && Object.values(r.counties).every((p) => p === 'permitted')
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
    `Key          ${r.valid ? 'valid' : 'INVALID or missing'} (profile ${r.profile}, key ${maskedKey})`,
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
  // in the order asked (a JSON object would put integer-like codes such as 48201 first)
  const counties = order.filter((f) => r.counties[f] !== undefined)
  if (counties.length) lines.push(`Counties     ${counties.map((f) => `${f} ${r.counties[f]}`).join(', ')}`)
  if (r.valid) {
    const opts = Object.entries(r.options)
    lines.push(`Options      ${opts.map(([o, s]) => `${o} ${s}`).join(', ')}`)
    if (opts.some(([, s]) => s === 'unknown'))
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
