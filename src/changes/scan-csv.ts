import {asText} from '../io/export-reader.js'
import {unguardCell} from '../text/csv-cell.js'
import type {EntrySink} from './entries.js'
import {ROLE_APN, ROLE_COMPARED, ROLE_FIPS, ROLE_ID, type FieldNames} from './names.js'
import {forEachChunk, ScanAnomaly, type ScanTarget} from './scan-io.js'
import {hashText, mixA, mixB, NUMBER_CANONICAL, NUMBER_NO, numberForm, type Lanes} from './row-digest.js'

const QUOTE = 0x22
const COMMA = 0x2c
const CR = 0x0d
const LF = 0x0a
const APOSTROPHE = 0x27
/** What a byte is to the scan: the end of an unquoted field, not a digit, not ASCII (a bit each). */
const STOP = 1
const NOT_DIGIT = 2
const HIGH = 4
const KIND = new Uint8Array(256).map((_, c) =>
  c === COMMA || c === CR || c === LF || c === QUOTE
    ? STOP | NOT_DIGIT
    : (c >= 0x30 && c <= 0x39 ? 0 : NOT_DIGIT) | (c >= 0x80 ? HIGH : 0),
)
const PRIME_A = 0x01000193
const PRIME_B = 0x5bd1e995

/**
 * The fields of the CSV record starting at `buf[start]` (RFC 4180: quoted fields with doubled quotes and
 * line breaks), decoded as UTF-8, and where the record ends (at its line break, or `end`); undefined when
 * it does not end before `end` and more bytes may follow (`final` false). For the header and for reading
 * a record back by its offset: the scan itself does not build strings. The record is decoded at once and
 * split as text (one native call instead of one per field).
 */
export function csvRecordAt(
  buf: Buffer,
  start: number,
  end: number,
  final: boolean,
): {fields: string[]; next: number} | undefined {
  let p = start
  let quotes = false
  for (let inQuotes = false; p < end; p++) {
    const c = buf[p]!
    if (c === QUOTE) {
      inQuotes = !inQuotes // a doubled quote inside a quoted field toggles twice
      quotes = true
    } else if (!inQuotes && (c === CR || c === LF)) break
  }
  if (p >= end && !final) return undefined
  const text = buf.toString('utf8', start, p)
  return {fields: quotes ? splitQuoted(text) : text.split(','), next: p}
}

/** A record's text with quoted fields, split: quotes around a field dropped, doubled ones undoubled. */
function splitQuoted(text: string): string[] {
  const fields: string[] = []
  for (let i = 0; ;) {
    if (text.charCodeAt(i) === QUOTE) {
      let field = ''
      let from = i + 1
      for (i = from; i < text.length; i++) {
        if (text.charCodeAt(i) !== QUOTE) continue
        if (text.charCodeAt(i + 1) !== QUOTE) break
        field += text.slice(from, i + 1)
        from = i + 2
        i++
      }
      fields.push(field + text.slice(from, i))
      i++ // the closing quote
    } else {
      let j = text.indexOf(',', i)
      if (j < 0) j = text.length
      fields.push(text.slice(i, j))
      i = j
    }
    if (text.charCodeAt(i) !== COMMA) return fields
    i++
  }
}

/**
 * One pass over a CSV export: each record's key, digest and offset to the sink, no string or object per
 * record (src/changes/compare.ts). The grammar is src/io/csv-reader.ts's; anything outside the common case
 * it reads (a quote out of place, a record of another length, an unclosed quote) throws ScanAnomaly, and
 * the caller reads the side through src/io/export-reader.ts instead, which names the problem. A field
 * that is not plain ASCII, has doubled quotes, starts with the formula guard `'` or is a number in a
 * non-shortest form (`688600.0`) is decoded and hashed as export-reader + asText would give it.
 */
export class CsvScanner {
  private header: string[] | undefined
  private ids: number[] = []
  private roles = new Int32Array(0)
  private seedA = new Int32Array(0)
  private seedB = new Int32Array(0)
  private lastFips: Buffer | undefined
  /** A manifest's county file: its county chosen (at its first record: an empty file adds no county). */
  private selected = false
  /** The header's names are due to the county's list (at its first record, and at a change of county). */
  private namesDue = false
  private readonly lanes: Lanes = {a: 0, b: 0}

  constructor(
    private readonly names: FieldNames,
    private readonly sink: EntrySink,
    private readonly target: ScanTarget,
  ) {}

  /** Scan the file; returns its header (undefined: an empty file). */
  async scan(): Promise<string[] | undefined> {
    await forEachChunk(this.target.path, (buf, start, end, base, final) =>
      this.header ? this.records(buf, start, end, base, final) : this.readHeader(buf, start, end, final),
    )
    return this.header
  }

  private readHeader(buf: Buffer, start: number, end: number, final: boolean): number {
    let p = start
    // csv-reader: a UTF-8 BOM at the start of the file is not part of the first name; empty lines skipped
    if (p === 0 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) p = 3
    while (p < end && (buf[p] === CR || buf[p] === LF)) p++
    if (p >= end) return final ? end : start
    const rec = csvRecordAt(buf, p, end, final)
    if (!rec) return start
    // the grammar is checked as the records' is: a header the byte scan would not take goes to csv-reader
    this.checkHeader(buf, p, rec.next)
    // export-reader: a BOM is dropped from any name, then the formula guard undone
    this.header = rec.fields.map((h) => unguardCell(h.replace(/^\ufeff/, '')))
    this.ids = this.header.map((h) => this.names.ofText(h))
    const n = this.header.length
    this.roles = new Int32Array(n)
    this.seedA = new Int32Array(n)
    this.seedB = new Int32Array(n)
    this.ids.forEach((id, i) => {
      // a name met twice: the record object keeps the last cell under it, so only the last one counts
      this.roles[i] = this.ids.lastIndexOf(id) === i ? this.names.role[id]! : 0
      this.seedA[i] = this.names.seedA[id]!
      this.seedB[i] = this.names.seedB[id]!
    })
    return rec.next
  }

  /** The header `buf[start, end)` in csv-reader's grammar, or ScanAnomaly (csv-reader then names it). */
  private checkHeader(buf: Buffer, start: number, end: number): void {
    for (let p = start; ; p++) {
      if (p < end && buf[p] === QUOTE) {
        for (p++; ; p++) {
          if (p >= end) throw new ScanAnomaly('an unclosed quote')
          if (buf[p] !== QUOTE) continue
          if (p + 1 < end && buf[p + 1] === QUOTE) p++
          else break
        }
        p++
        if (p < end && buf[p] !== COMMA) throw new ScanAnomaly('text after a closing quote')
      } else
        for (; p < end && buf[p] !== COMMA; p++)
          if (buf[p] === QUOTE) throw new ScanAnomaly('a quote inside a field')
      if (p >= end) return
    }
  }

  /**
   * The hot loop: every record that ends before `end`; returns where the first unfinished one starts.
   * Long on purpose (conventions, habit 0): it runs per byte and per field, 12 million fields a side at
   * 200,000 records, and keeps its state in locals; the rare cases leave it through method calls.
   */
  private records(buf: Buffer, start: number, end: number, base: number, final: boolean): number {
    const {roles, seedA, seedB, sink} = this
    const ncols = roles.length
    let p = start
    while (p < end) {
      let c = buf[p]!
      if (c === LF || c === CR) {
        p++
        continue
      }
      const recStart = p
      let col = 0
      let sumA = 0
      let sumB = 0
      let key = 0 // 2: an id, 1: an APN
      let keyA = 0
      let keyB = 0
      let fipsStart = -1
      let fipsEnd = -1
      let fipsQuoted = 0
      for (;;) {
        let a = seedA[col]!
        let b = seedB[col]!
        let kinds = 0
        let escaped = false
        let quoted = 0
        let s: number
        let e: number
        if (p < end && buf[p] === QUOTE) {
          quoted = 1
          s = ++p
          for (;;) {
            if (p >= end) {
              if (final) throw new ScanAnomaly('an unclosed quote')
              return recStart
            }
            c = buf[p]!
            if (c === QUOTE) {
              if (p + 1 >= end && !final) return recStart
              if (p + 1 >= end || buf[p + 1] !== QUOTE) break
              escaped = true
              p += 2
              continue
            }
            kinds |= KIND[c]!
            a = Math.imul(a ^ c, PRIME_A)
            b = Math.imul(b ^ c, PRIME_B)
            p++
          }
          e = p++
          if (p < end) {
            c = buf[p]!
            if (c !== COMMA && c !== CR && c !== LF) throw new ScanAnomaly('text after a closing quote')
          }
        } else {
          s = p
          while (p < end) {
            c = buf[p]!
            const k = KIND[c]!
            if (k & STOP) break
            kinds |= k
            a = Math.imul(a ^ c, PRIME_A)
            b = Math.imul(b ^ c, PRIME_B)
            p++
          }
          if (p < end && buf[p] === QUOTE) throw new ScanAnomaly('a quote inside a field')
          e = p
          if (p >= end && !final) return recStart
        }
        if (col >= ncols) throw new ScanAnomaly('a record longer than the header')
        const role = roles[col]!
        if (role !== 0 && e > s) {
          let fa: number
          let fb: number
          c = buf[s]!
          if (
            kinds & HIGH ||
            escaped ||
            c === APOSTROPHE ||
            // digits only: a code ("06067") or an integer asText keeps, unless past 15 digits
            (kinds & NOT_DIGIT
              ? (c === 0x2d || (c >= 0x30 && c <= 0x39)) && this.rewritten(buf, s, e)
              : e - s > 15 && c !== 0x30)
          ) {
            this.slowCell(buf, s - quoted, e + quoted, col)
            fa = this.lanes.a
            fb = this.lanes.b
          } else {
            fa = mixA(a ^ (e - s))
            fb = mixB(b + (e - s))
          }
          if (role & ROLE_COMPARED) {
            sumA = (sumA + fa) | 0
            sumB = (sumB + fb) | 0
          }
          if (role & ROLE_ID) {
            key = 2
            keyA = fa
            keyB = fb
          } else if (role & ROLE_APN && key === 0) {
            key = 1
            keyA = fa
            keyB = fb
          }
          if (role & ROLE_FIPS) {
            fipsStart = s
            fipsEnd = e
            fipsQuoted = quoted
          }
        }
        col++
        if (p < end && buf[p] === COMMA) {
          p++
          continue
        }
        break
      }
      if (col !== ncols) throw new ScanAnomaly('a record shorter than the header')
      if (this.target.group === undefined) this.selectByFips(buf, fipsStart, fipsEnd, fipsQuoted)
      else if (!this.selected) {
        sink.select(this.target.group)
        this.selected = this.namesDue = true
      }
      if (this.namesDue) {
        for (const id of this.ids) sink.see(id)
        this.namesDue = false
      }
      if (key === 0) sink.unkeyed()
      else sink.add(keyA, keyB, sumA, sumB, base + recStart, this.target.index)
    }
    return p
  }

  /** Whether asText rewrites the number `buf[s, e)` (or decides it is not one, cheaply: NUMBER_NO). */
  private rewritten(buf: Buffer, s: number, e: number): boolean {
    const form = numberForm(buf, s, e)
    return form !== NUMBER_NO && form !== NUMBER_CANONICAL
  }

  /** A cell as export-reader and asText give it (decoded, quotes undoubled, guard undone, number rewritten). */
  private slowCell(buf: Buffer, s: number, e: number, col: number): void {
    const rec = csvRecordAt(buf, s, e, true)!
    const text = asText(unguardCell(rec.fields[0]!)) ?? ''
    hashText(text, {a: this.seedA[col]!, b: this.seedB[col]!}, this.lanes)
  }

  /** A single file: the record's county is its Fips (asText; none: ""), usually the last record's. */
  private selectByFips(buf: Buffer, s: number, e: number, quoted: number): void {
    const last = this.lastFips
    const n = Math.max(0, e - s)
    if (last && last.length === n) {
      let i = 0
      while (i < n && last[i] === buf[s + i]) i++
      if (i === n) return
    }
    this.lastFips = Buffer.from(buf.subarray(s, s + n))
    const fips =
      n === 0 ? '' : (asText(unguardCell(csvRecordAt(buf, s - quoted, e + quoted, true)!.fields[0]!)) ?? '')
    this.sink.select(fips)
    this.namesDue = true
  }
}
