import {BadResponseError, NotFoundError} from './errors.js'
import {isMissingEndpoint, missingEndpointError} from './endpoint-check.js'
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
): Promise<ServiceRecord[]> {
  const url = lookupUrl(ctx.baseUrl, query)
  try {
    return await ctx.scheduler.run(
      () => ctx.client.get(url),
      async (res) => parseSuccessBody(await res.text()),
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
