import {COUNTY_ROWS} from './counties-data.js'
import {STATE_BY_ABBREVIATION, stateAtEnd} from './states.js'
import {distance} from '../text/distance.js'

/**
 * The US counties table (generated from FHFA's public-domain county list by scripts/gen-counties.mjs):
 * `--fips` is checked against it before sending, `--county "Sacramento, CA"` resolves through it, and
 * `sfl counties` searches it. Pure; the table is parsed on first use.
 */
export interface County {
  fips: string
  state: string
  /** "Sacramento County", "Baltimore City", "Anchorage Municipality". */
  name: string
}

export type CountyResolution = {fips: string; county: County} | {error: string; suggestions: County[]}

/** Candidates listed in one error line at most. */
const MAX_CANDIDATES = 10

let table: County[] | undefined
let byFips: Map<string, County> | undefined

export function allCounties(): readonly County[] {
  if (!table) {
    table = COUNTY_ROWS.split('\n').map(row)
    byFips = new Map(table.map((c) => [c.fips, c]))
  }
  return table
}

export function countyByFips(fips: string): County | undefined {
  // one code before the table is parsed (a lookup's --fips): its line, not all 3,235 (2-3 ms of a start)
  return byFips ? byFips.get(fips) : countyLine(COUNTY_ROWS, fips)
}

/**
 * Pure: the county of a 5-digit code in the table's text (one county a line: code, tab, state, tab, name),
 * found without parsing the rest. A code starts a line and is followed by a tab, and no other field holds
 * a tab, so the search cannot match inside another line.
 */
export function countyLine(rows: string, fips: string): County | undefined {
  if (!/^\d{5}$/.test(fips)) return undefined
  const head = `${fips}\t`
  const at = rows.startsWith(head) ? 0 : rows.indexOf(`\n${head}`) + 1
  if (at === 0 && !rows.startsWith(head)) return undefined
  const end = rows.indexOf('\n', at)
  return row(end === -1 ? rows.slice(at) : rows.slice(at, end))
}

function row(line: string): County {
  const [fips, state, name] = line.split('\t') as [string, string, string]
  return {fips, state, name}
}

/** "Sacramento County, CA (06067)". */
export function describeCounty(c: County): string {
  return `${c.name}, ${c.state} (${c.fips})`
}

/** The kind words a county name ends with; "Sacramento" finds "Sacramento County". */
const KIND =
  /\s+(COUNTY|PARISH|BOROUGH|CENSUS AREA|CITY AND BOROUGH|MUNICIPALITY|MUNICIPIO|PLANNING REGION|ISLAND|DISTRICT|CITY)$/

function key(name: string): string {
  const k = name
    .toUpperCase()
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '') // "Doña Ana" finds "Dona Ana"
    .replace(/['’`]/g, '') // "Prince George's" is "Prince Georges"
    .replace(/[^A-Z0-9 ]/g, ' ')
    .replace(/\bSAINTE\b/g, 'STE') // "Sainte Genevieve" is "Ste. Genevieve"
    .replace(/\bSAINT\b/g, 'ST')
    .replace(/\s+/g, ' ')
    .trim()
  return kindLast(k)
}

/**
 * "County of Sacramento" → "Sacramento County", "Sacramento Co." → "Sacramento County", "Parish of
 * Orleans" → "Orleans Parish": the kind word where the table has it, wherever it was typed. On key()ed text.
 */
function kindLast(k: string): string {
  const m = /^(COUNTY|PARISH|BOROUGH) OF (.+)$/.exec(k)
  if (m) return `${m[2]} ${m[1]}`
  return k.replace(/ CO$/, ' COUNTY')
}

/**
 * Names people use for a county that the table spells otherwise: the five New York boroughs are counties
 * of other names, and counties renamed since (Census Bureau, "Substantial changes to counties"). Keyed by
 * the name without its kind word, with the state it belongs to.
 */
const ALIASES: ReadonlyMap<string, {fips: string; state: string; why: string}> = new Map([
  ['BROOKLYN', {fips: '36047', state: 'NY', why: 'Brooklyn is Kings County'}],
  ['MANHATTAN', {fips: '36061', state: 'NY', why: 'Manhattan is New York County'}],
  ['STATEN ISLAND', {fips: '36085', state: 'NY', why: 'Staten Island is Richmond County'}],
  ['THE BRONX', {fips: '36005', state: 'NY', why: 'the Bronx is Bronx County'}],
  ['DADE', {fips: '12086', state: 'FL', why: 'Dade County was renamed Miami-Dade County in 1997'}],
  ['SHANNON', {fips: '46102', state: 'SD', why: 'Shannon County was renamed Oglala Lakota County in 2015'}],
  ['WADE HAMPTON', {fips: '02158', state: 'AK', why: 'Wade Hampton Census Area was renamed Kusilvak Census Area in 2015'}], // prettier-ignore
])

/** The county an alias names, when the state (if given) is its own. */
function alias(name: string, state: string | undefined): County | undefined {
  // "Staten Island": ISLAND is also a kind word of the table's names, so the whole name is tried first
  const a = ALIASES.get(key(name)) ?? ALIASES.get(base(name))
  return a && (state === undefined || state === a.state) ? countyByFips(a.fips) : undefined
}
const base = (name: string) => key(name).replace(KIND, '')

/**
 * "Sacramento, CA", "sacramento county ca", "Baltimore City, MD", "Yolo County, California" → name and
 * state parts. A state's name counts only after a county name ("Washington" alone is a county's name).
 */
function parse(text: string): {name: string; state?: string} {
  const t = text.trim()
  const m = /^(.*?)(?:,\s*|\s+)([A-Za-z]{2}|[A-Za-z]\.\s*[A-Za-z]\.?)$/.exec(t)
  const code = m?.[2]?.replace(/[.\s]/g, '').toUpperCase()
  if (m && m[1] && code && allCounties().some((c) => c.state === code)) return {name: m[1], state: code}
  const words = key(t).split(' ')
  const named = stateAtEnd(words)
  if (named?.spelled && named.words < words.length && allCounties().some((c) => c.state === named.code))
    return {name: words.slice(0, words.length - named.words).join(' '), state: named.code}
  // "Sacramento, Calif", "Dade County, Fla.", "Erie, Penn": an older abbreviation after a comma or a space
  const old = STATE_BY_ABBREVIATION.get(words.at(-1) ?? '')
  if (old !== undefined && words.length > 1) return {name: t.replace(/[\s,]+[A-Za-z.]+$/, ''), state: old}
  return {name: t}
}

/**
 * Near misses, at most five: first the names that hold every word typed ("Miami" → Miami-Dade), then the
 * closest by edit distance; in the state given, if one was.
 */
function nearMisses(name: string, state: string | undefined): County[] {
  const want = base(name)
  const pool = allCounties().filter((c) => state === undefined || c.state === state)
  const words = want.split(' ').filter((w) => w.length >= 3)
  const holding =
    words.length === 0 ? [] : pool.filter((c) => words.every((w) => base(c.name).split(' ').includes(w)))
  const scored = pool
    .filter((c) => !holding.includes(c))
    .map((c) => ({c, d: distance(want, base(c.name))}))
    .filter((x) => x.d <= Math.max(2, Math.floor(want.length / 3)))
    .sort((a, b) => a.d - b.d || a.c.fips.localeCompare(b.c.fips))
  return [...holding, ...scored.map((x) => x.c)].slice(0, 5)
}

/**
 * Resolve what a person types to one county: a FIPS code, or a name with or without its state
 * ("Sacramento, CA", "Sacramento County CA", "Baltimore City, MD"). An unknown or ambiguous name gives an
 * error with suggestions (did-you-mean for near misses, every candidate for an ambiguous name).
 *
 * @example resolveCounty('Sacramento, CA') // {fips: '06067', county: {...}}
 */
export function resolveCounty(text: string): CountyResolution {
  const t = text.trim()
  if (/^\d{5}$/.test(t)) {
    const c = countyByFips(t)
    if (c) return {fips: c.fips, county: c}
    const sameState = allCounties().filter((x) => x.fips.startsWith(t.slice(0, 2)))
    return {
      error: `no US county has the FIPS code ${t} (FHFA county list)`,
      suggestions: sameState.length ? nearFips(t, sameState) : [],
    }
  }
  if (t === '') return {error: 'no county given', suggestions: []}
  const {name, state} = parse(t)
  const known = alias(name, state)
  if (known) return {fips: known.fips, county: known}
  const pool = allCounties().filter((c) => state === undefined || c.state === state)
  const exact = pool.filter((c) => key(c.name) === key(name))
  if (exact.length === 1) return {fips: exact[0]!.fips, county: exact[0]!}
  const want = base(name)
  const byBase = exact.length ? exact : pool.filter((c) => base(c.name) === want)
  // without a state, a name that is also the start of others ("sac": Sac County, IA and Sacramento) is
  // never a silent pick; with one, the user was specific
  const longer = want === '' ? [] : pool.filter((c) => base(c.name) !== want && base(c.name).startsWith(want))
  if (byBase.length === 1 && (state !== undefined || longer.length === 0))
    return {fips: byBase[0]!.fips, county: byBase[0]!}
  const where = state ? ` in ${state}` : ''
  const addState = state ? '' : ' (add the state: "Name, ST")'
  const candidates = [...byBase, ...longer]
  const listed = candidates.slice(0, MAX_CANDIDATES)
  const more =
    candidates.length > listed.length
      ? ` (${listed.length} shown; \`sfl counties ${name.trim()}\` lists all)`
      : ''
  if (byBase.length > 1 && longer.length === 0)
    return {
      error: `"${t}" names ${byBase.length} counties${where}; say which${addState}${more}`,
      suggestions: listed,
    }
  if (byBase.length >= 1)
    return {
      error: `"${t}" is the name of ${byBase.length === 1 ? 'a county' : `${byBase.length} counties`} and the start of ${longer.length} more${where}; say which${addState}${more}`,
      suggestions: listed,
    }
  if (longer.length > 1)
    return {
      error: `"${t}" is the start of ${longer.length} county names${where}; say which${addState}${more}`,
      suggestions: listed,
    }
  // the start of one name only: still not what was typed, so it is suggested, not picked
  const near = longer.length ? longer : nearMisses(name, state)
  return {error: `no county named "${name.trim()}"${where}`, suggestions: near}
}

/** The codes of the same state nearest in number: "06999" → 06115, 06113, … */
function nearFips(fips: string, sameState: County[]): County[] {
  const n = Number(fips)
  return [...sameState]
    .sort((a, b) => Math.abs(Number(a.fips) - n) - Math.abs(Number(b.fips) - n))
    .slice(0, 3)
}

/** One line for an unresolved county: the error, then "did you mean …?". */
export function explainResolution(r: {error: string; suggestions: County[]}): string {
  if (r.suggestions.length === 0) return `${r.error}; search with \`sfl counties NAME\``
  const list = r.suggestions.map(describeCounty).join('; ')
  return `${r.error}; did you mean ${list}?`
}

/** `sfl counties SEARCH`: a FIPS code, a name, or part of one; near misses when nothing contains it. */
export function searchCounties(text: string): {matches: County[]; didYouMean: County[]} {
  const t = text.trim()
  if (/^\d{2,5}$/.test(t)) return {matches: allCounties().filter((c) => c.fips.startsWith(t)), didYouMean: []}
  const {name, state} = parse(t)
  const want = key(name)
  const named = alias(name, state)
  const matches = allCounties().filter(
    (c) =>
      (state === undefined || c.state === state) &&
      (want === '' || key(c.name).includes(want) || c === named),
  )
  return {matches, didYouMean: matches.length ? [] : nearMisses(name, state)}
}
