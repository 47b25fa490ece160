import {basename, dirname} from 'node:path'
import {fileURLToPath} from 'node:url'

import {readDataTable} from './data-table.js'
import {PLACES_FILE} from './places-file.js'

/**
 * The place names of each state (scripts/gen-places.mjs: the Census Bureau's Gazetteer places, incorporated
 * places of 2,500 people or more), for splitting an address typed without commas where its city starts
 * (split-tail.ts, docs/lookup.md "Addresses without commas"). Read from places.txt the first time an
 * address needs it, never at start-up.
 */
export type PlaceNames = (state: string) => ReadonlySet<string> | undefined

/** Pure: the generated file's text (comment lines, then `ST:names` lines) as a map of state to names. */
export function placesFromText(text: string): Map<string, Set<string>> {
  return new Map([...stateLines(text)].map(([state, names]) => [state, decodeState(state, names)]))
}

/** Pure: each state's line of the file, not yet decoded (a lookup decodes only its own state's). */
export function stateLines(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([A-Z]{2}):(.+)$/.exec(line)
    if (!m) throw new Error(`places.txt: expected "ST:names", got ${JSON.stringify(line.slice(0, 40))}`)
    out.set(m[1]!, m[2]!)
  }
  return out
}

/**
 * Pure: one state's front-coded names as a set. The generator writes each name in its compared form
 * (placeKey: no hyphens, ST, FORT, MOUNT), so decoding is only the front coding (a test checks every
 * shipped name is its own key).
 */
export function decodeState(state: string, line: string): Set<string> {
  const names = new Set<string>()
  let prev = ''
  for (const entry of line.split('|')) {
    // a lower-case letter first: the name shares that many letters (a = 1) with the one before
    const k = /^[a-z]/.test(entry) ? entry.charCodeAt(0) - 96 : 0
    const name = k ? prev.slice(0, k) + entry.slice(1) : entry
    if ((k && prev.length < k) || !/^[A-Z0-9][A-Z0-9 ]*$/.test(name))
      throw new Error(`places.txt: a bad name in ${state} after ${JSON.stringify(prev)}`)
    names.add(name)
    prev = name
  }
  return names
}

/**
 * The form names are compared in, typed or listed: hyphens as spaces ("WINSTON SALEM"), SAINT as ST,
 * FT as FORT and MT as MOUNT ("SAINT LOUIS" is "ST LOUIS", "FT WORTH" is "FORT WORTH"), accents dropped.
 */
export function placeKey(words: string): string {
  return words
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/-/g, ' ')
    .split(' ')
    .filter((w) => w !== '')
    .map((w) => KEY_WORDS.get(w) ?? w)
    .join(' ')
}
const KEY_WORDS = new Map([
  ['SAINT', 'ST'],
  ['SAINTE', 'STE'],
  ['FT', 'FORT'],
  ['MT', 'MOUNT'],
])

/** Most words in a listed name: how far back a match looks. */
const MAX_WORDS = 6

/**
 * Pure: how many of the last words of `words` (upper-case tokens) are the longest place name of `state`
 * that ends them, leaving at least `keep` words before it; 0 when none is.
 *
 * @example placeAtEnd(['100', 'BROADWAY', 'NEW', 'YORK'], new Set(['NEW YORK', 'YORK']), 2) // 2
 */
export function placeAtEnd(words: readonly string[], names: ReadonlySet<string>, keep: number): number {
  for (let n = Math.min(MAX_WORDS, words.length - keep); n >= 1; n--)
    if (names.has(placeKey(words.slice(words.length - n).join(' ')))) return n
  return 0
}

let shipped: Map<string, string> | undefined
const decoded = new Map<string, Set<string>>()

/**
 * The shipped list: the file read at the first call, a state's names decoded at the first call for that
 * state (about 1 ms). Throws when the package lacks its data file.
 */
export const shippedPlaces: PlaceNames = (state) => {
  // the one read-once loader of shipped tables (data-table.ts), from the folder the path module names
  const path = typeof PLACES_FILE === 'string' ? PLACES_FILE : fileURLToPath(PLACES_FILE)
  shipped ??= readDataTable([dirname(path)], basename(path), 'place list', stateLines)
  let names = decoded.get(state)
  const line = shipped.get(state)
  if (!names && line !== undefined) decoded.set(state, (names = decodeState(state, line)))
  return names
}
