/**
 * Address normalisation, the way people type addresses: case, extra spaces, punctuation, street suffix and
 * unit designator spellings, and an optional trailing ", CITY, ST ZIP". Pure; used by the sandbox to match
 * and by batch lookups to find and strip unit designators (`--unit-fallback`).
 */
export interface NormalizedAddress {
  /** House number, as typed (e.g. "3526", "12B"). */
  number: string
  /** Street name with standard suffix and directional abbreviations, upper case ("HIGH ST"). */
  street: string
  /** Unit designator value without its label ("114"), when present. */
  unit?: string
}

/** USPS Publication 28 style abbreviations for the suffixes people commonly spell out. */
const SUFFIXES: Record<string, string> = {
  STREET: 'ST', STR: 'ST', AVENUE: 'AVE', AV: 'AVE', AVEN: 'AVE', DRIVE: 'DR', DRV: 'DR', COURT: 'CT',
  BOULEVARD: 'BLVD', BOUL: 'BLVD', LANE: 'LN', ROAD: 'RD', CIRCLE: 'CIR', CIRC: 'CIR', PLACE: 'PL',
  PARKWAY: 'PKWY', PKY: 'PKWY', TERRACE: 'TER', HIGHWAY: 'HWY', TRAIL: 'TRL', SQUARE: 'SQ',
} // prettier-ignore
const DIRECTIONALS: Record<string, string> = {
  NORTH: 'N', SOUTH: 'S', EAST: 'E', WEST: 'W', NORTHEAST: 'NE', NORTHWEST: 'NW', SOUTHEAST: 'SE', SOUTHWEST: 'SW',
} // prettier-ignore
// A label is a whole word followed by a space or "#" ("STE 200", "UNIT #4", "# 4"), never the start of a
// longer word: "12 STEELE", "400 NOBEL" and "55 APTOS" are streets, not STE ELE, NO BEL and APT OS.
const UNIT_LABELS = /(?:^|\s)(?:(?:APARTMENT|APT|UNIT|SUITE|STE|NO)(?:\s+#?|\s*#)|#)\s*([A-Z0-9-]+)\s*$/

/** The part of a full address before ", CITY, ST ZIP" (or the whole string when there is no comma). */
export function streetLine(address: string): string {
  return address.split(',')[0] ?? ''
}

export function normalizeAddress(
  address: string,
  knownCities: readonly string[] = [],
): NormalizedAddress | undefined {
  let s = address.normalize('NFC').toUpperCase()
  const hadComma = s.includes(',')
  s = streetLine(s)
  s = s
    .replace(/[.'"`]/g, '')
    .replace(/#/g, ' # ')
    .replace(/\s+/g, ' ')
    .trim()
  if (!hadComma) {
    // "3526 HIGH ST SACRAMENTO CA 95838": strip a trailing state + ZIP, then a known city name
    s = s.replace(/\s+[A-Z]{2}\s+\d{5}(?:-\d{4})?$/, '').replace(/\s+\d{5}(?:-\d{4})?$/, '')
    for (const city of knownCities) {
      const c = ` ${city.toUpperCase()}`
      if (s.endsWith(c)) {
        s = s.slice(0, -c.length)
        break
      }
    }
  }
  let unit: string | undefined
  const m = UNIT_LABELS.exec(s)
  if (m && m.index > 0) {
    unit = m[1]!.replace(/^0+(?=\d)/, '')
    s = s.slice(0, m.index).trim()
  }
  const tokens = s.split(' ').filter((t) => t !== '' && t !== '#')
  const num = tokens.shift()
  if (!num || !/^\d+[A-Z]?$/.test(num) || tokens.length === 0) return undefined
  const last = tokens.length - 1
  tokens[last] = SUFFIXES[tokens[last]!] ?? DIRECTIONALS[tokens[last]!] ?? tokens[last]!
  if (tokens.length > 1) {
    tokens[0] = DIRECTIONALS[tokens[0]!] ?? tokens[0]!
    // "HIGH STREET N": the suffix sits before a trailing directional
    if (DIRECTIONALS[tokens[last]!] === undefined && last > 0)
      tokens[last - 1] = SUFFIXES[tokens[last - 1]!] ?? tokens[last - 1]!
  }
  const out: NormalizedAddress = {number: num, street: tokens.join(' ')}
  if (unit !== undefined) out.unit = unit
  return out
}

/** Does this address carry a unit designator (Unit, Apt, #, Ste)? Returns the address without it when so. */
export function withoutUnit(address: string): string | undefined {
  const [line, ...rest] = address.split(',')
  const spaced = line!.replace(/#/g, ' # ').replace(/\s+/g, ' ').trim()
  const m = UNIT_LABELS.exec(spaced.toUpperCase())
  if (!m || m.index === 0) return undefined
  return [spaced.slice(0, m.index).trim(), ...rest].join(',')
}
