import {asText, flattenRecord, type FlatRecord} from '../io/export-reader.js'
import type {EntrySink} from './entries.js'
import {ROLE_APN, ROLE_COMPARED, ROLE_FIPS, ROLE_ID, type FieldNames} from './names.js'
import {forEachChunk, ScanAnomaly, type ScanTarget} from './scan-io.js'
import {hashText, mixA, mixB, NUMBER_CANONICAL, NUMBER_NO, numberForm, ObjectDigester} from './row-digest.js'

const LF = 0x0a
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN = 0x7b
const CLOSE = 0x7d
const PRIME_A = 0x01000193
const PRIME_B = 0x5bd1e995
/** A record the fast path leaves to JSON.parse (an escape, non-ASCII text, an array, a name met twice). */
const SLOW = -1
/** No member before: the record's first. */
const TOP = -1

/** Bytes a string's scan stops at: its end, an escape, a control character, non-ASCII. */
const SPECIAL = new Uint8Array(256).map((_, c) =>
  c === QUOTE || c === BACKSLASH || c < 0x20 || c >= 0x80 ? 1 : 0,
)

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
 * One pass over an NDJSON (or JSON-lines) export: each record's key, digest and offset to the sink, from
 * its bytes: member names found by FieldNames without a string, values hashed as they are scanned. A
 * record with an escape, non-ASCII bytes, a value nested deeper than an option object, or a name met
 * twice is decoded and parsed (JSON.parse, flattenRecord) and hashed from the object, as src/io/
 * export-reader.ts would read it; a line that is not a JSON object throws ScanAnomaly, and the caller
 * reads the side through export-reader, which names the line.
 */
export class JsonLinesScanner {
  private lineNo = 0
  private sumA = 0
  private sumB = 0
  private key = 0
  private keyA = 0
  private keyB = 0
  private fa = 0
  private fb = 0
  private fipsStart = -1
  private fipsEnd = -1
  private fipsKind = 0
  private lastFips: Buffer | undefined
  private lastFipsKind = -1
  private selected = false
  private recIds = new Int32Array(256)
  private recCount = 0
  private stamp = new Int32Array(64)
  private readonly lanes = {a: 0, b: 0}
  private readonly digester: ObjectDigester

  constructor(
    private readonly names: FieldNames,
    private readonly sink: EntrySink,
    private readonly target: ScanTarget,
    private readonly json: boolean,
    ignore: ReadonlySet<string>,
  ) {
    this.digester = new ObjectDigester(ignore)
  }

  async scan(): Promise<void> {
    await forEachChunk(this.target.path, (buf, start, end, base, final) =>
      this.lines(buf, start, end, base, final),
    )
  }

  private lines(buf: Buffer, start: number, end: number, base: number, final: boolean): number {
    if (this.viewOf !== buf) {
      this.viewOf = buf
      this.view = new DataView(buf.buffer, buf.byteOffset, buf.length)
    }
    let p = start
    while (p < end) {
      let nl = buf.indexOf(LF, p)
      if (nl < 0 || nl >= end) {
        if (!final) return p
        nl = end
      }
      this.lineNo++
      this.line(buf, p, nl, base)
      p = nl + 1
    }
    return Math.min(p, end)
  }

  private line(buf: Buffer, start: number, end: number, base: number): void {
    let s = start
    let e = end
    if (base + s === 0 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) s = 3
    while (s < e && isSpace(buf[s]!)) s++
    while (e > s && isSpace(buf[e - 1]!)) e--
    if (s === e) return
    if (buf[s]! >= 0x80 || buf[e - 1]! >= 0x80) return this.slowLine(buf, start, end, base)
    if (this.json) {
      const c = buf[s]
      if (e - s === 1 && (c === 0x5b || c === 0x5d)) return // [ or ]
      if (e - s === 2 && c === 0x5b && buf[s + 1] === 0x5d) return // []
      if (buf[e - 1] === COMMA) e--
    }
    if (buf[s] !== OPEN) throw new ScanAnomaly('not a JSON object')
    if (this.record(buf, s, e) === SLOW) return this.slowLine(buf, start, end, base)
    this.finish(buf, base + start)
  }

  /** The members of the record `buf[s, e)` (starting with `{`); SLOW, or the end. */
  private record(buf: Buffer, s: number, e: number): number {
    this.sumA = this.sumB = this.key = 0
    this.fipsStart = this.fipsEnd = -1
    this.fipsKind = 0
    this.recCount = 0
    const recNo = this.lineNo
    let p = this.space(buf, s + 1, e)
    if (buf[p] === CLOSE) return this.end(buf, p + 1, e)
    let before = TOP // the previous member's key: the guess of this one's
    for (;;) {
      const name = this.name(buf, p, e, -1, before)
      if (name < 0) return SLOW
      const id = this.nameId
      before = this.nameKey
      p = this.space(buf, name, e)
      if (buf[p] === OPEN) {
        // a name met twice: JSON.parse keeps the last object, whatever members the first had
        if (this.twice(id, recNo)) return SLOW
        // an option object: its members are `Object.Field` (src/io/export-reader.ts flattenRecord)
        p = this.space(buf, p + 1, e)
        if (buf[p] === CLOSE) p++
        else
          for (let inBefore = -2 - before; ;) {
            const inner = this.name(buf, p, e, id, inBefore)
            if (inner < 0) return SLOW
            const cid = this.nameId
            inBefore = this.nameKey
            if (this.note(cid, recNo)) return SLOW
            p = this.scalar(buf, this.space(buf, inner, e), e, cid)
            if (p < 0) return SLOW
            p = this.space(buf, p, e)
            if (buf[p] === COMMA) {
              p = this.space(buf, p + 1, e)
              continue
            }
            if (buf[p] !== CLOSE) throw new ScanAnomaly('an object not closed')
            p++
            break
          }
      } else {
        if (this.note(id, recNo)) return SLOW
        p = this.scalar(buf, p, e, id)
        if (p < 0) return SLOW
      }
      p = this.space(buf, p, e)
      if (buf[p] === COMMA) {
        p = this.space(buf, p + 1, e)
        continue
      }
      if (buf[p] !== CLOSE) throw new ScanAnomaly('a record not closed')
      return this.end(buf, p + 1, e)
    }
  }

  private end(buf: Buffer, p: number, e: number): number {
    if (this.space(buf, p, e) !== e) throw new ScanAnomaly('text after a record')
    return e
  }

  private space(buf: Buffer, p: number, e: number): number {
    while (p < e && isSpace(buf[p]!)) p++
    return p
  }

  private nameId = 0
  private nameKey = 0
  /** The chunk being scanned, as a DataView too (FieldNames.matches compares four bytes at a time). */
  private view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0))
  private viewOf: Buffer | undefined
  /**
   * The guess of a member's name (FieldNames keys): the one that followed the same previous member last
   * time, or that began the record (TOP) or the option object (the object's own key passed as
   * `-2 - key`). Records of an export repeat their layout, so a name
   * costs one comparison with the guess instead of a scan, a hash and a comparison.
   */
  private after = new Int32Array(64).fill(-1)

  /**
   * A member name and its colon: sets nameId and nameKey, returns the position after the colon; SLOW to
   * decode it. `before`: the previous member's key (TOP, or `-2 - key` of the object it opens).
   */
  private name(buf: Buffer, p: number, e: number, parent: number, before: number): number {
    if (buf[p] !== QUOTE) throw new ScanAnomaly('a member without a name')
    const s = ++p
    const names = this.names
    // the guesses after a member (even places) and at the start of an option object (odd places) apart
    const at = before >= 0 ? 2 * before + 2 : before === TOP ? 0 : -2 * before - 3
    if (at >= this.after.length) {
      const bigger = new Int32Array(Math.max(at + 1, this.after.length * 2)).fill(-1)
      bigger.set(this.after)
      this.after = bigger
    }
    const guess = this.after[at]!
    if (guess >= 0 && names.matches(guess, buf, this.view, s, e)) p = s + names.lengthOfKey(guess)
    else {
      for (; p < e; p++) {
        const c = buf[p]!
        if (c === QUOTE) break
        if (c === BACKSLASH || c >= 0x80) return SLOW
        if (c < 0x20) throw new ScanAnomaly('a control character in a name')
      }
      if (p >= e) throw new ScanAnomaly('a name not closed')
      this.after[at] = names.keyOf(buf, s, p, parent)
    }
    this.nameKey = this.after[at]!
    this.nameId = names.idOfKey(this.nameKey)
    p = this.space(buf, p + 1, e)
    if (buf[p] !== COLON) throw new ScanAnomaly('a name without a colon')
    return p + 1
  }

  /** Whether the record met name `id` already (then marks it met). */
  private twice(id: number, recNo: number): boolean {
    if (id >= this.stamp.length) {
      const bigger = new Int32Array(Math.max(id + 1, this.stamp.length * 2))
      bigger.set(this.stamp)
      this.stamp = bigger
    }
    if (this.stamp[id] === recNo) return true
    this.stamp[id] = recNo
    return false
  }

  /** Remember the record's field `id`; true when the record had it already (JSON.parse keeps the last). */
  private note(id: number, recNo: number): boolean {
    if (this.twice(id, recNo)) return true
    if (this.recCount === this.recIds.length) {
      const bigger = new Int32Array(this.recIds.length * 2)
      bigger.set(this.recIds)
      this.recIds = bigger
    }
    this.recIds[this.recCount++] = id
    return false
  }

  /**
   * A scalar value at `p`: hashed into the record's digest, key and county as its role says; returns the
   * position after it, or SLOW for a value the fast path does not take (an array, an object, an escape).
   */
  private scalar(buf: Buffer, p: number, e: number, id: number): number {
    const names = this.names
    let a = names.seedA[id]!
    let b = names.seedB[id]!
    let c = buf[p]!
    let s = p
    let end: number
    let kind: number // 1 a string, 2 a number, 3 a literal
    if (c === QUOTE) {
      s = ++p
      for (; ; p++) {
        if (p >= e) throw new ScanAnomaly('a string not closed')
        c = buf[p]!
        if (SPECIAL[c]) {
          if (c === QUOTE) break
          if (c === BACKSLASH || c >= 0x80) return SLOW
          throw new ScanAnomaly('a control character in a string')
        }
        a = Math.imul(a ^ c, PRIME_A)
        b = Math.imul(b ^ c, PRIME_B)
      }
      end = p++
      kind = 1
    } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
      // true, false, null
      const word = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null'
      for (let i = 0; i < word.length; i++)
        if (buf[p + i] !== word.charCodeAt(i)) throw new ScanAnomaly('not a JSON value')
      end = p += word.length
      if (c === 0x6e) return p
      for (let i = s; i < end; i++) {
        a = Math.imul(a ^ buf[i]!, PRIME_A)
        b = Math.imul(b ^ buf[i]!, PRIME_B)
      }
      kind = 3
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      for (; p < e; p++) {
        c = buf[p]!
        if (!((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45))
          break
        a = Math.imul(a ^ c, PRIME_A)
        b = Math.imul(b ^ c, PRIME_B)
      }
      end = p
      kind = 2
    } else if (c === OPEN || c === 0x5b) return SLOW
    else throw new ScanAnomaly('not a JSON value')
    let fa: number
    let fb: number
    const form = kind === 3 ? NUMBER_NO : numberForm(buf, s, end)
    if (kind === 2 && form === NUMBER_NO) throw new ScanAnomaly('not a JSON number')
    if (form !== NUMBER_NO && form !== NUMBER_CANONICAL) {
      // asText: a JSON number as JavaScript prints it, a string that reads as a number likewise
      const text = buf.toString('latin1', s, end)
      const l = this.lanes
      hashText(
        kind === 2 ? String(Number(text)) : (asText(text) ?? ''),
        {a: names.seedA[id]!, b: names.seedB[id]!},
        l,
      )
      fa = l.a
      fb = l.b
    } else {
      fa = mixA(a ^ (end - s))
      fb = mixB(b + (end - s))
    }
    const role = names.role[id]!
    if (role & ROLE_COMPARED) {
      this.sumA = (this.sumA + fa) | 0
      this.sumB = (this.sumB + fb) | 0
    }
    if (role & ROLE_ID && end > s) {
      this.key = 2
      this.keyA = fa
      this.keyB = fb
    } else if (role & ROLE_APN && end > s && this.key === 0) {
      this.key = 1
      this.keyA = fa
      this.keyB = fb
    }
    if (role & ROLE_FIPS) {
      this.fipsStart = s
      this.fipsEnd = end
      this.fipsKind = kind
    }
    return p
  }

  /** The record scanned: its county, its names, its entry. */
  private finish(buf: Buffer, offset: number): void {
    if (this.target.group === undefined) this.selectByFips(buf)
    else if (!this.selected) {
      this.sink.select(this.target.group)
      this.selected = true
    }
    for (let i = 0; i < this.recCount; i++) this.sink.see(this.recIds[i]!)
    if (this.key === 0) this.sink.unkeyed()
    else this.sink.add(this.keyA, this.keyB, this.sumA, this.sumB, offset, this.target.index)
  }

  private selectByFips(buf: Buffer): void {
    const s = this.fipsStart
    const n = Math.max(0, this.fipsEnd - s)
    const last = this.lastFips
    if (last && last.length === n && this.lastFipsKind === this.fipsKind) {
      let i = 0
      while (i < n && last[i] === buf[s + i]) i++
      if (i === n) return
    }
    this.lastFips = Buffer.from(buf.subarray(s, s + n))
    this.lastFipsKind = this.fipsKind
    const text = buf.toString('latin1', s, s + n)
    const fips = this.fipsKind === 0 ? '' : this.fipsKind === 2 ? String(Number(text)) : (asText(text) ?? '')
    this.sink.select(fips)
  }

  /** A line the fast path does not take, read as export-reader reads it (same text, same object). */
  private slowLine(buf: Buffer, start: number, end: number, base: number): void {
    const text = jsonLineText(buf.toString('utf8', start, end), base + start === 0, this.json)
    if (text === undefined) return
    const rec = jsonLineRecord(text)
    if (!rec) throw new ScanAnomaly('not a JSON object')
    this.sink.select(this.target.group ?? asText(rec['Fips']) ?? '')
    this.selected = true
    this.lastFips = undefined
    for (const k in rec) this.sink.see(this.names.ofText(k))
    const d = this.digester
    d.take(rec)
    if (!d.hasKey) this.sink.unkeyed()
    else this.sink.add(d.key.a, d.key.b, d.digest.a, d.digest.b, base + start, this.target.index)
  }
}
