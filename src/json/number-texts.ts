import {decodeEscapes} from './values.js'
import {
  ENTRY,
  KEY_E,
  KEY_ESCAPED,
  KEY_S,
  KIND,
  KIND_MASK,
  NUMBER,
  PARENT,
  VAL_E,
  VAL_S,
  Walk,
  walkValue,
} from './walk.js'

/**
 * The numbers of one record's JSON text as the service sent them (`148800.0`, `1e21`), by flat column:
 * `FinalValue` for a member of the record, `AssumableMortgage.TermMonths` for a member of one of its
 * objects (deeper values are one column of JSON text). The project writes numbers as sent (docs/exports.md
 * "Number text"); JSON.parse keeps only the double, so a CSV made from parsed records (a single lookup's)
 * takes their text from here. A name met twice keeps its last number, as JSON.parse keeps its last value.
 * Undefined when the text is not one JSON object.
 */
export function numberTexts(text: string): Map<string, string> | undefined {
  const b = Buffer.from(text, 'utf8')
  const w = new Walk()
  let p = 0
  while (p < b.length && (b[p] === 0x20 || b[p] === 0x0a || b[p] === 0x0d || b[p] === 0x09)) p++
  if (b[p] !== 0x7b || walkValue(b, p, b.length, w) < 0) return undefined
  const out = new Map<string, string>()
  const m = w.entries
  const key = (i: number) => {
    const raw = b.toString('utf8', p + m[i * ENTRY + KEY_S]!, p + m[i * ENTRY + KEY_E]!)
    return m[i * ENTRY + KIND]! & KEY_ESCAPED ? decodeEscapes(raw) : raw
  }
  for (let i = 0; i < w.count; i++) {
    const at = i * ENTRY
    if ((m[at + KIND]! & KIND_MASK) !== NUMBER) continue
    const parent = m[at + PARENT]!
    out.set(
      parent < 0 ? key(i) : `${key(parent)}.${key(i)}`,
      b.toString('latin1', p + m[at + VAL_S]!, p + m[at + VAL_E]!),
    )
  }
  return out
}
