import {
  CORE_FIELDS,
  FIELD_TYPES,
  OPTION_FIELD_TYPES,
  OPTION_NAMES,
  type OptionName,
  type SpecType,
} from '../api/spec.js'
import type {FlatRecord, FlatValue} from '../io/export-reader.js'

/**
 * A record read back from an export on disk (`--from`: src/io/export-reader.ts gives it flat, as the CSV
 * header names its columns) in the shape a lookup answers with: option fields (`AssumableMortgage.LoanType`)
 * in their object again (spec 2.2, 2.3), and, from a file of a column per field (`columnar`: CSV, whose
 * cells are text, and Parquet), each text value of a spec field in the spec's type: numbers as numbers
 * ("148800.0" is 148800, as a lookup's record reads), `true` and `false` as booleans. A value that is not of
 * its field's type stays as written, and a field the spec does not know stays as read. A column cannot say
 * whether a field was null or absent: an empty cell of a standard field (spec 2.1's full example) is null,
 * of any other field (those whose presence the spec leaves "not shown", unknown ones) absent, as the
 * service sends them. An option whose every cell is empty
 * is null (spec 2.2 rule 3, 2.3 rule 2: the key has the option, the property has no detail). An NDJSON or
 * JSON export holds the records as sent: their values are kept as they are. Pure.
 */
export function recordFromFlat(flat: FlatRecord, columnar: boolean): Record<string, unknown> {
  // no prototype: a field named __proto__ (a record may hold one) stays a field
  const out = Object.create(null) as Record<string, unknown>
  const options = new Map<OptionName, Record<string, unknown>>()
  for (const name in flat) {
    const v = flat[name]!
    const dot = name.indexOf('.')
    const opt = dot === -1 ? undefined : (name.slice(0, dot) as OptionName)
    if (opt !== undefined && (OPTION_NAMES as readonly string[]).includes(opt)) {
      const sub = name.slice(dot + 1)
      let o = options.get(opt)
      if (!o) options.set(opt, (o = Object.create(null) as Record<string, unknown>))
      o[sub] = columnar ? typed(v, OPTION_FIELD_TYPES[opt][sub]) : v
      if (!(opt in out)) out[opt] = null // its place among the fields, filled below
      continue
    }
    if (columnar && v === null && !CORE.has(name)) continue
    out[name] = columnar ? typed(v, FIELD_TYPES[name]) : v
  }
  for (const [opt, o] of options) out[opt] = Object.values(o).every((v) => v === null) ? null : o
  return out
}

const CORE: ReadonlySet<string> = new Set(CORE_FIELDS)
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/

/** A text cell as the spec's type reads it; anything that is not of the type stays as written. */
function typed(v: FlatValue, type: SpecType | undefined): FlatValue {
  if (typeof v !== 'string') return v
  if (v === '') return null
  if (type === 'boolean') return v === 'true' ? true : v === 'false' ? false : v
  if ((type === 'float' || type === 'int' || type === 'bigint') && NUMBER.test(v)) {
    const n = Number(v)
    return Number.isFinite(n) ? n : v
  }
  return v
}
