import {asText, type FlatRecord} from '../io/export-reader.js'

/**
 * The comparison's fingerprints (src/changes/compare.ts), computed the same way from an export's bytes (the
 * scanners, src/changes/scan-*.ts) and from a record object (Parquet, or a file the scanners do not
 * take): equal records, by `changedFields`' rule, get equal fingerprints whatever their format.
 *
 * A field's fingerprint is two 32-bit lanes of FNV-1a over the UTF-8 bytes of its value's text (`asText`:
 * `688600.0` is `688600`; null has none), each lane seeded with a hash of the field's name and finished
 * with a murmur3-style mix. A record's digest is the sum, lane by lane, of its compared fields'
 * fingerprints, so it does not depend on field order (a CSV's columns, an NDJSON record's members). Two
 * records that differ in a field share a digest with odds of about 2^-64, the bargain the 8-byte SHA-1
 * prefix made before, at a fraction of the cost (a profile of `sfl changes` had SHA-1 and the text it
 * hashed at 28% of the CPU). Not cryptographic: a file written to collide on purpose could hide a change.
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

/** The two lanes of the bytes `buf[start, end)`, seeded; written to `out`. */
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

const scratch = {buf: Buffer.alloc(256)}

/** The two lanes of a text's UTF-8 bytes (equal to `hashBytes` over them). */
export function hashText(text: string, seed: Lanes, out: Lanes): void {
  const n = Buffer.byteLength(text)
  if (n > scratch.buf.length) scratch.buf = Buffer.alloc(n * 2)
  scratch.buf.write(text, 0, 'utf8')
  hashBytes(scratch.buf, 0, n, seed, out)
}

/** A field name's seed: its lanes from fixed bases, so a value hashes differently under each name. */
export function nameSeed(name: string): Lanes {
  const out = {a: 0, b: 0}
  hashText(name, {a: BASIS_A, b: BASIS_B}, out)
  return out
}

export const NUMBER_NO = 0
/** A number whose text is already JavaScript's shortest form (`String(Number(text)) === text`). */
export const NUMBER_CANONICAL = 1
/** A number whose text is not (`688600.0`, `1e5`, `-0`, `0.0000001`): `asText` rewrites it. */
export const NUMBER_OTHER = 2

/**
 * What `asText` would make of the text `buf[start, end)` (ASCII): not a number (kept as it is), a number
 * already in its shortest form, or one it rewrites. The grammar is asText's (a JSON number). A number is
 * taken as canonical only when that is certain without converting it: at most 15 digits (a double holds
 * any 15 significant digits exactly, and its shortest form then has no fewer), no exponent, no trailing
 * zero after the point, not `-0`, and not below 1e-6 (where JavaScript switches to exponents).
 */
export function numberForm(buf: Uint8Array, start: number, end: number): number {
  let i = start
  if (buf[i] === 0x2d) i++ // '-'
  if (i >= end) return NUMBER_NO
  const intStart = i
  let c = buf[i]!
  if (c === 0x30) i++
  else if (c >= 0x31 && c <= 0x39) while (i < end && (c = buf[i]!) >= 0x30 && c <= 0x39) i++
  else return NUMBER_NO
  const intDigits = i - intStart
  let fracDigits = 0
  let leadingZeros = 0
  let lastFrac = 0
  if (i < end && buf[i] === 0x2e) {
    i++
    const fracStart = i
    while (i < end && (c = buf[i]!) >= 0x30 && c <= 0x39) i++
    fracDigits = i - fracStart
    if (fracDigits === 0) return NUMBER_NO
    lastFrac = buf[i - 1]!
    while (leadingZeros < fracDigits && buf[fracStart + leadingZeros] === 0x30) leadingZeros++
  }
  if (i < end) {
    c = buf[i]!
    if (c !== 0x65 && c !== 0x45) return NUMBER_NO // 'e', 'E'
    i++
    if (i < end && (buf[i] === 0x2b || buf[i] === 0x2d)) i++
    const expStart = i
    while (i < end && (c = buf[i]!) >= 0x30 && c <= 0x39) i++
    return i === end && i > expStart ? NUMBER_OTHER : NUMBER_NO
  }
  if (intDigits + fracDigits > 15 || lastFrac === 0x30) return NUMBER_OTHER
  const zeroInt = intDigits === 1 && buf[intStart] === 0x30
  if (zeroInt && fracDigits > 0 && leadingZeros >= 6) return NUMBER_OTHER // below 1e-6
  if (zeroInt && buf[start] === 0x2d) return NUMBER_OTHER // -0 is 0 (and -0.5, rare, is converted to be sure)
  return NUMBER_CANONICAL
}

/** A field's fingerprint from its value in a record object (null: none, returns false). */
export function valueLanes(v: FlatRecord[string] | undefined, seed: Lanes, out: Lanes): boolean {
  const text = asText(v)
  if (text === null) return false
  hashText(text, seed, out)
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

  take(rec: FlatRecord): void {
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

  private keyOf(rec: FlatRecord, field: string): boolean {
    const text = asText(rec[field])
    if (text === null || text === '') return false
    hashText(text, this.seedOf(field), this.key)
    return true
  }
}
