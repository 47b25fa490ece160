import {csvCell, isFormulaStart} from '../text/csv-cell.js'
import {ESCAPED, FALSE, HAS_COMMA, KIND_MASK, NULL, NUMBER, STRING, TRUE} from '../json/walk.js'
import {compactJson, hasLayout, stringValue} from '../json/values.js'
import type {RecordView} from './view.js'

/**
 * CSV rows made from a record's bytes where the walk found its values (src/json/walk.ts), written
 * straight into an output buffer: a string without escapes, a number, true and false are copied byte for
 * byte (numbers exactly as sent: `688600.0` stays `688600.0`), so the usual cell makes no JavaScript
 * string at all. The cell rules are src/text/csv-cell.ts's: the formula guard on strings (never numbers)
 * and RFC 4180 quoting (an unescaped JSON string can hold a comma, but never a quote or a line break:
 * those come escaped, and take the decoding path). Null and absent values are empty cells.
 */
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
        if (this.escapeFormulas && t - s > 2 && isFormulaStart(b[s + 1]!)) out[pos++] = 0x27
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

/** An object or a list in one cell: its compact JSON text, quoted (quotes doubled) when it holds a quote or a comma (RFC 4180). */
function jsonCell(b: Buffer, s: number, t: number, out: Buffer, pos: number): number {
  const json = hasLayout(b, s, t) ? compactJson(b.subarray(s, t)) : b.subarray(s, t)
  const quote = json.includes(0x22) || json.includes(0x2c)
  if (quote) out[pos++] = 0x22
  for (let p = 0; p < json.length; p++) {
    const c = json[p]!
    out[pos++] = c
    if (c === 0x22 && quote) out[pos++] = 0x22
  }
  if (quote) out[pos++] = 0x22
  return pos
}
