import {count} from '../text/count.js'
import {ASSUMABLE_FIELDS, CONDO_FIELDS, CORE_FIELDS, EXTRA_FIELDS, OPTION_NAMES} from './spec.js'

/**
 * The API key is a secret (spec 5.5), and this module is the one redactor: its rule is that the key, in
 * any case, and every run of 8 or more consecutive characters of it are masked.
 *
 * - Lines: every line sfl prints, every error and every stored URL passes through `redact` (or
 *   `redactUrl`), so a key echoed back by a server or a proxy cannot leak into stdout, stderr, a log or a
 *   checkpoint, even when the echo is partial or in another case.
 * - Records (server data in every format: NDJSON, JSON, CSV, Parquet, tables, statistics, rejects, the
 *   checkpoint): the records stage runs the bytes of every answer through a `RecordRedactor` before
 *   anything reads them (src/pipeline/records.ts), which masks each run with `*` of the same length, so a
 *   masked record stays the JSON it was. What comes out is `Redacted`: a type only this module makes, which
 *   the record view, the spool, the sinks, the lookup's answer and the renderers require, so no path can
 *   hand a record to an output without it. The run says once that the service echoed the key
 *   (`keyEchoWarning`).
 */

/** A run of this many consecutive characters of a key is treated as the key (an error page cut mid-key). */
export const MIN_REDACTED_RUN = 8

interface Secret {
  value: string
  lower: string
  /** Length of the windows looked for: 8, or the whole key when it is shorter. */
  window: number
  /** Every window-length substring of the lower-cased key. */
  grams: ReadonlySet<string>
}

const secrets = new Map<string, Secret>()

/** ASCII-only lower-casing keeps string length, so positions in the folded text are positions in the original. */
function fold(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase())
}

export function registerSecret(value: string | undefined): void {
  if (!value || value.length < 4 || secrets.has(value)) return
  secrets.set(value, secretOf(value))
}

function secretOf(value: string): Secret {
  const lower = fold(value)
  const window = Math.min(MIN_REDACTED_RUN, lower.length)
  const grams = new Set<string>()
  for (let i = 0; i + window <= lower.length; i++) grams.add(lower.slice(i, i + window))
  return {value, lower, window, grams}
}

/** Tests only: forget every registered key. */
export function clearSecrets(): void {
  secrets.clear()
}

/** `sk_1…` style: first 4 characters, then an ellipsis (the `--debug` form). */
export function maskKey(key: string): string {
  return key.length <= 4 ? '…' : `${key.slice(0, 4)}…`
}

/** `sk_1…9f3a` style for `keys list`: first 4 and last 4, only when the key is long enough to hide a middle. */
export function maskKeyEnds(key: string): string {
  return key.length < 12 ? maskKey(key) : `${key.slice(0, 4)}…${key.slice(-4)}`
}

/** The [start, end) runs of `text` made of 8+ consecutive characters of the key, any case. */
function runsOf(folded: string, s: Secret): Array<[number, number]> {
  const runs: Array<[number, number]> = []
  const w = s.window
  for (let i = 0; i + w <= folded.length; i++) {
    if (!s.grams.has(folded.slice(i, i + w))) continue
    const last = runs[runs.length - 1]
    if (last && i <= last[1]) last[1] = Math.max(last[1], i + w)
    else runs.push([i, i + w])
  }
  return runs
}

/**
 * Mask every registered key in `text`: the whole key in any case becomes `sk_1…` (the --debug form), and
 * any other run of 8 or more consecutive characters of it (a cut, a case change, a key minus a
 * character) becomes `[redacted]`. Linear in the text; meant for printed lines, not for every record.
 *
 * @example redact('bad key SK_LIVE_ABCDEF123') // 'bad key sk_l…' when sk_live_abcdef123 is registered
 */
export function redact(text: string): string {
  if (secrets.size === 0 || text === '') return text
  let out = text
  for (const s of secrets.values()) {
    const folded = fold(out)
    const runs = runsOf(folded, s)
    if (runs.length === 0) continue
    let next = ''
    let at = 0
    for (const [a, b] of runs) {
      // a run that begins or ends inside an escape (a JSON text: `\faaaaaaa`) takes the escape with it,
      // so what is left is never a bare backslash before `[redacted]`
      const from = Math.max(at, escapeAround(out, a).start)
      const to = escapeAround(out, b - 1).end
      next += out.slice(at, from)
      next += folded.slice(a, b) === s.lower ? maskKey(s.value) : '[redacted]'
      at = to
    }
    out = next + out.slice(at)
  }
  return out
}

/** True when `text` holds a registered key or 8+ consecutive characters of one, in any case. */
export function containsSecret(text: string): boolean {
  if (secrets.size === 0) return false
  const folded = fold(text)
  for (const s of secrets.values()) if (runsOf(folded, s).length > 0) return true
  return false
}

/** Query parameters that look like credentials (compared case-insensitively) and are never stored. */
export const CREDENTIAL_PARAMS: ReadonlySet<string> = new Set([
  'api_key',
  'apikey',
  'api-key',
  'key',
  'token',
  'access_token',
  'sig',
  'signature',
  'password',
  'secret',
])

/**
 * A URL safe to store or print (checkpoint `next` links, logs): user:password@ and credentials-looking
 * query parameters are dropped, then the rest is redacted. A string that is not a URL is only redacted.
 *
 * @example redactUrl('https://u:p@api.test/v1/x?page=2&api_key=abc') // 'https://api.test/v1/x?page=2'
 */
export function redactUrl(url: string): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return redact(url)
  }
  u.username = ''
  u.password = ''
  for (const name of [...u.searchParams.keys()])
    if (CREDENTIAL_PARAMS.has(name.toLowerCase())) u.searchParams.delete(name)
  return redact(u.toString())
}

/**
 * The one line for a service that echoed the key, whole or in part, inside its answers (the records
 * stage masks it there, `RecordRedactor`, so no output or checkpoint holds it): every path says it the
 * same way, once a run.
 */
export function keyEchoWarning(occurrences: number): string {
  return `the service echoed your API key (whole, or 8 or more of its characters) ${count(occurrences)} ${occurrences === 1 ? 'time' : 'times'} in its answers; it is masked with * in the output. Rotate the key and tell the provider`
}

// ---- records: the same rule over the bytes of every answer ----

/**
 * Keys shorter than this are not looked for in records: so short a text could be ordinary data (a test
 * key), and masking it would corrupt records; the redactor of printed lines still masks it whole.
 */
export const MIN_MASKED_KEY = MIN_REDACTED_RUN

declare const REDACTED: unique symbol
/**
 * Server data that has been through the redactor: a record's bytes, its JSON text, the record parsed, or
 * what is computed from those alone. Only this module makes one (`RecordRedactor.record` and
 * `RecordRedactor.parsed`, and the conversions below, which keep the seal); the record view, the spool,
 * the sinks, the lookup's answer and the renderers take nothing else, and a cast to it anywhere else is
 * refused by lint (eslint.config.js, "Redacted").
 */
export type Redacted<T> = T & {readonly [REDACTED]: true}

function seal<T>(value: T): Redacted<T> {
  return value as Redacted<T>
}

/** No bytes at all (a view before its first record). */
export const NO_BYTES: Redacted<Buffer> = seal(Buffer.alloc(0))

/** A record's JSON text, from its redacted bytes. */
export function redactedText(bytes: Redacted<Uint8Array>): Redacted<string> {
  return seal(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'))
}

/** A record parsed from its redacted JSON text. */
export function parseRedacted<T = Record<string, unknown>>(text: Redacted<string>): Redacted<T> {
  return seal(JSON.parse(text) as T)
}

/**
 * What `f` computes from redacted data alone is redacted (the compact form of a record's bytes, say).
 * `f` must not mix other server data in: that would need the redactor again.
 */
export function derived<T, U>(from: Redacted<T>, f: (value: T) => U): Redacted<U> {
  return seal(f(from))
}

/**
 * Bytes as the record rule compares them: A-Z as a-z (any case); a quote and a backslash match nothing,
 * so a run found in the bytes never crosses a string's edge or holds an escape's backslash (a run that an
 * escape hides is found in the decoded string instead, `RecordRedactor.record`).
 */
const FOLD = new Uint8Array(256)
for (let c = 0; c < 256; c++) FOLD[c] = c >= 0x41 && c <= 0x5a ? c | 0x20 : c
FOLD[0x22] = 0
FOLD[0x5c] = 0
const STAR = 0x2a
const BACKSLASH = 0x5c
/** Four bytes with the case bit of each set: A-Z fold onto a-z (and a few other bytes onto each other, which only costs a second look). */
const CASE_BITS = 0x20202020

/**
 * The record rule over bytes, for one key: every run of 8 or more consecutive characters of the key, in
 * any case, is masked with `*` byte for byte, so a masked record stays the JSON it was.
 *
 * Finding them costs about one table load per four bytes of the body (npm run bench: the NDJSON export is
 * held to 1.2x a byte copy). Every run of 8 characters covers one whole 4-byte word of the bytes at an
 * offset that is a multiple of 4, and that word is one of the key's 4-grams; so each aligned word, with
 * its case bits set, is looked up in a collision-free hash table of the key's 4-grams (a multiply, a
 * shift, a load and a compare). Only a word that is one is looked at closely: compared byte for byte with
 * the key where that 4-gram lies in it, and the run grown both ways.
 */
export class RecordRedactor {
  /** Runs masked so far (the whole key counts once; so does each part of it). */
  occurrences = 0
  /** The folded key's bytes (empty: nothing is looked for). */
  private readonly key: Uint8Array
  private readonly text: Secret | undefined
  private readonly table: Int32Array = new Int32Array(1)
  private mult = 0
  private shift = 31
  /** Each 4-gram (as a folded word) and where it lies in the key. */
  private readonly at = new Map<number, number[]>()
  private ab: ArrayBufferLike | undefined
  private words: Int32Array<ArrayBufferLike> = new Int32Array(0)
  /** Runs found by the last look, as [start, end) pairs. */
  private readonly found: number[] = []
  /** Runs the last `mask` left open (they may go on past its end: their bytes come again), as [start, end) pairs. */
  private readonly open: number[] = []

  constructor(key: string | undefined) {
    if (!key || key.length < MIN_MASKED_KEY) {
      this.key = new Uint8Array(0)
      return
    }
    this.key = Uint8Array.from(Buffer.from(key), (c) => (c >= 0x41 && c <= 0x5a ? c | 0x20 : c))
    this.text = secretOf(key)
    const word = new Int32Array(1)
    const bytes = new Uint8Array(word.buffer)
    for (let k = 0; k + 4 <= this.key.length; k++) {
      bytes.set(this.key.subarray(k, k + 4))
      const w = word[0]! | CASE_BITS
      const list = this.at.get(w)
      if (list) list.push(k)
      else this.at.set(w, [k])
    }
    this.table = this.hashTable([...this.at.keys()])
  }

  /** Whether a key is looked for (one of 8 characters or more). */
  get active(): boolean {
    return this.key.length > 0
  }

  /**
   * Mask every run in `b[from, to)`, in place. With `open` the bytes go on after `to` (a chunk of a body):
   * a run that reaches `to`, or whose string goes on past it, is left for the caller, who shows its bytes
   * again with the next chunk (`openFrom`), or masks it at once when it keeps nothing (`closeOpen`).
   */
  mask(b: Uint8Array, from: number, to: number, open = false): void {
    this.open.length = 0
    if (this.key.length === 0 || to - from < MIN_REDACTED_RUN) return
    const off = b.byteOffset
    if (this.ab !== b.buffer) {
      this.ab = b.buffer
      this.words = new Int32Array(b.buffer, 0, b.buffer.byteLength >>> 2)
    }
    const words = this.words
    const table = this.table
    const mult = this.mult
    const shift = this.shift
    const found = this.found
    found.length = 0
    // the words wholly inside [from, to), at offsets (in the buffer's memory) that are multiples of 4;
    // four a step, tested together without branching between them (unrolled, the loop took half the time)
    const end = (off + to) >>> 2
    let i = (off + from + 3) >>> 2
    for (; i + 4 <= end; i += 4) {
      const w0 = words[i]! | CASE_BITS
      const w1 = words[i + 1]! | CASE_BITS
      const w2 = words[i + 2]! | CASE_BITS
      const w3 = words[i + 3]! | CASE_BITS
      if (
        ((table[Math.imul(w0, mult) >>> shift] === w0 ? 1 : 0) |
          (table[Math.imul(w1, mult) >>> shift] === w1 ? 1 : 0) |
          (table[Math.imul(w2, mult) >>> shift] === w2 ? 1 : 0) |
          (table[Math.imul(w3, mult) >>> shift] === w3 ? 1 : 0)) !==
        0
      )
        for (let j = i; j < i + 4; j++) this.look(b, j, off, from, to)
    }
    for (; i < end; i++) this.look(b, i, off, from, to)
    if (found.length > 0) this.maskFound(b, from, to, open)
  }

  /** Word i of the buffer's memory: when it is one of the key's 4-grams, the runs through it are noted. */
  private look(b: Uint8Array, i: number, off: number, from: number, to: number): void {
    const w = this.words[i]! | CASE_BITS
    if (this.table[Math.imul(w, this.mult) >>> this.shift] === w) this.grow(b, i * 4 - off, w, from, to)
  }

  /** The start of the first run `mask` left open, or -1. */
  get openFrom(): number {
    return this.open.length > 0 ? this.open[0]! : -1
  }

  /** Mask the runs `mask` left open from `kept` back, in `b` (the bytes it was given): the caller keeps none of those. */
  closeOpen(b: Uint8Array, kept = b.length): void {
    const open = this.open
    for (let i = 0; i < open.length; i += 2)
      if (open[i]! < kept) {
        b.fill(STAR, open[i], open[i + 1])
        this.occurrences++
      }
    open.length = 0
  }

  /**
   * Seal a record's bytes, which `mask` has been over (the records stage masks every byte of a body before
   * it walks it). `escapes`: the walk met an escape in the record, which may hide a run from `mask`
   * (`\u0041`, `\/`, or a quote or backslash the key holds): then each string with an escape is decoded and
   * looked at, and one holding a run is written again with it masked; those are other bytes, which the
   * caller walks again.
   */
  record(bytes: Buffer, escapes: boolean): Redacted<Buffer> {
    return seal(escapes && this.key.length > 0 ? this.unescaped(bytes) : bytes)
  }

  /**
   * A record parsed elsewhere (read back from a checkpoint, which an older sfl may have written) with every
   * run masked in its strings and member names, as the records stage masks bytes.
   */
  parsed<T>(value: T): Redacted<T> {
    if (this.key.length === 0 || value === null || typeof value !== 'object') return seal(value)
    const before = this.occurrences
    const bytes = Buffer.from(JSON.stringify(value))
    this.mask(bytes, 0, bytes.length)
    const out = this.unescaped(bytes)
    if (this.occurrences === before) return seal(value)
    try {
      return seal(JSON.parse(out.toString('utf8')) as T)
    } catch {
      // a run inside a number: masked, it is no number; the value is then masked member by member
      return seal(this.maskValue(value) as T)
    }
  }

  /**
   * `text` with every run of the key (8 or more of its characters, any case) as `*` of the same length;
   * `count`: the runs count as places the service echoed the key.
   */
  maskText(text: string, count = true): string {
    const s = this.text
    if (s === undefined || text.length < MIN_REDACTED_RUN) return text
    const runs = runsOf(fold(text), s)
    if (runs.length === 0) return text
    let out = ''
    let at = 0
    for (const [a, b] of runs) {
      out += text.slice(at, a) + '*'.repeat(b - a)
      at = b
    }
    if (count) this.occurrences += runs.length
    return out + text.slice(at)
  }

  /** A hit at `q` (its word `w` is a 4-gram of the key): the runs through it, grown both ways, noted. */
  private grow(b: Uint8Array, q: number, w: number, from: number, to: number): void {
    const key = this.key
    for (const k of this.at.get(w)!) {
      if (
        FOLD[b[q]!] !== key[k] ||
        FOLD[b[q + 1]!] !== key[k + 1] ||
        FOLD[b[q + 2]!] !== key[k + 2] ||
        FOLD[b[q + 3]!] !== key[k + 3]
      )
        continue
      let l = 0
      while (q - l > from && k - l > 0 && FOLD[b[q - l - 1]!] === key[k - l - 1]) l++
      let r = 4
      while (q + r < to && k + r < key.length && FOLD[b[q + r]!] === key[k + r]) r++
      if (l + r >= MIN_REDACTED_RUN) this.found.push(q - l, q + r)
    }
  }

  /**
   * Mask the runs found (merged where they overlap or touch), each from after any escape it began in. A run
   * inside a member name that is one of the spec's field names (`Assumable`, `AssumableMortgage`: a demo
   * key may hold such a word) is left: that name is the contract's vocabulary, not an echo, and masking it
   * would rename a column.
   */
  private maskFound(b: Uint8Array, from: number, to: number, open: boolean): void {
    const found = this.found
    const pairs: Array<[number, number]> = []
    for (let i = 0; i < found.length; i += 2) pairs.push([found[i]!, found[i + 1]!])
    pairs.sort((x, y) => x[0] - y[0])
    let a = -1
    let z = -1
    const flush = () => {
      if (a < 0) return
      const s = afterEscape(b, a, from)
      if (z - s < MIN_REDACTED_RUN) return
      const name = specName(b, s, z, from, to)
      if (name === NAME) return
      if (open && (z === to || name === UNDECIDED)) {
        this.open.push(s, z)
        return
      }
      b.fill(STAR, s, z)
      this.occurrences++
    }
    for (const [s, e] of pairs) {
      if (s <= z) z = Math.max(z, e)
      else {
        flush()
        a = s
        z = e
      }
    }
    flush()
  }

  /** The strings of a (checked) record that hold an escape, decoded and masked; the bytes as they were when none holds a run. */
  private unescaped(bytes: Buffer): Buffer {
    if (bytes.indexOf(BACKSLASH) === -1) return bytes
    const parts: Buffer[] = []
    let last = 0
    for (let i = bytes.indexOf(0x22); i !== -1; i = bytes.indexOf(0x22, i + 1)) {
      // a string token from its opening quote (the walk checked the grammar: quotes only delimit strings here)
      let j = i + 1
      let escaped = false
      for (; bytes[j] !== 0x22; j++)
        if (bytes[j] === BACKSLASH) {
          escaped = true
          j++
        }
      if (escaped) {
        const token = bytes.toString('utf8', i, j + 1)
        const text = JSON.parse(token) as string
        const masked = this.maskText(text)
        const printed = this.maskPrinted(masked === text ? token : JSON.stringify(masked))
        if (printed !== token) {
          parts.push(bytes.subarray(last, i), Buffer.from(printed))
          last = j + 1
        }
      }
      i = j
    }
    if (parts.length === 0) return bytes
    parts.push(bytes.subarray(last))
    return Buffer.concat(parts)
  }

  /**
   * A string token as it is printed (quotes, escapes and all) with every run it shows masked, each escape
   * the run begins or ends in masked whole with it (`\f` as `**`), so the JSON stays JSON. After its value
   * is masked, a token can still show one: JSON's escape letters are characters of a key too, and
   * `"\faaaaaaa"` prints 8 characters of a key `Faaaaaaaa` though its value holds 7; `mask` leaves such a
   * run, as masking the letter alone (`\*`) would break the JSON, and masking the escape there would hide a
   * whole key spelt with escapes (`sk\/live\/0123456`) from the look at the decoded string.
   */
  private maskPrinted(token: string): string {
    const inner = token.slice(1, -1)
    const runs = runsOf(fold(inner), this.text!)
    if (runs.length === 0) return token
    let out = ''
    let at = 0
    for (const [a, b] of runs) {
      const s = Math.max(at, escapeAround(inner, a).start)
      const z = escapeAround(inner, b - 1).end
      out += inner.slice(at, s) + '*'.repeat(z - s)
      at = z
      this.occurrences++
    }
    return `"${out}${inner.slice(at)}"`
  }

  /** A parsed value with its strings and names masked, and a number that holds a run made null. */
  private maskValue(v: unknown): unknown {
    if (typeof v === 'string') return this.maskText(v)
    if (typeof v === 'number') return this.maskText(String(v)) === String(v) ? v : null
    if (v === null || typeof v !== 'object') return v
    if (Array.isArray(v)) return v.map((x) => this.maskValue(x))
    // fromEntries: a member named __proto__ (a record may hold one) stays a member, not the prototype
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).map(([k, x]) => [this.maskText(k), this.maskValue(x)]),
    )
  }

  /** A table of 2^bits slots holding each word at `imul(w, mult) >>> shift`, with no two in one slot. */
  private hashTable(grams: number[]): Int32Array {
    for (let bits = Math.max(4, Math.ceil(Math.log2(grams.length)) + 2); ; bits++) {
      let mult = 0x9e3779b1
      for (let t = 0; t < 64; t++) {
        mult = (Math.imul(mult, 0x2c1b3c6d) + 0x297a2d39) | 1
        const table = new Int32Array(1 << bits)
        const shift = 32 - bits
        let ok = true
        for (const g of grams) {
          const h = Math.imul(g, mult) >>> shift
          // 0 marks an empty slot: no folded word is 0 (every byte has its case bit set)
          if (table[h] !== 0) {
            ok = false
            break
          }
          table[h] = g
        }
        if (ok) {
          this.mult = mult
          this.shift = shift
          return table
        }
      }
    }
  }
}

/** What a run is in: a member name the spec gives, anything else, or what cannot be told before the bytes go on. */
const NAME = 1
const OTHER = 0
const UNDECIDED = 2
let specNames: Set<string> | undefined

/**
 * Whether the run b[s, z) lies in a member name that is one of the spec's names (a string token, no
 * escape in it, followed by a colon): NAME, OTHER, or UNDECIDED when the token or its colon lies past `to`.
 */
function specName(b: Uint8Array, s: number, z: number, from: number, to: number): number {
  let l = s - 1
  while (l >= from && b[l] !== 0x22 && b[l] !== BACKSLASH) l--
  if (l < from || b[l] !== 0x22) return OTHER
  let r = z
  while (r < to && b[r] !== 0x22 && b[r] !== BACKSLASH) r++
  if (r >= to) return UNDECIDED
  if (b[r] !== 0x22) return OTHER
  let c = r + 1
  while (c < to && (b[c] === 0x20 || b[c] === 0x0a || b[c] === 0x0d || b[c] === 0x09)) c++
  if (c >= to) return UNDECIDED
  if (b[c] !== 0x3a) return OTHER
  specNames ??= new Set([
    ...CORE_FIELDS,
    ...EXTRA_FIELDS,
    ...OPTION_NAMES,
    ...ASSUMABLE_FIELDS,
    ...CONDO_FIELDS,
  ])
  return specNames.has(Buffer.from(b.buffer, b.byteOffset + l + 1, r - l - 1).toString('latin1'))
    ? NAME
    : OTHER
}

/**
 * The escape (`\n`, `\u0041`) of a string token's inner text that character `i` lies in, as [start, end),
 * or [i, i + 1) when it lies in none.
 */
function escapeAround(t: string, i: number): {start: number; end: number} {
  for (let j = i; j >= 0 && j >= i - 5; j--) {
    if (t[j] !== '\\') continue
    let k = j
    while (k > 0 && t[k - 1] === '\\') k--
    if ((j - k) % 2 !== 0) continue // an escaped backslash: the one at j ends an escape, not begins one
    const end = j + (t[j + 1] === 'u' ? 6 : 2)
    return i < end ? {start: j, end} : {start: i, end: i + 1}
  }
  return {start: i, end: i + 1}
}

/** Where a run starting at `a` may start: after the escape (`\n`, `\u0041`) whose backslash comes just before it, if one does. */
function afterEscape(b: Uint8Array, a: number, from: number): number {
  for (let j = a - 1; j >= from && j >= a - 5; j--) {
    if (b[j] !== BACKSLASH) continue
    let k = j
    while (k > from && b[k - 1] === BACKSLASH) k--
    // an odd count of backslashes ending at j: the one at j begins an escape
    if ((j - k) % 2 === 0) return Math.max(a, j + (b[j + 1] === 0x75 ? 6 : 2))
    return a
  }
  return a
}
