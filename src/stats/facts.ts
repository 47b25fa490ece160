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

/**
 * The top-level members the statistics read, in the order of `factsOfSpans`' spans: what
 * src/io/data-scanner.ts MemberSpans is asked to find in each NDJSON/JSON record as it scans it.
 */
/**
 * One record's spans in a table of a page's (src/io/data-scanner.ts MemberSpans): from `at`, the start and
 * end of member m (of STATS_MEMBERS) at 2m and 2m + 1, -1 when absent.
 */
export interface RecordSpans {
  table: Int32Array
  at: number
}

export const STATS_MEMBERS: readonly string[] = [
  ...FLAG_FIELDS,
  'CRAEligible',
  'FinalValue',
  'ConfidenceScore',
  'AssumableMortgage',
]
const SPAN_CRA = FLAG_FIELDS.length
const SPAN_FINAL_VALUE = SPAN_CRA + 1
const SPAN_CONFIDENCE = SPAN_CRA + 2
const SPAN_LOAN = SPAN_CRA + 3

const B_QUOTE = 0x22
const B_BACKSLASH = 0x5c
const B_COLON = 0x3a
const B_OPEN_OBJ = 0x7b
const B_OPEN_ARR = 0x5b
const B_N = 0x6e

/**
 * Facts from a record's bytes and the spans of its members (src/io/data-scanner.ts MemberSpans: each from
 * just after the key to the next top-level comma), read to the same figures as the tokenised row would give
 * (`TokenRowFacts`): a string "true" is a flag as much as `true`, an object member is no column of its
 * own (it is flattened to `K.S` columns), a number is read from its text as sent. Undefined for the few
 * records this cannot read the same way (an escape in a wanted string, an array where a value is wanted,
 * a loan type that is no string): the caller tokenises those. The bytes are trusted to be the JSON the
 * scanner delimited; a record that is not valid JSON may give figures here where the tokenizer counts it
 * with every field unknown.
 */
export function factsOfSpans(
  bytes: Buffer,
  spans: RecordSpans,
  into = emptyFacts(),
): RecordFacts | undefined {
  for (let i = 0; i < FLAG_FIELDS.length; i++) {
    if (!valueAt(bytes, spans, i)) return undefined
    const flag = vs < 0 ? null : flagAt(bytes)
    if (flag === undefined) return undefined
    into.flags[i] = flag
  }
  if (!valueAt(bytes, spans, SPAN_CRA)) return undefined
  const cra = vs < 0 ? null : textAt(bytes)
  if (cra === undefined) return undefined
  into.cra = cra
  if (!valueAt(bytes, spans, SPAN_FINAL_VALUE)) return undefined
  const finalValue = vs < 0 ? undefined : numberAt(bytes)
  if (finalValue === null) return undefined
  into.finalValue = finalValue
  if (!valueAt(bytes, spans, SPAN_CONFIDENCE)) return undefined
  const confidence = vs < 0 ? undefined : numberAt(bytes)
  if (confidence === null) return undefined
  into.confidence = confidence
  if (!valueAt(bytes, spans, SPAN_LOAN)) return undefined
  into.loan = false
  into.loanType = null
  into.rate = undefined
  into.equity = undefined
  if (vs >= 0 && bytes[vs] === B_OPEN_OBJ && !loanAt(bytes, into)) return undefined
  return into
}

/** The value of the last `valueAt`: bytes [vs, ve), or vs = -1 when the record has no such member. */
let vs = -1
let ve = -1

/** Find member m's value in its span (past the colon, blanks trimmed). False: no colon, not readable here. */
function valueAt(bytes: Buffer, spans: RecordSpans, m: number): boolean {
  let s = spans.table[spans.at + 2 * m]!
  let e = spans.table[spans.at + 2 * m + 1]!
  if (s < 0) {
    vs = -1
    return true
  }
  while (s < e && bytes[s]! <= 0x20) s++
  if (bytes[s] !== B_COLON) return false
  s++
  while (s < e && bytes[s]! <= 0x20) s++
  while (e > s && bytes[e - 1]! <= 0x20) e--
  if (s === e) return false
  vs = s
  ve = e
  return true
}

/** Is the value a string that holds an escape (its text is read by the tokenizer instead)? */
function escaped(bytes: Buffer): boolean {
  for (let i = vs + 1; i < ve - 1; i++) if (bytes[i] === B_BACKSLASH) return true
  return false
}

/** `true` or `"true"`, `false` or `"false"`, else null; undefined: a string with an escape, not read here. */
function flagAt(bytes: Buffer): boolean | null | undefined {
  let s = vs
  let e = ve
  if (bytes[s] === B_QUOTE) {
    if (escaped(bytes)) return undefined
    s++
    e--
  }
  const n = e - s
  if (n === 4 && bytes[s] === 0x74 && bytes[s + 1] === 0x72 && bytes[s + 2] === 0x75 && bytes[s + 3] === 0x65)
    return true
  if (
    n === 5 &&
    bytes[s] === 0x66 &&
    bytes[s + 1] === 0x61 &&
    bytes[s + 2] === 0x6c &&
    bytes[s + 3] === 0x73 &&
    bytes[s + 4] === 0x65
  )
    return false
  return null
}

/** A value's text (a CSV cell's, unquoted): null when empty, null or an object; undefined: not read here. */
function textAt(bytes: Buffer): string | null | undefined {
  const c = bytes[vs]
  if (c === B_QUOTE) {
    if (escaped(bytes)) return undefined
    return ve - vs === 2 ? null : knownText(bytes, vs + 1, ve - 1)
  }
  if (c === B_OPEN_OBJ) return null
  if (c === B_OPEN_ARR) return undefined
  if (c === B_N && ve - vs === 4) return null
  return bytes.toString('latin1', vs, ve)
}

/** A value read as a number (`number`); null: not read here. */
function numberAt(bytes: Buffer): number | undefined | null {
  const c = bytes[vs]
  if (c === B_QUOTE) {
    if (escaped(bytes)) return null
    return number(bytes.toString('utf8', vs + 1, ve - 1))
  }
  if (c === B_OPEN_OBJ) return undefined
  if (c === B_OPEN_ARR) return null
  if (c === B_N && ve - vs === 4) return undefined
  const n = smallInteger(bytes, vs, ve)
  return Number.isNaN(n) ? number(bytes.toString('latin1', vs, ve)) : n
}

/**
 * A JSON integer of up to 15 digits (FinalValue, ConfidenceScore), read from its bytes: exact as a double,
 * so the same number `Number` gives its text, without a string made for it. NaN when it is not one.
 */
function smallInteger(bytes: Buffer, s: number, e: number): number {
  const negative = bytes[s] === 0x2d
  if (negative) s++
  if (e - s < 1 || e - s > 15) return Number.NaN
  let v = 0
  for (let i = s; i < e; i++) {
    const d = bytes[i]! - 0x30
    if (d < 0 || d > 9) return Number.NaN
    v = v * 10 + d
  }
  return negative ? -v : v
}

/** Texts decoded lately with their bytes: a county's CRA levels are a handful of strings, over and over. */
const known: Array<{bytes: Buffer; text: string}> = []

function knownText(bytes: Buffer, s: number, e: number): string {
  const n = e - s
  next: for (const k of known) {
    if (k.bytes.length !== n) continue
    for (let i = 0; i < n; i++) if (bytes[s + i] !== k.bytes[i]) continue next
    return k.text
  }
  const text = bytes.toString('utf8', s, e)
  if (known.length < 16) known.push({bytes: Buffer.from(bytes.subarray(s, e)), text})
  return text
}

const LOAN_TYPE_KEY = Buffer.from('LoanType')
const RATE_KEY = Buffer.from('EstimatedInterestRate')
const EQUITY_KEY = Buffer.from('EstimatedEquity')

/**
 * The AssumableMortgage object at [vs, ve) (spec 2.2, about a third of a county's records), read member by
 * member as the tokenizer flattens it to `AssumableMortgage.*` cells: a loan when any member is more than
 * null or "", its LoanType's text, its rate's and equity's numbers. False: not read here (an escape in a
 * key or a wanted value, a loan type that is no string, anything unexpected).
 */
function loanAt(bytes: Buffer, into: RecordFacts): boolean {
  // one loop with its state in locals: a loop of helper calls per member cost 2 µs a loan (npm run bench)
  const e = ve - 1
  if (bytes[e] !== CLOSE_OBJ_BYTE) return false
  let type0 = -1
  let type1 = -1
  let rate0 = -1
  let rate1 = -1
  let equity0 = -1
  let equity1 = -1
  let loan = false
  let p = vs + 1
  for (;;) {
    while (p < e && bytes[p]! <= 0x20) p++
    if (p >= e) break
    if (bytes[p] !== B_QUOTE) return false
    const k0 = ++p
    for (; p < e; p++) {
      const b = bytes[p]
      if (b === B_QUOTE) break
      if (b === B_BACKSLASH) return false
    }
    if (p >= e) return false
    const keyLength = p - k0
    p++
    while (p < e && bytes[p]! <= 0x20) p++
    if (bytes[p] !== B_COLON) return false
    p++
    while (p < e && bytes[p]! <= 0x20) p++
    const v0 = p
    const c = bytes[p]
    let escapedValue = false
    if (c === B_QUOTE) {
      for (p++; p < e; p++) {
        const b = bytes[p]
        if (b === B_QUOTE) break
        if (b === B_BACKSLASH) {
          escapedValue = true
          p++
        }
      }
      if (p >= e) return false
      p++
    } else if (c === B_OPEN_OBJ || c === B_OPEN_ARR) {
      p = nestedEnd(bytes, p, e)
      if (p < 0) return false
    } else
      for (; p < e; p++) {
        const b = bytes[p]!
        if (b === COMMA_BYTE || b <= 0x20) break
      }
    const v1 = p
    if (v1 === v0) return false
    // a null or an empty string is an empty cell; anything else (0, false, {}) is a loan's member
    if (!loan && !(v1 - v0 === 4 && c === B_N) && !(v1 - v0 === 2 && c === B_QUOTE)) loan = true
    if (keyLength === LOAN_TYPE_KEY.length && isKey(bytes, k0, LOAN_TYPE_KEY)) {
      if (escapedValue) return false
      type0 = v0
      type1 = v1
    } else if (keyLength === RATE_KEY.length && isKey(bytes, k0, RATE_KEY)) {
      if (escapedValue) return false
      rate0 = v0
      rate1 = v1
    } else if (keyLength === EQUITY_KEY.length && isKey(bytes, k0, EQUITY_KEY)) {
      if (escapedValue) return false
      equity0 = v0
      equity1 = v1
    }
    while (p < e && bytes[p]! <= 0x20) p++
    if (p < e) {
      if (bytes[p] !== COMMA_BYTE) return false
      p++
    }
  }
  into.loan = loan
  if (!loan) return true
  if (type0 >= 0) {
    vs = type0
    ve = type1
    const c = bytes[vs]
    // a loan type that is not a string (or null) is the tokenizer's to write as it was sent
    if (c !== B_QUOTE && !(c === B_N && ve - vs === 4)) return false
    const type = textAt(bytes)
    if (type === undefined) return false
    into.loanType = type
  }
  const rate = rate0 < 0 ? undefined : numberBetween(bytes, rate0, rate1)
  const equity = equity0 < 0 ? undefined : numberBetween(bytes, equity0, equity1)
  if (rate === null || equity === null) return false
  into.rate = rate
  into.equity = equity
  return true
}

/** `numberAt` of the value at [s, e). */
function numberBetween(bytes: Buffer, s: number, e: number): number | undefined | null {
  vs = s
  ve = e
  return numberAt(bytes)
}

const CLOSE_OBJ_BYTE = 0x7d
const CLOSE_ARR_BYTE = 0x5d
const COMMA_BYTE = 0x2c

/** The index of the quote that closes the string whose text starts at p; -1 if it does not close before e. */
function stringEnd(bytes: Buffer, p: number, e: number): number {
  for (; p < e; p++) {
    const b = bytes[p]
    if (b === B_QUOTE) return p
    if (b === B_BACKSLASH) p++
  }
  return -1
}

/** Just past the object or array that opens at p (strings stepped over); -1 if it does not close before e. */
function nestedEnd(bytes: Buffer, p: number, e: number): number {
  let depth = 0
  for (; p < e; p++) {
    const b = bytes[p]
    if (b === B_QUOTE) {
      p = stringEnd(bytes, p + 1, e)
      if (p < 0) return -1
    } else if (b === B_OPEN_OBJ || b === B_OPEN_ARR) depth++
    else if ((b === CLOSE_OBJ_BYTE || b === CLOSE_ARR_BYTE) && --depth === 0) return p + 1
  }
  return -1
}

/** The key whose text starts at k0 (of the key's length, checked by the caller) is `key`. */
function isKey(bytes: Buffer, k0: number, key: Buffer): boolean {
  for (let i = 0; i < key.length; i++) if (bytes[k0 + i] !== key[i]) return false
  return true
}
