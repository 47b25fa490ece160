import {countyByFips} from './counties.js'
import {ALONE_UNITS, DIRECTIONALS, RANGED_UNITS, SUFFIXES} from './pub28.js'
import {meaningfulHashes, splitWithoutCommas, trailingUnit, unitValue} from './split-tail.js'
import {STATE_CODES, stateAtEnd} from './states.js'

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
 *   follows in its own comma part ("…DR, UNIT 140, ELK GROVE", "…PKWY, #2109") joins the street line
 * - `#` → UNIT. Pub 28 writes `#` when the designator is not known; the service's standardized addresses
 *   spell units as UNIT, so that is the form sfl sends ("#140", "# 140" and "APT #140" are all handled)
 * - a trailing "CITY ST ZIP" becomes "CITY, ST ZIP"; commas stay as separators because the one `address`
 *   parameter (spec 4) carries both lines that Pub 28 would put on separate lines. A state spelled out
 *   ("SACRAMENTO, CALIFORNIA 95838") becomes its code, when a city comes before it
 * - an address without commas whose tail is CITY STATE ZIP is split from the end (split-tail.ts):
 *   "3526 high st sacramento ca 95838" → "3526 HIGH ST, SACRAMENTO, CA 95838"
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

const ZIP = /^\d{5}(?:-\d{4})?$/

/** Split a comma part into tokens: "#140" → "#", "140"; dots, apostrophes and quotes go. */
function tokens(part: string): string[] {
  return part
    .replace(/[.'"`’]/g, '')
    .replace(/#/g, ' # ')
    .split(/\s+/)
    .filter((t) => t !== '')
}

/**
 * "UNIT 140 5201 LAGUNA OAKS DR" → "5201 LAGUNA OAKS DR UNIT 140": a unit with a number typed before the
 * house number goes after the street, where Publication 28 (and the service's standardised form) puts it.
 */
function leadingUnitLast(typed: string[]): string[] {
  // a "#" without a value is dropped when sent: decide as a second pass, which will not see it
  const line = meaningfulHashes(typed)
  const d = line[0]
  if (d === undefined || !(d === '#' || RANGED_UNITS.has(d))) return typed
  const v = line[1] === '#' && d !== '#' ? 2 : 1 // "APT # 5"
  const value = line[v]
  // the house number next, any "#" between dropped (it is dropped when sent: a second pass decides alike)
  const rest = line.slice(v + 1).filter((t) => t !== '#')
  if (value === undefined || !/\d/.test(value) || !/^\d/.test(rest[0] ?? '')) return typed
  return [...rest, ...line.slice(0, v + 1)]
}

/** "..., FL 33040", "CA 95838-1234": a part that ends in a state code and a ZIP. */
function endsInStateZip(part: readonly string[]): boolean {
  const words = part.filter((t) => t !== '#')
  return words.length >= 2 && STATE_CODES.has(words.at(-2)!) && ZIP.test(words.at(-1)!)
}

/** A comma part that is only units ("UNIT 140", "#140", "APT # 5", "REAR"): the same peeling as the street line. */
function unitOnly(typed: readonly string[]): boolean {
  // a "#" with no value after it is dropped when sent: decide as the second pass, which will not see it
  const ts = meaningfulHashes(typed)
  const probe = splitUnit(['1', 'A', ...ts])
  if (probe.unit === undefined || probe.street.length !== 2) return false
  // a designator's value is a number or a letter ("APT 5", "# B"): "KEY WEST" is a city, not unit WEST
  return ts.every((t, i) => !(t === '#' || RANGED_UNITS.has(t)) || ts[i + 1] === '#' || unitValue(ts[i + 1]))
}

/**
 * `state`: the state of the county the address is looked up in, for an address that names none: its place
 * names then say where a city typed without commas starts ("1 broadway sacramento" in Sacramento County:
 * "1 BROADWAY, SACRAMENTO"; split-tail.ts). Without it, the words decide alone.
 */
export function standardiseAddress(input: string, opts: {state?: string | undefined} = {}): StandardAddress {
  let parts = input
    .toUpperCase()
    .normalize('NFC')
    .split(',')
    .map(tokens)
    // a part that is only "#" says nothing (and would leave an empty street line)
    .filter((p) => p.some((t) => t !== '#'))
  // ", unit 140" at the very end, after the city or the state and ZIP: a unit of the street line
  // (never "FL 33040": the state and ZIP, though FL is also the designator of a floor)
  const endUnits: string[][] = []
  while (parts.length > 1 && unitOnly(parts.at(-1)!) && !endsInStateZip(parts.at(-1)!))
    endUnits.unshift(parts.pop()!)
  // "UNIT 140 5201 LAGUNA OAKS DR": the unit goes after the street
  if (parts[0]) parts[0] = leadingUnitLast(parts[0])
  if (parts.length === 1) parts = splitWithoutCommas(parts[0]!, undefined, opts.state)
  let line = parts.shift() ?? []
  // "#" is kept until here: "4800 WESTLAKE PKWY, #2109" has its unit in a part of its own
  let {rest, stateZip} = lastLineParts(parts)
  const streetWords = () => line.filter((t) => t !== '#').length
  // "5201 LAGUNA OAKS DR, UNIT 140, ELK GROVE": unit parts belong to the street line
  while (rest[0] !== undefined && streetWords() >= 2 && unitOnly(rest[0])) line = [...line, ...rest.shift()!]
  // "5201 LAGUNA OAKS DR, ELK GROVE #140": units after the city go back to the street line (a "#" without
  // a value is dropped when sent, so it is dropped first: a second pass decides the same way)
  if (rest[0] !== undefined) rest[0] = meaningfulHashes(rest[0])
  for (
    let u = rest[0] && trailingUnit(rest[0]);
    u && rest[0]!.length > u.length && streetWords() >= 2;
    u = trailingUnit(rest[0])
  ) {
    rest[0] = rest[0]!.slice(0, -u.length)
    line = [...line, ...u]
  }
  // "ELK GROVE CA 95758 #140": the state and ZIP the unit hid, found once it has gone to the street line
  // (else a second pass would find them and put a comma before the state: not idempotent)
  if (!stateZip) ({rest, stateZip} = lastLineParts(rest))
  if (streetWords() >= 2) line = [...line, ...endUnits.flat()]
  if (stateZip) rest.push(stateZip)
  if (streetWords() < 2) rest.push(...endUnits)

  const {street, unit} = splitUnit(line)
  const streetText = streetTokens(street).join(' ')
  const last = rest
    .map((p) => p.filter((t) => t !== '#').join(' '))
    .filter((p) => p !== '')
    .join(', ')
  const out: StandardAddress = {street: streetText, text: ''}
  if (unit !== undefined) out.unit = unit
  if (last !== '') out.lastLine = last
  out.text = [[streetText, unit].filter((s) => s).join(' '), last].filter((s) => s !== '').join(', ')
  return out
}

/** An address in the Pub 28 form sent for a lookup in county `fips` (its state's places: standardiseAddress). */
export function standardiseInCounty(input: string, fips: string): StandardAddress {
  return standardiseAddress(input, {state: countyByFips(fips)?.state})
}

/**
 * The five-digit ZIP an address ends with, as sfl reads it ("..., ELK GROVE, CA 95758-1234" → "95758"), or
 * undefined. Pure: the ZIP-to-county table (zip-counties.ts) is loaded only once this says there is one.
 */
export function addressZip(typed: string): string | undefined {
  return /\b(\d{5})(?:-\d{4})?$/.exec(standardiseAddress(typed).lastLine ?? '')?.[1]
}

/** The standardised text without its unit, or undefined when there is no unit to drop. */
export function standardWithoutUnit(a: StandardAddress): string | undefined {
  if (a.unit === undefined) return undefined
  // standardised again: without its unit, a line may read differently ("1 X CA 95838 FL 2": FL 2 was a
  // floor, and "1 X CA 95838" ends in a state and a ZIP), and what is sent must be a standard form too
  return standardiseAddress([a.street, a.lastLine].filter((s) => s).join(', ')).text
}

/**
 * The identity of a standardised address, for finding rows of a batch that name the same property:
 * the street line, the unit values without their designators ("APT 0114" and "UNIT 114" are the same
 * unit, "# 114" too) and the last line without its punctuation.
 */
export function addressIdentity(a: StandardAddress): string {
  return [a.street, unitIdentity(a.unit), (a.lastLine ?? '').replace(/[^A-Z0-9]+/g, ' ').trim()].join('|')
}

/**
 * A standardised unit without its designators: "APT 0114", "UNIT 114" and "# 114" are all "#114" (a
 * record's designator often differs from the one typed); "REAR" stays "REAR". Empty for no unit.
 */
export function unitIdentity(unit: string | undefined): string {
  const out: string[] = []
  const t = unit?.split(' ') ?? []
  for (let i = 0; i < t.length; i++)
    if (RANGED_UNITS.has(t[i]!) && t[i + 1] !== undefined) out.push(`#${t[++i]!.replace(/^0+(?=\d)/, '')}`)
    else out.push(t[i]!)
  return out.join(' ')
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

/**
 * "ELK GROVE CA 95758" → "ELK GROVE", "CA 95758"; "SACRAMENTO, CALIFORNIA 95838" → …, "CA 95838". Any two
 * letters before a ZIP are taken as the state (as typed); a spelled-out state name only after a city, in its
 * part or an earlier one, since "NEW YORK 10001" alone may be the city. Other parts kept.
 */
function lastLineParts(parts: string[][]): {rest: string[][]; stateZip?: string[]} {
  const words = parts.at(-1)?.filter((t) => t !== '#') ?? []
  const zip = words.at(-1)
  if (zip === undefined || !ZIP.test(zip) || words.length < 2) return {rest: parts}
  const before = words.slice(0, -1)
  const state = /^[A-Z]{2}$/.test(before.at(-1)!)
    ? {code: before.at(-1)!, words: 1, spelled: false}
    : stateAtEnd(before)
  if (!state) return {rest: parts}
  const head = before.slice(0, before.length - state.words)
  if (state.spelled && head.length === 0 && parts.length < 2) return {rest: parts}
  return {rest: [...parts.slice(0, -1), ...(head.length ? [head] : [])], stateZip: [state.code, zip]}
}
