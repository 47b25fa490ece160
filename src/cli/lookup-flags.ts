import {countyFromFlags} from '../address/county-flags.js'
import {UsageError} from '../errors.js'
import {marketRateFor} from './market-rate.js'
import {validateLookup, type LookupQuery} from '../api/validate.js'

/** The flags of a single lookup, checked before any request (and before the sandbox or config is touched). */
export interface LookupFlags {
  fips?: string | undefined
  county?: string | undefined
  address?: string | undefined
  apn?: string | undefined
  'property-id'?: string | undefined
  'market-rate'?: string | undefined
  explain?: boolean | undefined
}

export interface LookupRequest {
  query: LookupQuery
  /** "Sacramento County, CA (06067)", for messages. */
  countyLabel: string
  marketRate?: number | undefined
}

/** Pure: resolves --county / checks --fips against the counties table, then the spec's parameter rules. */
export function lookupRequest(f: LookupFlags, format: string): LookupRequest {
  const county = countyFromFlags({fips: f.fips, county: f.county}, {countyFlag: true})
  if (!county)
    throw new UsageError('--fips (a 5-digit county code such as 06067) or --county "Name, ST" is required')
  const query = validateLookup({
    fips: county.fips,
    address: f.address,
    apn: f.apn,
    propertyId: f['property-id'],
  })
  if (f.explain && (format === 'table' || format === 'csv'))
    throw new UsageError('--explain applies to json and ndjson output (the table always shows the verdicts)')
  const rate = marketRateFor(f['market-rate'], format, f.explain === true)
  return {query, countyLabel: county.label, marketRate: rate}
}
