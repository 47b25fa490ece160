import {isAscii} from 'node:buffer'

import {PoisonRecordError} from './poison-record-error.js'

export {PoisonRecordError}

/**
 * The CSV hot path: one record's JSON bytes (as the data scanner hands them) to its flattened CSV cells in a
 * single pass, with no intermediate object. Chosen by measurement (scripts/bench-row-format.mjs, sandbox
 * records, medians of per-round ratios): this tokenizer costs 0.9-1.2x a bare JSON.parse of the same bytes,
 * JSON.parse + a walk to cells 1.9-2.6x, a tokenizer over the Buffer with a native slice per cell 2.3-3.1x,
 * the old path (parse, flattenRow, csv-stringify) 5.6-6.5x. It also keeps each number's text as sent, which
 * JSON.parse cannot (688600.0 would come back as 688600, 1e21 as 1e+21).
 *
 * The record is decoded to a string once (one native UTF-8 decode); the tokenizer then walks it with
 * charCodeAt and cuts cells with slice. Every JSON token is ASCII, so offsets in the string are safe whatever
 * the record's text. Nothing recurses: containers below the flattened level are scanned with an explicit
 * stack bounded by `maxDepth`.
 */

/** One flattened record. Reused between calls (no allocation per record but the cells); `length` = entries filled. */
export interface FlatRow {
  names: string[]
  cells: string[]
  length: number
  /**
   * With `newFlatRow(tagOf)`: each entry's tag, `tagOf(name)` worked out once per name (not per record), so a
   * reader that wants a few columns (the run statistics) finds them without comparing names.
   */
  tags?: number[] | undefined
}

/**
 * A member name met before, with the names that followed it (a small transition tree, like V8's hidden
 * classes): records of one export share a few shapes, so the next member is nearly always one of `next`, found
 * by comparing its text in place; no name is sliced, decoded or hashed per record.
 */
class KeyNode {
  /** Members seen right after this one in the same object (first members, for a start node). */
  readonly next: KeyNode[] = []
  /** For a start node: every member of its object seen so far, by raw text (the miss path). */
  readonly children = new Map<string, KeyNode>()
  /** For a top-level member whose value is an object: the start node of that object's members. */
  sub: KeyNode | undefined
  /** `raw` as char codes: compared against the record's text for every record (a small-integer array reads faster than any string V8 may hold as a slice or a forwarding "thin" string). */
  readonly codes: number[]
  /** For an ASCII name: its bytes as little-endian 32-bit words, compared four at a time on an ASCII record. */
  words: number[] | undefined = []
  /** The row's `tagOf(name)`, or -1. */
  tag = -1
  constructor(
    /** The name's text as sent, escapes and all (a flat string: it is compared char by char). */
    readonly raw: string,
    /** The column name: `K` for a top-level member, `K.S` for a member of an object member. */
    readonly name: string,
  ) {
    this.codes = Array.from({length: raw.length}, (_, i) => raw.charCodeAt(i))
    if (this.codes.every((c) => c < 0x80)) {
      const c = this.codes
      for (let i = 0; i + 4 <= c.length; i += 4)
        this.words!.push(c[i]! | (c[i + 1]! << 8) | (c[i + 2]! << 16) | (c[i + 3]! << 24))
    } else this.words = undefined
  }
}

/** How many successors a name keeps, and how many names a row remembers: a hostile stream of ever-new names costs bounded memory. */
const MAX_NEXT = 8
const MAX_NAMES = 10_000

interface RowCache extends FlatRow {
  root?: KeyNode
  names$?: number
  tagOf?: ((name: string) => number) | undefined
  /** Keep only tagged entries: the others are stepped over (checked as ever, but no cell is cut). */
  onlyTagged?: boolean
}

/**
 * An empty row to pass to `flattenRecord`, once per export.
 *
 * @example
 * const row = newFlatRow()
 * for (const bytes of scanner.push(chunk)) { flattenRecord(bytes, row, {escapeFormulas: true}); use(row) }
 */
export function newFlatRow(tagOf?: (name: string) => number, opts: {onlyTagged?: boolean} = {}): FlatRow {
  const row: RowCache = {names: [], cells: [], length: 0, root: new KeyNode('', ''), names$: 0}
  if (tagOf) Object.assign(row, {tags: [], tagOf, onlyTagged: opts.onlyTagged === true})
  return row
}

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

// The tokenizer's state: module-level rather than an object, as the whole call is synchronous and the hot
// loops then read locals the JIT keeps in registers. Never read across calls.
let s = ''
let pos = 0
let len = 0
let maxDepth = 64
let guard = true
let view: DataView | undefined
const closers: number[] = []

function fail(message: string, at = pos): never {
  throw new PoisonRecordError(message, at)
}

/** Skip JSON whitespace (RFC 8259 section 2: space, tab, LF, CR); true when there was some. */
function skipWs(): boolean {
  const start = pos
  for (;;) {
    const c = s.charCodeAt(pos)
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) pos++
    else return pos !== start
  }
}

function isHex(c: number): boolean {
  return (c >= ZERO && c <= NINE) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)
}

/** A string token (pos at its opening quote) validated and stepped over; true when it holds escapes. */
function scanString(): boolean {
  let escaped = false
  pos++
  for (;;) {
    if (pos >= len) fail('unterminated string')
    const c = s.charCodeAt(pos)
    if (c === QUOTE) {
      pos++
      return escaped
    }
    if (c === BACKSLASH) {
      escaped = true
      const e = s.charCodeAt(pos + 1)
      if (e === 0x75) {
        // RFC 8259 section 7: \uXXXX, four hex digits
        if (
          !isHex(s.charCodeAt(pos + 2)) ||
          !isHex(s.charCodeAt(pos + 3)) ||
          !isHex(s.charCodeAt(pos + 4)) ||
          !isHex(s.charCodeAt(pos + 5))
        )
          fail('bad \\u escape')
        pos += 6
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
        pos += 2
      else fail('bad escape in a string')
    } else if (c < 0x20) fail('control character in a string')
    else pos++
  }
}

/** The text of s[a, b) (a validated string body) with its escapes decoded; \uXXXX units join into pairs as JSON.parse does. */
function decode(a: number, b: number): string {
  let out = ''
  let seg = a
  let i = a
  while (i < b) {
    if (s.charCodeAt(i) !== BACKSLASH) {
      i++
      continue
    }
    out += s.slice(seg, i)
    const e = s.charCodeAt(i + 1)
    if (e === 0x75) {
      out += String.fromCharCode(parseInt(s.slice(i + 2, i + 6), 16))
      i += 6
    } else {
      out +=
        e === 0x62
          ? '\b'
          : e === 0x66
            ? '\f'
            : e === 0x6e
              ? '\n'
              : e === 0x72
                ? '\r'
                : e === 0x74
                  ? '\t'
                  : s[i + 1]
      i += 2
    }
    seg = i
  }
  return out + s.slice(seg, b)
}

function literal(word: string): void {
  if (!s.startsWith(word, pos)) fail('unexpected text')
  pos += word.length
}

/** OWASP CSV injection: = + - @ tab CR. */
function isFormulaStart(c: number): boolean {
  return c === 0x3d || c === PLUS || c === MINUS || c === 0x40 || c === 0x09 || c === 0x0d
}

/**
 * A container below the flattened level (pos at its [ or {, which sits at `depth`), scanned without recursion,
 * as compact JSON text: the slice itself when it already is (no whitespace, no escapes), else rebuilt.
 */
function containerText(depth: number): string {
  const start = pos
  let canonical = true
  let sp = 0
  let d = depth - 1
  // 0: a value is next, 1: a member name is next, 2: after a value
  let state = 0
  for (;;) {
    if (state === 0) {
      if (skipWs()) canonical = false
      const c = s.charCodeAt(pos)
      if (c === OPEN_OBJ || c === OPEN_ARR) {
        if (++d > maxDepth) fail(`nesting deeper than ${maxDepth} levels`)
        const close = c === OPEN_OBJ ? CLOSE_OBJ : CLOSE_ARR
        closers[sp++] = close
        pos++
        if (skipWs()) canonical = false
        if (s.charCodeAt(pos) === close) {
          pos++
          sp--
          d--
          state = 2
        } else state = c === OPEN_OBJ ? 1 : 0
        continue
      }
      if (c === QUOTE) {
        if (scanString()) canonical = false
      } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
        const q = numberEnd(s, pos)
        if (q < 0) fail('bad number')
        pos = q
      } else if (c === 0x74) literal('true')
      else if (c === 0x66) literal('false')
      else if (c === 0x6e) literal('null')
      else fail('expected a value')
      state = 2
    } else if (state === 1) {
      if (s.charCodeAt(pos) !== QUOTE) fail('expected a member name')
      if (scanString()) canonical = false
      if (skipWs()) canonical = false
      if (s.charCodeAt(pos) !== COLON) fail("expected ':'")
      pos++
      state = 0
    } else {
      if (sp === 0) break
      if (skipWs()) canonical = false
      const c = s.charCodeAt(pos)
      if (c === COMMA) {
        pos++
        if (skipWs()) canonical = false
        state = closers[sp - 1] === CLOSE_OBJ ? 1 : 0
      } else if (c === closers[sp - 1]) {
        pos++
        sp--
        d--
      } else fail("expected ',' or the end of a container")
    }
  }
  return canonical ? s.slice(start, pos) : compact(start, pos)
}

/** Compact JSON of validated text s[a, b): whitespace dropped, strings as JSON.stringify writes them, numbers as sent. */
function compact(a: number, b: number): string {
  let out = ''
  let i = a
  while (i < b) {
    const c = s.charCodeAt(i)
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      i++
      continue
    }
    if (c !== QUOTE) {
      let j = i + 1
      for (; j < b; j++) {
        const k = s.charCodeAt(j)
        if (k === QUOTE || k === 0x20 || k === 0x0a || k === 0x0d || k === 0x09) break
      }
      out += s.slice(i, j)
      i = j
      continue
    }
    let j = i + 1
    let escaped = false
    for (;;) {
      const k = s.charCodeAt(j)
      if (k === QUOTE) break
      if (k === BACKSLASH) {
        escaped = true
        j += 2
      } else j++
    }
    out += escaped ? JSON.stringify(decode(i + 1, j)) : s.slice(i, j + 1)
    i = j + 1
  }
  return out
}

/**
 * Flatten one record (the bytes of one JSON object, as the scanner hands it) into `out`: for each top-level
 * member in record order: a scalar or array -> name `K`; an object -> one entry per member `K.S` (one level,
 * deeper values as compact JSON text); a null -> name `K` with cell ''. Cells are final CSV text (RFC 4180
 * section 2: quoted when they contain `"` `,` CR or LF, quotes doubled); strings have their JSON escapes
 * decoded (\uXXXX incl. surrogate pairs); STRING values starting with = + - @ TAB CR get a leading `'` when
 * `escapeFormulas` (OWASP CSV injection; numbers such as -5 are not strings and are left alone); true/false;
 * numbers exactly as sent (688600.0 stays 688600.0, 1e21 stays 1e21).
 *
 * Throws PoisonRecordError when the bytes are not one JSON object, are malformed, or nest deeper than
 * `maxDepth` (default 64; the record itself is level 1). It never recurses, whatever the input.
 *
 * @example
 * const row = newFlatRow()
 * flattenRecord(Buffer.from('{"Fips":"06067","AssumableMortgage":{"LoanType":"FHA"}}'), row, {escapeFormulas: true})
 * // row.names.slice(0, row.length) -> ['Fips', 'AssumableMortgage.LoanType'], row.cells -> ['06067', 'FHA']
 */
export function flattenRecord(
  bytes: Buffer,
  out: FlatRow,
  opts: {escapeFormulas: boolean; maxDepth?: number},
): void {
  s = bytes.toString()
  // an ASCII record's string offsets are its byte offsets: names can then be compared four bytes at a time
  view = isAscii(bytes) ? new DataView(bytes.buffer, bytes.byteOffset, bytes.length) : undefined
  len = s.length
  pos = 0
  guard = opts.escapeFormulas
  maxDepth = opts.maxDepth ?? 64
  try {
    out.length = flatten(out as RowCache)
  } finally {
    s = '' // do not keep the last record alive
    view = undefined
  }
}

/** The index after JSON whitespace from p (RFC 8259 section 2: space, tab, LF, CR). */
function skip(str: string, p: number): number {
  let c = str.charCodeAt(p)
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = str.charCodeAt(++p)
  return p
}

/** The index after the number token at p (RFC 8259 section 6), or -1 when it breaks the grammar. */
function numberEnd(str: string, p: number): number {
  let c = str.charCodeAt(p)
  if (c === MINUS) c = str.charCodeAt(++p)
  if (c === ZERO) c = str.charCodeAt(++p)
  else if (c > ZERO && c <= NINE) {
    do c = str.charCodeAt(++p)
    while (c >= ZERO && c <= NINE)
  } else return -1
  if (c === DOT) {
    c = str.charCodeAt(++p)
    if (!(c >= ZERO && c <= NINE)) return -1
    do c = str.charCodeAt(++p)
    while (c >= ZERO && c <= NINE)
  }
  if (c === 0x65 || c === 0x45) {
    c = str.charCodeAt(++p)
    if (c === PLUS || c === MINUS) c = str.charCodeAt(++p)
    if (!(c >= ZERO && c <= NINE)) return -1
    do c = str.charCodeAt(++p)
    while (c >= ZERO && c <= NINE)
  }
  return p
}

/**
 * The cell of the value at p, inside an object at `depth`; leaves `pos` after the value. The common string
 * (no escapes) is one slice, quoted only for a comma: unescaped JSON text holds no " CR LF or tab.
 */
function cellAt(str: string, p: number, depth: number): string {
  const c = str.charCodeAt(p)
  if (c === QUOTE) {
    const a = p + 1
    let q = a
    let comma = false
    for (;;) {
      const k = str.charCodeAt(q)
      if (k === QUOTE) break
      if (k === BACKSLASH) return escapedCell(p)
      if (!(k >= 0x20)) fail(q >= len ? 'unterminated string' : 'control character in a string', q)
      if (k === COMMA) comma = true
      q++
    }
    pos = q + 1
    const raw = str.slice(a, q)
    if (guard && q > a && isFormulaStart(str.charCodeAt(a))) return comma ? `"'${raw}"` : `'${raw}`
    return comma ? `"${raw}"` : raw
  }
  if (c === MINUS || (c >= ZERO && c <= NINE)) {
    // numbers as sent: the token's own text, never a float round trip
    const q = numberEnd(str, p)
    if (q < 0) fail('bad number', p)
    pos = q
    return str.slice(p, q)
  }
  return otherCell(str, p, c, depth)
}

/** A string value with escapes: validated from its start, then decoded (only such a value can hold " CR LF tab). */
function escapedCell(p: number): string {
  pos = p
  scanString()
  return csvCell(decode(p + 1, pos - 1), guard)
}

/**
 * Step over the value at p (leaves `pos` after it) with the same checks as `cellAt`, cutting no cell: the
 * usual string (no escapes) and number are scanned in place; anything else goes the `cellAt` way.
 */
function skipValue(str: string, p: number, depth: number): void {
  const c = str.charCodeAt(p)
  if (c === QUOTE) {
    for (let q = p + 1; ; q++) {
      const k = str.charCodeAt(q)
      if (k === QUOTE) return void (pos = q + 1)
      if (k === BACKSLASH) return void escapedCell(p)
      if (!(k >= 0x20)) fail(q >= len ? 'unterminated string' : 'control character in a string', q)
    }
  }
  if (c === MINUS || (c >= ZERO && c <= NINE)) {
    const q = numberEnd(str, p)
    if (q < 0) fail('bad number', p)
    pos = q
    return
  }
  otherCell(str, p, c, depth)
}

/** true, false, null, or a container (as compact JSON text). */
function otherCell(str: string, p: number, c: number, depth: number): string {
  if (
    c === 0x74 &&
    str.charCodeAt(p + 1) === 0x72 &&
    str.charCodeAt(p + 2) === 0x75 &&
    str.charCodeAt(p + 3) === 0x65
  ) {
    pos = p + 4
    return 'true'
  }
  if (
    c === 0x66 &&
    str.charCodeAt(p + 1) === 0x61 &&
    str.charCodeAt(p + 2) === 0x6c &&
    str.charCodeAt(p + 3) === 0x73 &&
    str.charCodeAt(p + 4) === 0x65
  ) {
    pos = p + 5
    return 'false'
  }
  if (
    c === 0x6e &&
    str.charCodeAt(p + 1) === 0x75 &&
    str.charCodeAt(p + 2) === 0x6c &&
    str.charCodeAt(p + 3) === 0x6c
  ) {
    pos = p + 4
    return ''
  }
  pos = p
  if (c === OPEN_OBJ || c === OPEN_ARR) {
    const json = containerText(depth + 1)
    // compact JSON holds no raw CR or LF (JSON escapes them inside strings)
    return json.includes('"') || json.includes(',') ? `"${json.replaceAll('"', '""')}"` : json
  }
  return fail('expected a value')
}

/** Set by nameEnd: the name holds escapes. */
let nameEscaped = false

/** The index of the closing quote of the string whose opening quote is at p, validated. */
function nameEnd(str: string, p: number): number {
  let q = p + 1
  for (;;) {
    const c = str.charCodeAt(q)
    if (c === QUOTE) break
    if (c === BACKSLASH) {
      pos = p
      scanString()
      nameEscaped = true
      return pos - 1
    }
    if (!(c >= 0x20)) fail(q >= len ? 'unterminated string' : 'control character in a string', q)
    q++
  }
  nameEscaped = false
  return q
}

/** Whether the member name at a (after its opening quote) is exactly `codes` (already-validated text). */
function nameIs(str: string, a: number, node: KeyNode): boolean {
  const codes = node.codes
  const m = codes.length
  const words = node.words
  let i = 0
  if (view !== undefined && words !== undefined) {
    if (a + m >= len) return false
    for (const n = words.length; i < n; i++) if (view.getUint32(a + 4 * i, true) !== words[i]) return false
    i *= 4
  }
  for (; i < m; i++) if (str.charCodeAt(a + i) !== codes[i]) return false
  return str.charCodeAt(a + m) === QUOTE
}

/**
 * The member name whose opening quote is at p, as a node: one of `prev`'s successors when the record has the
 * shape of one seen before, else looked up (and remembered) in `start`'s table. Leaves `pos` after the name.
 */
function member(
  row: RowCache,
  str: string,
  p: number,
  start: KeyNode,
  prev: KeyNode,
  prefix: string,
): KeyNode {
  if (str.charCodeAt(p) !== QUOTE) fail('expected a member name', p)
  const a = p + 1
  const cands = prev.next
  for (let i = 0; i < cands.length; i++) {
    const c = cands[i]!
    if (nameIs(str, a, c)) {
      pos = a + c.codes.length + 1
      return c
    }
  }
  const q = nameEnd(str, p)
  const raw = str.slice(a, q)
  let node = start.children.get(raw)
  if (!node) {
    node = new KeyNode(raw, prefix + (nameEscaped ? decode(a, q) : raw))
    if (row.tagOf) node.tag = row.tagOf(node.name)
    if (row.names$! < MAX_NAMES) {
      start.children.set(node.raw, node)
      row.names$!++
    }
  }
  if (cands.length < MAX_NEXT) cands.push(node)
  pos = q + 1
  return node
}

function flatten(row: RowCache): number {
  const str = s
  const names = row.names
  const cells = row.cells
  const tags = row.tags
  const only = row.onlyTagged === true
  const root = (row.root ??= new KeyNode('', ''))
  row.names$ ??= 0
  let n = 0
  let p = skip(str, 0)
  if (str.charCodeAt(p) !== OPEN_OBJ) fail('the record is not a JSON object', p)
  if (maxDepth < 1) fail(`nesting deeper than ${maxDepth} levels`, p)
  p = skip(str, p + 1)
  if (str.charCodeAt(p) === CLOSE_OBJ) p++
  else
    for (let prev = root; ;) {
      const k = member(row, str, p, root, prev, '')
      prev = k
      // compact JSON (the usual case) is checked first; whitespace is skipped only when met
      p = pos
      if (str.charCodeAt(p) !== COLON) p = skip(str, p)
      if (str.charCodeAt(p) !== COLON) fail("expected ':'", p)
      p++
      if (str.charCodeAt(p) <= 0x20) p = skip(str, p)
      if (str.charCodeAt(p) === OPEN_OBJ) {
        // an object member (an add-on option, spec 2.2 / 2.3): flattened one level to `K.S`
        if (maxDepth < 2) fail(`nesting deeper than ${maxDepth} levels`, p)
        p++
        if (str.charCodeAt(p) <= 0x20) p = skip(str, p)
        if (str.charCodeAt(p) === CLOSE_OBJ) p++
        else {
          const start = (k.sub ??= new KeyNode('', ''))
          const prefix = `${k.name}.`
          for (let sp = start; ;) {
            const sk = member(row, str, p, start, sp, prefix)
            sp = sk
            p = pos
            if (str.charCodeAt(p) !== COLON) p = skip(str, p)
            if (str.charCodeAt(p) !== COLON) fail("expected ':'", p)
            p++
            if (str.charCodeAt(p) <= 0x20) p = skip(str, p)
            if (only && sk.tag < 0) skipValue(str, p, 2)
            else {
              names[n] = sk.name
              if (tags) tags[n] = sk.tag
              cells[n++] = cellAt(str, p, 2)
            }
            p = pos
            let c = str.charCodeAt(p)
            if (c <= 0x20) c = str.charCodeAt((p = skip(str, p)))
            if (c === COMMA) {
              p++
              if (str.charCodeAt(p) <= 0x20) p = skip(str, p)
            } else if (c === CLOSE_OBJ) {
              p++
              break
            } else fail("expected ',' or '}'", p)
          }
        }
      } else {
        if (only && k.tag < 0) skipValue(str, p, 1)
        else {
          names[n] = k.name
          if (tags) tags[n] = k.tag
          cells[n++] = cellAt(str, p, 1)
        }
        p = pos
      }
      let c = str.charCodeAt(p)
      if (c <= 0x20) c = str.charCodeAt((p = skip(str, p)))
      if (c === COMMA) {
        p++
        if (str.charCodeAt(p) <= 0x20) p = skip(str, p)
      } else if (c === CLOSE_OBJ) {
        p++
        break
      } else fail("expected ',' or '}'", p)
    }
  p = skip(str, p)
  if (p !== len) fail('unexpected text after the record', p)
  return n
}

const NEEDS_QUOTES = /[",\r\n]/

/**
 * The cell rule for strings from elsewhere (headers, input columns): the formula guard when `escapeFormulas`,
 * then RFC 4180 quoting when the text holds `"` `,` CR or LF (quotes doubled).
 *
 * @example
 * csvCell('=SUM(A1)', true) // "'=SUM(A1)"
 * csvCell('Smith, "Jo"', true) // '"Smith, ""Jo"""'
 */
export function csvCell(text: string, escapeFormulas: boolean): string {
  if (escapeFormulas && text.length > 0 && isFormulaStart(text.charCodeAt(0))) text = `'${text}`
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}
