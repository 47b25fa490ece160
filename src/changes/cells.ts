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
export type Cell = string | boolean | null | SentNumber
export type ChangeRecord = Record<string, Cell>

/**
 * A record's own field; undefined where it has none. Field names are the service's and the export's (a
 * hostile service may send any name, and the export keeps it): a record lacking `constructor`,
 * `toString` or `__proto__` would otherwise answer with what every object inherits.
 */
export function fieldOf(rec: ChangeRecord, name: string): Cell | undefined {
  return Object.hasOwn(rec, name) ? rec[name] : undefined
}

/** Whether a record lacking `name` answers a value for it all the same (Object.prototype's own names). */
export function inheritedName(name: string): boolean {
  return name in Object.prototype
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

/** A number from a double: JSON's shortest form; an infinity or NaN (which JSON cannot hold) as text. */
export function numberCell(x: number): Cell {
  return Number.isFinite(x) ? {n: String(x)} : String(x)
}

/** The text values are compared by (`asText`: `688600.0` is `688600`; a missing value is null). */
export function compareText(c: Cell | undefined): string | null {
  if (c === null || c === undefined) return null
  if (typeof c === 'string') return asText(c)
  if (typeof c === 'boolean') return c ? 'true' : 'false'
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
  if (c !== null && typeof c === 'object') return c.n
  return cell(c, true)
}

/** A value as JSON text: numbers as sent. */
export function jsonText(c: Cell | undefined): string {
  if (c === null || c === undefined) return 'null'
  if (typeof c === 'object') return c.n
  return JSON.stringify(c)
}
