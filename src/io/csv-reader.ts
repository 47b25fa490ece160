import {open} from 'node:fs/promises'
import {StringDecoder} from 'node:string_decoder'

/**
 * The one CSV grammar sfl reads (RFC 4180, as spreadsheets write it): quoted fields with commas, doubled
 * quotes and line breaks, CRLF, LF or CR-only line ends (old Mac exports), a UTF-8 BOM, empty lines
 * skipped; a tab instead of the comma for a tab-separated batch input (`CsvFields`'s separator). `csvRecord` finds one record's fields in bytes without making a string (the change comparison
 * hashes them where they lie, src/changes/scan-csv.ts); `readCsv` streams a file's records as text (batch
 * input, an export read back, part files). It replaced csv-parse because a CPU profile of `npm run
 * bench:batch` (100,000 rows) showed csv-parse with line info taking about 3.4 s of the run's CPU, and
 * the input is read three times: to check it whole before any request, to send, to write the output in
 * input order.
 */
export interface CsvRecord {
  fields: string[]
  /** 1-based line on which the record starts. */
  line: number
}

export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message)
  }
}

const QUOTE = 0x22
const COMMA = 0x2c
const TAB = 0x09
const CR = 0x0d
const LF = 0x0a

/** Field flags (`CsvFields.flags`): the field was quoted (its span leaves the quotes out). */
export const CSV_QUOTED = 1
/** It holds doubled quotes (`""`), which stand for one. */
export const CSV_DOUBLED = 2
/** It holds a byte above 0x7f (UTF-8 beyond ASCII). */
export const CSV_HIGH = 4
/** It holds a byte that is not a digit 0-9 (an empty field holds none). */
export const CSV_NOT_DIGIT = 8

/** `csvRecord`'s answer when the bytes end before the record does and more may follow. */
export const CSV_INCOMPLETE = -1
/** `csvRecord`'s answer when the bytes break the grammar: `CsvFields.reason` says how, at `CsvFields.at`. */
export const CSV_BROKEN = -2

/** Why a record is broken. */
export const OPENING_QUOTE = 1 // a quote inside a field that did not start with one
export const CLOSING_QUOTE = 2 // a byte after a closing quote other than a comma or a line end
export const UNCLOSED_QUOTE = 3 // the file ends inside a quoted field

/** Byte classes: a byte that ends an unquoted field (1), one that is no digit (2), one above 0x7f (4). */
const STOPS = 1
const classes = (sep: number) =>
  new Uint8Array(256).map(
    (_, c) =>
      (c === sep || c === CR || c === LF || c === QUOTE ? STOPS : 0) |
      (c >= 0x30 && c <= 0x39 ? 0 : CSV_NOT_DIGIT) |
      (c >= 0x80 ? CSV_HIGH : 0),
  )
const COMMA_CLASSES = classes(COMMA)
const TAB_CLASSES = classes(TAB)

/** The fields of the last record `csvRecord` read: spans into its bytes, and flags. Reused record after record. */
export class CsvFields {
  /** The field separator (a comma; a tab for a tab-separated batch input) and the byte classes it makes. */
  readonly sep: number
  readonly classes: Uint8Array
  start = new Int32Array(64)
  end = new Int32Array(64)
  flags = new Uint8Array(64)
  count = 0
  /** Line breaks inside quoted fields of the record (CRLF counts once), up to its end or to the break. */
  breaks = 0
  reason = 0
  at = 0

  constructor(separator: ',' | '\t' = ',') {
    this.sep = separator === '\t' ? TAB : COMMA
    this.classes = separator === '\t' ? TAB_CLASSES : COMMA_CLASSES
  }

  grow(): void {
    const n = this.start.length * 2
    const s = new Int32Array(n)
    s.set(this.start)
    const e = new Int32Array(n)
    e.set(this.end)
    const f = new Uint8Array(n)
    f.set(this.flags)
    this.start = s
    this.end = e
    this.flags = f
  }
}

/**
 * The fields of the record that starts at `b[p]` (not at a line break: the caller skips line ends, and
 * empty lines with them), up to `n`. Returns where the record ends (the offset of its line break, or `n`
 * when `final`), CSV_INCOMPLETE when the bytes end first and more may follow, or CSV_BROKEN. Each field's
 * span and flags go to `f`.
 *
 * A hot loop (every byte of a CSV side of `sfl changes` passes here): one byte-class load per byte of an
 * unquoted field, state in locals.
 */
export function csvRecord(b: Uint8Array, p: number, n: number, final: boolean, f: CsvFields): number {
  const CLASS = f.classes
  const sep = f.sep
  let count = 0
  let breaks = 0
  for (;;) {
    if (count === f.start.length) f.grow()
    let flags = 0
    let s: number
    let e: number
    if (p < n && b[p] === QUOTE) {
      flags = CSV_QUOTED
      s = ++p
      for (;;) {
        if (p >= n) {
          if (!final) return CSV_INCOMPLETE
          f.breaks = breaks
          f.count = count
          return brokenAt(f, UNCLOSED_QUOTE, s - 1)
        }
        const c = b[p]!
        if (c === QUOTE) {
          if (p + 1 >= n && !final) return CSV_INCOMPLETE // a doubled quote or the closing one: the next byte says
          if (p + 1 < n && b[p + 1] === QUOTE) {
            flags |= CSV_DOUBLED | CSV_NOT_DIGIT
            p += 2
            continue
          }
          break
        }
        if (c === LF || (c === CR && b[p + 1] !== LF)) breaks++
        flags |= CLASS[c]! & (CSV_HIGH | CSV_NOT_DIGIT)
        p++
      }
      e = p++
      if (p < n) {
        const c = b[p]!
        if (c !== sep && c !== CR && c !== LF) {
          f.breaks = breaks
          f.count = count
          return brokenAt(f, CLOSING_QUOTE, p)
        }
      } else if (!final) return CSV_INCOMPLETE
    } else {
      s = p
      for (; p < n; p++) {
        const k = CLASS[b[p]!]!
        if (k & STOPS) break
        flags |= k
      }
      if (p < n && b[p] === QUOTE) {
        f.breaks = breaks
        f.count = count
        f.start[count] = s
        return brokenAt(f, OPENING_QUOTE, p)
      }
      if (p >= n && !final) return CSV_INCOMPLETE
      e = p
    }
    f.start[count] = s
    f.end[count] = e
    f.flags[count] = flags
    count++
    if (p < n && b[p] === sep) {
      p++
      continue
    }
    f.count = count
    f.breaks = breaks
    return p
  }
}

function brokenAt(f: CsvFields, reason: number, at: number): number {
  f.reason = reason
  f.at = at
  return CSV_BROKEN
}

/** A field's text: decoded as UTF-8 (ASCII as Latin-1, the same text and faster), doubled quotes undoubled. */
export function csvFieldText(b: Buffer, s: number, e: number, flags: number): string {
  const text = b.toString(flags & CSV_HIGH ? 'utf8' : 'latin1', s, e)
  return flags & CSV_DOUBLED ? text.replaceAll('""', '"') : text
}

/**
 * Every field of the record `b[from, to)` that `f` holds, as text. An ASCII record is decoded once and cut
 * (one native call instead of one a field, a fifth of the read of a 59-column export).
 */
export function csvFieldTexts(b: Buffer, from: number, to: number, f: CsvFields): string[] {
  const fields = new Array<string>(f.count)
  let any = 0
  for (let i = 0; i < f.count; i++) any |= f.flags[i]!
  if (any & CSV_HIGH) {
    for (let i = 0; i < f.count; i++) fields[i] = csvFieldText(b, f.start[i]!, f.end[i]!, f.flags[i]!)
    return fields
  }
  const text = b.toString('latin1', from, to)
  for (let i = 0; i < f.count; i++) {
    const t = text.slice(f.start[i]! - from, f.end[i]! - from)
    fields[i] = f.flags[i]! & CSV_DOUBLED ? t.replaceAll('""', '"') : t
  }
  return fields
}

/** The error of a broken record, with the line it is on: csv-parse's words, which users and tests know. */
export function csvSyntaxError(b: Buffer, f: CsvFields, recordLine: number): CsvSyntaxError {
  const line = recordLine + f.breaks
  if (f.reason === UNCLOSED_QUOTE)
    return new CsvSyntaxError('Quote Not Closed: the parsing is finished with an opening quote', recordLine)
  if (f.reason === CLOSING_QUOTE) {
    const ch = b.toString('utf8', f.at, Math.min(b.length, f.at + 4)).slice(0, 1)
    return new CsvSyntaxError(
      `Invalid Closing Quote: got "${ch}" after a quoted field instead of a ${f.sep === TAB ? 'tab' : 'comma'} or a line end`,
      line,
    )
  }
  const value = b.toString('utf8', f.start[f.count], f.at)
  return new CsvSyntaxError(
    `Invalid Opening Quote: a quote is found inside field ${f.count + 1}, value is "${value}"`,
    line,
  )
}

/**
 * Every record of a CSV file, streamed a chunk at a time (a record longer than a chunk grows the buffer),
 * each with the line it starts on. Every record must have as many fields as the first. `onChunk` gets the
 * file's text as it is read (the batch input's content hash).
 */
export async function* readCsv(
  path: string,
  opts: {chunkSize?: number; onChunk?: (text: string) => void; delimiter?: ',' | '\t'} = {},
): AsyncGenerator<CsvRecord> {
  const chunk = opts.chunkSize ?? 1 << 20
  const decoder = opts.onChunk ? new StringDecoder('utf8') : undefined
  const fh = await open(path, 'r')
  try {
    const f = new CsvFields(opts.delimiter)
    let buf = Buffer.allocUnsafe(Math.max(chunk, 4))
    let end = 0 // bytes held
    let offset = 0 // file offset of buf[0]
    let p = 0
    let line = 1
    let expected = -1
    let final = false
    for (;;) {
      if (!final) {
        if (p > 0) {
          // the unfinished record moves to the front
          buf.copy(buf, 0, p, end)
          offset += p
          end -= p
          p = 0
        }
        if (end + chunk > buf.length) {
          const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, end + chunk))
          buf.copy(bigger, 0, 0, end)
          buf = bigger
        }
        const {bytesRead} = await fh.read(buf, end, chunk, offset + end)
        if (decoder) opts.onChunk!(decoder.write(buf.subarray(end, end + bytesRead)))
        end += bytesRead
        final = bytesRead === 0
        if (decoder && final) {
          const rest = decoder.end()
          if (rest) opts.onChunk!(rest)
        }
        // the BOM of a UTF-8 file is no part of its first field
        if (offset === 0 && p === 0 && end >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf)
          p = 3
      }
      for (;;) {
        // line ends, and the empty lines between records
        while (p < end) {
          const c = buf[p]!
          if (c === LF) line++
          else if (c === CR) {
            if (p + 1 >= end && !final) break // CRLF or a lone CR: the next byte says
            if (buf[p + 1] !== LF) line++
          } else break
          p++
        }
        if (p >= end || (buf[p] === CR && !final)) break
        const next = csvRecord(buf, p, end, final, f)
        if (next === CSV_INCOMPLETE) break
        if (next === CSV_BROKEN) throw csvSyntaxError(buf, f, line)
        if (expected < 0) expected = f.count
        if (f.count !== expected)
          throw new CsvSyntaxError(`Invalid Record Length: expect ${expected}, got ${f.count}`, line)
        const rec = {fields: csvFieldTexts(buf, p, next, f), line}
        line += f.breaks
        p = next
        yield rec
      }
      // with the last bytes read, every record has been taken (csvRecord is never incomplete then)
      if (final) return
    }
  } finally {
    await fh.close()
  }
}
