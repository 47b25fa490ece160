import {emptyFacts, FLAG_FIELDS, type RecordFacts} from './accumulator.js'

/**
 * The few facts the statistics need, read from a flat record (src/io/export-reader.ts, `sfl stats`; a
 * batch answer flattened the same way). An export reads the same facts where the walk found them
 * (src/pipeline/facts.ts), with the same meaning, so an export and `sfl stats` of its file agree: an
 * empty or null value is unknown, `true`/`false` are booleans (also as text), numbers are parsed from
 * their text.
 */

export type FlatValue = string | number | boolean | null

const LOAN_PREFIX = 'AssumableMortgage.'

/** Facts from a flat record keyed by CSV header names (src/io/export-reader.ts FlatRecord). */
export function factsOfFlat(rec: Record<string, FlatValue | undefined>, into = emptyFacts()): RecordFacts {
  FLAG_FIELDS.forEach((name, i) => (into.flags[i] = boolOf(rec[name])))
  into.cra = textOf(rec['CRAEligible'])
  into.finalValue = numberOf(rec['FinalValue'])
  into.confidence = numberOf(rec['ConfidenceScore'])
  let loan = false
  for (const k in rec) if (k.startsWith(LOAN_PREFIX) && rec[k] !== null && rec[k] !== '') loan = true
  into.loan = loan
  into.loanType = loan ? textOf(rec[`${LOAN_PREFIX}LoanType`]) : null
  into.rate = loan ? numberOf(rec[`${LOAN_PREFIX}EstimatedInterestRate`]) : undefined
  into.equity = loan ? numberOf(rec[`${LOAN_PREFIX}EstimatedEquity`]) : undefined
  return into
}

function bool(cell: string): boolean | null {
  return cell === 'true' ? true : cell === 'false' ? false : null
}

export function boolOf(v: FlatValue | undefined): boolean | null {
  return typeof v === 'boolean' ? v : typeof v === 'string' ? bool(v) : null
}

export function textOf(v: FlatValue | undefined): string | null {
  if (v === null || v === undefined || v === '') return null
  return typeof v === 'string' ? v : String(v)
}

export function numberOf(v: FlatValue | undefined): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined
  return typeof v === 'string' ? number(v) : undefined
}

/** Strict: blank text is no number (Number('') would be 0). */
function number(t: string): number | undefined {
  if (t.trim() === '') return undefined
  const n = Number(t)
  return Number.isFinite(n) ? n : undefined
}
