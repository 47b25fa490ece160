import {asText, type FlatValue} from '../io/export-reader.js'
import {specType} from '../io/parquet-types.js'
import {cell, columnOf} from '../model/columns.js'
import {isFormulaStart} from '../text/csv-cell.js'

/**
 * The values of a change row (src/changes/compare.ts), read back from either side's export as it holds
 * them: text, booleans, null, and numbers with their text as sent. The project's one number text is the
 * service's own (docs/exports.md "Number text"): an export's CSV and NDJSON keep the record's bytes, so a
 * change file writes `148800.0` where the export holds `148800.0`, whichever format it is read from.
 * Parquet stores doubles, not text: its numbers are JSON's shortest form of the double (`148800`).
 */
export interface SentNumber {
  /** The number's text (JSON's number grammar). */
  n: string
}
/**
 * A JavaScript number is a double read from a Parquet file (or from a record object, which has no text):
 * its text is JSON's shortest form (`numberText`), made only when a cell is written. Kept as the number,
 * a value read back costs no object and no text until then, and two compare as numbers: the previous
 * record of an updated row is compared, rarely written (a tenth of a Parquet comparison's read-back was
 * wrapping each number in a SentNumber, with its text, CPU profile).
 */
export type Cell = string | boolean | null | SentNumber | number
export type ChangeRecord = Record<string, Cell>

/**
 * The field names of records read back (src/changes/read.ts), in their order, and each name's place. The
 * records of one layout share it (every row of a Parquet file, every record of a CSV file, NDJSON records
 * of the same fields in the same order), so a change row is its layout and an array of values: a record
 * made as an object of 59 fields set by name cost most of the read-back of a Parquet comparison (issue 32,
 * CPU profile), and the change file's writer finds a column's place once per layout, not once per cell.
 * Names are looked up in a Map: a field named `__proto__`, `constructor` or `toString` (a hostile service
 * may send any name, and the export keeps it) is a name like any other, never what objects inherit.
 */
export class Layout {
  private readonly index: ReadonlyMap<string, number>

  /** `names`: distinct (a reader resolves a name met twice first: `layoutOf`). */
  constructor(readonly names: readonly string[]) {
    this.index = new Map(names.map((n, i) => [n, i]))
  }

  /** The place of field `name`, or -1 where the layout has none. */
  at(name: string): number {
    return this.index.get(name) ?? -1
  }

  private mapped: {to: Layout; at: Int32Array} | undefined

  /**
   * Where each of this layout's fields is in `other` (-1: not there), the answer for the last `other`
   * kept: the records compared are pairs of two layouts nearly always (one per side).
   */
  placesIn(other: Layout): Int32Array {
    const m = this.mapped
    if (m?.to === other) return m.at
    const at = Int32Array.from(this.names, (n) => other.at(n))
    this.mapped = {to: other, at}
    return at
  }
}

/** A record read back: its values in its layout's order. */
export interface ReadRecord {
  readonly layout: Layout
  readonly values: readonly Cell[]
}

/** A record's field; undefined where it has none. */
export function valueOf(rec: ReadRecord, name: string): Cell | undefined {
  const i = rec.layout.at(name)
  return i < 0 ? undefined : rec.values[i]
}

/**
 * The layout of records whose fields come in the order `names`, a name possibly met twice (a CSV header,
 * a Parquet file's columns), as an object made by setting each in turn has them: each name in the place of
 * its first sight, holding its last value. `from[i]`: which of `names` gives the layout's i-th value. With
 * `layouts`, the one layout of those names there.
 */
export function layoutOf(names: readonly string[], layouts?: Layouts): {layout: Layout; from: Int32Array} {
  const last = new Map<string, number>()
  names.forEach((n, i) => last.set(n, i))
  const distinct = [...last.keys()]
  return {
    layout: layouts ? layouts.of(distinct) : new Layout(distinct),
    from: Int32Array.from(distinct, (n) => last.get(n)!),
  }
}

/** Layouts a reader keeps (records of ever-new names cost bounded memory: past it, each gets its own). */
export const MAX_LAYOUTS = 1024

/**
 * Layouts by their names, so that records of the same fields share one: the last one asked for is checked
 * first (the records of a county nearly always come in one layout), then the ones met, by their names.
 */
export class Layouts {
  private last: Layout | undefined
  private readonly known = new Map<string, Layout>()

  /** The layout of distinct `names`. */
  of(names: readonly string[]): Layout {
    if (this.last && same(this.last.names, names)) return this.last
    const sig = names.join('\0')
    const hit = this.known.get(sig)
    // a name may hold the separator: the names themselves decide
    if (hit && same(hit.names, names)) return (this.last = hit)
    const layout = new Layout([...names])
    if (!hit && this.known.size < MAX_LAYOUTS) this.known.set(sig, layout)
    return (this.last = layout)
  }
}

function same(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** A record read back as an object of its fields (a spooled change row, a test's view), each its own. */
export function recordObject(rec: ReadRecord): ChangeRecord {
  const out: ChangeRecord = {}
  rec.layout.names.forEach((n, i) => setField(out, n, rec.values[i]!))
  return out
}

/**
 * `rec[name] = value`, a field named `__proto__` too, as a field of its own, as JSON.parse makes it: an
 * assignment would set the record's prototype instead (or, for a text, do nothing), and lose the field.
 */
export function setField(rec: ChangeRecord, name: string, value: Cell): void {
  if (name === '__proto__')
    Object.defineProperty(rec, name, {value, writable: true, enumerable: true, configurable: true})
  else rec[name] = value
}

/** Whether a value is a number (its text as sent). */
export function isSentNumber(c: Cell | undefined): c is SentNumber {
  return c !== null && typeof c === 'object'
}

/** JSON's number grammar (RFC 8259 section 6). */
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/

/** A double as a cell: the number itself; an infinity or NaN (which JSON cannot hold) as its text. */
export function numberCell(x: number): Cell {
  return Number.isFinite(x) ? x : String(x)
}

/**
 * A number's text: JSON's shortest form. A whole number within 32 bits is written as the small integer it
 * is (the same text): V8 writes those several times faster than a double (150,000 valuations: 3 ms
 * instead of 12, warm), and a Parquet export's values, counts and years are most of the numbers a
 * comparison writes.
 */
export function numberText(x: number): string {
  return x === (x | 0) ? String(x | 0) : String(x)
}

/** The text values are compared by (`asText`: `688600.0` is `688600`; a missing value is null). */
export function compareText(c: Cell | undefined): string | null {
  if (c === null || c === undefined) return null
  if (typeof c === 'string') return asText(c)
  if (typeof c === 'boolean') return c ? 'true' : 'false'
  if (typeof c === 'number') return numberText(c)
  return asText(c.n)
}

/** The spec's type of a flat column (`AssumableMortgage.TermMonths`), or undefined for a field it does not name. */
function typeOf(name: string): string | undefined {
  return specType(columnOf(name))
}

/**
 * A CSV cell of an export (`text` as written, formula guard included) as a value: an empty cell is null;
 * a guarded cell is text (the export guards only text); a number or boolean field's number or `true` /
 * `false` is that; a field the spec does not name holds a number when it is written bare and starts like
 * a formula (`-5`: the export guards such a text, never a number), else text.
 */
export function csvCellValue(name: string, text: string): Cell {
  if (text === '') return null
  const c = text.charCodeAt(0)
  if (c === 0x27 && text.length > 1 && isFormulaStart(text.charCodeAt(1))) return text.slice(1)
  return typedText(name, text, isFormulaStart(c))
}

/**
 * A value of export-reader's record object (a side read as objects) as a change row's value: numbers in
 * JSON's shortest form (the record object no longer has their text), text typed by the spec as a CSV cell is.
 */
export function flatCellValue(name: string, v: FlatValue | undefined): Cell {
  if (v === null || v === undefined) return null
  if (typeof v === 'number') return numberCell(v)
  if (typeof v === 'boolean') return v
  return typedText(name, v, false)
}

function typedText(name: string, text: string, bareNumber: boolean): Cell {
  const t = typeOf(name)
  if (t === 'bigint' || t === 'int' || t === 'float' || (t === undefined && bareNumber))
    return JSON_NUMBER.test(text) ? {n: text} : text
  if (t === 'boolean' && (text === 'true' || text === 'false')) return text === 'true'
  return text
}

/**
 * A value as the change file's CSV cell, by the export's cell rule (src/model/columns.ts `cell`, on
 * src/text/csv-cell.ts): text formula-guarded (`+1` is written `'+1`), numbers as sent, booleans
 * `true`/`false`, null empty.
 */
export function csvCellText(c: Cell | undefined): string {
  if (typeof c === 'number') return numberText(c)
  if (c !== null && typeof c === 'object') return c.n
  return cell(c, true)
}

/** A value as JSON text: numbers as sent. */
export function jsonText(c: Cell | undefined): string {
  if (c === null || c === undefined) return 'null'
  if (typeof c === 'number') return numberText(c)
  if (typeof c === 'object') return c.n
  return JSON.stringify(c)
}
