import type {LookupQuery} from './validate.js'

/**
 * Encode one query component as application/x-www-form-urlencoded: spaces become `+` (spec 4: "The address
 * value is URL-encoded in the query string (spaces as +)"); `#`, `&`, `+` and non-ASCII letters are
 * percent-encoded as UTF-8 so they survive the round trip.
 */
export function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+')
}

export function buildQueryString(params: ReadonlyArray<readonly [string, string]>): string {
  return params.map(([k, v]) => `${formEncode(k)}=${formEncode(v)}`).join('&')
}

/** `{base_url}/special-financing`; base_url already carries `/v1` (spec 4, 9.1). */
export function endpointUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/special-financing`
}

export function lookupUrl(baseUrl: string, q: LookupQuery): string {
  return `${endpointUrl(baseUrl)}?${buildQueryString([
    ['fips', q.fips],
    [q.by.kind, q.by.value],
  ])}`
}

/** The county-wide form: fips only (spec 1: leaving out the address returns all eligible records). */
export function countyUrl(
  baseUrl: string,
  fips: string,
  extra: ReadonlyArray<readonly [string, string]> = [],
): string {
  return `${endpointUrl(baseUrl)}?${buildQueryString([['fips', fips], ...extra])}`
}
