import {placeAtEnd, shippedPlaces, type PlaceNames} from './places.js'
import {ALONE_UNITS, DIRECTIONALS, RANGED_UNITS, SUFFIXES} from './pub28.js'
import {stateAtEnd} from './states.js'

/**
 * An address typed without commas whose tail is a city, a state and a ZIP ("3526 high st sacramento ca
 * 95838") is split from the end into the parts a comma would have made: street line, city, "ST ZIP". The
 * street's words are kept as typed (standardise.ts abbreviates them after); only where it ends is decided
 * here. Pure; works on the upper-case tokens of standardise.ts.
 *
 * Where the city starts, first (cityStart): the longest name of the state's places (places.ts, the Census
 * places) that ends the words before the state ("100 BROADWAY NEW YORK NY 10007"). Without a ZIP, the state
 * and city are split off only so ("12 OCEAN VIEW AVE SAN JOSE CA").
 *
 * Where the street ends, when the list names no city and nothing but the words says so (README "Addresses"):
 * 1. after the last secondary unit whose value looks like one, a number or a single letter ("UNIT 140",
 *    "# 2109", "APT B"): "KEY WEST" is a city, not unit WEST of designator KEY;
 * 2. else after the first of the common suffixes (ST, AVE, RD, DR, LN, BLVD, CT, ...) that is not followed by
 *    another one ("OLD COURT RD": COURT is part of the name); a following ST counts as SAINT, the start of
 *    a city ("MAIN ST ST LOUIS"), so "OLD COURT ST SAINT..." is read wrong (decided: St. Louis, St. Paul,
 *    St. George are far more common than a street named COURT ST with a name word before COURT);
 * 3. else after the first other Appendix C1 suffix ("MILL CREEK SPRINGFIELD").
 * An abbreviated directional right after the suffix stays with the street ("MAIN ST N"); a spelled-out one
 * starts the city ("MAIN ST WEST SACRAMENTO", "NORTH HIGHLANDS"). A suffix or unit needs a name word before
 * it ("100 PARK AVE": PARK is the name). When no end is found ("1 BROADWAY NEW YORK NY 10001") only "ST
 * ZIP" is split off; with the state spelled out, nothing is (the words may be the city: "NEW YORK 10001").
 * A state's name right after the street's end is kept as typed after a comma: "1 MAIN ST, NEW YORK 10001".
 */
const ZIP = /^\d{5}(?:-\d{4})?$/

/** The suffixes that end most US street names (their Appendix C1 abbreviations). */
const COMMON_SUFFIXES = new Set(
  'ALY AVE BLVD CIR CT DR EXPY FWY HWY LN LOOP PKWY PL PLZ RD SQ ST TER TRL WAY'.split(' '),
)
const ABBREVIATED_DIRECTIONALS = new Set(['N', 'S', 'E', 'W', 'NE', 'NW', 'SE', 'SW'])

const common = (t: string | undefined) => t !== undefined && COMMON_SUFFIXES.has(SUFFIXES.get(t) ?? '')
/** A secondary unit's value: it has a digit ("140", "5B", "1/2") or is one letter ("B"). */
export function unitValue(t: string | undefined): boolean {
  return t !== undefined && t !== '#' && (/\d/.test(t) || /^[A-Z]$/.test(t))
}

/** Index just past the street line in `body` (the words before the state), or undefined. */
export function streetEnd(body: readonly string[]): number | undefined {
  return streetEndBy(body)?.end
}

/** Where the street line ends, and which of the three rules above said so. */
function streetEndBy(body: readonly string[]): {end: number; by: 'unit' | 'common' | 'other'} | undefined {
  let from = /^\d/.test(body[0] ?? '') ? 1 : 0
  while (from < body.length && DIRECTIONALS.has(body[from]!)) from++
  from++ // the first name word is never the end
  for (let i = body.length - 1; i >= from; i--) {
    const t = body[i]!
    if (t !== '#' && !RANGED_UNITS.has(t)) continue
    const v = t !== '#' && body[i + 1] === '#' ? i + 2 : i + 1 // "APT # 5"
    if (unitValue(body[v])) return {end: v + 1, by: 'unit'}
  }
  const withDirectional = (i: number) => (ABBREVIATED_DIRECTIONALS.has(body[i] ?? '') ? i + 1 : i)
  for (let i = from; i < body.length; i++)
    if (common(body[i]) && !(common(body[i + 1]) && body[i + 1] !== 'ST'))
      return {end: withDirectional(i + 1), by: 'common'}
  for (let i = from; i < body.length; i++)
    if (SUFFIXES.has(body[i]!)) return {end: withDirectional(i + 1), by: 'other'}
  return undefined
}

/**
 * An address typed without commas and without a state and ZIP ("5201 laguna oaks dr unit 140 elk grove",
 * "12 main st citrus heights"): the words after the street's end are a city when the end is sure (a unit
 * with its value, or a common suffix) and leaving them on the street line would change them: the street
 * line's last word is abbreviated as a suffix (GROVE → GRV, HEIGHTS → HTS), which Publication 28 does for
 * street names only. So the city is split off when it has two words or more and ends in a suffix or a
 * directional ("ELK GROVE", "CITRUS HEIGHTS", "PALM SPRINGS", "PLEASANT HILL"); otherwise the words stay as
 * typed, where nothing abbreviates them ("12 MAIN ST WEST SACRAMENTO"). A unit after the city ("... ELK
 * GROVE # 140") goes back to the street line. Returns undefined when there is nothing to split.
 *
 * @example splitCityWithoutTail('5201 LAGUNA OAKS DR UNIT 140 ELK GROVE'.split(' '))
 *   // [['5201', 'LAGUNA', 'OAKS', 'DR', 'UNIT', '140'], ['ELK', 'GROVE']]
 */
export function splitCityWithoutTail(typed: readonly string[]): string[][] | undefined {
  const words = meaningfulHashes(typed)
  const unit = trailingUnit(words)
  const body = unit ? words.slice(0, -unit.length) : words
  const at = streetEndBy(body)
  if (!at || at.by === 'other') return undefined
  const city = body.slice(at.end)
  const last = city.at(-1) ?? ''
  // the last word spelled out (GROVE, not GRV): it is the word a street line would abbreviate, and a
  // second pass, which sees the abbreviation when nothing was split, decides the same way
  const abbreviation = SUFFIXES.get(last) ?? DIRECTIONALS.get(last)
  if (city.length < 2 || abbreviation === undefined || abbreviation === last) return undefined
  if (city.every((t) => DIRECTIONALS.has(t) || SUFFIXES.has(t))) return undefined
  // a unit's designator is in no city ("OAKS DR UNIT NORTH": rule 1 passed it, its value was not one)
  if (city.some((t) => t === '#' || RANGED_UNITS.has(t) || ALONE_UNITS.has(t))) return undefined
  return [[...body.slice(0, at.end), ...(unit ?? [])], city]
}

/** A unit with a number at the end of a run of words ("# 140", "UNIT 140", "APT # 5"), or undefined. */
export function trailingUnit(words: readonly string[]): string[] | undefined {
  const n = words.length
  const v = words[n - 1]
  if (v === undefined || !/\d/.test(v) || v === '#') return undefined
  const d = words[n - 2]
  if (d === '#' && RANGED_UNITS.has(words[n - 3] ?? '')) return words.slice(n - 3)
  return d !== undefined && (d === '#' || RANGED_UNITS.has(d)) ? words.slice(n - 2) : undefined
}

/**
 * `words`: the tokens of an address with no comma. Returns the comma parts it stands for (street, city,
 * [ST, ZIP]), or `[words]` unchanged when its tail is not a state and a ZIP.
 *
 * @example splitWithoutCommas('3526 HIGH ST SACRAMENTO CA 95838'.split(' '))
 *   // [['3526', 'HIGH', 'ST'], ['SACRAMENTO'], ['CA', '95838']]
 */
export function splitWithoutCommas(
  typed: string[],
  places: PlaceNames = shippedPlaces,
  /** The state of the county looked in, for an address that names none (standardise.ts). */
  countyState?: string,
): string[][] {
  // "... CA 95758 # 140": a unit after the ZIP belongs to the street line
  const after = trailingUnit(typed)
  if (after && ZIP.test(typed[typed.length - after.length - 1] ?? '')) {
    const split = splitWithoutCommas(typed.slice(0, -after.length), places, countyState)
    return split.length > 1 ? [[...split[0]!, ...after], ...split.slice(1)] : [typed]
  }
  const words = meaningfulHashes(typed)
  // the tail is read without any "#" (a "#" before the ZIP says nothing once it is sent)
  const plain = words.filter((t) => t !== '#')
  const zip = plain.at(-1)
  if (zip === undefined || !ZIP.test(zip)) {
    // "12 ocean view ave san jose ca": a state without a ZIP, split only where a place of it ends the line
    const byPlace = splitAtStateWithoutZip(words, places)
    if (byPlace) return byPlace
    // a "#" with its value is written UNIT here, where it may stay inside the line: dropped, it would let
    // a second pass read the words differently (standardising twice must change nothing)
    const units = meaningfulHashes(typed).map((t, i, xs) => (t === '#' && !RANGED_UNITS.has(xs[i - 1] ?? '') ? 'UNIT' : t)) // prettier-ignore
    // no state typed: the county's places, when the caller knows its state ("1 broadway sacramento")
    const at = countyState === undefined ? undefined : cityStart(units, countyState, places)
    if (at !== undefined && at < units.length) return [units.slice(0, at), units.slice(at)]
    return splitCityWithoutTail(units) ?? [units]
  }
  const state = stateAtEnd(plain.slice(0, -1))
  if (!state) return [typed]
  const tailWords = state.words + 1
  const body = beforeTail(words, tailWords)
  if (body.filter((t) => t !== '#').length < 2) return [typed]
  const atPlace = cityStart(body, state.code, places)
  if (atPlace !== undefined) return [body.slice(0, atPlace), body.slice(atPlace), [state.code, zip]]
  const end = streetEnd(body)
  if (end === undefined) return state.spelled ? [typed] : [body, [state.code, zip]]
  const city = body.slice(end)
  // a state's name right after the street may be the city ("1 MAIN ST NEW YORK 10001"): the street is
  // split off, the rest kept as typed in a part of its own
  if (state.spelled && city.length === 0) return [body, plain.slice(plain.length - tailWords)]
  return [body.slice(0, end), ...(city.length ? [city] : []), [state.code, zip]]
}

/** `words` without their last `tailWords` words that are not "#" (the state and ZIP). */
function beforeTail(words: readonly string[], tailWords: number): string[] {
  let start = words.length
  for (let seen = 0; seen < tailWords && start > 0;) if (words[--start] !== '#') seen++
  return words.slice(0, start)
}

/**
 * Where the city starts in `body` (the words before the state), by the state's place names (places.ts,
 * the Census places), or undefined when no listed place ends it. The longest listed name that ends the
 * words is the city, before any suffix rule: "100 BROADWAY NEW YORK" (no suffix), "12 MAIN MOUNTLAKE
 * TERRACE" (TERRACE is a suffix), "5 LAKE FOREST PARK DR LAKE FOREST PARK". The street keeps a house number
 * or a name word and a name word ("100 E BROADWAY" is not street "100 E", city BROADWAY). When the
 * street's sure end (a unit with its value, a common suffix) comes before the listed name, the words
 * between stay with the city, as without the list ("MAIN ST NORTH SACRAMENTO": NORTH SACRAMENTO).
 */
export function cityStart(body: readonly string[], state: string, places: PlaceNames): number | undefined {
  const names = places(state)
  const n = names ? placeAtEnd(body, names, 2) : 0
  if (n === 0) return undefined
  const at = body.length - n
  const street = body.slice(0, at).filter((t) => t !== '#')
  const nameWord = (t: string) => !/^\d/.test(t) && !DIRECTIONALS.has(t) && !RANGED_UNITS.has(t)
  if (street.length < 2 || !street.some(nameWord)) return undefined
  const sure = streetEndBy(body)
  return sure && sure.by !== 'other' && sure.end <= at ? sure.end : at
}

/**
 * "12 OCEAN VIEW AVE SAN JOSE CA", "100 BROADWAY NEW YORK NY": a state at the end without a ZIP is split
 * off, with the city, only when a place of that state ends the words before it (cityStart): a two-letter
 * word at the end may be a suffix ("100 OAK CT") and a state's name a city ("12 MAIN ST NEW YORK").
 */
function splitAtStateWithoutZip(words: readonly string[], places: PlaceNames): string[][] | undefined {
  const state = stateAtEnd(words.filter((t) => t !== '#'))
  if (!state) return undefined
  const body = beforeTail(words, state.words)
  const at = cityStart(body, state.code, places)
  return at === undefined || at === body.length
    ? undefined
    : [body.slice(0, at), body.slice(at), [state.code]]
}

/**
 * Drop each "#" that no unit value follows: it is dropped when sent, so a second pass would not see it,
 * and every decision here must be the one the second pass makes (standardising twice changes nothing).
 */
export function meaningfulHashes(words: readonly string[]): string[] {
  return words.filter((t, i) => t !== '#' || unitValue(words[i + 1]))
}
