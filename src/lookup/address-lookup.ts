import {countyByFips} from '../address/counties.js'
import {addressLadder, type Attempt, describeAttempts} from '../address/ladder.js'
import {unitMismatch, type UnitMismatch} from '../address/unit-match.js'
import {NotFoundError} from '../errors.js'
import {fetchLookup, type LookupAnswer, type LookupContext} from './fetch-lookup.js'
import type {LookupQuery} from '../api/validate.js'

/**
 * One lookup parameter as sent (spec 4 names): `{address, form}` for each step of the address ladder,
 * `{apn, form: 'as given'}` or `{property_id, form: 'as given'}` for the one request of the other forms.
 */
export type SentForm =
  | {address: string; form: Attempt['label']}
  | {apn: string; form: 'as given'}
  | {property_id: string; form: 'as given'}

/** How a lookup matched, for the table, the JSON beside the record and `--explain`. */
export interface LookupMatch {
  /**
   * `matched_without_unit` when the address asked for a unit and no record found carries it: the ladder's
   * last step (the address without its unit) found it, or an earlier step was matched by the service to
   * the building's record or another unit's (`unit` says which).
   */
  status: 'matched' | 'matched_without_unit'
  /** Every form sent, in order; the last one found the record. */
  tried: SentForm[]
  /** For `matched_without_unit`: the unit asked for and the record's address (and its own unit, if any). */
  unit?: UnitMismatch
  /** The county the address's ZIP chose, when none was given (src/lookup/zip-lookup.ts). */
  county?: ZipCounty
}

/** The county a lookup used when the ZIP chose it. */
export interface ZipCounty {
  fips: string
  /** "Sacramento County, CA (06067)". */
  label: string
  zip: string
  /** Its place among the ZIP's counties (1 = the largest share of its housing units) and how many there are. */
  rank: number
  of: number
}

export interface LookupOutcome extends LookupMatch, LookupAnswer {}

/**
 * One single lookup. Addresses go through the bounded 404 ladder (src/address/ladder.ts): at most two
 * extra requests, none with `fallback: false`. Every 404 says what was tried and what to try next.
 */
export async function lookupOne(
  ctx: LookupContext,
  query: LookupQuery,
  opts: {asTyped?: boolean; fallback?: boolean; county?: string; signal?: AbortSignal | undefined} = {},
): Promise<LookupOutcome> {
  const where = opts.county ?? `county ${query.fips}`
  if (query.by.kind !== 'address') {
    const by = query.by.kind === 'apn' ? 'apn' : 'property_id'
    const sent: SentForm =
      by === 'apn' ? {apn: query.by.value, form: 'as given'} : {property_id: query.by.value, form: 'as given'}
    try {
      return {...(await fetchLookup(ctx, query, opts.signal)), status: 'matched', tried: [sent]}
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error
      const said = serviceSaid(error)
      // the facts; each caller words them (the CLI with its flags: src/cli/error-words.ts)
      throw new NotFoundError(
        `no property matches ${by} ${query.by.value} in ${where} (HTTP 404${said ? `: ${said}` : ''})`,
        404,
        {facts: {topic: 'not-found', by, value: query.by.value, county: where, said}},
      )
    }
  }
  const state = countyByFips(query.fips)?.state
  const ladder = addressLadder(query.by.value, {...opts, state})
  const tried: Attempt[] = []
  let said = ''
  for (const attempt of ladder) {
    tried.push(attempt)
    try {
      const found = await fetchLookup(
        ctx,
        {fips: query.fips, by: {kind: 'address', value: attempt.address}},
        opts.signal,
      )
      // the unit asked for against the records found, whichever form found them: the service may match
      // "3526 HIGH ST APT 9" to the building's record
      const unit = unitMismatch(query.by.value, found.records, state)
      return {
        ...found,
        status: attempt.withoutUnit || unit ? 'matched_without_unit' : 'matched',
        tried: tried.map((t) => ({address: t.address, form: t.label})),
        ...(unit ? {unit} : {}),
      }
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error
      said = serviceSaid(error)
    }
  }
  const described = describeAttempts(tried)
  const box = isBoxAddress(query.by.value)
  throw new NotFoundError(
    `no property matches in ${where} (HTTP 404${said ? `: ${said}` : ''}): tried ${described}${box ? '; a PO box or a rural route box is a mailing address, not a parcel: the service looks properties up by their street address' : ''}`,
    404,
    {
      facts: {
        topic: 'address-not-found',
        county: where,
        said,
        tried: described,
        fallback: opts.fallback !== false,
        box,
      },
    },
  )
}

/** "PO Box 12", "P.O. Box", "Post Office Box", "RR 2 Box 40", "Rural Route 1", "HC 3 Box 5": no parcel. */
export function isBoxAddress(typed: string): boolean {
  const t = typed.toUpperCase().replace(/[.]/g, '').replace(/\s+/g, ' ').trim()
  return /^(P ?O ?BOX|POST OFFICE BOX|BOX \d)|^(RR|RFD|RURAL ROUTE|HC|HCR|HIGHWAY CONTRACT) ?\d+\b.*\bBOX\b|^(RURAL ROUTE|RR) \d+$/.test(
    t,
  )
}

/** "No property matches the given parameters." — the service's own words, when it sent some. */
function serviceSaid(error: NotFoundError): string {
  return error.message.replace(/^no property matches \(HTTP 404\):\s*/, '').trim()
}
