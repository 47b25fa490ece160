import {ALONE_UNITS, DIRECTIONALS, RANGED_UNITS, SUFFIXES} from './pub28.js'

/**
 * Address standardisation before sending, after USPS Publication 28, so that a server which matches only
 * its own standardised form (as StandardizeStreetAddress shows it, spec 2.1) finds the property however a
 * person typed it. Pure and table-driven (tables in pub28.ts); standardising twice changes nothing.
 *
 * The form sfl sends (README "Addresses"):
 *
 *     NUMBER [PREDIR] NAME [SUFFIX] [POSTDIR] [DESIGNATOR [VALUE]][, CITY][, ST ZIP]
 *
 * - upper case; periods, apostrophes and quotes removed; runs of spaces and empty comma parts collapsed
 * - suffix (last word of the street name) → Pub 28 Appendix C1 abbreviation: DRIVE, DRV → DR
 * - directionals before or after the name → N, S, E, W, NE, NW, SE, SW (a directional that is the whole
 *   street name, as in "100 NORTH ST", stays spelled out, as Pub 28 section 233 does)
 * - secondary unit designators → Appendix C2 abbreviations: APARTMENT → APT, SUITE → STE; a unit that
 *   follows in its own comma part ("…DR, UNIT 140, ELK GROVE") joins the street line
 * - `#` → UNIT. Pub 28 writes `#` when the designator is not known; the service's standardized addresses
 *   spell units as UNIT, so that is the form sfl sends ("#140", "# 140" and "APT #140" are all handled)
 * - a trailing "CITY ST ZIP" becomes "CITY, ST ZIP"; commas stay as separators because the one `address`
 *   parameter (spec 4) carries both lines that Pub 28 would put on separate lines
 *
 * @example standardiseAddress('5201 laguna oaks dr., unit 140,, elk grove').text
 *   // '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE'
 */
export interface StandardAddress {
  /** The whole standardised text. */
  text: string
  /** The street line without the unit: "5201 LAGUNA OAKS DR". */
  street: string
  /** "UNIT 140", "STE 200", "REAR", when present. */
  unit?: string
  /** Everything after the street line, standardised: "ELK GROVE, CA 95758". */
  lastLine?: string
}

const STATE_ZIP = /^(?:(.*?)\s+)?([A-Z]{2})\s+(\d{5}(?:-\d{4})?)$/

/** Split a comma part into tokens: "#140" → "#", "140"; dots, apostrophes and quotes go. */
function tokens(part: string): string[] {
  return part
    .replace(/[.'"`’]/g, '')
    .replace(/#/g, ' # ')
    .split(/\s+/)
    .filter((t) => t !== '')
}

/** A comma part that is only units ("UNIT 140", "#140", "APT # 5", "REAR"): the same peeling as the street line. */
function unitOnly(ts: readonly string[]): boolean {
  const probe = splitUnit(['1', 'A', ...ts])
  return probe.unit !== undefined && probe.street.length === 2
}

export function standardiseAddress(input: string): StandardAddress {
  const parts = input
    .toUpperCase()
    .normalize('NFC')
    .split(',')
    .map(tokens)
    // a part that is only "#" says nothing (and would leave an empty street line)
    .filter((p) => p.some((t) => t !== '#'))
  let line = parts.shift() ?? []
  const rest = lastLineParts(parts.map((p) => p.filter((t) => t !== '#').join(' ')))
  // "5201 LAGUNA OAKS DR, UNIT 140, ELK GROVE": unit parts belong to the street line
  while (rest[0] !== undefined && line.filter((t) => t !== '#').length >= 2 && unitOnly(rest[0].split(' ')))
    line = [...line, ...rest.shift()!.split(' ')]

  const {street, unit} = splitUnit(line)
  const streetText = streetTokens(street).join(' ')
  const last = rest.join(', ')
  const out: StandardAddress = {street: streetText, text: ''}
  if (unit !== undefined) out.unit = unit
  if (last !== '') out.lastLine = last
  out.text = [[streetText, unit].filter((s) => s).join(' '), last].filter((s) => s !== '').join(', ')
  return out
}

/** The standardised text without its unit, or undefined when there is no unit to drop. */
export function standardWithoutUnit(a: StandardAddress): string | undefined {
  if (a.unit === undefined) return undefined
  return [a.street, a.lastLine].filter((s) => s).join(', ')
}

/**
 * The identity of a standardised address, for finding rows of a batch that name the same property:
 * the street line, the unit values without their designators ("APT 0114" and "UNIT 114" are the same
 * unit, "# 114" too) and the last line without its punctuation.
 */
export function addressIdentity(a: StandardAddress): string {
  const unit: string[] = []
  const t = a.unit?.split(' ') ?? []
  for (let i = 0; i < t.length; i++)
    if (RANGED_UNITS.has(t[i]!) && t[i + 1] !== undefined) unit.push(`#${t[++i]!.replace(/^0+(?=\d)/, '')}`)
    else unit.push(t[i]!)
  return [a.street, unit.join(' '), (a.lastLine ?? '').replace(/[^A-Z0-9]+/g, ' ').trim()].join('|')
}

/**
 * Peel secondary units off the end of the street line ("APT 5", "# 5", "REAR"; several, as in
 * "APT 5 REAR"). Whole tokens only, so "12 STEELE", "400 NOBEL" and "55 APTOS" keep their streets (the old
 * pattern matched STE, NO and APT inside words). At least a house number and one street word stay.
 */
function splitUnit(line: readonly string[]): {street: string[]; unit?: string} {
  // "APT # 5" → "APT 5"
  let t = line.filter((x, i) => !(x === '#' && i > 0 && RANGED_UNITS.has(line[i - 1]!)))
  const noHash = (xs: readonly string[]) => xs.filter((x) => x !== '#')
  const units: string[] = []
  for (;;) {
    const n = t.length
    const before = (k: number) => noHash(t.slice(0, n - k)).length >= 2
    if (n >= 2 && (t[n - 2] === '#' || RANGED_UNITS.has(t[n - 2]!)) && t[n - 1] !== '#' && before(2)) {
      units.unshift(`${t[n - 2] === '#' ? 'UNIT' : RANGED_UNITS.get(t[n - 2]!)} ${t[n - 1]}`)
      t = t.slice(0, -2)
    } else if (n >= 1 && ALONE_UNITS.has(t[n - 1]!) && before(1)) {
      units.unshift(ALONE_UNITS.get(t[n - 1]!)!)
      t = t.slice(0, -1)
    } else if (n >= 1 && t[n - 1] === '#') t = t.slice(0, -1)
    else break
  }
  // any other "#" (a lone one, one before the number) says nothing
  const street = noHash(t)
  return units.length ? {street, unit: units.join(' ')} : {street}
}

/**
 * Number, directionals, name, suffix. Each decision depends only on a token's class (directional, suffix,
 * other), which its abbreviation keeps, so a second pass decides the same way.
 */
function streetTokens(street: readonly string[]): string[] {
  const t = [...street]
  // the house number, with a fraction if any ("123 1/2"), is left as typed
  let i = t.length > 0 && /^\d/.test(t[0]!) ? 1 : 0
  if (i === 1 && t[1] !== undefined && /^\d+\/\d+$/.test(t[1])) i = 2
  let end = t.length
  const name = () => end - i
  // post-directional: "MAIN ST NORTH" → "MAIN ST N"
  if (name() >= 2 && DIRECTIONALS.has(t[end - 1]!)) {
    t[end - 1] = DIRECTIONALS.get(t[end - 1]!)!
    end--
  }
  // suffix: the last word of the name, when a name word comes before it
  if (name() >= 2 && SUFFIXES.has(t[end - 1]!)) {
    t[end - 1] = SUFFIXES.get(t[end - 1]!)!
    end--
  }
  // pre-directional: "NORTH MAIN" → "N MAIN", but "NORTH ST" keeps its name
  if (name() >= 2 && DIRECTIONALS.has(t[i]!)) t[i] = DIRECTIONALS.get(t[i]!)!
  return t
}

/** "ELK GROVE CA 95758" → "ELK GROVE", "CA 95758"; other parts kept, space-collapsed. */
function lastLineParts(parts: string[]): string[] {
  const m = parts.length ? STATE_ZIP.exec(parts.at(-1)!) : null
  if (!m) return parts
  const head = parts.slice(0, -1)
  if (m[1]) head.push(m[1])
  return [...head, `${m[2]} ${m[3]}`]
}
