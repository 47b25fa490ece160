import {emptyFacts, FLAG_FIELDS, type RecordFacts} from './accumulator.js'

/**
 * The few facts the statistics need, read from a record in either of the forms the CLI holds one: a
 * tokenised row (names and CSV cells, src/io/row-format.ts, the export's hot path) or a flat record
 * (src/io/export-reader.ts, `sfl stats`; a batch answer flattened the same way). Both read a value the same
 * way, so a CSV and an NDJSON export of the same county give the same figures: an empty or null value is
 * unknown, `true`/`false` are booleans (also as text), numbers are parsed from their text, and a cell the
 * formula guard prefixed with `'` (OWASP CSV injection) is read without the prefix.
 */

/** The shape of src/io/row-format.ts FlatRow (not imported: src/stats is pure and depends on nothing). */
export interface TokenRow {
  names: string[]
  cells: string[]
  length: number
  /** Each entry's `statsTag(name)`, when the row was made with it (the fast path). */
  tags?: number[] | undefined
}

export type FlatValue = string | number | boolean | null

const FLAG = 0
const CRA = FLAG_FIELDS.length
const FINAL_VALUE = CRA + 1
const CONFIDENCE = CRA + 2
const LOAN_TYPE = CRA + 3
const RATE = CRA + 4
const EQUITY = CRA + 5
const SLOTS = EQUITY + 1
/** Any other AssumableMortgage member: only whether it is set matters (is there a loan). */
const LOAN_OTHER = SLOTS
const LOAN_PREFIX = 'AssumableMortgage.'

const SLOT_OF = new Map<string, number>([
  ...FLAG_FIELDS.map((f, i) => [f, FLAG + i] as [string, number]),
  ['CRAEligible', CRA],
  ['FinalValue', FINAL_VALUE],
  ['ConfidenceScore', CONFIDENCE],
  [`${LOAN_PREFIX}LoanType`, LOAN_TYPE],
  [`${LOAN_PREFIX}EstimatedInterestRate`, RATE],
  [`${LOAN_PREFIX}EstimatedEquity`, EQUITY],
])

/**
 * The tag of a column name for src/io/row-format.ts `newFlatRow(statsTag)`: worked out once per name, so
 * each record's wanted cells are found by a small-integer test per entry.
 */
export function statsTag(name: string): number {
  return SLOT_OF.get(name) ?? (name.startsWith(LOAN_PREFIX) ? LOAN_OTHER : -1)
}

/**
 * Facts from tokenised rows. The rows of one export share a few layouts and their names are the same
 * string objects record after record, so the positions of the ~11 wanted columns are looked up once per
 * layout (a pointer comparison of each name confirms the layout) and only those cells are read.
 */
export class TokenRowFacts {
  /** Layouts seen lately, the last used first: records of one export alternate between a few shapes. */
  private layouts: Layout[] = []
  private readonly facts = emptyFacts()

  /** `guarded`: the cells were written with the formula guard (CSV with escapeFormulas). */
  constructor(private readonly guarded: boolean) {}

  private readonly tagged = new Int32Array(SLOTS)

  read(row: TokenRow): RecordFacts {
    const {cells, tags} = row
    let at: Int32Array
    let loan = false
    if (tags) {
      at = this.tagged.fill(-1)
      for (let i = 0; i < row.length; i++) {
        const t = tags[i]!
        if (t < 0) continue
        if (t >= LOAN_TYPE) {
          if (cells[i] !== '') loan = true
          if (t === LOAN_OTHER) continue
        }
        at[t] = i
      }
    } else {
      const l = this.layoutOf(row)
      at = l.at
      for (const i of l.loanCells) if (cells[i] !== '') loan = true
    }
    const f = this.facts
    for (let i = 0; i < FLAG_FIELDS.length; i++) f.flags[i] = at[i]! < 0 ? null : bool(cells[at[i]!]!)
    f.cra = at[CRA]! < 0 ? null : this.text(cells[at[CRA]!]!)
    f.finalValue = at[FINAL_VALUE]! < 0 ? undefined : this.num(cells[at[FINAL_VALUE]!]!)
    f.confidence = at[CONFIDENCE]! < 0 ? undefined : this.num(cells[at[CONFIDENCE]!]!)
    f.loan = loan
    f.loanType = loan && at[LOAN_TYPE]! >= 0 ? this.text(cells[at[LOAN_TYPE]!]!) : null
    f.rate = loan && at[RATE]! >= 0 ? this.num(cells[at[RATE]!]!) : undefined
    f.equity = loan && at[EQUITY]! >= 0 ? this.num(cells[at[EQUITY]!]!) : undefined
    return f
  }

  private layoutOf(row: TokenRow): Layout {
    const layouts = this.layouts
    for (let k = 0; k < layouts.length; k++) {
      const l = layouts[k]!
      if (!sameNames(row, l.names)) continue
      if (k > 0) {
        layouts[k] = layouts[0]!
        layouts[0] = l
      }
      return l
    }
    const l = learn(row)
    layouts.unshift(l)
    if (layouts.length > MAX_LAYOUTS) layouts.pop()
    return l
  }

  /** A cell's text: CSV quotes removed (RFC 4180: `""` is one quote), the formula guard undone. */
  private text(cell: string): string | null {
    if (cell === '') return null
    let t = cell.charCodeAt(0) === 0x22 ? cell.slice(1, -1).replaceAll('""', '"') : cell
    if (this.guarded) t = unguard(t)
    return t
  }

  private num(cell: string): number | undefined {
    if (cell === '') return undefined
    const c = cell.charCodeAt(0)
    // the usual case: a JSON number's own text
    return number(c === 0x22 || c === 0x27 ? (this.text(cell) ?? '') : cell)
  }
}

interface Layout {
  names: string[]
  /** Slot -> the index of its cell, or -1. */
  at: Int32Array
  /** The cells of AssumableMortgage.* members. */
  loanCells: number[]
}

const MAX_LAYOUTS = 16

/** Pointer comparisons in the usual case: a layout's names are the very strings of the row's names. */
function sameNames(row: TokenRow, known: string[]): boolean {
  const names = row.names
  if (row.length !== known.length) return false
  for (let i = known.length - 1; i >= 0; i--) if (names[i] !== known[i]) return false
  return true
}

function learn(row: TokenRow): Layout {
  const names = row.names.slice(0, row.length)
  const at = new Int32Array(SLOTS).fill(-1)
  const loanCells: number[] = []
  names.forEach((name, i) => {
    const slot = SLOT_OF.get(name)
    if (slot !== undefined) at[slot] = i
    if (name.startsWith(LOAN_PREFIX)) loanCells.push(i)
  })
  return {names, at, loanCells}
}

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

function boolOf(v: FlatValue | undefined): boolean | null {
  return typeof v === 'boolean' ? v : typeof v === 'string' ? bool(v) : null
}

function textOf(v: FlatValue | undefined): string | null {
  if (v === null || v === undefined || v === '') return null
  return typeof v === 'string' ? v : String(v)
}

function numberOf(v: FlatValue | undefined): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined
  return typeof v === 'string' ? number(v) : undefined
}

/** Strict: blank text is no number (Number('') would be 0). */
function number(t: string): number | undefined {
  if (t.trim() === '') return undefined
  const n = Number(t)
  return Number.isFinite(n) ? n : undefined
}

/** `'=1` back to `=1` (the export's formula guard, src/io/export-reader.ts unguardCell). */
function unguard(s: string): string {
  if (s.length < 2 || s.charCodeAt(0) !== 0x27) return s
  const c = s.charCodeAt(1)
  return c === 0x3d || c === 0x2b || c === 0x2d || c === 0x40 || c === 0x09 || c === 0x0d ? s.slice(1) : s
}
