import {isUtf8} from 'node:buffer'

import {RecordRedactor, redact, type Redacted} from '../api/secrets.js'
import {BadResponseError, TruncatedBodyError} from '../errors.js'
import {BROKEN, INCOMPLETE, scanString, Walk, walkValue, ESCAPED} from '../json/walk.js'
import {decodeEscapes} from '../json/values.js'
import {count} from '../text/count.js'

/**
 * The records stage: one validating scan of a response body, as its bytes arrive, for every path (an
 * export's pages, a batch answer, a single lookup, `keys check`). It holds one envelope rule (spec 4):
 * the body is one JSON object whose `status` is "success" and whose `data` is a record or an array of
 * records, with nothing but whitespace after it; a body that breaks it is malformed (BadResponseError),
 * one cut short is truncated (TruncatedBodyError, retried like a reset). Each record is walked whole by
 * src/json/walk.ts (the JSON grammar, and where its members lie) and checked as UTF-8 (RFC 8259 section
 * 8.1); a record that breaks either, or the size and depth caps, is rejected (skipped and reported with
 * its position and reason), and the rest of the body is read on. Memory is one chunk and one record,
 * whatever the body's size.
 *
 * Before any of that reads a byte, the redactor (src/api/secrets.ts `RecordRedactor`) masks every run of
 * 8 or more of the key's characters in it, so the walk, the names it gives members, the checks, the
 * sinks and the rejects only ever see masked bytes; the records come out sealed (`Redacted`).
 */
export interface Rejected {
  /** 1-based position of the record in the body. */
  index: number
  reason: string
}

/** Defaults of the poison-record caps (docs/long-runs.md, "What every record goes through"). */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024
export const MAX_RECORD_DEPTH = 64

/**
 * A value still incomplete at a chunk's end is carried into the next; past this size, or when it is still
 * incomplete after one carry (a record dripping in small chunks), it is collected in pieces instead: a
 * record is walked at most three times whatever the chunk sizes (no quadratic re-walk).
 */
const CARRY_LIMIT = 1 << 20

// envelope states
const START = 0
const FIRST_KEY = 1
const KEY = 2
const COLON = 3
const VALUE = 4
const ELEMENT_OR_END = 5
const ELEMENT = 6
const AFTER_ELEMENT = 7
const AFTER_MEMBER = 8
const TRAILING = 9
/** `data` is one record, not yet whole. */
const DATA_RECORD = 10

const isWs = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

export class RecordScanner {
  /** The records of the last `push`, in order: their bytes (masked), and where their member entries start in `walk.entries`. */
  readonly records: Array<Redacted<Buffer>> = []
  first = new Int32Array(256)
  /** Each record's 1-based position in the body (rejected records count too). */
  index = new Int32Array(256)
  /** 1 for a record with whitespace outside its strings (pretty-printed: NDJSON writes it compact). */
  spaced = new Uint8Array(256)
  /** Records the last push made available. */
  length = 0
  /** The walk whose entries describe the last push's records (src/json/walk.ts). */
  readonly walk: Walk
  /** Record k's entries are `first[k]` to `entriesEnd(k)`. */
  entriesEnd(k: number): number {
    return k + 1 < this.length ? this.first[k + 1]! : this.walk.count
  }
  /** Records seen so far, rejected ones included (positions are 1-based). */
  seen = 0
  /** Places where the bytes read so far held the key, whole or in part (masked). */
  keyEchoes = 0

  private rejected: Rejected[] = []
  private readonly skipWalk: Walk
  private state = START
  private carry: Buffer | undefined
  private key = ''
  private sawData = false
  private status: string | undefined
  private collect: Collector | undefined
  /** The carry holds a record already walked once: if it is still incomplete, the collector takes it. */
  private carried = false
  /** Where in the buffer being read the bytes kept for the next push (a carry, or a record the collector takes) begin. */
  private kept = 0

  constructor(
    private readonly limits: {maxRecordBytes: number; maxDepth: number} = {
      maxRecordBytes: MAX_RECORD_BYTES,
      maxDepth: MAX_RECORD_DEPTH,
    },
    /** Masks the key in the bytes before they are read (the run's key; without one, nothing is masked). */
    readonly redactor: RecordRedactor = new RecordRedactor(undefined),
  ) {
    this.walk = new Walk(limits.maxDepth)
    this.skipWalk = new Walk(limits.maxDepth)
  }

  /** The envelope said `"status": "success"` before the records read so far (a page may stream them at once). */
  get statusOk(): boolean {
    return this.status === 'success'
  }

  /** Records rejected since the last call. */
  takeRejected(): Rejected[] {
    const r = this.rejected
    this.rejected = []
    return r
  }

  /** Feed one chunk; the records it completes are in `records[0, length)` until the next push. */
  push(chunk: Buffer): number {
    this.length = 0
    this.walk.count = 0
    let buf = chunk
    let p = 0
    // the runs masked while this chunk is read (run() may throw: then nothing of it is kept anyway)
    const before = this.redactor.occurrences
    if (this.collect) {
      // a collected record is masked whole when it is (finishCollected); the collector reads only its structure
      const done = this.collect.push(chunk)
      if (done < 0) return 0
      p = done
      this.finishCollected()
    } else if (this.carry) {
      buf = Buffer.concat([this.carry, chunk])
      this.carry = undefined
    }
    // the key masked before anything reads the bytes (a carry again with them: a run may go on into the
    // chunk). A run that reaches the end is left as it is while its bytes are kept for the next push
    // (carried or collected, unread but for their structure): it may go on there. Bytes not kept were read
    // whole, so such a run is masked as soon as the walk has passed (it lies outside the records).
    const red = this.redactor
    if (red.active) red.mask(buf, p, buf.length, true)
    this.kept = buf.length
    this.run(buf, p)
    if (red.openFrom >= 0 && red.openFrom < this.kept) red.closeOpen(buf, this.kept)
    this.keyEchoes += red.occurrences - before
    return this.length
  }

  /** The body ended: anything short of a whole envelope with success and data is an error. */
  end(): void {
    if (this.state !== TRAILING || this.carry || this.collect)
      throw new TruncatedBodyError(`the response body ended mid-JSON after ${this.seen} records`)
    if (!this.sawData) throw new BadResponseError('the response has no `data` field (spec 4)')
    if (this.status === undefined)
      throw new BadResponseError(
        'the response has no `status` field; spec 4 answers with "status": "success"',
      )
  }

  /** The envelope machine over buf from p; stops at the end, carrying an incomplete token over. */
  private run(buf: Buffer, p: number): void {
    const n = buf.length
    for (;;) {
      while (p < n && isWs(buf[p])) p++
      if (p >= n) return
      const c = buf[p]!
      switch (this.state) {
        case START:
          if (c !== 0x7b)
            throw malformed(
              `the service answered 200 with a body that is not a JSON object (spec 4): ${snippet(buf, p)}`,
            )
          this.state = FIRST_KEY
          p++
          break
        case FIRST_KEY:
        case KEY: {
          if (c === 0x7d && this.state === FIRST_KEY) {
            this.state = TRAILING
            p++
            break
          }
          if (c !== 0x22) throw malformed('the response body is not a JSON object with members (spec 4)')
          const q = scanString(buf, p + 1, n, this.skipWalk)
          if (q === INCOMPLETE) {
            this.hold(buf, p)
            return
          }
          if (q === BROKEN) throw malformed(`the response body is not valid JSON: ${this.skipWalk.reason}`)
          const raw = buf.toString('utf8', p + 1, q)
          this.key = (this.skipWalk.flags & ESCAPED) === 0 ? raw : decodeEscapes(raw)
          this.state = COLON
          p = q + 1
          break
        }
        case COLON:
          if (c !== 0x3a) throw malformed("the response body is not valid JSON: expected ':'")
          this.state = VALUE
          p++
          break
        case VALUE:
          p = this.member(buf, p, n)
          if (p < 0) return
          break
        case ELEMENT_OR_END:
        case ELEMENT:
          if (c === 0x5d && this.state === ELEMENT_OR_END) {
            this.state = AFTER_MEMBER
            p++
            break
          }
          if (c !== 0x7b) throw malformed('an element of `data` is not a JSON object (spec 4: records)')
          p = this.record(buf, p, n, AFTER_ELEMENT)
          if (p < 0) return
          break
        case DATA_RECORD:
          p = this.record(buf, p, n, AFTER_MEMBER)
          if (p < 0) return
          break
        case AFTER_ELEMENT:
          if (c === 0x2c) this.state = ELEMENT
          else if (c === 0x5d) this.state = AFTER_MEMBER
          else throw malformed("the `data` list is not valid JSON: expected ',' or ']'")
          p++
          break
        case AFTER_MEMBER:
          if (c === 0x2c) this.state = KEY
          else if (c === 0x7d) this.state = TRAILING
          else throw malformed("the response body is not valid JSON: expected ',' or '}'")
          p++
          break
        default:
          throw malformed(
            'the response body goes on after its JSON object (spec 4: one object; a proxy page or a second body?)',
          )
      }
    }
  }

  /** A member of the envelope: `data` (the records), `status` (must say success), or another (checked, skipped). */
  private member(buf: Buffer, p: number, n: number): number {
    const c = buf[p]!
    if (this.key === 'data') {
      if (this.sawData) throw malformed('the response names `data` twice')
      this.sawData = true
      if (c === 0x5b) {
        this.state = ELEMENT_OR_END
        return p + 1
      }
      // spec 4: data is a record or a list of records; null, a string or a number is a broken answer
      if (c !== 0x7b) {
        // named once its start is here: a chunk may end inside a short value
        this.skipWalk.count = 0
        if (n - p < 40 && walkValue(buf, p, n, this.skipWalk) === INCOMPLETE) {
          this.sawData = false
          return this.hold(buf, p)
        }
        throw malformed(
          `the service answered 200 with \`data\` ${describeValue(buf, p)} instead of a record object or a list of records (spec 4); the answer is malformed`,
        )
      }
      return this.record(buf, p, n, AFTER_MEMBER)
    }
    this.skipWalk.count = 0
    const end = walkValue(buf, p, n, this.skipWalk)
    if (end === INCOMPLETE) return this.hold(buf, p)
    if (end === BROKEN) throw malformed(`the response body is not valid JSON: ${this.skipWalk.reason}`)
    if (this.key === 'status') this.takeStatus(buf, p, end)
    this.state = AFTER_MEMBER
    return end
  }

  private takeStatus(buf: Buffer, p: number, end: number): void {
    if (this.status !== undefined) throw malformed('the response names `status` twice')
    let q = end
    while (isWs(buf[q - 1])) q--
    if (buf[p] !== 0x22 || q - p > 64)
      throw malformed('the response\'s `status` is not "success" (spec 4); the answer is malformed')
    const raw = buf.toString('utf8', p + 1, q - 1)
    this.status = raw.includes('\\') ? decodeEscapes(raw) : raw
    if (this.status !== 'success')
      throw malformed(
        `the service answered 200 with status ${JSON.stringify(this.status)} instead of "success" (spec 4); the answer is malformed`,
      )
  }

  /** One record at buf[p] (`{`): walked whole, checked, and kept or rejected; the offset after it, or -1 to wait. */
  private record(buf: Buffer, p: number, n: number, next: number): number {
    const w = this.walk
    const base = w.count
    const end = walkValue(buf, p, n, w)
    const carried = this.carried
    this.carried = false
    if (end >= 0) {
      this.state = next
      this.accept(buf.subarray(p, end), base)
      return end
    }
    w.count = base
    this.state = next
    if (end === INCOMPLETE && n - p <= CARRY_LIMIT && !carried) {
      // back at the record's start when the rest arrives
      this.state = next === AFTER_MEMBER ? DATA_RECORD : ELEMENT
      this.carried = true
      return this.hold(buf, p)
    }
    // a big record (collected in pieces) or a broken one (its end found, to skip it)
    const poison = end === BROKEN ? this.brokenReason(w, buf, p) : undefined
    const collector = new Collector(this.limits.maxRecordBytes, this.limits.maxDepth, poison)
    const done = collector.push(buf.subarray(p))
    this.collect = collector
    if (done < 0) {
      this.kept = p
      return -1
    }
    this.finishCollected()
    return p + done
  }

  /** A record the collector has whole (or found the end of): checked and kept, or rejected. */
  private finishCollected(): void {
    const c = this.collect!
    this.collect = undefined
    if (c.poison !== undefined) return this.reject(c.poison)
    const bytes = Buffer.concat(c.pieces)
    // whole now: masked before it is walked
    this.redactor.mask(bytes, 0, bytes.length)
    const w = this.walk
    const base = w.count
    const end = walkValue(bytes, 0, bytes.length, w)
    if (end !== bytes.length) {
      w.count = base
      return this.reject(end === BROKEN ? this.brokenReason(w, bytes, 0) : 'not one JSON object')
    }
    this.accept(bytes, base)
  }

  /** Why a walk failed: a cap as it is, a break of the grammar with where in the record it is. */
  private brokenReason(w: Walk, buf: Buffer, start: number): string {
    // the mask of a run outside a string (inside a number, say) is what broke it
    if (this.redactor.active && buf[w.at] === 0x2a && w.at > start && buf[w.at - 1] !== 0x22)
      return `holds 8 or more characters of your API key outside a string (at byte ${w.at - start} of the record): masked, it is no JSON any more`
    return brokenReason(w, start)
  }

  private accept(raw: Buffer, base: number): void {
    this.seen++
    if (raw.length > this.limits.maxRecordBytes) {
      this.walk.count = base
      this.rejected.push({
        index: this.seen,
        reason: `larger than ${count(this.limits.maxRecordBytes)} bytes`,
      })
      return
    }
    // RFC 8259 section 8.1: JSON text is UTF-8; a record that is not would reach the output as U+FFFD
    if (!isUtf8(raw)) {
      this.walk.count = base
      this.rejected.push({index: this.seen, reason: 'not valid UTF-8 (RFC 8259 section 8.1)'})
      return
    }
    // sealed: masked already; a run an escape hid is masked in the decoded string, which is written again
    const bytes = this.redactor.record(raw, this.walk.escapes)
    if (bytes !== raw) {
      this.walk.count = base
      if (walkValue(bytes, 0, bytes.length, this.walk) !== bytes.length) {
        this.walk.count = base
        this.rejected.push({index: this.seen, reason: 'not one JSON object once the key in it was masked'})
        return
      }
    }
    const k = this.length++
    if (k >= this.first.length) {
      const grown = new Int32Array(this.first.length * 2)
      grown.set(this.first)
      this.first = grown
      const index = new Int32Array(this.index.length * 2)
      index.set(this.index)
      this.index = index
      const spaced = new Uint8Array(this.spaced.length * 2)
      spaced.set(this.spaced)
      this.spaced = spaced
    }
    this.records[k] = bytes
    this.first[k] = base
    this.index[k] = this.seen
    this.spaced[k] = this.walk.spaced ? 1 : 0
  }

  private reject(reason: string): void {
    this.seen++
    this.rejected.push({index: this.seen, reason})
  }

  /** Keep buf[p..] for the next push (the token at p is incomplete). */
  private hold(buf: Buffer, p: number): -1 {
    // records never come here that large (the collector takes them); a key or another envelope member
    // of that size is not a spec answer
    if (buf.length - p > CARRY_LIMIT)
      throw malformed('a member of the response envelope is larger than 1 MiB')
    this.carry = Buffer.from(buf.subarray(p))
    this.kept = p
    return -1
  }
}

/** A short, safe description of the value at buf[p] for an error line (never a long string's text). */
function describeValue(buf: Buffer, p: number): string {
  const head = buf.toString('utf8', p, p + 40)
  const c = head[0]
  if (c === '"') {
    const m = /^"((?:[^"\\]|\\.){0,20})"/.exec(head)
    return m ? `"${redact(m[1]!)}"` : 'a long string'
  }
  if (c === '-' || (c !== undefined && c >= '0' && c <= '9'))
    return `a number (${/^-?[\d.eE+-]{1,20}/.exec(head)![0]})`
  if (head.startsWith('null')) return 'null'
  if (head.startsWith('true') || head.startsWith('false')) return `a boolean (${head.startsWith('true')})`
  return 'not a JSON value'
}

/** The start of a body that is not JSON (a proxy's page, say), short, one line, the key masked. */
function snippet(buf: Buffer, p: number): string {
  const text = buf
    .toString('utf8', p, p + 120)
    .replace(/\s+/g, ' ')
    .trim()
  const cut = redact(text).slice(0, 80)
  return `"${cut}${text.length > 80 ? '…' : ''}"`
}

/** Why a walk failed: a cap as it is, a break of the grammar with where in the record it is. */
function brokenReason(w: Walk, start: number): string {
  return w.reason.startsWith('nested deeper') || w.reason.startsWith('more than')
    ? w.reason
    : `${w.reason} (at byte ${w.at - start} of the record)`
}

function malformed(message: string): BadResponseError {
  return new BadResponseError(message)
}

/**
 * A record too large to carry from chunk to chunk, or broken: its end is found by strings and nesting
 * alone (resumable across chunks), its bytes kept in pieces unless it is poison (over the size cap, or
 * broken: only its end matters then).
 */
class Collector {
  readonly pieces: Buffer[] = []
  private bytes = 0
  private depth = 0
  private inString = false
  private escape = false

  constructor(
    private readonly cap: number,
    /** The walk's depth cap: a record too deep is poison as soon as it is, as the walk would find it. */
    private readonly maxDepth: number,
    public poison: string | undefined,
  ) {}

  /** The offset in `chunk` just after the record's end, or -1 when it goes on. */
  push(chunk: Buffer): number {
    let i = 0
    const n = chunk.length
    for (; i < n; i++) {
      const c = chunk[i]!
      if (this.inString) {
        if (this.escape) this.escape = false
        else if (c === 0x5c) this.escape = true
        else if (c === 0x22) this.inString = false
      } else if (c === 0x22) this.inString = true
      else if (c === 0x7b || c === 0x5b) {
        if (++this.depth > this.maxDepth && this.poison === undefined) {
          this.poison = `nested deeper than ${this.maxDepth} levels`
          this.pieces.length = 0
        }
      } else if (c === 0x7d || c === 0x5d) {
        if (--this.depth === 0) {
          this.keep(chunk.subarray(0, i + 1))
          return i + 1
        }
      }
    }
    this.keep(chunk)
    return -1
  }

  private keep(piece: Buffer): void {
    if (this.poison !== undefined) return
    this.bytes += piece.length
    if (this.bytes > this.cap) {
      this.poison = `larger than ${count(this.cap)} bytes`
      this.pieces.length = 0
      return
    }
    this.pieces.push(piece)
  }
}
