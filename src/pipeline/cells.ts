import {csvCell, FORMULA_START, QUOTE, QUOTED} from '../text/csv-cell.js'
import {ESCAPED, FALSE, HAS_COMMA, KIND_MASK, NULL, NUMBER, STRING, TRUE} from '../json/walk.js'
import {compactJson, hasLayout, stringValue} from '../json/values.js'
import type {RecordView} from './view.js'

/**
 * CSV rows made from a record's bytes where the walk found its values (src/json/walk.ts), written
 * straight into an output buffer: a string without escapes, a number, true and false are copied byte for
 * byte (numbers exactly as sent: `688600.0` stays `688600.0`), so the usual cell makes no JavaScript
 * string at all. The cell rule is src/text/csv-cell.ts's, read from its tables: the formula guard
 * (`FORMULA_START`) on strings, never numbers, and RFC 4180 quoting (`QUOTED`). Of the bytes `QUOTED`
 * names, a JSON string without escapes can hold only those the walk flags (`RAW_QUOTED`, checked below
 * when this module loads); the others come escaped and take the decoding path, which is csvCell itself.
 * Null and absent values are empty cells.
 */

/** The bytes of the quoting rule a JSON string can hold without an escape (not a quote, backslash or control). */
const RAW_QUOTED = [...QUOTED.keys()].filter((c) => QUOTED[c] === 1 && c >= 0x20 && c !== 0x22 && c !== 0x5c)
// the walk flags a string holding a comma (HAS_COMMA): that must be every such byte, or a cell goes unquoted
if (RAW_QUOTED.length !== 1 || RAW_QUOTED[0] !== 0x2c)
  throw new Error(
    `src/text/csv-cell.ts QUOTED names bytes a JSON string holds raw (${RAW_QUOTED.join(', ')}): the walk's HAS_COMMA flag no longer covers them`,
  )
export class CsvRowEncoder {
  constructor(private readonly escapeFormulas: boolean) {}

  /** The most bytes `encode` can write for this record in `columns` (each span copied, quoted and doubled at worst). */
  static bound(view: RecordView, columns: Int32Array): number {
    return 2 * view.bytes.length + 4 * columns.length + 2
  }

  /** Write the record as one CSV line (CRLF) in `columns` order (field ids) into `out` from `pos`; the position after it. */
  encode(view: RecordView, columns: Int32Array, out: Buffer, pos: number): number {
    const b = view.bytes
    for (let c = 0; c < columns.length; c++) {
      if (c > 0) out[pos++] = 0x2c
      const e = view.entry(columns[c]!)
      if (e < 0) continue
      const flags = view.flags(e)
      const kind = flags & KIND_MASK
      const s = view.start(e)
      const t = view.end(e)
      if (kind === STRING && (flags & ESCAPED) === 0) {
        const quote = (flags & HAS_COMMA) !== 0
        if (quote) out[pos++] = 0x22
        if (this.escapeFormulas && t - s > 2 && FORMULA_START[b[s + 1]!] === 1) out[pos++] = 0x27
        for (let p = s + 1; p < t - 1; p++) out[pos++] = b[p]!
        if (quote) out[pos++] = 0x22
      } else if (kind === NUMBER || kind === TRUE || kind === FALSE) {
        for (let p = s; p < t; p++) out[pos++] = b[p]!
      } else if (kind === STRING) {
        pos += out.write(csvCell(stringValue(b, s, t, true), this.escapeFormulas), pos)
      } else if (kind !== NULL) {
        pos = jsonCell(b, s, t, out, pos)
      }
    }
    out[pos++] = 0x0d
    out[pos++] = 0x0a
    return pos
  }
}

/** An object or a list in one cell: its compact JSON text (never guarded: it is no text), quoted as the rule says. */
function jsonCell(b: Buffer, s: number, t: number, out: Buffer, pos: number): number {
  const json = hasLayout(b, s, t) ? compactJson(b.subarray(s, t)) : b.subarray(s, t)
  let quote = false
  for (let p = 0; p < json.length && !quote; p++) quote = QUOTED[json[p]!] === 1
  if (quote) out[pos++] = QUOTE
  for (let p = 0; p < json.length; p++) {
    const c = json[p]!
    out[pos++] = c
    if (c === QUOTE && quote) out[pos++] = QUOTE
  }
  if (quote) out[pos++] = QUOTE
  return pos
}
