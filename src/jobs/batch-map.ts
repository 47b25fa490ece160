import {closest} from '../text/distance.js'
import {UsageError} from '../errors.js'

/**
 * Which input columns feed each lookup field of a batch: `--map` names them, otherwise a column
 * named after the field (ignoring case, spaces and dashes) is used. Pure, so the rules are tested apart.
 */
export const LOOKUP_FIELDS = ['address', 'apn', 'property_id', 'fips'] as const
export type LookupField = (typeof LOOKUP_FIELDS)[number]

/** `--map` as typed: each lookup field with the column names given for it, in order. */
export type ColumnMap = Partial<Record<LookupField, string[]>>

/** The input columns (header names exactly as in the file) that feed each lookup field. */
export interface Sources {
  /** Joined into one address line in this order (one column when not mapped). */
  address?: string[]
  apn?: string
  property_id?: string
  fips?: string
}

const EXAMPLE = 'e.g. --map address=street,city,state,zip --map fips=county'

/** A header name as a lookup field would be spelled: `Property ID` and `property-id` are `property_id`. */
export function canonicalColumn(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_')
}

/**
 * Parse the `--map` values. The flag is repeatable, and one value may also hold several fields as a comma
 * list (`address=street,city,fips=county`): a token with `=` starts a field, tokens without it add columns to
 * the field before them. So a mapped column name cannot contain a comma or `=`.
 */
export function parseMap(values: readonly string[]): ColumnMap {
  const map: ColumnMap = {}
  for (const value of values) {
    let field: LookupField | undefined
    for (const raw of value.split(',')) {
      const token = raw.trim()
      const eq = token.indexOf('=')
      if (eq === -1) {
        if (field === undefined) throw new UsageError(`--map "${value}": expected FIELD=COLUMN, ${EXAMPLE}`)
        if (token === '') throw new UsageError(`--map "${value}": an empty column name; ${EXAMPLE}`)
        map[field]!.push(token)
        continue
      }
      const name = canonicalColumn(token.slice(0, eq))
      if (!(LOOKUP_FIELDS as readonly string[]).includes(name))
        throw new UsageError(
          `--map "${value}": "${token.slice(0, eq).trim()}" is not a lookup field; map one of ${LOOKUP_FIELDS.join(', ')} (${EXAMPLE})`,
        )
      field = name as LookupField
      if (map[field]) throw new UsageError(`--map names ${field} twice; give its columns once`)
      const column = token.slice(eq + 1).trim()
      if (column === '') throw new UsageError(`--map "${value}": no column given for ${field}; ${EXAMPLE}`)
      map[field] = [column]
    }
  }
  for (const f of ['apn', 'property_id', 'fips'] as const) {
    const cols = map[f]
    if (cols && cols.length > 1)
      throw new UsageError(
        `--map ${f} takes one column (got ${cols.join(', ')}); only address joins several columns`,
      )
  }
  return map
}

/**
 * The map in a canonical form for the checkpoint's parameters, a rerun with another map is refused rather
 * than mixed with it; the columns as the header spells them (`sources`), so `--map fips=county` and
 * `--map fips=County` are the same run.
 */
export function mapParams(map: ColumnMap, sources: Sources): string[] {
  return LOOKUP_FIELDS.filter((f) => map[f] && sources[f]).map(
    (f) => `${f}=${[sources[f]!].flat().join(',')}`,
  )
}

/**
 * Resolve the sources of every lookup field against the input's columns (matched ignoring case). A mapped
 * column not in the input is a UsageError naming the nearest header name; an unmapped field is read from the
 * column named after it, when there is one.
 */
export function resolveSources(map: ColumnMap, columns: readonly string[], name: string): Sources {
  const find = (field: LookupField, wanted: string): string => {
    const exact = columns.find((c) => c === wanted)
    if (exact !== undefined) return exact
    const lower = wanted.toLowerCase()
    const same = columns.find((c) => c.toLowerCase() === lower)
    if (same !== undefined) return same
    const near = closest(
      lower,
      columns.map((c) => c.toLowerCase()),
    )
    const hint = near
      ? `did you mean "${columns.find((c) => c.toLowerCase() === near)!}"?`
      : `the columns are: ${columns.join(', ') || 'none'}`
    throw new UsageError(`--map ${field}: no column "${wanted}" in ${name}; ${hint}`)
  }
  const sources: Sources = {}
  for (const field of LOOKUP_FIELDS) {
    const mapped = map[field]
    let cols: string[]
    if (mapped) cols = mapped.map((c) => find(field, c))
    else {
      cols = columns.filter((c) => canonicalColumn(c) === field)
      // NDJSON keys may differ from line to line; two spellings of one field are ambiguous
      if (cols.length > 1)
        throw new UsageError(
          `${name}: the keys ${cols.map((c) => `"${c}"`).join(' and ')} both name ${field}; use one spelling, or pick one with --map ${field}=${cols[0]}`,
        )
    }
    if (cols.length === 0) continue
    if (field === 'address') sources.address = cols
    else sources[field] = cols[0]!
  }
  return sources
}

const ZIP = /^\d{5}(-?\d{4})?$/
/** A ZIP a spreadsheet read as a number: 02134 shown as 2134 (or written 2134.0 by a tool that made it a float). */
const ZIP_AS_NUMBER = /^(\d{3,4})(?:\.0+)?$/
const STATE = /^[A-Za-z]{2}$/

/**
 * One address line from its parts in the order mapped: "street, city, state zip", the form the USPS
 * standardiser and the service expect (spec 4, query parameter `address`: a full street address). Parts are
 * trimmed and empty ones skipped (a blank unit column); a ZIP follows the part before it after a space,
 * every other part after a comma. A part of 3 or 4 digits right after a two-letter state is a ZIP that lost
 * its leading zeros to a spreadsheet (New England, New Jersey and Puerto Rico ZIPs start with 0; USPS
 * Publication 28: a ZIP Code is 5 digits): it is padded back, and the `note` says so.
 */
export function joinAddress(parts: readonly string[]): {line: string; note?: string} {
  let line = ''
  let note: string | undefined
  let prev = ''
  for (const raw of parts) {
    let p = raw.trim()
    if (p === '') continue
    const lost = STATE.test(prev) ? ZIP_AS_NUMBER.exec(p) : null
    if (lost) {
      const zip = lost[1]!.padStart(5, '0')
      note = `zip ${p} read as ${zip} (leading zero restored)`
      p = zip
    }
    line += line === '' ? p : ZIP.test(p) ? ` ${p}` : `, ${p}`
    prev = p
  }
  return note === undefined ? {line} : {line, note}
}

/**
 * A county code that lost its leading zeros to a spreadsheet (Excel reads 06067 as the number 6067; pandas
 * writes a float column's 6067 as 6067.0): a value of 3 or 4 digits is padded to the 5 the spec requires
 * (spec 4 and 8 rule 4: fips is exactly 5 characters), and a whole number written with `.0` loses it.
 * Anything else is returned unchanged and the usual rule judges it.
 */
export function padFips(value: string): {fips: string; note?: string} {
  const m = /^(\d{3,5})(\.0+)?$/.exec(value)
  if (!m || (m[2] === undefined && m[1]!.length === 5)) return {fips: value}
  const fips = m[1]!.padStart(5, '0')
  const why = m[2] === undefined ? 'leading zero restored' : "a spreadsheet's number"
  return {fips, note: `fips ${value} read as ${fips} (${why})`}
}
