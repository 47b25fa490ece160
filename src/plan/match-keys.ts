import {standardiseInCounty, type StandardAddress} from '../address/standardise.js'
import type {LookupQuery} from '../api/validate.js'

/**
 * What makes a batch row and a record of the county the same property, exactly (issue 33: "a row is
 * answered from scanned records only when it matches exactly one record"). Pure: the row side from its
 * lookup, the record side from five of its fields (spec 2.1). A row matches a record
 *
 * - by `property_id`: the record's ServicePropertyID (spec 2.1: the service's unique identifier);
 * - by `apn`: the record's APN as the county writes it, or the same characters with other spaces or
 *   dashes, as people type parcel numbers ("078 0123 045" and "0780123045" for "078-0123-045"). Records
 *   whose APN is the typed text itself (ignoring case and the spaces around it) are preferred; when none
 *   is, the variants count only if they all write the APN the same way (two different parcels that differ
 *   only in their dashes leave the row to the service);
 * - by `address`: the row's street line in its USPS Publication 28 form (src/address/standardise.ts, the
 *   form a lookup sends), its unit included when one was asked for, equal to the record's
 *   StandardizeStreetAddress (spec 2.1: "postal-standardized") up to case, spacing and punctuation; and the
 *   row's city equal to the record's City, its ZIP to the record's Zip, each when the row gives one. A row
 *   that gives neither a city nor a ZIP, or whose last line sfl cannot read as "CITY, ST ZIP", is never
 *   answered locally: a street line alone names a property in more than one town.
 *
 * Anything looser (a unit under another designator, "STREET" for "ST" in the record) is no local match:
 * the row is sent as a lookup, since the service's own matching is looser than this and the county-wide
 * form may hold only eligible records (spec 1).
 */
export type RowMatch =
  | {kind: 'id'; key: string}
  | {kind: 'apn'; key: string; exact: string}
  | {kind: 'address'; key: string; city?: string; zip?: string}

/** What of a record the match reads (absent fields undefined). */
export interface RecordKeys {
  id?: string | undefined
  apn?: string | undefined
  street?: string | undefined
  city?: string | undefined
  zip?: string | undefined
}

const ZIP = /^(\d{5})(?:-?\d{4})?$/
const STATE = /^[A-Z]{2}$/

/** Case, spacing and the punctuation Pub 28 drops (periods, apostrophes, quotes): "St. Mary's  Rd" is "ST MARYS RD". */
export function plainText(s: string): string {
  return s
    .toUpperCase()
    .replace(/[.'"`’]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
}

/** The APN as typed, for the exact tier: case and the spaces around it do not count. */
export function apnExact(apn: string): string {
  return apn.trim().toUpperCase()
}

/** The APN without its spaces and dashes (the variants people type): the key both tiers share. */
export function apnLoose(apn: string): string {
  return apn.toUpperCase().replace(/[\s\-‐‑‒–—]+/g, '')
}

/**
 * A row's match keys (`match` undefined when it cannot be answered locally: an address without a city or
 * ZIP, or with a last line of other parts), and whether it asks for a unit (a lookup of it may take a
 * second request with --unit-fallback).
 */
export function rowMatch(
  q: LookupQuery,
  /** The address in its Pub 28 form, when the caller has it already. */
  standard?: StandardAddress,
): {match: RowMatch | undefined; hasUnit: boolean} {
  if (q.by.kind === 'property_id')
    return {match: {kind: 'id', key: `i ${q.by.value.replace(/^0+/, '')}`}, hasUnit: false}
  if (q.by.kind === 'apn') {
    const loose = apnLoose(q.by.value)
    const match: RowMatch | undefined =
      loose === '' ? undefined : {kind: 'apn', key: `a ${loose}`, exact: apnExact(q.by.value)}
    return {match, hasUnit: false}
  }
  const std = standard ?? standardiseInCounty(q.by.value, q.fips)
  const hasUnit = std.unit !== undefined
  const last = lastLine(std.lastLine)
  if (!last || (last.city === undefined && last.zip === undefined)) return {match: undefined, hasUnit}
  const line = std.unit === undefined ? std.street : `${std.street} ${std.unit}`
  return {match: {kind: 'address', key: `s ${plainText(line)}`, ...last}, hasUnit}
}

/**
 * "ELK GROVE, CA 95758" → city ELK GROVE, ZIP 95758; "SACRAMENTO" → the city; "CA 95838" → the ZIP. A
 * state is read and dropped (a county's records are in one state). Anything else: undefined.
 */
export function lastLine(text: string | undefined): {city?: string; zip?: string} | undefined {
  if (text === undefined) return {}
  const parts = text.split(',').map((p) =>
    p
      .trim()
      .split(' ')
      .filter((t) => t !== ''),
  )
  const out: {city?: string; zip?: string} = {}
  const end = parts.at(-1)!
  const zip = end.length ? ZIP.exec(end.at(-1)!) : null
  if (zip) {
    out.zip = zip[1]!
    end.pop()
  }
  if (end.length === 1 && STATE.test(end[0]!) && (zip || parts.length > 1)) end.pop()
  const rest = parts.filter((p) => p.length > 0)
  if (rest.length > 1) return undefined
  if (rest.length === 1) out.city = plainText(rest[0]!.join(' '))
  return out
}

/** The record's keys in the form rows are indexed by. */
export function recordKeys(r: RecordKeys): {
  id: string | undefined
  apnLoose: string | undefined
  apnExact: string | undefined
  street: string | undefined
  city: string | undefined
  zip: string | undefined
} {
  const apn = r.apn === undefined || r.apn.trim() === '' ? undefined : r.apn
  const zip = r.zip === undefined ? undefined : ZIP.exec(r.zip.trim())?.[1]
  return {
    id: r.id === undefined ? undefined : `i ${r.id}`,
    apnLoose: apn === undefined ? undefined : `a ${apnLoose(apn)}`,
    apnExact: apn === undefined ? undefined : apnExact(apn),
    street: r.street === undefined || r.street.trim() === '' ? undefined : `s ${plainText(r.street)}`,
    city: r.city === undefined ? undefined : plainText(r.city),
    zip,
  }
}
