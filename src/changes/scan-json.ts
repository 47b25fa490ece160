import {isUtf8} from 'node:buffer'

import {asText as textOf, flattenRecord, type FlatRecord} from '../io/export-reader.js'
import {stringValue} from '../json/values.js'
import {
  ARRAY,
  ENTRY,
  ESCAPED,
  FALSE,
  ID,
  KIND,
  KIND_MASK,
  NULL,
  NUMBER,
  OBJECT,
  PARENT,
  STRING,
  TRUE,
  VAL_E,
  VAL_S,
  Walk,
  walkValue,
} from '../json/walk.js'
import type {EntrySink} from './entries.js'
import {
  ROLE_APN,
  ROLE_COMPARED,
  ROLE_FIPS,
  ROLE_ID,
  ROLE_IGNORED,
  ROLE_OPTION,
  type FieldIds,
} from './names.js'
import {forEachChunk, ScanAnomaly, type ScanTarget} from './scan-io.js'
import {
  ByteDigest,
  hashBytes,
  hashJsonNumber,
  hashText,
  hashTextBytes,
  ObjectDigester,
  type Lanes,
} from './row-digest.js'

const LF = 0x0a
const COMMA = 0x2c
const OPEN = 0x7b

const isSpace = (c: number) =>
  c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a || c === 0x0b || c === 0x0c

/**
 * A line of an NDJSON export, or of our JSON export (a record a line, between `[` and `]` lines), as
 * src/io/export-reader.ts reads it: the BOM of the first line dropped, trimmed, a JSON line's trailing
 * comma dropped. Undefined for a line that holds no record.
 */
export function jsonLineText(line: string, first: boolean, json: boolean): string | undefined {
  let text = (first ? line.replace(/^\ufeff/, '') : line).trim()
  if (json) {
    if (text === '[' || text === ']' || text === '[]' || text === '') return undefined
    if (text.endsWith(',')) text = text.slice(0, -1)
  } else if (text === '') return undefined
  return text
}

/** The record of a line (jsonLineText's text), flattened; undefined when it is not a JSON object. */
export function jsonLineRecord(text: string): FlatRecord | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  return flattenRecord(value as Record<string, unknown>)
}

/**
 * Where the record of a line lies: `[s, e)` of `buf[start, end)` with the BOM, blanks and a JSON line's
 * trailing comma left out; `s === e` for a line that holds no record (`[`, `]`, blank).
 */
export function recordSpan(
  buf: Uint8Array,
  start: number,
  end: number,
  atFileStart: boolean,
  json: boolean,
): {s: number; e: number} {
  let s = start
  let e = end
  if (atFileStart && buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) s += 3
  while (s < e && isSpace(buf[s]!)) s++
  while (e > s && isSpace(buf[e - 1]!)) e--
  if (json && s < e) {
    const c = buf[s]
    if (e - s === 1 && (c === 0x5b || c === 0x5d)) return {s, e: s} // [ or ]
    if (e - s === 2 && c === 0x5b && buf[s + 1] === 0x5d) return {s, e: s} // []
    if (buf[e - 1] === COMMA) e--
    while (e > s && isSpace(buf[e - 1]!)) e--
  }
  return {s, e}
}

/**
 * One pass over an NDJSON (or JSON-lines) export: each record walked by the one JSON walker
 * (src/json/walk.ts), which checks its grammar and notes where each member's value lies, named with its
 * field id (src/changes/names.ts); each value is then hashed where it lies (src/changes/row-digest.ts) into
 * the record's key, digest and county, and its entry goes to the sink. A record the walk leaves to
 * JSON.parse as export-reader reads it: a value that flattenRecord makes JSON text (an array, an object
 * that is not an option object, anything deeper), a name met twice (JSON.parse keeps the last), a name
 * past the walker's cap on new names, and a line the walk refuses (which JSON.parse then names; a line
 * that is not a JSON object throws ScanAnomaly, and the caller reads the side through export-reader).
 */
export class JsonLinesScanner {
  private readonly walk = new Walk()
  private readonly lanes: Lanes = {a: 0, b: 0}
  private readonly digester: ObjectDigester
  private stamp = new Int32Array(64)
  private recNo = 0
  private lastFips: Buffer | undefined
  private selected = false
  private readonly bytesDigest = new ByteDigest()
  private view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0))
  private viewOf: Buffer | undefined

  constructor(
    private readonly ids: FieldIds,
    private readonly sink: EntrySink,
    private readonly target: ScanTarget,
    private readonly json: boolean,
    ignore: ReadonlySet<string>,
    /** The digest of a record's bytes (src/changes/scan.ts `digest`), not of its values. */
    private readonly byBytes = false,
  ) {
    this.walk.names = ids.namer
    this.digester = new ObjectDigester(ignore)
  }

  async scan(): Promise<void> {
    await forEachChunk(this.target.path, (buf, start, end, base, final) =>
      this.lines(buf, start, end, base, final),
    )
  }

  private lines(buf: Buffer, start: number, end: number, base: number, final: boolean): number {
    let stop = buf.lastIndexOf(LF, end - 1)
    if (stop < start) stop = final ? end : start
    else if (final) stop = end
    if (stop === start) return start
    // the walk reads bytes; JSON.parse (export-reader) reads text, where a broken UTF-8 sequence is U+FFFD
    if (!isUtf8(buf.subarray(start, stop))) throw new ScanAnomaly('not UTF-8')
    let p = start
    while (p < stop) {
      const next = this.plainLine(buf, p, stop, base)
      if (next >= 0) {
        p = next
        continue
      }
      let nl = buf.indexOf(LF, p)
      if (nl < 0 || nl >= stop) nl = stop
      this.line(buf, p, nl, base)
      p = nl + 1
    }
    return Math.min(p, end)
  }

  /**
   * A line that starts with its record, walked up to `stop` before its end is looked for: when no blank
   * lies outside the record's strings and a line feed (or `stop`) follows it, the record holds no line
   * feed (a string cannot hold a raw one: the walk refuses it) and ends its line, with no search for the
   * line feed (a native `indexOf` a line, a few percent of the scan). Otherwise the line's end is found
   * and the walk is kept when the record ends within the line and only blanks follow it (in our JSON
   * export, one comma among them): the bytes `line` would have walked (recordSpan trims just those), so
   * the record is taken as `line` takes it. Returns the offset after the line, or -1 for a line left to
   * `line` (a BOM, a leading blank, a record over two lines, anything after it).
   */
  private plainLine(buf: Buffer, p: number, stop: number, base: number): number {
    if (buf[p] !== OPEN) return -1
    const w = this.walk
    w.count = 0
    const r = walkValue(buf, p, stop, w)
    if (r < 0) return -1
    let nl = r
    if (w.spaced || (r < stop && buf[r] !== LF)) {
      nl = buf.indexOf(LF, p)
      if (nl < 0 || nl >= stop) nl = stop
      if (nl < r) return -1
      let q = r
      while (q < nl && isSpace(buf[q]!)) q++
      if (this.json && q < nl && buf[q] === COMMA) q++
      while (q < nl && isSpace(buf[q]!)) q++
      if (q !== nl) return -1
    }
    this.offset = base + p
    if (!this.record(buf, p, r)) this.slowLine(buf, p, nl, base)
    return nl + 1
  }

  private line(buf: Buffer, start: number, end: number, base: number): void {
    const {s, e} = recordSpan(buf, start, end, base + start === 0, this.json)
    if (s === e) return
    if (buf[s] !== OPEN) throw new ScanAnomaly('not a JSON object')
    const w = this.walk
    w.count = 0
    this.offset = base + start
    if (walkValue(buf, s, e, w) !== e || !this.record(buf, s, e)) this.slowLine(buf, start, end, base)
  }

  /**
   * The members the walk noted, hashed where they lie; false (nothing given to the sink) for a record
   * the walk's spans do not flatten as export-reader does.
   */
  private record(buf: Buffer, o: number, end: number): boolean {
    if (this.byBytes) return this.recordBytes(buf, o, end)
    const w = this.walk
    const m = w.entries
    const ids = this.ids
    const recNo = ++this.recNo
    const lanes = this.lanes
    let sumA = 0
    let sumB = 0
    let key = 0
    let keyA = 0
    let keyB = 0
    let fipsAt = -1
    if (ids.size > ids.known) ids.grow()
    const {role, seeds} = ids
    if (this.stamp.length < role.length) this.stamp = new Int32Array(role.length * 2)
    const stamp = this.stamp
    // whether a name is new to the county: only then are the record's names given to the sink (give)
    const seen = this.sink.seenNow()
    let fresh = false
    for (let i = 0; i < w.count; i++) {
      const at = i * ENTRY
      const id = m[at + ID]!
      if (id < 0) return false
      // a name met twice: JSON.parse keeps the last value, whatever members the first one had
      if (stamp[id] === recNo) return false
      stamp[id] = recNo
      const kind = m[at + KIND]!
      const k = kind & KIND_MASK
      const r = role[id]!
      if (k === OBJECT || k === ARRAY) {
        // an option object's members are entries of their own (`Option.Field`); anything else is JSON text
        if (k === ARRAY || m[at + PARENT]! >= 0 || !(r & ROLE_OPTION)) return false
        continue
      }
      if (id >= seen.length || seen[id] === 0) fresh = true
      if (k === NULL) continue
      const s = o + m[at + VAL_S]!
      const e = o + m[at + VAL_E]!
      const seed = seeds[id]!
      if (k === STRING) {
        if (kind & ESCAPED) hashText(stringValue(buf, s, e, true), seed, lanes)
        else hashTextBytes(buf, s + 1, e - 1, seed, lanes)
      } else if (k === NUMBER) hashJsonNumber(buf, s, e, seed, lanes)
      else if (k === TRUE || k === FALSE) hashBytes(buf, s, e, seed, lanes)
      if (r === 0) continue
      if (r & ROLE_COMPARED) {
        sumA = (sumA + lanes.a) | 0
        sumB = (sumB + lanes.b) | 0
      }
      // an empty text is no key (export-reader's asText gives '')
      if (r & ROLE_ID && e - s > (k === STRING ? 2 : 0)) {
        key = 2
        keyA = lanes.a
        keyB = lanes.b
      } else if (r & ROLE_APN && key === 0 && e - s > (k === STRING ? 2 : 0)) {
        key = 1
        keyA = lanes.a
        keyB = lanes.b
      }
      if (r & ROLE_FIPS) fipsAt = at
    }
    this.give(buf, o, fipsAt, key, keyA, keyB, sumA, sumB, fresh)
    return true
  }

  /**
   * The `bytes` digest of the record `buf[o, end)`: its bytes but the values of fields left out, in one
   * pass; the key and the county are still its values' (they match records across the sides). Nothing
   * here needs JSON.parse: equal bytes are equal records, and records whose bytes differ are compared by
   * their values later (src/changes/compare.ts).
   */
  private recordBytes(buf: Buffer, o: number, end: number): boolean {
    const w = this.walk
    const m = w.entries
    const ids = this.ids
    const lanes = this.lanes
    if (ids.size > ids.known) ids.grow()
    const role = ids.role
    if (this.viewOf !== buf) {
      this.viewOf = buf
      this.view = new DataView(buf.buffer, buf.byteOffset, buf.length)
    }
    const d = this.bytesDigest
    d.reset()
    let from = o
    let key = 0
    let keyA = 0
    let keyB = 0
    let fipsAt = -1
    // whether a name is new to the county (give's), noted in this pass over its members: one pass, not two
    const count = w.count
    const seen = this.sink.seenNow()
    let fresh = false
    for (let i = 0; i < count; i++) {
      const at = i * ENTRY
      const id = m[at + ID]!
      if (id < 0) continue
      if ((id >= seen.length || seen[id] === 0) && (m[at + KIND]! & KIND_MASK) !== OBJECT) fresh = true
      const r = role[id]!
      if ((r & (ROLE_ID | ROLE_APN | ROLE_FIPS | ROLE_IGNORED)) === 0) continue
      const s = o + m[at + VAL_S]!
      const e = o + m[at + VAL_E]!
      if (r & ROLE_IGNORED) {
        d.add(buf, this.view, from, s)
        from = e
        continue
      }
      if (r & ROLE_FIPS) fipsAt = at
      const kind = m[at + KIND]!
      const k = kind & KIND_MASK
      if ((r & ROLE_ID || (r & ROLE_APN && key === 0)) && e - s > (k === STRING ? 2 : 0) && k !== NULL) {
        if (k === STRING) {
          if (kind & ESCAPED) hashText(stringValue(buf, s, e, true), ids.seeds[id]!, lanes)
          else hashTextBytes(buf, s + 1, e - 1, ids.seeds[id]!, lanes)
        } else if (k === NUMBER) hashJsonNumber(buf, s, e, ids.seeds[id]!, lanes)
        else if (k === TRUE || k === FALSE) hashBytes(buf, s, e, ids.seeds[id]!, lanes)
        else continue // an object or a list is no key export-reader would give (its JSON text): rare, left out
        key = r & ROLE_ID ? 2 : 1
        keyA = lanes.a
        keyB = lanes.b
      }
    }
    d.add(buf, this.view, from, end)
    d.finish(lanes)
    this.give(buf, o, fipsAt, key, keyA, keyB, lanes.a, lanes.b, fresh)
    return true
  }

  /** The record's entry to the sink, with its county and its names. */
  private give(
    buf: Buffer,
    o: number,
    fipsAt: number,
    key: number,
    keyA: number,
    keyB: number,
    sumA: number,
    sumB: number,
    /** The caller met a name the county had not: its names go to the sink. */
    fresh: boolean,
  ): void {
    const w = this.walk
    const m = w.entries
    const sink = this.sink
    // the names met, for the county's list, in order: most records of a county bring none new
    if (this.finish(buf, o, fipsAt) || fresh)
      for (let i = 0; i < w.count; i++) {
        // an option object is its members' columns (flattenRecord), not one of its own: never seen
        if ((m[i * ENTRY + KIND]! & KIND_MASK) !== OBJECT) sink.see(m[i * ENTRY + ID]!)
      }
    if (key === 0) sink.unkeyed()
    else sink.add(keyA, keyB, sumA, sumB, this.offset, this.target.index)
  }

  /** The file offset of the line being scanned (`line` sets it through `base + start`). */
  private offset = 0

  /** The record's county: the manifest's, or its Fips (asText), usually the last record's; true when it changed. */
  private finish(buf: Buffer, o: number, fipsAt: number): boolean {
    if (this.target.group !== undefined) {
      if (this.selected) return false
      this.sink.select(this.target.group)
      this.selected = true
      return true
    }
    const m = this.walk.entries
    const s = fipsAt < 0 ? 0 : o + m[fipsAt + VAL_S]!
    const e = fipsAt < 0 ? 0 : o + m[fipsAt + VAL_E]!
    const kind = fipsAt < 0 ? NULL : m[fipsAt + KIND]! & KIND_MASK
    const last = this.lastFips
    const n = e - s
    // the value's bytes as sent (quotes included: "6067" and 6067 are one county, yet compared apart here)
    if (last && last.length === n && this.selected) {
      let i = 0
      while (i < n && last[i] === buf[s + i]) i++
      if (i === n) return false
    }
    this.lastFips = Buffer.from(buf.subarray(s, s + n))
    this.selected = true
    let fips = ''
    if (kind === STRING) fips = textOf(stringValue(buf, s, e, (m[fipsAt + KIND]! & ESCAPED) !== 0)) ?? ''
    else if (kind !== NULL) fips = textOf(buf.toString('latin1', s, e)) ?? ''
    this.sink.select(fips)
    return true
  }

  /** A line the walk's spans do not take, read as export-reader reads it (same text, same object). */
  private slowLine(buf: Buffer, start: number, end: number, base: number): void {
    const text = jsonLineText(buf.toString('utf8', start, end), base + start === 0, this.json)
    if (text === undefined) return
    const rec = jsonLineRecord(text)
    if (!rec) throw new ScanAnomaly('not a JSON object')
    this.sink.select(this.target.group ?? textOf(rec['Fips']) ?? '')
    this.selected = true
    this.lastFips = undefined
    for (const k in rec) this.sink.see(this.ids.ofText(k))
    const d = this.digester
    d.take(rec)
    if (!d.hasKey) this.sink.unkeyed()
    else this.sink.add(d.key.a, d.key.b, d.digest.a, d.digest.b, base + start, this.target.index)
  }
}
