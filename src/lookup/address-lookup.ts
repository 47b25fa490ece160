import {addressLadder, type Attempt, describeAttempts} from '../address/ladder.js'
import {NotFoundError} from '../errors.js'
import {fetchLookup, type ServiceRecord} from './fetch-lookup.js'
import type {HttpClient} from '../api/client.js'
import type {LookupQuery} from '../api/validate.js'
import type {Scheduler} from '../schedule/scheduler.js'

export interface LookupOutcome {
  records: ServiceRecord[]
  /** How the record was found: `matched_without_unit` when only the ladder's last step found it. */
  match: 'matched' | 'matched_without_unit'
  /** Every address sent, in order (empty for APN and property ID lookups). */
  tried: Attempt[]
}

/**
 * One single lookup. Addresses go through the bounded 404 ladder (src/address/ladder.ts): at most two
 * extra requests, none with `fallback: false`. Every 404 says what was tried and what to try next.
 */
export async function lookupOne(
  ctx: {client: HttpClient; scheduler: Scheduler; baseUrl: string},
  query: LookupQuery,
  opts: {asTyped?: boolean; fallback?: boolean; county?: string} = {},
): Promise<LookupOutcome> {
  const where = opts.county ?? `county ${query.fips}`
  if (query.by.kind !== 'address') {
    try {
      return {records: await fetchLookup(ctx, query), match: 'matched', tried: []}
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error
      const flag = query.by.kind === 'apn' ? '--apn' : '--property-id'
      throw new NotFoundError(
        `no property matches ${flag} ${query.by.value} in ${where} (HTTP 404${serviceSaid(error)}). Check that --fips names the county the parcel is in, or look it up by --address`,
        404,
      )
    }
  }
  const ladder = addressLadder(query.by.value, opts)
  const tried: Attempt[] = []
  let said = ''
  for (const attempt of ladder) {
    tried.push(attempt)
    try {
      const records = await fetchLookup(ctx, {
        fips: query.fips,
        by: {kind: 'address', value: attempt.address},
      })
      return {records, match: attempt.withoutUnit ? 'matched_without_unit' : 'matched', tried}
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error
      said = serviceSaid(error)
    }
  }
  const more = opts.fallback === false ? ' (--no-fallback: no other form was tried)' : ''
  throw new NotFoundError(
    `no property matches in ${where} (HTTP 404${said}): tried ${describeAttempts(tried)}${more}. Try the parcel number (--apn), check the county (--fips or --county), or spell the street as the county records it`,
    404,
  )
}

/** ": No property matches the given parameters." — the service's own words, when it sent some. */
function serviceSaid(error: NotFoundError): string {
  const text = error.message.replace(/^no property matches \(HTTP 404\):\s*/, '').trim()
  return text ? `: ${text}` : ''
}
