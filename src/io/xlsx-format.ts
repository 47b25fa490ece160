/**
 * A number cell of an input workbook as the text its person saw, where that text is what the cell means:
 * a date or a time (a serial number with a date format) as ISO 8601, an identifier kept with a zero-padding
 * format (a ZIP typed as 2134 and shown as 02134 by the format "00000") padded the same way; any other
 * number as its shortest text at the 15 significant digits a spreadsheet keeps. ECMA-376 Part 1, 18.8.30
 * (the built-in formats) and 18.8.31 (format codes); 18.17.4.1 (the 1900 and 1904 date systems).
 */

export type NumberShape =
  {kind: 'number'} | {kind: 'date' | 'datetime' | 'time'} | {kind: 'pad'; parts: ReadonlyArray<string | 0>}

const NUMBER: NumberShape = {kind: 'number'}
/** 18.8.30: 14-17 and 22 are dates, 18-21 and 45-47 times; 27-36 and 50-58 East Asian dates. */
const BUILT_IN: Record<number, NumberShape> = {}
for (const id of [14, 15, 16, 17, ...range(27, 36), ...range(50, 58)]) BUILT_IN[id] = {kind: 'date'}
for (const id of [18, 19, 20, 21, 45, 46, 47]) BUILT_IN[id] = {kind: 'time'}
BUILT_IN[22] = {kind: 'datetime'}

function range(a: number, b: number): number[] {
  return Array.from({length: b - a + 1}, (_, i) => a + i)
}

/** How a cell with this number format is read; `code` is the custom code for ids from 164 on. */
export function numberShape(id: number, code: string | undefined): NumberShape {
  if (code === undefined) return BUILT_IN[id] ?? NUMBER
  const section = firstSection(code)
  // what is shown literally does not decide: quoted text, escaped characters, colours and conditions
  const bare = section
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/\[(?!h\]|hh\]|m\]|mm\]|s\]|ss\])[^\]]*\]/gi, '')
    .replace(/[_*]./g, '')
    .replace(/General/gi, '')
    .replace(/E[+-]/gi, '')
  const time = /[hs]/i.test(bare)
  const date = /[yd]/i.test(bare) || (/m/i.test(bare) && !time)
  if (date) return {kind: time ? 'datetime' : 'date'}
  if (time) return {kind: 'time'}
  const parts = padParts(section)
  return parts ? {kind: 'pad', parts} : NUMBER
}

/** Format codes have up to four sections, `positive;negative;zero;text`: a person's number is the first. */
function firstSection(code: string): string {
  let quoted = false
  for (let i = 0; i < code.length; i++) {
    const c = code[i]
    if (c === '"') quoted = !quoted
    else if (c === '\\') i++
    else if (c === ';' && !quoted) return code.slice(0, i)
  }
  return code
}

// characters a format shows as they are without quotes (18.8.31)
const PLAIN_LITERAL = /[-\s$+/():!^&'~{}<>=]/

/**
 * A code made only of `0` digit placeholders and literal text ("00000", "00000-0000", "000-00-0000"):
 * an identifier's shape. Anything else (`#`, `?`, a decimal point, a thousands comma, `%`, `@`, a
 * condition) is a number's format, and the number is read as a number.
 */
function padParts(section: string): Array<string | 0> | undefined {
  const parts: Array<string | 0> = []
  let zeros = 0
  for (let i = 0; i < section.length; i++) {
    const c = section[i]!
    if (c === '0') {
      parts.push(0)
      zeros++
    } else if (c === '"') {
      const end = section.indexOf('"', i + 1)
      if (end === -1) return undefined
      parts.push(section.slice(i + 1, end))
      i = end
    } else if (c === '\\' && i + 1 < section.length) parts.push(section[++i]!)
    else if (PLAIN_LITERAL.test(c)) parts.push(c)
    else return undefined
  }
  return zeros > 1 ? parts : undefined
}

/**
 * The number's text in its shape: a whole non-negative number in a padding format placed digit by digit
 * (more digits than places go before the first, as a spreadsheet shows them); a serial in a date format as
 * YYYY-MM-DD, with THH:MM:SS for a date-time, or HH:MM:SS for a time; else `numberText`.
 */
export function shapedNumber(n: number, shape: NumberShape, date1904: boolean): string {
  switch (shape.kind) {
    case 'number':
      return numberText(n)
    case 'pad':
      return Number.isSafeInteger(n) && n >= 0 ? padded(n, shape.parts) : numberText(n)
    default:
      return serialText(n, shape.kind, date1904) ?? numberText(n)
  }
}

function padded(n: number, parts: ReadonlyArray<string | 0>): string {
  const places = parts.filter((p) => p === 0).length
  const digits = String(n).padStart(places, '0')
  let d = digits.length - places // the extra leading digits go with the first place
  let out = ''
  let first = true
  for (const p of parts) {
    if (p !== 0) {
      out += p
      continue
    }
    out += first ? digits.slice(0, d + 1) : digits[d]
    d++
    first = false
  }
  return out
}

/**
 * The shortest text of a number at 15 significant digits (what a spreadsheet keeps of a double and shows:
 * 0.1 + 0.2 was typed as 0.3).
 *
 * @example numberText(0.30000000000000004) // '0.3'
 */
export function numberText(n: number): string {
  return String(Number(n.toPrecision(15)))
}

const DAY_MS = 86_400_000
/** Serial 25,569 is 1970-01-01 in the 1900 date system; the 1904 system counts 1,462 days fewer. */
const EPOCH_1970 = 25_569
const SYSTEM_1904 = 1_462
const LAST_SERIAL = 2_958_465 // 9999-12-31

/** A date serial as ISO 8601 text, or undefined when it is no date a spreadsheet shows. */
export function serialText(
  serial: number,
  kind: 'date' | 'datetime' | 'time',
  date1904: boolean,
): string | undefined {
  const s = date1904 ? serial + SYSTEM_1904 : serial
  if (!(s >= 0) || s > LAST_SERIAL) return undefined
  let whole = Math.floor(s)
  let secs = Math.round((s - whole) * 86_400)
  if (secs === 86_400) {
    whole++
    secs = 0
  }
  const time = [secs / 3600, (secs / 60) % 60, secs % 60]
    .map((v) => String(Math.floor(v)).padStart(2, '0'))
    .join(':')
  // a time past a day is a duration ([h]:mm:ss), not a time of day: read as a number
  if (kind === 'time') return whole === 0 ? time : undefined
  let date: string
  if (!date1904 && whole < 61) {
    // the 1900 system counts a 29 February 1900 (serial 60) that never was: before it, a day off
    if (whole === 60) date = '1900-02-29'
    else if (whole === 0) return undefined
    else date = new Date(Date.UTC(1899, 11, 31) + whole * DAY_MS).toISOString().slice(0, 10)
  } else date = new Date((whole - EPOCH_1970) * DAY_MS).toISOString().slice(0, 10)
  return kind === 'date' ? date : `${date}T${time}`
}
