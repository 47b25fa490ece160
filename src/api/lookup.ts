import {BadResponseError} from './errors.js'
import {TruncatedBodyError, type HttpClient} from './client.js'
import {lookupUrl} from './query.js'
import type {LookupQuery} from './validate.js'
import type {Scheduler} from '../schedule/scheduler.js'

export type ServiceRecord = Record<string, unknown>

/**
 * Parse a successful single-lookup body (spec 4: `{status: "success", data: {...}}`). `data` may also be
 * an array (the spec leaves the multi-record shape open); each element is a record.
 */
export function parseSuccessBody(text: string): ServiceRecord[] {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    const t = text.trimStart()
    if (t.startsWith('{') || t.startsWith('['))
      throw new TruncatedBodyError('the response body ended before its JSON did')
    throw new BadResponseError(`the service answered 200 with a body that is not JSON: "${t.slice(0, 80)}"`)
  }
  const data = (body as {data?: unknown})?.data
  if (data === undefined || data === null || typeof data !== 'object')
    throw new BadResponseError('the service answered 200 without a `data` object (spec 4)')
  const records = Array.isArray(data) ? data : [data]
  return records.filter((r): r is ServiceRecord => r !== null && typeof r === 'object' && !Array.isArray(r))
}

/** One lookup through the scheduler (budget, retries) and the client. */
export async function fetchLookup(
  ctx: {client: HttpClient; scheduler: Scheduler; baseUrl: string},
  query: LookupQuery,
  signal?: AbortSignal,
): Promise<ServiceRecord[]> {
  const url = lookupUrl(ctx.baseUrl, query)
  return ctx.scheduler.run(
    () => ctx.client.get(url, signal),
    async (res) => parseSuccessBody(await res.text()),
  )
}
