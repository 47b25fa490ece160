/**
 * The one CSV cell rule, for every cell sfl writes (records of every path, headers, a batch's own input
 * columns, change files): the formula guard, then RFC 4180 quoting. The byte-level row encoder
 * (src/pipeline/cells.ts) applies the same two rules to bytes and calls `isFormulaStart` from here.
 */

/**
 * OWASP CSV injection: a spreadsheet runs a cell that starts with = + - @, a tab or a carriage return as a
 * formula. Such a string cell gets a leading `'` (unless --no-escape-formulas); numbers are not strings
 * and are never guarded (-5 stays -5).
 */
export function isFormulaStart(c: number): boolean {
  return c === 0x3d || c === 0x2b || c === 0x2d || c === 0x40 || c === 0x09 || c === 0x0d
}

/** The formula guard alone (for texts a writer quotes later: header names, a batch's own cells). */
export function guardCell(text: string, escapeFormulas: boolean): string {
  return escapeFormulas && text.length > 0 && isFormulaStart(text.charCodeAt(0)) ? `'${text}` : text
}

/** RFC 4180 section 2: a field holding a quote, a comma or a line break is quoted, its quotes doubled. */
const NEEDS_QUOTES = /[",\r\n]/

/**
 * One cell: the formula guard when `escapeFormulas`, then quoting when needed.
 *
 * @example
 * csvCell('=SUM(A1)', true) // "'=SUM(A1)"
 * csvCell('Smith, "Jo"', true) // '"Smith, ""Jo"""'
 */
export function csvCell(text: string, escapeFormulas: boolean): string {
  const t = guardCell(text, escapeFormulas)
  return NEEDS_QUOTES.test(t) ? `"${t.replaceAll('"', '""')}"` : t
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
