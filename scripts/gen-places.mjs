#!/usr/bin/env node
// Generates src/address/places.txt, the per-state list of place names that lets the split of an address
// typed without commas find where the city starts ("100 broadway new york ny 10007" → "100 BROADWAY, NEW
// YORK, NY 10007"; docs/lookup.md, "Addresses without commas").
//
// Sources, both works of the US government and so in the public domain:
// - names: US Census Bureau, Gazetteer Files, places (the national places file, tab-separated, one row per
//   incorporated place and census-designated place: USPS state code, GEOID, ANSICODE, NAME, ...). Read as
//   published (Latin-1), or as the copy in camillol/cs424p3 (data/Gaz_places_national.csv);
// - the cut: US Census Bureau, City and Town Population Totals 2010-2019 (sub-est2019_all.csv: SUMLEV,
//   STATE, COUNTY, PLACE, ..., POPESTIMATE2019), rows of summary level 162 (incorporated places). Read as
//   published, or as the copy in KrystalDodd/Project_one (sub-est2019_all.csv, those rows only).
//
// The cut: an incorporated place (city, town, village, borough) with 2,500 people or more in the 2019
// estimate, the Census Bureau's long-standing threshold of an urban place, and the balance of each
// consolidated city (Indianapolis, Nashville, Louisville, Augusta...: the estimates give them no row of
// level 162). Census-designated places are not in the estimates and are left out (but Urban Honolulu, which
// they list), as are places dissolved or renamed before 2019, Puerto Rico (estimated apart), and places
// incorporated after the Gazetteer's edition (early 2010s):
// about 6,800 names of 29,500, 26 KB of the packed package where all would cost 104 KB (the package has a
// 1 MB ceiling). A city the list lacks is split as before, by the street's suffix (src/address/split-tail.ts).
//
// Names: upper case, accents and periods removed ("St. Louis" → "ST LOUIS", "Cataño" → "CATANO"), the
// legal description dropped ("Sacramento city" → "SACRAMENTO"); "San Buenaventura (Ventura)" gives both
// names; a consolidated government's first name is kept too ("Nashville-Davidson metropolitan government
// (balance)" → "NASHVILLE DAVIDSON" and "NASHVILLE"); written in the form sfl compares names in (hyphens
// as spaces, SAINT as ST, FT as FORT, MT as MOUNT: placeKey in src/address/places.ts).
//
// Format: comment lines (#), then one line a state, `ST:` and its names sorted, separated by `|`; a name
// that shares its first k letters (1-26) with the name before it starts with the k-th lower-case letter and
// holds only the rest ("ELK GROVE|jVILLAGE" is ELK GROVE, ELK GROVE VILLAGE).
//
// Rerun: node scripts/gen-places.mjs path/to/Gaz_places_national.txt path/to/sub-est2019_all.csv [out.txt]
// (test/address/places.test.ts runs it on test/fixtures/gaz-places-sample.txt and sub-est2019-sample.csv)
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const [gazetteer, estimates] = process.argv.slice(2)
const OUT = process.argv[4] ?? join(ROOT, 'src', 'address', 'places.txt')
const MIN_PEOPLE = 2500

for (const [what, path] of [
  ["the Census Bureau's Gazetteer places file", gazetteer],
  ["the Census Bureau's sub-est2019_all.csv", estimates],
])
  if (!path || !existsSync(path)) {
    console.error(`gen-places: pass the path of ${what}${path ? ` (${path} is not here)` : ''}`)
    process.exit(1)
  }

/** A file's lines: UTF-8 when it decodes as such, else Latin-1 (the Census files before 2020). */
function lines(path) {
  const bytes = readFileSync(path)
  const utf8 = new TextDecoder('utf-8', {fatal: false}).decode(bytes)
  const text = utf8.includes('\uFFFD') ? bytes.toString('latin1') : utf8
  return text.replace(/^\uFEFF/, '').split(/\r?\n/)
}

function columns(header, names, sep, path) {
  const h = header.split(sep)
  return names.map((n) => {
    const i = h.findIndex((x) => x.trim() === n || (n === 'USPS' && x.trim() === 'STUSPS'))
    if (i < 0) throw new Error(`gen-places: no ${n} column in ${path}`)
    return i
  })
}

/** GEOID (state and place codes, 7 digits) → 2019 population estimate of an incorporated place. */
const people = new Map()
{
  const [head, ...rows] = lines(estimates)
  const [SUMLEV, STATE, PLACE, POP] = columns(
    head,
    ['SUMLEV', 'STATE', 'PLACE', 'POPESTIMATE2019'],
    ',',
    estimates,
  )
  for (const row of rows) {
    if (row.trim() === '') continue
    const f = row.split(',')
    if (Number(f[SUMLEV]) !== 162) continue
    const geoid = `${f[STATE].padStart(2, '0')}${f[PLACE].padStart(5, '0')}`
    if (!/^\d{7}$/.test(geoid) || !/^\d+$/.test(f[POP])) throw new Error(`gen-places: unexpected row: ${row}`)
    people.set(geoid, Number(f[POP]))
  }
}

const LEGAL =
  / (city and borough|(consolidated|metropolitan|metro|unified) government|urban county|zona urbana|comunidad|municipality|borough|village|town|city|CDP|plantation|corporation)$/i

/** The names an address may use for a Gazetteer NAME. */
function placeNames(name) {
  let n = name.replace(/^"|"$/g, '').trim()
  const balance = / \(balance\)$/.test(n)
  n = n.replace(/ \(balance\)$/, '').replace(LEGAL, '')
  const out = []
  const paren = /^(.*) \((.*)\)$/.exec(n)
  if (paren) out.push(paren[1], paren[2])
  else out.push(n)
  // "Louisville/Jefferson County", "Nashville-Davidson", "Lynchburg, Moore County": the city's own name too
  if (balance || /[/,]/.test(n) || / County$/.test(n)) out.push(n.split(/[/,-]/)[0])
  // "Urban Honolulu CDP", the one CDP the estimates list (Honolulu has no incorporated city): HONOLULU
  if (/^Urban /.test(n)) out.push(n.slice('Urban '.length))
  return [...new Set(out.map(plain).filter((x) => /^[A-Z0-9][A-Z0-9 ]*$/.test(x)))]
}

/**
 * The form sfl compares names in (src/address/places.ts placeKey): upper case, no accents, no periods or
 * apostrophes, hyphens as spaces, SAINT as ST, SAINTE as STE, FT as FORT, MT as MOUNT, single spaces.
 */
const KEY_WORDS = new Map([
  ['SAINT', 'ST'],
  ['SAINTE', 'STE'],
  ['FT', 'FORT'],
  ['MT', 'MOUNT'],
])
function plain(name) {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .replace(/[.'’]/g, '')
    .replace(/-/g, ' ')
    .split(/\s+/)
    .filter((w) => w !== '')
    .map((w) => KEY_WORDS.get(w) ?? w)
    .join(' ')
}

const byState = new Map()
let kept = 0
let seen = 0
{
  const [head, ...rows] = lines(gazetteer)
  const [USPS, GEOID, NAME] = columns(head, ['USPS', 'GEOID', 'NAME'], '\t', gazetteer)
  for (const row of rows) {
    if (row.trim() === '') continue
    const f = row.split('\t')
    if (!/^[A-Z]{2}$/.test(f[USPS]) || !/^\d{7}$/.test(f[GEOID]))
      throw new Error(`gen-places: unexpected row: ${row}`)
    seen++
    // a consolidated city's balance (Indianapolis, Nashville, Louisville...) has no row of level 162
    const balance = / \(balance\)"?$/.test(f[NAME])
    if (!balance && !((people.get(f[GEOID]) ?? 0) >= MIN_PEOPLE)) continue
    const names = placeNames(f[NAME])
    if (names.length === 0) continue
    kept++
    const set = byState.get(f[USPS]) ?? new Set()
    for (const n of names) set.add(n)
    byState.set(f[USPS], set)
  }
}

const PREFIX = 'abcdefghijklmnopqrstuvwxyz'
/** Names sorted, each after the first written without the letters it shares with the one before. */
function frontCoded(names) {
  let prev = ''
  return [...names]
    .sort()
    .map((n) => {
      let k = 0
      while (k < PREFIX.length && k < prev.length && k < n.length - 1 && prev[k] === n[k]) k++
      prev = n
      return k ? `${PREFIX[k - 1]}${n.slice(k)}` : n
    })
    .join('|')
}

const states = [...byState.keys()].sort()
const count = states.reduce((a, s) => a + byState.get(s).size, 0)
const text = `# Generated by scripts/gen-places.mjs: do not edit. ${count} names of ${kept} places, ${states.length} states.
# Sources (public domain): US Census Bureau, Gazetteer Files, places (names); City and Town Population
# Totals 2010-2019, sub-est2019_all.csv (the cut). Kept: incorporated places of ${MIN_PEOPLE} people or more
# in the 2019 estimate, and consolidated cities' balances; census-designated places are left out.
# Lines: ST:names (the format is described in the script).
${states.map((s) => `${s}:${frontCoded(byState.get(s))}`).join('\n')}
`
writeFileSync(OUT, text)
console.log(
  `gen-places: wrote ${count} names of ${kept} places (of ${seen}) in ${states.length} states to ${OUT}`,
)
