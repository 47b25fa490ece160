import {BadResponseError, TruncatedBodyError} from '../errors.js'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_OBJ = 0x7b
const CLOSE_OBJ = 0x7d
const OPEN_ARR = 0x5b
const CLOSE_ARR = 0x5d
const COLON = 0x3a
const COMMA = 0x2c
const DATA = Buffer.from('data')

/**
 * Streams the records out of `{"status":"success","data":[{...},{...}]}` (or `"data":{...}`) without
 * holding the body: it tracks nesting and string state byte by byte and hands back each record's bytes,
 * which the caller JSON.parses (V8's parser is an order of magnitude faster than a streaming one, so only
 * the splitting is streamed). Memory is one record plus one chunk, whatever the county's size.
 */
export interface Rejected {
  /** 1-based position of the record in the body. */
  index: number
  reason: string
}

/** Defaults of the poison-record caps (README "Poison records"). */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024
export const MAX_RECORD_DEPTH = 64

export class DataScanner {
  /** Records skipped for their size or depth since the last `takeRejected()`. */
  private rejected: Rejected[] = []
  /** Why the record being read is being skipped (its bytes are no longer kept). */
  private poisoned: string | undefined
  private pieceBytes = 0

  constructor(
    private readonly limits: {maxRecordBytes: number; maxDepth: number} = {
      maxRecordBytes: MAX_RECORD_BYTES,
      maxDepth: MAX_RECORD_DEPTH,
    },
    /** Where a few top-level members lie in each record, found on the way (the run statistics). */
    readonly spans?: MemberSpans,
  ) {}

  /** Records skipped since the last call (a poison record never stops the rest of the body). */
  takeRejected(): Rejected[] {
    const r = this.rejected
    this.rejected = []
    return r
  }

  private depth = 0
  private inString = false
  private escape = false
  private expectKey = false
  private keyPieces: Buffer[] | undefined
  private keyStart = -1
  private lastKeyIsData = false
  private dataPending = false
  private mode: 'seek' | 'array' | 'object' | 'done' = 'seek'
  private sawData = false
  private recordDepth = -1
  private pieces: Buffer[] = []
  private captureStart = -1
  /** Records found so far (for tests and progress). */
  count = 0

  /** Feed one chunk; returns the complete records it finished, as byte slices. */
  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = []
    const n = chunk.length
    const w = this.spans
    w?.reset()
    if (this.recordDepth !== -1) this.captureStart = 0
    if (this.keyPieces) this.keyStart = 0
    for (let i = 0; i < n; i++) {
      if (this.inString) {
        // strings are most of the bytes: a tight loop to the closing quote, stepping over escapes
        // (a native indexOf per string would rescan the rest of the chunk for a backslash each time)
        if (this.escape) {
          this.escape = false
          i++
        }
        for (; i < n; i++) {
          const b = chunk[i]!
          if (b === BACKSLASH) {
            if (++i >= n) this.escape = true
          } else if (b === QUOTE) break
        }
        if (i >= n) break
        this.inString = false
        if (this.keyPieces) {
          this.keyPieces.push(chunk.subarray(this.keyStart, i))
          const key = this.keyPieces.length === 1 ? this.keyPieces[0]! : Buffer.concat(this.keyPieces)
          this.lastKeyIsData = key.equals(DATA)
          this.keyPieces = undefined
        }
        continue
      }
      if (this.recordDepth !== -1) {
        // Inside a record (nearly every byte of a body): only strings and nesting matter until the record's
        // own closing bracket, so a tight loop with the state in locals (npm run bench: the scanner was a
        // fifth of the CSV export's CPU with every byte going through the general path below).
        let depth = this.depth
        const recordDepth = this.recordDepth
        const deepest = recordDepth + this.limits.maxDepth
        // a byte's offset in the record is base + its index in this chunk
        const base = this.pieceBytes - this.captureStart
        for (; i < n; i++) {
          const b = chunk[i]!
          if (b === QUOTE) {
            const from = i + 1
            let escaped = false
            for (i++; i < n; i++) {
              const s = chunk[i]!
              if (s === BACKSLASH) {
                escaped = true
                if (++i >= n) this.escape = true
              } else if (s === QUOTE) break
            }
            if (i >= n) {
              this.inString = true
              if (w !== undefined && depth === recordDepth) w.keyCut()
            } else if (w !== undefined && depth === recordDepth && w.keyNext) {
              // most keys are told apart from the wanted ones by their length and first byte, without a call
              w.keyNext = false
              const length = i - from
              // a key spelt with an escape is compared by its decoded name only by the tokenizer
              if (escaped) w.unsure()
              else if (length <= w.longest && w.starts[(length << 8) | chunk[from]!] === 1)
                w.key(chunk, from, i, base + i + 1)
            }
          } else if (b === OPEN_OBJ || b === OPEN_ARR) {
            if (++depth > deepest && this.poisoned === undefined)
              this.poison(`nested deeper than ${this.limits.maxDepth} levels`)
          } else if (b === CLOSE_OBJ || b === CLOSE_ARR) {
            // the record's own end: handled below, with the general path
            if (depth === recordDepth) break
            depth--
          } else if (b === COMMA && w !== undefined && depth === recordDepth) {
            if (w.open !== -1) w.close(base + i)
            w.keyNext = true
          }
        }
        this.depth = depth
        if (i >= n) break
      }
      const c = chunk[i]!
      if (
        this.dataPending &&
        c !== OPEN_ARR &&
        c !== OPEN_OBJ &&
        c !== 0x20 &&
        c !== 0x0a &&
        c !== 0x0d &&
        c !== 0x09
      ) {
        // spec 4: data is a record or a list of records; null, a string or a number is a broken answer
        throw new BadResponseError(
          "the response's `data` is not a record or a list of records (spec 4); the answer is malformed",
        )
      }
      switch (c) {
        case QUOTE:
          this.inString = true
          if (this.depth === 1 && this.expectKey) {
            this.keyPieces = []
            this.keyStart = i + 1
          }
          break
        case OPEN_OBJ:
        case OPEN_ARR:
          this.depth++
          if (this.depth === 1) {
            if (c !== OPEN_OBJ) throw new BadResponseError('the response body is not a JSON object (spec 4)')
            this.expectKey = true
          } else if (this.dataPending && this.depth === 2) {
            this.dataPending = false
            this.sawData = true
            if (c === OPEN_ARR) this.mode = 'array'
            else {
              this.mode = 'object'
              this.startRecord(i)
            }
          } else if (this.mode === 'array' && this.depth === 3 && this.recordDepth === -1) {
            if (c !== OPEN_OBJ) throw new BadResponseError('an element of `data` is not a JSON object')
            this.startRecord(i)
          } else if (
            this.recordDepth !== -1 &&
            this.poisoned === undefined &&
            this.depth - this.recordDepth > this.limits.maxDepth
          )
            this.poison(`nested deeper than ${this.limits.maxDepth} levels`)
          break
        case CLOSE_OBJ:
        case CLOSE_ARR:
          if (this.depth === this.recordDepth) {
            if (
              this.poisoned === undefined &&
              this.pieceBytes + (i + 1 - this.captureStart) > this.limits.maxRecordBytes
            )
              this.poison(`larger than ${this.limits.maxRecordBytes.toLocaleString('en-US')} bytes`)
            if (this.poisoned !== undefined) {
              this.rejected.push({index: this.count + 1, reason: this.poisoned})
              this.poisoned = undefined
            } else {
              w?.end(this.pieceBytes + i - this.captureStart)
              this.pieces.push(chunk.subarray(this.captureStart, i + 1))
              out.push(this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces))
            }
            this.pieces = []
            this.pieceBytes = 0
            this.recordDepth = -1
            this.captureStart = -1
            this.count++
            if (this.mode === 'object') this.mode = 'done'
          }
          this.depth--
          if (this.mode === 'array' && this.depth === 1) this.mode = 'done'
          break
        case COLON:
          if (this.depth === 1) {
            this.expectKey = false
            if (this.lastKeyIsData) this.dataPending = true
          }
          break
        case COMMA:
          if (this.depth === 1) {
            this.expectKey = true
            this.lastKeyIsData = false
          }
          break
      }
    }
    if (this.recordDepth !== -1 && this.poisoned === undefined) {
      const rest = chunk.subarray(this.captureStart)
      this.pieces.push(rest)
      this.pieceBytes += rest.length
      // a record over the cap is dropped here, before it can grow memory any further
      if (this.pieceBytes > this.limits.maxRecordBytes)
        this.poison(`larger than ${this.limits.maxRecordBytes.toLocaleString('en-US')} bytes`)
    }
    if (this.keyPieces && this.inString) this.keyPieces.push(chunk.subarray(this.keyStart))
    return out
  }

  private startRecord(i: number): void {
    this.spans?.begin()
    this.recordDepth = this.depth
    this.captureStart = i
    this.pieces = []
    this.pieceBytes = 0
  }

  /** Stop keeping the current record's bytes; it is reported by `takeRejected` when it closes. */
  private poison(reason: string): void {
    this.poisoned = reason
    this.pieces = []
    this.pieceBytes = 0
  }

  /** Call when the body ends: a body cut short (or without `data`) is an error, so no page is taken as complete by mistake. */
  end(): void {
    if (this.depth !== 0 || this.inString || this.recordDepth !== -1)
      throw new TruncatedBodyError(`the response body ended mid-JSON after ${this.count} records`)
    if (!this.sawData) throw new BadResponseError('the response has no `data` field (spec 4)')
  }
}

/**
 * Where the values of a few top-level members lie in each record, found while the scanner passes the
 * record's bytes anyway: the run statistics read their handful of values from there rather than tokenising
 * every NDJSON record a second time (npm run bench: that second pass cost the export about 1.0 s of CPU per
 * 200,000 records, the spans about 0.7 s). A member's span runs from just after its key's closing quote (so
 * it holds `:` and the value) to the next top-level comma or the record's closing brace, as offsets in the
 * record. A record whose spans cannot be trusted (a top-level key cut by a chunk's edge or spelt with an
 * escape, a wanted one named twice) gets none, and is read the usual way.
 */
export class MemberSpans {
  /** The wanted names as bytes, by length: most keys' lengths have none, and cost one array read. */
  private readonly byLength: Array<Array<{bytes: Buffer; member: number}> | undefined> = []
  /** Values per record in `table`: start and end per member, then 1 when the spans were found. */
  readonly width: number
  /** The record being read (one array reused: an allocation per record cost more than finding the spans). */
  private readonly current: Int32Array
  /** The member whose value is being read, or -1. */
  open = -1
  private exact = true
  /** Per key length and first byte (`length << 8 | byte`): 1 when a wanted name has them. */
  readonly starts: Uint8Array
  /** The longest wanted name's length in bytes. */
  readonly longest: number
  /** The next top-level string of the record is a key (after its `{` or a top-level comma). */
  keyNext = false
  /**
   * The records the last `push` returned, in order, `width` values each from `k * width`: start and end of
   * member m's span at 2m and 2m + 1 (-1 when the record has no such member), and last 1 when the spans were
   * found, 0 when they were not.
   */
  table = new Int32Array(0)
  /** Records in `table`. */
  count = 0

  constructor(readonly names: readonly string[]) {
    names.forEach((name, member) => {
      const bytes = Buffer.from(name)
      ;(this.byLength[bytes.length] ??= []).push({bytes, member})
    })
    this.width = names.length * 2 + 1
    this.current = new Int32Array(this.width)
    this.longest = this.byLength.length - 1
    this.starts = new Uint8Array((this.longest + 1) << 8)
    for (const group of this.byLength)
      for (const {bytes} of group ?? []) this.starts[(bytes.length << 8) | bytes[0]!] = 1
  }

  /** Record k of the last push: the offset of its values in `table`, or -1 when its spans were not found. */
  at(k: number): number {
    const at = k * this.width
    return this.table[at + this.width - 1] === 1 ? at : -1
  }

  /** A record opens. */
  begin(): void {
    this.current.fill(-1)
    this.open = -1
    this.exact = true
    this.keyNext = true
  }

  /** A top-level key, `chunk[from, to)`, closed at record offset `at` (the scanner has cleared `keyNext`). */
  key(chunk: Buffer, from: number, to: number, at: number): void {
    const wanted = this.byLength[to - from]
    if (wanted === undefined) return
    next: for (const {bytes, member} of wanted) {
      for (let k = 0; k < bytes.length; k++) if (chunk[from + k] !== bytes[k]) continue next
      // a member named twice: which one a reader takes is its own rule, so let it decide
      if (this.current[2 * member] !== -1) this.exact = false
      this.current[2 * member] = at
      this.open = member
      return
    }
  }

  /** The record's spans cannot be trusted (a key spelt with an escape). */
  unsure(): void {
    this.exact = false
  }

  /** A top-level string ran past the chunk's end: if it was a key, it went unseen. */
  keyCut(): void {
    if (this.keyNext) {
      this.keyNext = false
      this.exact = false
    }
  }

  /** The open member's value ends at record offset `at` (a top-level comma, or the record's end). */
  close(at: number): void {
    this.current[2 * this.open + 1] = at
    this.open = -1
  }

  /** The record's closing brace, at record offset `at`: its spans join the table. */
  end(at: number): void {
    if (this.open !== -1) this.close(at)
    const w = this.width
    if ((this.count + 1) * w > this.table.length) {
      const grown = new Int32Array(Math.max(64, this.count * 2) * w)
      grown.set(this.table)
      this.table = grown
    }
    const base = this.count++ * w
    this.table.set(this.current, base)
    this.table[base + w - 1] = this.exact ? 1 : 0
  }

  /** A push begins: its records are counted from 0. */
  reset(): void {
    this.count = 0
  }
}
