import {isDeepStrictEqual} from 'node:util'

import {BadResponseError, NotFoundError, TruncatedBodyError} from '../errors.js'
import {DataScanner} from '../io/data-scanner.js'
import {isMissingEndpoint, missingEndpointError} from '../api/endpoint-check.js'
import {type HttpClient} from '../api/client.js'
import {lookupUrl} from '../api/query.js'
import {redact} from '../api/secrets.js'
import type {LookupQuery} from '../api/validate.js'
import type {Scheduler} from '../schedule/scheduler.js'

export type ServiceRecord = Record<string, unknown>

function isRecord(v: unknown): v is ServiceRecord {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/**
 * Deepest nesting accepted in a lookup answer. A spec record is 2 levels deep (section 2.2/2.3 objects
 * inside `data`); a record nested thousands deep overflows the stack of every recursive renderer and
 * schema check, so it is refused as malformed before anything walks it.
 */
export const MAX_LOOKUP_DEPTH = 64

/** Nesting depth of a parsed JSON value, walked without recursion; stops counting past `limit`. */
export function jsonDepth(value: unknown, limit = MAX_LOOKUP_DEPTH): number {
  let max = 0
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, d] = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    if (d + 1 > max) max = d + 1
    if (max > limit) return max
    for (const child of Object.values(v)) stack.push([child, d + 1])
  }
  return max
}

/**
 * Parse a successful single-lookup body (spec 4: `{status: "success", data: {...}}`). `data` may also be
 * an array (the spec leaves the multi-record shape open); each element must be a record.
 *
 * Anything else answered with a 200 is malformed (BadResponseError, exit 6), never an empty success:
 * a body that is not JSON, not an object, whose `status` is not "success", whose `data` is missing,
 * null, a string or a number, or an array holding something other than records.
 *
 * `data: []` is also malformed: spec 7 says a lookup that matches nothing is a 404, so a 200 with no
 * record is the service breaking its contract. Calling it "not found" (exit 3) would let a broken
 * server pass as a clean miss in scripts that treat exit 3 as "no such property".
 */
export function parseSuccessBody(text: string): ServiceRecord[] {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    const t = text.trimStart()
    if (t.startsWith('{') || t.startsWith('['))
      throw new TruncatedBodyError('the response body ended before its JSON did')
    throw new BadResponseError(
      `the service answered 200 with a body that is not JSON: "${redact(t).slice(0, 80)}${t.length > 80 ? '…' : ''}"`,
    )
  }
  if (jsonDepth(body) > MAX_LOOKUP_DEPTH)
    throw new BadResponseError(
      `the service answered 200 with JSON nested deeper than ${MAX_LOOKUP_DEPTH} levels; a spec record is 2 levels deep`,
    )
  if (!isRecord(body))
    throw new BadResponseError(
      `the service answered 200 with JSON that is not an object (${describe(body)}); expected {"status": "success", "data": {...}} (spec 4)`,
    )
  if (body['status'] !== 'success')
    throw new BadResponseError(
      `the service answered 200 with status ${describe(body['status'])} instead of "success" (spec 4)`,
    )
  const data = body['data']
  if (Array.isArray(data)) {
    if (data.length === 0)
      throw new BadResponseError(
        'the service answered 200 with an empty `data` list; spec 7 answers a lookup that matches nothing with 404, so this is treated as a malformed answer',
      )
    if (!data.every(isRecord))
      throw new BadResponseError(
        'the service answered 200 with a `data` list holding something other than records (spec 4)',
      )
    return data
  }
  if (!isRecord(data))
    throw new BadResponseError(
      `the service answered 200 with \`data\` ${describe(data)} instead of a record object (spec 4)`,
    )
  return [data]
}

/** A short, safe description of a JSON value for an error line (never the value of a long string). */
function describe(v: unknown): string {
  if (v === undefined) return 'missing'
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'a list'
  if (typeof v === 'string') return v.length <= 20 ? JSON.stringify(v) : `a string of ${v.length} characters`
  return typeof v === 'object' ? 'an object' : `a ${typeof v} (${String(v)})`
}

/**
 * Each record's JSON text exactly as the body holds it (numbers such as `121000.0`, string escapes, key
 * order), split out by the export's scanner (src/io/data-scanner.ts). Used only where it is provably the
 * record parsed: the text of each must JSON.parse to a value deep-equal to it (a `data` named twice, a key
 * spelt with escapes or anything else the two readings could differ on falls back to undefined, and the
 * record is then printed re-serialised). The body has passed JSON.parse, so each text is valid JSON.
 */
export function recordTexts(body: string, records: readonly ServiceRecord[]): Array<string | undefined> {
  const none = records.map(() => undefined)
  try {
    const scanner = new DataScanner()
    const slices = scanner.push(Buffer.from(body, 'utf8'))
    scanner.end()
    if (slices.length !== records.length || scanner.takeRejected().length > 0) return none
    const texts = slices.map((b) => b.toString('utf8'))
    return texts.every((t, i) => isDeepStrictEqual(JSON.parse(t), records[i])) ? texts : none
  } catch {
    return none
  }
}

/**
 * One lookup through the scheduler (budget, retries) and the client. `signal` is the run's abort signal
 * (Ctrl-C), passed to every request so an interrupted batch does not wait for a slow answer.
 */
export async function fetchLookup(
  ctx: {client: HttpClient; scheduler: Scheduler; baseUrl: string},
  query: LookupQuery,
  signal?: AbortSignal,
): Promise<ServiceRecord[]> {
  return sendLookup(ctx, query, signal, parseSuccessBody)
}

/** `fetchLookup`, with each record's text as sent beside it (`recordTexts`), for a single lookup's output. */
export async function fetchLookupWithText(
  ctx: {client: HttpClient; scheduler: Scheduler; baseUrl: string},
  query: LookupQuery,
  signal?: AbortSignal,
): Promise<{records: ServiceRecord[]; raw: Array<string | undefined>}> {
  return sendLookup(ctx, query, signal, (text) => {
    const records = parseSuccessBody(text)
    return {records, raw: recordTexts(text, records)}
  })
}

async function sendLookup<T>(
  ctx: {client: HttpClient; scheduler: Scheduler; baseUrl: string},
  query: LookupQuery,
  signal: AbortSignal | undefined,
  parse: (text: string) => T,
): Promise<T> {
  const url = lookupUrl(ctx.baseUrl, query)
  try {
    return await ctx.scheduler.run(
      () => ctx.client.get(url, signal),
      async (res) => parse(await res.text()),
    )
  } catch (error) {
    // a 404 that says the endpoint is missing is a wrong base URL (exit 2), not a missing property
    if (error instanceof NotFoundError && isMissingEndpoint(error.message))
      throw missingEndpointError(
        ctx.baseUrl,
        error.message.replace(/^no property matches \(HTTP 404\): /, ''),
      )
    throw error
  }
}
