/**
 * The JSON grammar (RFC 8259), checked byte by byte, in one place: every path that reads the service's
 * bytes (an export's pages, a batch answer, a single lookup, `keys check`'s first record) walks them here.
 * A record is walked once, whole: its grammar is checked (numbers, literals, strings and their escapes,
 * structure) and the spans of its members are noted, so the stages after it (the spec checks, the CSV
 * cells, the statistics) read values where they lie instead of walking the bytes again. UTF-8 is checked
 * by the caller with the native `isUtf8` (one call per record). Nothing here recurses or throws on the
 * hot path: a problem is a return code with its reason and offset in `Walk`.
 */

/** Value kinds, in the low bits of an entry's KIND slot. */
export const STRING = 1
export const NUMBER = 2
export const TRUE = 3
export const FALSE = 4
export const NULL = 5
export const OBJECT = 6
export const ARRAY = 7
export const KIND_MASK = 7
/**
 * Flags beside the kind: a string value holding escapes, a key holding escapes, a string holding a comma,
 * a number with a fraction or exponent, a number that may lie outside the range of a double (it has an
 * exponent, or more than WIDE_DIGITS characters: `1e400` and a 400-digit integer are read as infinity).
 */
export const ESCAPED = 8
export const KEY_ESCAPED = 16
export const HAS_COMMA = 32
export const NOT_INTEGER = 64
export const WIDE = 128
/** A number written with more characters than this, or with an exponent, is WIDE (a double's largest integer has 309 digits). */
export const WIDE_DIGITS = 300

/**
 * A member entry is ENTRY ints in `Walk.entries`: its parent (-1 for a member of the record, else the
 * entry, counted from the record's first, of the record member whose object value holds it), its key's
 * bytes [KEY_S, KEY_E) (inside the quotes), its value's bytes [VAL_S, VAL_E) (a string's span holds its
 * quotes), KIND with flags, and the ID of its name (`Names`; -1 when it has none). Members of the record
 * and of its object members are entered (the spec's option objects, 2.2 and 2.3); deeper members are
 * checked but not entered.
 */
export const ENTRY = 7
export const PARENT = 0
export const KEY_S = 1
export const KEY_E = 2
export const VAL_S = 3
export const VAL_E = 4
export const KIND = 5
export const ID = 6

/**
 * A member name met before (src/pipeline/fields.ts makes them): its raw bytes as sent, its id, and the
 * names that followed it (a small transition tree, like V8's hidden classes). Records of one answer share a
 * few shapes, so the walk predicts each name from the one before and compares the predicted bytes as it
 * reads the key: the usual key is named with no second look at its bytes.
 */
export interface NameNode {
  readonly bytes: Uint8Array
  /**
   * `bytes` and the closing quote after them as little-endian 32-bit words, the last one padded with
   * zeros: compared a word a load, the last one under `mask`, so a name of any length needs no byte loop
   * and its closing quote no test of its own.
   */
  readonly words: Int32Array
  /** The bits of the last word that hold the name's (or its closing quote's) bytes. */
  readonly mask: number
  readonly id: number
  readonly next: NameNode[]
  /** The member's value is an option object (spec 2.2, 2.3): its members are named too. */
  readonly option: boolean
  /** The name was written with escapes. */
  readonly escaped: boolean
}

export interface Names {
  /** The start node of a record's members. */
  readonly root: NameNode
  /** The start node of the members of `node`'s object value. */
  sub(node: NameNode): NameNode
  /** A name that was not among the predicted ones: looked up or made (`parent` is the option member, or undefined). */
  miss(
    b: Uint8Array,
    ks: number,
    ke: number,
    escaped: boolean,
    start: NameNode,
    prev: NameNode,
    parent: NameNode | undefined,
  ): NameNode
}

/** The walk's answer when the bytes end before the record does: the caller waits for more. */
export const INCOMPLETE = -1
/** The walk's answer when the bytes break the grammar (or a limit): `Walk.reason` says how, at `Walk.at`. */
export const BROKEN = -2

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_OBJ = 0x7b
const CLOSE_OBJ = 0x7d
const OPEN_ARR = 0x5b
const CLOSE_ARR = 0x5d
const MINUS = 0x2d
const PLUS = 0x2b
const DOT = 0x2e
const ZERO = 0x30
const NINE = 0x39

/** String bytes by class: 0 plain, 1 the closing quote, 2 a backslash, 3 a control character, 4 a comma. */
const STR = new Uint8Array(256)
for (let c = 0; c < 0x20; c++) STR[c] = 3
STR[QUOTE] = 1
STR[BACKSLASH] = 2
STR[COMMA] = 4

const HEX = new Uint8Array(256)
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1

/** The members of the record being walked, and the reason a walk failed; reused record after record. */
export class Walk {
  entries = new Int32Array(64 * ENTRY)
  /** Entries filled by the last walk. */
  count = 0
  reason = ''
  /** Offset of the problem (in the buffer walked). */
  at = 0
  /** Flags of the last string scanned. */
  flags = 0
  /** The last value walked had whitespace outside its strings (it was pretty-printed). */
  spaced = false
  /** The last value walked holds an escape in a string or a member name, at any depth (the redactor decodes those, src/api/secrets.ts). */
  escapes = false
  readonly closers: Uint8Array
  readonly opened: Int32Array
  /** By depth, the entry whose value is the container open at that depth (-1: none); the current depth's is a local. */
  readonly owner: Int32Array

  /** Names members as they are walked (absent: every entry's ID is -1). */
  names: Names | undefined
  /** The buffer last walked, as a DataView (names are compared, and plain string bytes stepped over, four bytes at a time). */
  view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0))
  viewOf: Uint8Array | undefined

  constructor(
    /** The record itself is level 1 (spec 2.2/2.3 objects are level 2). */
    readonly maxDepth = 64,
    /** Members (of the record and of its objects) at most; a hostile record cannot grow the table without bound. */
    readonly maxMembers = 100_000,
  ) {
    this.closers = new Uint8Array(maxDepth + 1)
    this.opened = new Int32Array(maxDepth + 1)
    this.owner = new Int32Array(maxDepth + 2)
  }

  fail(reason: string, at: number): number {
    this.reason = reason
    this.at = at
    return BROKEN
  }

  grow(): void {
    const next = new Int32Array(this.entries.length * 2)
    next.set(this.entries)
    this.entries = next
  }
}

/**
 * Walk one JSON value starting at `b[p]` up to `n` (a record: the caller checks it starts with `{`).
 * Returns the offset just after it, INCOMPLETE when `n` comes first (a scalar needs the byte after it, so
 * one that ends at `n` is incomplete too), or BROKEN. The members of an object value, and of its object
 * members, are entered in `w.entries` from entry `w.count` on, with offsets from `p`; on success `w.count`
 * is past them, otherwise it is left as it was.
 *
 * A hot loop (every byte of every record passes here, npm run bench): one function with its state in
 * locals; a value, then the delimiters after it, then (in an object) the next member's name, with no
 * state dispatch in between; strings, the bulk of the bytes, are stepped over by a byte-class table (one
 * load and one compare a byte); every read is within [p, n), so the JIT sees one element type.
 */
export function walkValue(b: Uint8Array, p: number, n: number, w: Walk): number {
  const closers = w.closers
  const opened = w.opened
  const owner = w.owner
  const maxDepth = w.maxDepth
  // entries hold offsets from the value's first byte, and go after those of earlier values of the batch
  const o = p
  let m = w.entries
  const base = w.count
  // entries may be added while count is below this: the table's room and the cap on members
  let room = Math.min(Math.floor(m.length / ENTRY), base + w.maxMembers)
  let count = base
  let depth = 0
  let needKey = false
  let spaced = false
  let esc = 0
  // the flags of the last member name read (its entry's KIND is written with its value's kind)
  let keyFlags = 0
  // a number that broke the grammar mid-exponent may have left it set
  exponent = false
  // the entry whose value is read at this depth (-1: none); owner[d] holds it for the depths above
  let cur = -1
  const names = w.names
  if (w.viewOf !== b) {
    w.viewOf = b
    w.view = new DataView(b.buffer, b.byteOffset, b.length)
  }
  const view = w.view
  // the name of the record member whose value is read now, the last record member's, the last option member's
  let prev1 = names?.root
  let top: NameNode | undefined
  let prev2: NameNode | undefined
  let inOption = false
  for (;;) {
    if (p >= n) return INCOMPLETE
    let c = b[p]!
    if (c <= 0x20) {
      spaced = true
      p = skipWs(b, p, n)
      if (p >= n) return INCOMPLETE
      c = b[p]!
    }
    if (needKey) {
      // a member's name, its colon, and its entry (members of the record and of its objects)
      if (c !== QUOTE) return w.fail('expected a member name', p)
      const ks = p + 1
      let q = ks
      let kflags = 0
      const named = names !== undefined && (depth === 1 || (depth === 2 && inOption))
      let node: NameNode | undefined
      if (named) {
        // the predicted names first: bytes equal to a name read before are a valid key (its raw text),
        // compared a word at a time (over the benchmark county's 200,000 records, byte by byte the named
        // walk took about 30 ms more than the unnamed one; a word at a time it takes no more)
        const prev = depth === 1 ? prev1! : prev2!
        const cands = prev.next
        next: for (let i = 0; i < cands.length; i++) {
          const cand = cands[i]!
          const len = cand.bytes.length
          const words = cand.words
          const last = words.length - 1
          // the last word may reach past the quote; past n (a chunk's end) the name is read as a miss
          if (ks + 4 * last + 4 > n) continue
          for (let j = 0; j < last; j++) if (view.getInt32(ks + 4 * j, true) !== words[j]) continue next
          if ((view.getInt32(ks + 4 * last, true) & cand.mask) !== words[last]) continue
          node = cand
          q = ks + len
          if (cand.escaped) kflags = esc = KEY_ESCAPED
          break
        }
      }
      if (node === undefined) {
        let k = 0
        for (; q < n; q++) if ((k = STR[b[q]!]!) !== 0) break
        if (q >= n) return INCOMPLETE
        if (k !== 1) {
          q = scanString(b, q, n, w)
          if (q < 0) return q
          kflags = w.flags & ESCAPED ? KEY_ESCAPED : 0
          esc |= kflags
        }
        if (named)
          node = names.miss(
            b,
            ks,
            q,
            kflags !== 0,
            depth === 1 ? names.root : names.sub(top!),
            depth === 1 ? prev1! : prev2!,
            depth === 1 ? undefined : top,
          )
      }
      if (node !== undefined) {
        if (depth === 1) prev1 = top = node
        else prev2 = node
      }
      p = q + 1
      if (p < n && b[p] !== COLON) {
        spaced = true
        p = skipWs(b, p, n)
      }
      if (p >= n) return INCOMPLETE
      if (b[p] !== COLON) return w.fail("expected ':'", p)
      p++
      if (depth <= 2) {
        if (count >= room) {
          // the table is full, or the record has as many members as it may
          if (count - base === w.maxMembers) return w.fail(`more than ${w.maxMembers} members`, ks - 1)
          w.grow()
          m = w.entries
          room = Math.min(Math.floor(m.length / ENTRY), base + w.maxMembers)
        }
        const at = count * ENTRY
        m[at + PARENT] = depth === 1 ? -1 : owner[1]! - base
        m[at + KEY_S] = ks - o
        m[at + KEY_E] = q - o
        m[at + ID] = node === undefined ? -1 : node.id
        // VAL_S, VAL_E and KIND are written with the value (a walk that succeeds gives every member one)
        cur = count++
        keyFlags = kflags
      } else cur = -1
      needKey = false
      continue
    }
    // a value
    const vs = p
    let kind: number
    if (c === QUOTE) {
      let q = plainWords(view, p + 1, n)
      let k = 0
      for (; q < n; q++) if ((k = STR[b[q]!]!) !== 0) break
      if (q >= n) return INCOMPLETE
      kind = STRING
      if (k !== 1) {
        q = scanString(b, q, n, w)
        if (q < 0) return q
        kind = STRING | w.flags
        esc |= w.flags
      }
      p = q + 1
    } else if (c === OPEN_OBJ || c === OPEN_ARR) {
      if (depth >= maxDepth) return w.fail(`nested deeper than ${maxDepth} levels`, p)
      const close = c + 2 // `{` + 2 is `}`, `[` + 2 is `]`
      p++
      if (p < n && b[p]! <= 0x20) {
        spaced = true
        p = skipWs(b, p, n)
      }
      if (p >= n) return INCOMPLETE
      if (b[p] !== close) {
        if (cur >= 0) m[cur * ENTRY + KIND] = keyFlags
        owner[depth] = cur
        closers[depth] = close
        opened[depth] = vs
        if (depth === 1) {
          // the value of a record member: an option object's members are named too (spec 2.2, 2.3)
          inOption = close === CLOSE_OBJ && top !== undefined && top.option
          if (inOption) prev2 = names!.sub(top!)
        }
        depth++
        cur = -1
        needKey = close === CLOSE_OBJ
        continue
      }
      // an empty container: its value ends at once
      p++
      kind = close === CLOSE_OBJ ? OBJECT : ARRAY
      if (depth === 0) {
        // an empty record ends here, as any record ends at its closing bracket (no byte after it needed)
        w.count = count
        w.spaced = spaced
        w.escapes = false
        return p
      }
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const q = numberEnd(b, p, n)
      if (q < 0) return -q >= n ? INCOMPLETE : w.fail('a number JSON does not allow', -q)
      kind = q & 0x40000000 ? NUMBER | NOT_INTEGER : NUMBER
      p = q & 0x3fffffff
      // numberEnd notes an exponent; a long number is wide too (both rare: two tests per number)
      if (exponent || p - vs > WIDE_DIGITS) {
        exponent = false
        kind |= WIDE
      }
    } else if (c === 0x74) {
      if (p + 3 >= n || b[p + 1] !== 0x72 || b[p + 2] !== 0x75 || b[p + 3] !== 0x65)
        return literalFail(b, p, n, 'true', w)
      p += 4
      kind = TRUE
    } else if (c === 0x66) {
      if (p + 4 >= n || b[p + 1] !== 0x61 || b[p + 2] !== 0x6c || b[p + 3] !== 0x73 || b[p + 4] !== 0x65)
        return literalFail(b, p, n, 'false', w)
      p += 5
      kind = FALSE
    } else if (c === 0x6e) {
      if (p + 3 >= n || b[p + 1] !== 0x75 || b[p + 2] !== 0x6c || b[p + 3] !== 0x6c)
        return literalFail(b, p, n, 'null', w)
      p += 4
      kind = NULL
    } else return w.fail('expected a value', p)
    if (cur >= 0) {
      const at = cur * ENTRY
      m[at + VAL_S] = vs - o
      m[at + VAL_E] = p - o
      m[at + KIND] = keyFlags | kind
    }
    // the delimiters after a value: a comma (then the next member or element), or closing brackets
    for (;;) {
      if (p >= n) return INCOMPLETE
      c = b[p]!
      if (c <= 0x20) {
        p = skipWs(b, p, n)
        if (p >= n) return INCOMPLETE
        c = b[p]!
        // whitespace after the value itself is not part of it
        if (depth > 0) spaced = true
      }
      if (depth === 0) {
        w.count = count
        w.spaced = spaced
        w.escapes = (esc & (ESCAPED | KEY_ESCAPED)) !== 0
        return p
      }
      const close = closers[depth - 1]!
      if (c === COMMA) {
        p++
        needKey = close === CLOSE_OBJ
        break
      }
      if (c !== close) {
        // `080`, `1.5.2` stop here; `1 "b"` (a blank after the number) is a missing comma
        const num =
          (kind & KIND_MASK) === NUMBER &&
          b[p - 1]! > 0x20 &&
          c !== COMMA &&
          c !== CLOSE_OBJ &&
          c !== CLOSE_ARR
        return w.fail(
          num ? 'a number JSON does not allow' : `expected ',' or '${String.fromCharCode(close)}'`,
          p,
        )
      }
      p++
      depth--
      kind = close === CLOSE_OBJ ? OBJECT : ARRAY
      cur = owner[depth]!
      if (cur >= 0) {
        const at = cur * ENTRY
        m[at + VAL_S] = opened[depth]! - o
        m[at + VAL_E] = p - o
        m[at + KIND] = m[at + KIND]! | kind
      }
      if (depth === 0) {
        w.count = count
        w.spaced = spaced
        w.escapes = (esc & (ESCAPED | KEY_ESCAPED)) !== 0
        return p
      }
    }
  }
}

/**
 * Step over a string's plain bytes four at a time from `p`: the offset of the first word that holds a
 * byte the string loop must see (a quote, a backslash, a comma or a control character), or where fewer
 * than four bytes are left. Each test is exact for its word (a zero byte of `x ^ c` is a byte equal to `c`;
 * `x - 0x20202020` borrows through a byte below 0x20), so the byte loop after it resumes where it must.
 */
function plainWords(view: DataView, p: number, n: number): number {
  for (; p + 4 <= n; p += 4) {
    const x = view.getInt32(p, true)
    const q = x ^ 0x22222222
    const s = x ^ 0x5c5c5c5c
    const c = x ^ 0x2c2c2c2c
    const found =
      ((q - 0x01010101) & ~q) | ((s - 0x01010101) & ~s) | ((c - 0x01010101) & ~c) | ((x - 0x20202020) & ~x)
    if ((found & 0x80808080) !== 0) break
  }
  return p
}

/** The offset of the first byte at or after p that is not JSON whitespace (RFC 8259 section 2), or n. */
function skipWs(b: Uint8Array, p: number, n: number): number {
  for (; p < n; p++) {
    const c = b[p]!
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return p
  }
  return n
}

/** A literal that does not match: incomplete when the bytes so far are its start, broken otherwise. */
function literalFail(b: Uint8Array, p: number, n: number, word: string, w: Walk): number {
  for (let i = 0; i < word.length; i++) {
    if (p + i >= n) return INCOMPLETE
    if (b[p + i] !== word.charCodeAt(i)) return w.fail(`a literal JSON does not allow (expected ${word})`, p)
  }
  return w.fail('unexpected text', p + word.length)
}

/**
 * Step over a string's body from `p` (just after its opening quote): the offset of its closing quote,
 * INCOMPLETE, or BROKEN. Sets `w.flags` to ESCAPED and HAS_COMMA as found. Escapes are checked (RFC 8259
 * section 7: the eight single-character escapes and \uXXXX); a \u escape of a lone surrogate is refused,
 * since it is no character and cannot be written as UTF-8 (RFC 8259 section 8.2).
 */
export function scanString(b: Uint8Array, p: number, n: number, w: Walk): number {
  let flags = 0
  for (;;) {
    let k = 0
    for (; p < n; p++) if ((k = STR[b[p]!]!) !== 0) break
    if (p >= n) return INCOMPLETE
    if (k === 1) {
      w.flags = flags
      return p
    }
    if (k === 4) {
      flags |= HAS_COMMA
      p++
      continue
    }
    if (k === 3) return w.fail('a control character inside a string (it must be escaped)', p)
    flags |= ESCAPED
    const e = b[p + 1]
    if (p + 1 >= n) return INCOMPLETE
    if (e === 0x75) {
      const u = hex4(b, p + 2, n)
      if (u === INCOMPLETE) return INCOMPLETE
      if (u < 0) return w.fail('a \\u escape without four hex digits', p)
      if (u >= 0xdc00 && u <= 0xdfff) return w.fail('a lone surrogate in a \\u escape', p)
      if (u >= 0xd800 && u <= 0xdbff) {
        // a high surrogate must be followed by a low one
        if (p + 7 >= n) return INCOMPLETE
        const low = b[p + 6] === BACKSLASH && b[p + 7] === 0x75 ? hex4(b, p + 8, n) : -3
        if (low === INCOMPLETE) return INCOMPLETE
        if (low < 0xdc00 || low > 0xdfff) return w.fail('a lone surrogate in a \\u escape', p)
        p += 12
      } else p += 6
    } else if (
      e === QUOTE ||
      e === BACKSLASH ||
      e === 0x2f ||
      e === 0x62 ||
      e === 0x66 ||
      e === 0x6e ||
      e === 0x72 ||
      e === 0x74
    )
      p += 2
    else return w.fail('an escape JSON does not allow', p)
  }
}

/** Four hex digits at p as a number, INCOMPLETE when the bytes end first, or -3. */
function hex4(b: Uint8Array, p: number, n: number): number {
  let v = 0
  for (let i = 0; i < 4; i++) {
    if (p + i >= n) return INCOMPLETE
    const c = b[p + i]!
    if (HEX[c] === 0) return -3
    v = v * 16 + (c <= NINE ? c - ZERO : (c | 0x20) - 0x57)
  }
  return v
}

/** Set by `numberEnd` when the number it read has an exponent (the walk reads and clears it: the number is WIDE). */
let exponent = false

/**
 * The offset after the number at p (RFC 8259 section 6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`),
 * with bit 30 set when it has a fraction or an exponent (and `exponent` set for an exponent); or minus the
 * offset where it breaks the grammar (minus n when the bytes end first).
 */
export function numberEnd(b: Uint8Array, p: number, n: number): number {
  let frac = 0
  let c = b[p]!
  if (c === MINUS) {
    if (++p >= n) return -n
    c = b[p]!
  }
  if (c === ZERO) p++
  else if (c > ZERO && c <= NINE) {
    for (p++; p < n && (c = b[p]!) >= ZERO && c <= NINE;) p++
  } else return -p
  if (p >= n) return p
  c = b[p]!
  if (c === DOT) {
    frac = 0x40000000
    if (++p >= n) return -n
    c = b[p]!
    if (c < ZERO || c > NINE) return -p
    for (p++; p < n && (c = b[p]!) >= ZERO && c <= NINE;) p++
    if (p >= n) return p | frac
    c = b[p]!
  }
  if (c === 0x65 || c === 0x45) {
    frac = 0x40000000
    exponent = true
    if (++p >= n) return -n
    c = b[p]!
    if (c === PLUS || c === MINUS) {
      if (++p >= n) return -n
      c = b[p]!
    }
    if (c < ZERO || c > NINE) return -p
    for (p++; p < n && (c = b[p]!) >= ZERO && c <= NINE;) p++
  }
  return p | frac
}
