import {isUtf8} from 'node:buffer'

import {
  CSV_BROKEN,
  CSV_DOUBLED,
  CSV_INCOMPLETE,
  CSV_NOT_DIGIT,
  CsvFields,
  csvFieldText,
  csvFieldTexts,
  csvRecord,
} from '../io/csv-reader.js'
import {asText} from '../io/export-reader.js'
import {isFormulaStart, unguardCell} from '../text/csv-cell.js'
import type {EntrySink} from './entries.js'
import {ROLE_APN, ROLE_COMPARED, ROLE_FIPS, ROLE_ID, ROLE_IGNORED, type FieldIds} from './names.js'
import {forEachChunk, ScanAnomaly, type ScanTarget} from './scan-io.js'
import {ByteDigest, hashDigits, hashText, hashTextBytes, type Lanes} from './row-digest.js'

const CR = 0x0d
const LF = 0x0a
const APOSTROPHE = 0x27

/**
 * A CSV export's header as src/io/export-reader.ts reads it: each name's BOM dropped (the file's is
 * already), then the formula guard undone (sfl guards a header name as it guards a text cell).
 */
export function headerNames(fields: readonly string[]): string[] {
  return fields.map((h) => unguardCell(h.replace(/^\ufeff/, '')))
}

/**
 * One pass over a CSV export: each record's fields found by the one CSV grammar (src/io/csv-reader.ts
 * `csvRecord`, spans into the bytes), each compared field hashed where it lies (src/changes/row-digest.ts)
 * into the record's key and digest, its entry to the sink; no string or object per record. A cell is the
 * text export-reader gives: the formula guard (`'` before = + - @, a tab or a CR) undone, doubled quotes
 * undoubled (those cells are decoded first), an empty cell null. A record of another length than the
 * header, or one the grammar refuses, throws ScanAnomaly, and the caller reads the side through
 * src/io/export-reader.ts, which names the problem.
 */
export class CsvScanner {
  private header: string[] | undefined
  private ids: number[] = []
  private roles = new Int32Array(0)
  private seeds: Lanes[] = []
  private lastFips: Buffer | undefined
  /** A manifest's county file: its county chosen (at its first record: an empty file adds no county). */
  private selected = false
  /** The header's names are due to the county's list (at its first record, and at a change of county). */
  private namesDue = false
  private readonly lanes: Lanes = {a: 0, b: 0}
  private readonly f = new CsvFields()
  private readonly bytesDigest = new ByteDigest()
  private view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0))
  private viewOf: Buffer | undefined

  constructor(
    private readonly names: FieldIds,
    private readonly sink: EntrySink,
    private readonly target: ScanTarget,
    /** The digest of a record's bytes (src/changes/scan.ts `digest`), not of its values. */
    private readonly byBytes = false,
  ) {}

  /** Scan the file; returns its header (undefined: an empty file). */
  async scan(): Promise<string[] | undefined> {
    await forEachChunk(this.target.path, (buf, start, end, base, final) =>
      this.take(buf, start, end, base, final),
    )
    return this.header
  }

  /** The records of `buf[start, end)` (the header first); returns where the first unfinished one starts. */
  private take(buf: Buffer, start: number, end: number, base: number, final: boolean): number {
    // cells are hashed as bytes; export-reader decodes text, where a broken UTF-8 sequence is U+FFFD
    const last = final ? end : buf.lastIndexOf(LF, end - 1) + 1
    if (last > start && !isUtf8(buf.subarray(start, last))) throw new ScanAnomaly('not UTF-8')
    let p = start
    // csv-reader: the BOM of the file is no part of its first name
    if (base + p === 0 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) p = 3
    const f = this.f
    for (;;) {
      // line ends, and the empty lines csv-reader skips
      while (p < end && (buf[p] === CR || buf[p] === LF)) p++
      if (p >= end) return final ? end : p
      const next = csvRecord(buf, p, end, final, f)
      if (next === CSV_INCOMPLETE) return p
      if (next === CSV_BROKEN) throw new ScanAnomaly('not in the CSV grammar')
      if (this.header) this.record(buf, p, next, base)
      else this.readHeader(buf, p, next)
      p = next
    }
  }

  private readHeader(buf: Buffer, from: number, to: number): void {
    this.header = headerNames(csvFieldTexts(buf, from, to, this.f))
    this.ids = this.header.map((h) => this.names.ofText(h))
    const n = this.header.length
    this.roles = new Int32Array(n)
    this.seeds = this.ids.map((id) => this.names.seeds[id] ?? {a: 0, b: 0})
    this.ids.forEach((id, i) => {
      // a name met twice: the record object keeps the last cell under it, so only the last one counts
      this.roles[i] = id >= 0 && this.ids.lastIndexOf(id) === i ? this.names.role[id]! : 0
    })
    if (this.ids.includes(-1)) throw new ScanAnomaly('more columns than the scan names')
  }

  /** One record: `f` holds its fields. */
  private record(buf: Buffer, recStart: number, recEnd: number, base: number): void {
    const {roles, seeds, sink, lanes} = this
    const f = this.f
    const n = roles.length
    if (f.count !== n) throw new ScanAnomaly('a record of another length than the header')
    const start = f.start
    const end = f.end
    const bytes = this.byBytes
    let from = recStart
    if (bytes) {
      this.bytesDigest.reset()
      if (this.viewOf !== buf) {
        this.viewOf = buf
        this.view = new DataView(buf.buffer, buf.byteOffset, buf.length)
      }
    }
    let sumA = 0
    let sumB = 0
    let key = 0 // 2: an id, 1: an APN
    let keyA = 0
    let keyB = 0
    let fipsCol = -1
    for (let i = 0; i < n; i++) {
      const role = roles[i]!
      if (role === 0) continue
      let s = start[i]!
      const e = end[i]!
      if (role & ROLE_IGNORED) {
        // the bytes digest skips a field left out; the values digest never adds it
        if (bytes) {
          this.bytesDigest.add(buf, this.view, from, s)
          from = e
        }
        continue
      }
      // the bytes digest needs the values of the key and the county only
      if (bytes && !(role & (ROLE_ID | ROLE_APN | ROLE_FIPS))) continue
      if (e === s) continue // an empty cell is null
      const flags = f.flags[i]!
      if (!(flags & CSV_NOT_DIGIT)) hashDigits(buf, s, e, seeds[i]!, lanes)
      else if (flags & CSV_DOUBLED) hashText(unguardCell(csvFieldText(buf, s, e, flags)), seeds[i]!, lanes)
      else {
        // the formula guard undone (src/text/csv-cell.ts unguardCell)
        if (buf[s] === APOSTROPHE && e - s > 1 && isFormulaStart(buf[s + 1]!)) s++
        hashTextBytes(buf, s, e, seeds[i]!, lanes)
      }
      if (role & ROLE_COMPARED) {
        sumA = (sumA + lanes.a) | 0
        sumB = (sumB + lanes.b) | 0
      }
      if (role & ROLE_ID) {
        key = 2
        keyA = lanes.a
        keyB = lanes.b
      } else if (role & ROLE_APN && key === 0) {
        key = 1
        keyA = lanes.a
        keyB = lanes.b
      }
      if (role & ROLE_FIPS) fipsCol = i
    }
    if (bytes) {
      this.bytesDigest.add(buf, this.view, from, recEnd)
      this.bytesDigest.finish(lanes)
      sumA = lanes.a
      sumB = lanes.b
    }
    if (this.target.group === undefined) this.selectByFips(buf, fipsCol)
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

  /** A single file: the record's county is its Fips (asText; none: ""), usually the last record's. */
  private selectByFips(buf: Buffer, col: number): void {
    const f = this.f
    const s = col < 0 ? 0 : f.start[col]!
    const e = col < 0 ? 0 : f.end[col]!
    const last = this.lastFips
    const n = e - s
    if (last && last.length === n) {
      let i = 0
      while (i < n && last[i] === buf[s + i]) i++
      if (i === n) return
    }
    this.lastFips = Buffer.from(buf.subarray(s, s + n))
    const fips = n === 0 ? '' : (asText(unguardCell(csvFieldText(buf, s, e, f.flags[col]!))) ?? '')
    this.sink.select(fips)
    this.namesDue = true
  }
}
