import fc from 'fast-check'

/**
 * fast-check arbitraries for the JSON the service may send, and for bytes a broken or hostile server may
 * send instead: strings full of the characters a byte walker can trip on (quotes, backslashes, brackets,
 * commas, non-ASCII, surrogate pairs), and valid bodies mutated byte by byte.
 */

/** Text with the characters that matter to a JSON walker, and any code point (surrogate pairs included). */
export const trickyText = fc.oneof(
  fc.string({unit: 'binary', maxLength: 12}),
  fc.string({
    unit: fc.constantFrom(
      '"',
      '\\',
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      ' ',
      '\n',
      '\t',
      'é',
      '🏠',
      '東',
      'a',
      '/',
      '\u2028',
    ),
    maxLength: 10,
  }),
  fc.constantFrom('\\', '"', '\\"', '{[', ']}', '"}', '\\u0041', 'true', '080', ''),
)

/** Numbers JSON.stringify writes as the shortest text that reads back the same. */
export const jsonNumber = fc.oneof(fc.integer(), fc.double({noNaN: true, noDefaultInfinity: true}))

/** Member names that never look like array indexes (JSON.parse would move those first; a record keeps its order). */
export const memberName = fc.oneof(
  fc.string({unit: 'binary', maxLength: 8}).map((s) => `k${s}`),
  fc.constantFrom('kdata', 'kstatus', 'k"q"', 'k\\', 'k{', 'k,'),
)

/** Any JSON value (well-formed strings: no lone surrogates), nested a few levels. */
export const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    {depthSize: 'small', withCrossShrink: true},
    trickyText,
    jsonNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), {maxLength: 4}),
    fc.dictionary(memberName, tie('v'), {maxKeys: 4}),
  ),
})).v

/** A record: an object of any values. */
export const jsonRecord = fc.dictionary(memberName, jsonValue, {maxKeys: 8})

/** One edit a faulty server or network may make to a body. */
export type Mutation =
  | {op: 'flip'; at: number; byte: number}
  | {op: 'insert'; at: number; byte: number}
  | {op: 'delete'; at: number}
  | {op: 'truncate'; at: number}

/** Bytes that change the meaning of JSON when put in the wrong place, and bytes that break UTF-8. */
const NASTY = [
  ...Buffer.from('"\\{}[],:0-.eE+utfn \n\rad9'),
  0x00,
  0x01,
  0x1f,
  0x7f,
  0x80,
  0xbf,
  0xc0,
  0xc3,
  0xe2,
  0xed,
  0xf0,
  0xf8,
  0xff,
]

const position = fc.nat({max: 1 << 20})
export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    op: fc.constant('flip' as const),
    at: position,
    byte: fc.oneof(fc.constantFrom(...NASTY), fc.nat(255)),
  }),
  fc.record({
    op: fc.constant('insert' as const),
    at: position,
    byte: fc.oneof(fc.constantFrom(...NASTY), fc.nat(255)),
  }),
  fc.record({op: fc.constant('delete' as const), at: position}),
  fc.record({op: fc.constant('truncate' as const), at: position}),
)

/** `body` with the mutations applied (positions taken modulo the length at that point). */
export function mutate(body: Buffer, mutations: readonly Mutation[]): Buffer {
  let b = Buffer.from(body)
  for (const m of mutations) {
    const at = b.length === 0 ? 0 : m.at % (b.length + (m.op === 'insert' || m.op === 'truncate' ? 1 : 0))
    if (m.op === 'flip' && b.length > 0) b[at] = m.byte
    else if (m.op === 'insert') b = Buffer.concat([b.subarray(0, at), Buffer.from([m.byte]), b.subarray(at)])
    else if (m.op === 'delete' && b.length > 0) b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)])
    else if (m.op === 'truncate') b = b.subarray(0, at)
  }
  return b
}

/** Chunk sizes: small ones that cut tokens, and large ones. */
export const chunkSizes = fc.array(
  fc.oneof(fc.integer({min: 1, max: 16}), fc.integer({min: 17, max: 4096})),
  {
    minLength: 1,
    maxLength: 6,
  },
)

/** A string holding a lone surrogate (which UTF-8 cannot carry). */
export const hasLoneSurrogate = (s: string): boolean => /[\ud800-\udfff]/u.test(s)

/** No string or member name in `v` holds a lone surrogate (what a UTF-8 writer would turn into U+FFFD). */
export function wellFormed(v: unknown): boolean {
  if (typeof v === 'string') return !hasLoneSurrogate(v)
  if (v === null || typeof v !== 'object') return true
  return Object.entries(v).every(([k, x]) => !hasLoneSurrogate(k) && wellFormed(x))
}
