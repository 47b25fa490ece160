/**
 * How the sandbox finds the record an `address` parameter names. Two modes:
 *
 * - `lenient` (the default): forgiving the way a person types: case, spacing, punctuation, common suffix,
 *   directional and unit spellings, an optional ", CITY, ST ZIP".
 * - `strict`: only the service's own standardised form, as a real server may: the street line (before the
 *   first comma) must equal the record's StandardizeStreetAddress exactly, and a city, when given, must
 *   equal City. State and ZIP after it are not compared.
 *
 * Written apart from the client's standardiser (src/address) on purpose: see rules.ts.
 */
export type MatchMode = 'lenient' | 'strict'

export interface AddressKey {
  number: string
  street: string
  unit?: string
}

const SUFFIX: Record<string, string> = {
  STREET: 'ST', STR: 'ST', AVENUE: 'AVE', AV: 'AVE', DRIVE: 'DR', DRV: 'DR', COURT: 'CT', BOULEVARD: 'BLVD',
  LANE: 'LN', ROAD: 'RD', CIRCLE: 'CIR', PLACE: 'PL', PARKWAY: 'PKWY', TERRACE: 'TER', WY: 'WAY',
} // prettier-ignore
const DIRECTION: Record<string, string> = {NORTH: 'N', SOUTH: 'S', EAST: 'E', WEST: 'W'}
const UNIT_WORDS = new Set(['APARTMENT', 'APT', 'UNIT', 'SUITE', 'STE', '#'])

/** Lenient key of an address: house number, street with abbreviations, unit value without its label. */
export function lenientKey(address: string, cities: readonly string[]): AddressKey | undefined {
  const [line = '', ...rest] = address.toUpperCase().split(',')
  let words = line.replace(/[.'"]/g, ' ').replace(/#/g, ' # ').split(/\s+/).filter(Boolean)
  if (rest.length === 0) {
    // "3526 HIGH ST SACRAMENTO CA 95838": drop a state + ZIP and a known city at the end
    const joined = words.join(' ').replace(/( [A-Z]{2})? \d{5}(-\d{4})?$/, '')
    const city = cities.find((c) => joined.endsWith(` ${c}`))
    words = (city ? joined.slice(0, -city.length - 1) : joined).split(' ').filter(Boolean)
  } else if (rest[0] && /^\s*(APARTMENT|APT|UNIT|SUITE|STE|#)/.test(rest[0])) {
    words.push(...rest[0].replace(/#/g, ' # ').split(/\s+/).filter(Boolean))
  }
  let unit: string | undefined
  const labelAt = words.findIndex((w, i) => i >= 2 && UNIT_WORDS.has(w))
  if (labelAt > 0) {
    unit = words
      .slice(labelAt + 1)
      .filter((w) => w !== '#')
      .join('')
    words = words.slice(0, labelAt)
  }
  const [number, ...street] = words
  if (!number || !/^\d+[A-Z]?$/.test(number) || street.length === 0) return undefined
  const last = street.length - 1
  street[last] = SUFFIX[street[last]!] ?? DIRECTION[street[last]!] ?? street[last]!
  if (street.length > 1) street[0] = DIRECTION[street[0]!] ?? street[0]!
  const key: AddressKey = {number, street: street.join(' ')}
  if (unit) key.unit = unit.replace(/^0+(?=\d)/, '')
  return key
}

/** Strict: the standardised street line, exactly; a city, if given, exactly. */
export function strictMatch(address: string, record: {standardized: string; city: string}): boolean {
  const [line, city] = address.split(',').map((s) => s.trim())
  return line === record.standardized && (city === undefined || city === record.city)
}
