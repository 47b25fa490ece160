import {numberValue} from '../json/values.js'
import {numberEnd} from '../json/walk.js'
import type {FlatValue} from '../io/export-reader.js'

/**
 * The comparison's fingerprints (src/changes/compare.ts), computed the same way from a value's bytes
 * where it lies (a CSV cell, a JSON member: src/changes/scan-csv.ts, scan-json.ts), from a Parquet
 * column's value (scan-parquet.ts) and from a record object (a file read through src/io/export-reader.ts):
 * values equal by the comparison's rule (`asText`: the number `688600`, the CSV text `688600.0` and the
 * Parquet double 688600 are one value; `06067` is a code) get equal fingerprints, whatever their format.
 *
 * A value's fingerprint is two 32-bit lanes seeded with a hash of its field's name and finished with a
 * murmur3-style mix: for a number (a JSON number, or a text in JSON's number grammar, finite) a hash of
 * its double's 64 bits, so `688600.0` and `688600` need no conversion to a shortest text; for any other
 * text FNV-1a over its UTF-8 bytes; booleans as the text `true` / `false`; null has none. A record's digest
 * is the sum, lane by lane, of its compared fields' fingerprints, so it does not depend on field order
 * (a CSV's columns, an NDJSON record's members). Two records that differ in a field share a digest with
 * odds of about 2^-64. Not cryptographic: a file written to collide on purpose could hide a change.
 */
export interface Lanes {
  a: number
  b: number
}

const PRIME_A = 0x01000193 // FNV-1a's 32-bit prime
const PRIME_B = 0x5bd1e995 // another odd multiplier (murmur2's), so the lanes do not collide together
const BASIS_A = 0x811c9dc5 // FNV-1a's offset basis
const BASIS_B = 0x3c6ef372

/** murmur3's 32-bit finaliser: every input bit reaches every output bit. */
export function mixA(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) | 0
}

/** Another finaliser (constants of C. Wellons' lowbias32), for the second lane. */
export function mixB(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x7feb352d)
  h ^= h >>> 15
  h = Math.imul(h, 0x846ca68b)
  return (h ^ (h >>> 16)) | 0
}

/** The two lanes of the text bytes `buf[start, end)`, seeded; written to `out`. */
export function hashBytes(buf: Uint8Array, start: number, end: number, seed: Lanes, out: Lanes): void {
  let a = seed.a
  let b = seed.b
  for (let i = start; i < end; i++) {
    const c = buf[i]!
    a = Math.imul(a ^ c, PRIME_A)
    b = Math.imul(b ^ c, PRIME_B)
  }
  out.a = mixA(a ^ (end - start))
  out.b = mixB(b + (end - start))
}

const f64 = new Float64Array(1)
const u32 = new Uint32Array(f64.buffer)

/** The two lanes of a finite number (-0 is 0, as its text is). */
export function hashNumber(x: number, seed: Lanes, out: Lanes): void {
  f64[0] = x === 0 ? 0 : x
  const lo = u32[0]!
  const hi = u32[1]!
  // tagged apart from texts (whose lanes end with their length mixed in), each lane over both words
  out.a = mixA(Math.imul(seed.a ^ lo, PRIME_A) ^ hi ^ 0x9e3779b9)
  out.b = mixB(Math.imul(seed.b ^ hi, PRIME_B) ^ lo ^ 0x7f4a7c15)
}

const MINUS = 0x2d
const ZERO = 0x30
const NINE = 0x39

/**
 * The two lanes of a text value given as UTF-8 bytes `buf[start, end)` (a CSV cell, a JSON string's body
 * without escapes, a Parquet string): a text in JSON's number grammar whose number is finite is that
 * number (`asText`), any other its bytes.
 */
export function hashTextBytes(buf: Uint8Array, start: number, end: number, seed: Lanes, out: Lanes): void {
  const c = buf[start]
  if (c !== undefined && start < end && (c === MINUS || (c >= ZERO && c <= NINE))) {
    const q = numberEnd(buf, start, end)
    if (q >= 0 && (q & 0x3fffffff) === end) {
      const x = numberValue(buf, start, end)
      if (Number.isFinite(x)) return hashNumber(x, seed, out)
    }
  }
  hashBytes(buf, start, end, seed, out)
}

/**
 * `hashTextBytes` of a text of digits alone (a CSV cell in which the grammar met no other byte): an
 * integer of up to 15 digits is exact in a double, read here in one pass; a leading zero makes it a code.
 */
export function hashDigits(buf: Uint8Array, start: number, end: number, seed: Lanes, out: Lanes): void {
  const n = end - start
  if (n > 15 || (n > 1 && buf[start] === ZERO)) return hashTextBytes(buf, start, end, seed, out)
  let v = 0
  for (let i = start; i < end; i++) v = v * 10 + (buf[i]! - ZERO)
  hashNumber(v, seed, out)
}

/** The two lanes of a JSON number's checked text `buf[start, end)` (one JSON.parse reads as infinite is its text). */
export function hashJsonNumber(buf: Uint8Array, start: number, end: number, seed: Lanes, out: Lanes): void {
  const x = numberValue(buf, start, end)
  if (Number.isFinite(x)) hashNumber(x, seed, out)
  else hashText(String(x), seed, out)
}

const scratch = {buf: Buffer.alloc(256)}

/** The two lanes of a text value (`hashTextBytes` over its UTF-8 bytes). */
export function hashText(text: string, seed: Lanes, out: Lanes): void {
  const n = Buffer.byteLength(text)
  if (n > scratch.buf.length) scratch.buf = Buffer.alloc(n * 2)
  scratch.buf.write(text, 0, 'utf8')
  hashTextBytes(scratch.buf, 0, n, seed, out)
}

/**
 * A digest of a record's bytes as they lie (the `bytes` digest: src/changes/scan.ts), a span at a time,
 * eight bytes a step: used when both sides are files of one text format, where a record unchanged is the
 * same bytes but for the fields left out, whose values the caller skips. Two lanes, each of two
 * accumulators (even and odd words), so a step's four multiply-rotate chains run side by side instead of
 * one after the other (over a side of the 200,000-record NDJSON benchmark pair the digest took about a
 * fifth of the scan's CPU a word a step); every word reaches both lanes, and the accumulators are folded
 * into each lane before its mix. A span's last 0 to 7 bytes go a byte at a time into the even
 * accumulators, whatever the span's alignment, so the same bytes split into the same spans give the same
 * digest. Records whose digests differ are compared field by field (src/changes/compare.ts), so a digest
 * that differs for bytes that mean the same (`1.0` and `1`, members in another order) costs a read, never
 * a wrong answer; both sides of one comparison are digested by this code, so it may change between
 * versions.
 */
export class ByteDigest {
  a = 0
  b = 0
  c = 0
  d = 0
  n = 0

  reset(): void {
    this.a = 0x27d4eb2f
    this.b = 0x165667b1
    this.c = 0x61c88647
    this.d = 0x7f4a7c15
    this.n = 0
  }

  /** Add the bytes `buf[s, e)` (`view` over the same buffer). */
  add(buf: Uint8Array, view: DataView, s: number, e: number): void {
    let a = this.a
    let b = this.b
    let c = this.c
    let d = this.d
    let i = s
    for (; i + 8 <= e; i += 8) {
      const w = view.getInt32(i, true)
      const x = view.getInt32(i + 4, true)
      a = Math.imul(a ^ w, 0x9e3779b1)
      a = (a << 13) | (a >>> 19)
      b = Math.imul(b ^ w, 0x85ebca77)
      b = (b << 17) | (b >>> 15)
      c = Math.imul(c ^ x, 0xc2b2ae3d)
      c = (c << 13) | (c >>> 19)
      d = Math.imul(d ^ x, 0x27d4eb2f)
      d = (d << 17) | (d >>> 15)
    }
    for (; i < e; i++) {
      a = Math.imul(a ^ buf[i]!, PRIME_A)
      b = Math.imul(b ^ buf[i]!, PRIME_B)
    }
    this.a = a
    this.b = b
    this.c = c
    this.d = d
    this.n += e - s
  }

  /** The digest's two lanes: each lane's odd-word accumulator mixed before it is folded in. */
  finish(out: Lanes): void {
    out.a = mixA(this.a ^ mixB(this.c) ^ this.n)
    out.b = mixB(this.b + mixA(this.d) + this.n)
  }
}

/** A field name's seed: its lanes from fixed bases, so a value hashes differently under each name. */
export function nameSeed(name: string): Lanes {
  const out = {a: 0, b: 0}
  const bytes = Buffer.from(name, 'utf8')
  hashBytes(bytes, 0, bytes.length, {a: BASIS_A, b: BASIS_B}, out)
  return out
}

/** A field's fingerprint from its value in a record object (null: none, returns false). */
export function valueLanes(v: FlatValue | undefined, seed: Lanes, out: Lanes): boolean {
  if (v === null || v === undefined) return false
  if (typeof v === 'string') hashText(v, seed, out)
  else if (typeof v === 'number') {
    if (Number.isFinite(v)) hashNumber(v, seed, out)
    else hashText(String(v), seed, out)
  } else hashText(v ? 'true' : 'false', seed, out)
  return true
}

/**
 * A record object's key and digest, by the rules of src/changes/compare.ts: the key is ServicePropertyID's
 * fingerprint, else APN's (each under its own name's seed, so an id never equals an APN), else none.
 */
export class ObjectDigester {
  private readonly seeds = new Map<string, Lanes>()
  private readonly lanes: Lanes = {a: 0, b: 0}
  /** The last record's digest, and its key (`hasKey` false: none). */
  readonly digest: Lanes = {a: 0, b: 0}
  readonly key: Lanes = {a: 0, b: 0}
  hasKey = false

  constructor(private readonly ignore: ReadonlySet<string>) {}

  seedOf(name: string): Lanes {
    let s = this.seeds.get(name)
    if (!s) this.seeds.set(name, (s = nameSeed(name)))
    return s
  }

  take(rec: Record<string, FlatValue>): void {
    let a = 0
    let b = 0
    const l = this.lanes
    for (const k in rec) {
      if (this.ignore.has(k) || !valueLanes(rec[k], this.seedOf(k), l)) continue
      a = (a + l.a) | 0
      b = (b + l.b) | 0
    }
    this.digest.a = a
    this.digest.b = b
    this.hasKey = this.keyOf(rec, 'ServicePropertyID') || this.keyOf(rec, 'APN')
  }

  private keyOf(rec: Record<string, FlatValue>, field: string): boolean {
    const v = rec[field]
    if (v === null || v === undefined || v === '') return false
    valueLanes(v, this.seedOf(field), this.key)
    return true
  }
}
