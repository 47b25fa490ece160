/**
 * The one CSV cell rule, for every cell sfl writes (records of every path, headers, a batch's own input
 * columns, change files): the formula guard, then RFC 4180 quoting. Both are tables of bytes here
 * (`FORMULA_START`, `QUOTED`); the text functions below read them, and so does the byte-level row encoder
 * of exports (src/pipeline/cells.ts), which writes cells straight from a record's bytes: one rule, two
 * spellings made from it (test/pipeline/cells.test.ts compares them on random cells).
 *
 * Which cells are guarded: text (a JSON string, a header, a field the spec types as text), never a number,
 * true/false or a JSON object's text (-5 stays -5; `'-5` would be the text "'-5" in every reader).
 */

/** A table of the 256 byte values (a UTF-16 code unit past 255 is never in one), 1 for each of `chars`. */
function table(chars: string): Uint8Array {
  const t = new Uint8Array(256)
  for (const c of chars) t[c.charCodeAt(0)] = 1
  return t
}

/**
 * OWASP CSV injection: a spreadsheet runs a cell that starts with = + - @, a tab or a carriage return as a
 * formula. Such a text cell gets a leading `'` (unless --no-escape-formulas).
 */
export const FORMULA_START: Uint8Array = table('=+-@\t\r')

/**
 * RFC 4180 section 2: a cell holding a quote, a comma or a line break is quoted, its quotes doubled. A lone
 * LF or CR is a line break too (Excel and DuckDB read it as the end of a row).
 */
export const QUOTED: Uint8Array = table('",\r\n')

/** The quote character, doubled inside a quoted cell. */
export const QUOTE = 0x22

/** Whether a text cell starting with character code `c` is guarded. */
export function isFormulaStart(c: number): boolean {
  return c < 256 && FORMULA_START[c] === 1
}

/** Whether a cell holding `text` is quoted. */
export function needsQuotes(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 256 && QUOTED[c] === 1) return true
  }
  return false
}

/** The formula guard alone (for texts a writer quotes later: header names, a batch's own cells). */
export function guardCell(text: string, escapeFormulas: boolean): string {
  return escapeFormulas && text.length > 0 && isFormulaStart(text.charCodeAt(0)) ? `'${text}` : text
}

/** RFC 4180 quoting alone: the cell as it is, or quoted with its quotes doubled. */
export function quoteCell(text: string): string {
  return needsQuotes(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/**
 * One text cell: the formula guard when `escapeFormulas`, then quoting when needed.
 *
 * @example
 * csvCell('=SUM(A1)', true) // "'=SUM(A1)"
 * csvCell('Smith, "Jo"', true) // '"Smith, ""Jo"""'
 */
export function csvCell(text: string, escapeFormulas: boolean): string {
  return quoteCell(guardCell(text, escapeFormulas))
}

/**
 * A header cell: a column name is the server's text (an unknown field's name), so it is guarded and
 * quoted as a text cell is (`=HYPERLINK("http://x")` becomes `"'=HYPERLINK(""http://x"")"`).
 */
export function csvHeaderCell(name: string, escapeFormulas: boolean): string {
  return csvCell(name, escapeFormulas)
}

/**
 * A value's cell as an export writes it, for a value read back as text (a CSV export's cell, unguarded):
 * `text` when the value is text (a JSON string; by the spec's type, a varchar, date or datetime field) is
 * guarded and quoted; any other (a number, true/false, a JSON object's text) is quoted only. An APN of
 * `+1` is `'+1`, a FinalValue of -5 is -5, as in the export.
 */
export function csvValueCell(value: string, text: boolean, escapeFormulas: boolean): string {
  return text ? csvCell(value, escapeFormulas) : quoteCell(value)
}

/** A guarded cell's text back as it was (for reading sfl's own CSV: `sfl stats`, `sfl changes`). */
export function unguardCell(text: string): string {
  return text.length > 1 && text.charCodeAt(0) === 0x27 && isFormulaStart(text.charCodeAt(1))
    ? text.slice(1)
    : text
}

/** One CSV line with its CRLF end (RFC 4180), each text made a cell by `csvCell`. */
export function csvLine(texts: readonly string[], escapeFormulas: boolean): string {
  let line = ''
  for (let i = 0; i < texts.length; i++) line += (i === 0 ? '' : ',') + csvCell(texts[i]!, escapeFormulas)
  return `${line}\r\n`
}
