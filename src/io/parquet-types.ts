import {FIELD_TYPES, OPTION_FIELD_TYPES, type OptionName, type SpecType} from '../api/spec.js'
import type {Column} from '../model/columns.js'

/**
 * Parquet column types for the flattened export columns (the CSV's), from the types spec section 2
 * states. Every column is OPTIONAL: any field may be null or absent (spec 2: `?` types; an option's
 * columns are empty when the option is null, 2.2 rule 3 / 2.3 rule 2).
 */
export type ParquetType = 'STRING' | 'INT64' | 'INT32' | 'DOUBLE' | 'BOOLEAN' | 'DATE' | 'TIMESTAMP'

const BY_SPEC: Record<SpecType, ParquetType> = {
  varchar: 'STRING',
  bigint: 'INT64',
  int: 'INT32',
  float: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  datetime: 'TIMESTAMP',
}

/** The spec's type of a column, or undefined for a field the spec does not name (written as text). */
export function specType(column: Pick<Column, 'key' | 'sub'>): SpecType | undefined {
  if (column.sub === undefined)
    return Object.hasOwn(FIELD_TYPES, column.key) ? FIELD_TYPES[column.key] : undefined
  const fields = Object.hasOwn(OPTION_FIELD_TYPES, column.key)
    ? OPTION_FIELD_TYPES[column.key as OptionName]
    : undefined
  return fields && Object.hasOwn(fields, column.sub) ? fields[column.sub] : undefined
}

/**
 * The Parquet type of one flattened column: the spec's type mapped (varchar UTF8 string, bigint INT64,
 * int INT32, float DOUBLE, boolean BOOLEAN, date DATE, datetime TIMESTAMP in milliseconds, not adjusted
 * to UTC as spec 2.1 shapes it `YYYY-MM-DDTHH:MM:SS` without a zone); a field the spec does not name is
 * a string.
 *
 * @example parquetType({header: 'AssumableMortgage.TermMonths', key: 'AssumableMortgage', sub: 'TermMonths'}) // 'INT32'
 */
export function parquetType(column: Pick<Column, 'key' | 'sub'>): ParquetType {
  const t = specType(column)
  return t === undefined ? 'STRING' : BY_SPEC[t]
}

/** What a JSON value becomes in its column: the Parquet value, null, or `unfit` (the wrong type). */
export const UNFIT = Symbol('unfit')
export type ParquetValue = string | number | bigint | boolean | null

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
// spec 2.1 ValuationDate: YYYY-MM-DDTHH:MM:SS; fractions of a second kept to the millisecond
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?)?$/
const DAY_MS = 86_400_000

/** Milliseconds since 1970-01-01T00:00:00 of a zone-less date-time, or undefined if it is not one. */
function utcMillis(m: RegExpExecArray): number | undefined {
  const [y, mo, d, h = '0', mi = '0', s = '0', f = ''] = m.slice(1)
  const ms = Date.UTC(
    Number(y),
    Number(mo) - 1,
    Number(d),
    Number(h),
    Number(mi),
    Number(s),
    Number(f.padEnd(3, '0')),
  )
  const back = new Date(ms)
  // Date.UTC rolls 2024-02-30 over to March: such a date is not a date
  if (
    Number.isNaN(ms) ||
    back.getUTCFullYear() !== Number(y) ||
    back.getUTCMonth() !== Number(mo) - 1 ||
    back.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  )
    return undefined
  return ms
}

/**
 * One JSON value as its column's Parquet value. null and absent are null. A value of another type than
 * the spec's (FinalValue "abc", a ConfidenceScore of 12.5, a date that is not YYYY-MM-DD) is `UNFIT`: the
 * writer stores null and counts it, so nothing is silently changed. A STRING column takes strings as they
 * are and any other value as its JSON text (as the CSV shows it).
 */
export function toParquetValue(type: ParquetType, v: unknown): ParquetValue | typeof UNFIT {
  if (v === null || v === undefined) return null
  switch (type) {
    case 'STRING':
      return typeof v === 'string' ? v : JSON.stringify(v)
    case 'DOUBLE':
      // `1e400` parses as infinity: no double holds it (a spec violation the checks count); never stored
      return typeof v === 'number' && Number.isFinite(v) ? v : UNFIT
    case 'INT32':
      return typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31 ? v : UNFIT
    case 'INT64':
      return typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : UNFIT
    case 'BOOLEAN':
      return typeof v === 'boolean' ? v : UNFIT
    case 'DATE':
      return typeof v === 'string' ? remembered(dates, v, dateValue) : UNFIT
    case 'TIMESTAMP':
      return typeof v === 'string' ? remembered(timestamps, v, timestampValue) : UNFIT
  }
}

function dateValue(v: string): ParquetValue | typeof UNFIT {
  const m = DATE.exec(v)
  const ms = m ? utcMillis(m) : undefined
  return ms === undefined ? UNFIT : ms / DAY_MS
}

function timestampValue(v: string): ParquetValue | typeof UNFIT {
  const m = DATETIME.exec(v)
  const ms = m ? utcMillis(m) : undefined
  return ms === undefined ? UNFIT : BigInt(ms)
}

/**
 * Dates repeat across a county's records (one valuation date for thousands of properties, recording dates
 * by the day), and reading one (a regular expression, Date.UTC and its check) was 3% of a Parquet export's
 * CPU: each text is read once, up to a bound that keeps the memory small.
 */
const dates = new Map<string, ParquetValue | typeof UNFIT>()
const timestamps = new Map<string, ParquetValue | typeof UNFIT>()
const REMEMBERED = 20_000

function remembered(
  seen: Map<string, ParquetValue | typeof UNFIT>,
  v: string,
  read: (v: string) => ParquetValue | typeof UNFIT,
): ParquetValue | typeof UNFIT {
  let r = seen.get(v)
  if (r === undefined) {
    r = read(v)
    if (seen.size >= REMEMBERED) seen.clear()
    seen.set(v, r)
  }
  return r
}
