import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {
  ARRAY,
  BROKEN,
  ENTRY,
  ESCAPED,
  FALSE,
  HAS_COMMA,
  INCOMPLETE,
  KEY_E,
  KEY_ESCAPED,
  KEY_S,
  KIND,
  KIND_MASK,
  NOT_INTEGER,
  NULL,
  NUMBER,
  numberEnd,
  OBJECT,
  PARENT,
  scanString,
  STRING,
  TRUE,
  VAL_E,
  VAL_S,
  Walk,
  walkValue,
  WIDE,
} from '../../src/json/walk.js'
import {hasLoneSurrogate, jsonRecord, mutate, mutation} from '../helpers/json-arbitraries.js'

interface Entry {
  parent: number
  key: string
  value: string
  kind: number
  flags: number
}

/** Walk `text` from byte `at`: the result, and the entries as text. */
function walk(text: string | Buffer, w = new Walk(), at = 0) {
  const b = typeof text === 'string' ? Buffer.from(text) : text
  const base = w.count
  const end = walkValue(b, at, b.length, w)
  const entries: Entry[] = []
  for (let i = base; i < w.count; i++) {
    const e = i * ENTRY
    const m = w.entries
    entries.push({
      parent: m[e + PARENT]!,
      key: b.toString('utf8', at + m[e + KEY_S]!, at + m[e + KEY_E]!),
      value: b.toString('utf8', at + m[e + VAL_S]!, at + m[e + VAL_E]!),
      kind: m[e + KIND]! & KIND_MASK,
      flags: m[e + KIND]! & ~KIND_MASK,
    })
  }
  return {end, entries, reason: w.reason, at: w.at, spaced: w.spaced}
}

describe('walkValue: member entries', () => {
  it('enters each member of the record with its key span, value span, kind and flags', () => {
    const text =
      '{"a":"x","n":-1.5e3,"i":42,"t":true,"f":false,"z":null,"c":"a,b","e":"\\n","k\\u0041":[1,{"q":2}]}'
    const r = walk(text)
    expect(r.end).toBe(text.length)
    expect(r.entries).toEqual([
      {parent: -1, key: 'a', value: '"x"', kind: STRING, flags: 0},
      // an exponent: the number may lie outside a double's range, so the checks read it (WIDE)
      {parent: -1, key: 'n', value: '-1.5e3', kind: NUMBER, flags: NOT_INTEGER | WIDE},
      {parent: -1, key: 'i', value: '42', kind: NUMBER, flags: 0},
      {parent: -1, key: 't', value: 'true', kind: TRUE, flags: 0},
      {parent: -1, key: 'f', value: 'false', kind: FALSE, flags: 0},
      {parent: -1, key: 'z', value: 'null', kind: NULL, flags: 0},
      {parent: -1, key: 'c', value: '"a,b"', kind: STRING, flags: HAS_COMMA},
      {parent: -1, key: 'e', value: '"\\n"', kind: STRING, flags: ESCAPED},
      {parent: -1, key: 'k\\u0041', value: '[1,{"q":2}]', kind: ARRAY, flags: KEY_ESCAPED},
    ])
  })

  it('marks a number WIDE when it has an exponent or more than 300 characters, and no other', () => {
    const long = '9'.repeat(301)
    const text = `{"a":1e400,"b":1.5,"c":${'9'.repeat(300)},"d":${long},"e":-2E-3,"f":12}`
    const flags = walk(text).entries.map((e) => [e.key, e.flags & WIDE])
    expect(flags).toEqual([
      ['a', WIDE],
      ['b', 0],
      ['c', 0],
      ['d', WIDE],
      ['e', WIDE],
      ['f', 0],
    ])
    // a number cut mid-exponent leaves nothing behind for the next walk's first number
    const w = new Walk()
    expect(walkValue(Buffer.from('{"a":1e'), 0, 7, w)).toBe(INCOMPLETE)
    w.count = 0
    expect(walk('{"a":5}', w).entries[0]!.flags & WIDE).toBe(0)
  })

  it('says whether the record holds an escape anywhere, at any depth, in a value or a name', () => {
    const escapes = (text: string) => {
      const w = new Walk()
      walkValue(Buffer.from(text), 0, text.length, w)
      return w.escapes
    }
    expect(escapes('{"a":"x","b":{"c":[1,{"d":"e,f"}]}}')).toBe(false)
    expect(escapes('{"a":"x","b":{"c":[1,{"d":"e\\f"}]}}')).toBe(true)
    expect(escapes('{"a":"x","b":{"c":[1,{"d\\n":"ef"}]}}')).toBe(true)
    expect(escapes('{"a\\u0041":1}')).toBe(true)
    expect(escapes('{}')).toBe(false)
  })

  it("enters the members of the record's objects (the option objects) with their parent, and no deeper", () => {
    const r = walk('{"x":1,"o":{"p":{"q":1},"r":[{"s":2}]},"y":{}}')
    expect(r.entries.map(({parent, key, value, kind}) => [parent, key, value, kind])).toEqual([
      [-1, 'x', '1', NUMBER],
      [-1, 'o', '{"p":{"q":1},"r":[{"s":2}]}', OBJECT],
      [1, 'p', '{"q":1}', OBJECT],
      [1, 'r', '[{"s":2}]', ARRAY],
      [-1, 'y', '{}', OBJECT],
    ])
  })

  it('gives spans from the value start and entries after those of earlier values of the batch', () => {
    const w = new Walk()
    const body = Buffer.from('xx{"a":1}yy{"b":{"c":"d"}}')
    expect(walkValue(body, 2, body.length, w)).toBe(9)
    expect(w.count).toBe(1)
    expect(walk(body, w, 11).entries).toEqual([
      {parent: -1, key: 'b', value: '{"c":"d"}', kind: OBJECT, flags: 0},
      // the parent counted from the record's first entry
      {parent: 0, key: 'c', value: '"d"', kind: STRING, flags: 0},
    ])
    expect(w.count).toBe(3)
  })

  it('grows its table for a record of many members, and keeps every entry right', () => {
    const members = Array.from({length: 5000}, (_, i) => `"m${i}":{"s":${i}}`)
    const r = walk(`{${members.join(',')}}`)
    expect(r.entries).toHaveLength(10_000)
    expect(r.entries[9999]).toEqual({parent: 9998, key: 's', value: '4999', kind: NUMBER, flags: 0})
  })

  it('notes a pretty-printed record (whitespace outside strings), and not blanks inside strings', () => {
    expect(walk('{"a":"b c","d":[1]}').spaced).toBe(false)
    expect(walk('{"a": 1}').spaced).toBe(true)
    expect(walk('{"a":[1 ,2]}').spaced).toBe(true)
    expect(walk('{\n"a":1}').spaced).toBe(true)
    // whitespace after the record is not part of it
    expect(walk('{"a":1}  \n').spaced).toBe(false)
  })

  it('stops just after the record: what follows is the caller’s', () => {
    expect(walk('{"a":1} x').end).toBe(7)
    expect(walk('{"a":1}{"b":2}').end).toBe(7)
    // an empty record too, at the end of the bytes or before blanks
    expect(walk('{}').end).toBe(2)
    expect(walk('{} x').end).toBe(2)
    expect(walk(' {}').end).toBe(3)
  })
})

describe('walkValue: a record cut short is incomplete, never broken', () => {
  it.each([
    '{"a":"x\\u00e9\\ud83c\\udfe0y","n":-12.5e+3,"t":true,"f":false,"z":null,"o":{"p":[1,{"q":"r"}]}}',
    '{ "a" : [ 1 , 2 ] , "b" : { } }',
  ])('every prefix of %s', (text) => {
    const b = Buffer.from(text)
    for (let cut = 0; cut < b.length; cut++) {
      const w = new Walk()
      w.count = 3
      expect(walkValue(b, 0, cut, w), `cut at ${cut}`).toBe(INCOMPLETE)
      expect(w.count).toBe(3)
    }
  })

  it('a number or a literal at the very end waits for the byte after it', () => {
    expect(numberEnd(Buffer.from('12'), 0, 2)).toBe(2)
    expect(walkValue(Buffer.from('{"a":12'), 0, 7, new Walk())).toBe(INCOMPLETE)
    expect(walkValue(Buffer.from('{"a":tru'), 0, 8, new Walk())).toBe(INCOMPLETE)
    expect(walkValue(Buffer.from('{"a":"\\ud83c'), 0, 12, new Walk())).toBe(INCOMPLETE)
    expect(walkValue(Buffer.from('{"a":"\\ud83c\\udf'), 0, 16, new Walk())).toBe(INCOMPLETE)
  })
})

describe('walkValue: the grammar (RFC 8259), each break named with where it is', () => {
  const cases: Array<[string, string, RegExp, number]> = [
    ['a leading zero (080)', '{"a":080}', /a number JSON does not allow/, 6],
    ['a leading zero (01)', '{"a":01}', /a number JSON does not allow/, 6],
    ['a negative leading zero (-01)', '{"a":-01}', /a number JSON does not allow/, 7],
    ['a point without digits (1.)', '{"a":1.}', /a number JSON does not allow/, 7],
    ['a lone minus', '{"a":-}', /a number JSON does not allow/, 6],
    ['an exponent without digits (1e)', '{"a":1e}', /a number JSON does not allow/, 7],
    ['an exponent sign without digits (1e+)', '{"a":1e+}', /a number JSON does not allow/, 8],
    ['two points (1.5.2)', '{"a":1.5.2}', /a number JSON does not allow/, 8],
    ['a plus sign (+1)', '{"a":+1}', /expected a value/, 5],
    ['a bare fraction (.5)', '{"a":.5}', /expected a value/, 5],
    ['NaN', '{"a":NaN}', /expected a value/, 5],
    ['a cut literal (tru)', '{"a":tru}', /a literal JSON does not allow \(expected true\)/, 5],
    ['a cut literal (nul)', '{"a":nul}', /a literal JSON does not allow \(expected null\)/, 5],
    ['a cut literal (fals)', '{"a":fals}', /a literal JSON does not allow \(expected false\)/, 5],
    ['a capital literal (True)', '{"a":True}', /expected a value/, 5],
    ['a literal run on (truex)', '{"a":truex}', /expected ',' or '}'/, 9],
    ['a raw control character in a string', '{"a":"x\u0001y"}', /a control character inside a string/, 7],
    ['a raw tab in a name', '{"a\tb":1}', /a control character inside a string/, 3],
    ['an unknown escape (\\x)', '{"a":"\\x"}', /an escape JSON does not allow/, 6],
    ['a short \\u escape (\\u12)', '{"a":"\\u12"}', /a \\u escape without four hex digits/, 6],
    ['a lone high surrogate escape (\\ud800)', '{"a":"\\ud800"}', /a lone surrogate in a \\u escape/, 6],
    ['a lone low surrogate escape (\\udc00)', '{"a":"\\udc00"}', /a lone surrogate in a \\u escape/, 6],
    ['a high surrogate before a plain escape', '{"a":"\\ud800\\u0041"}', /a lone surrogate/, 6],
    ['a lone surrogate escape in a name', '{"\\udfff":1}', /a lone surrogate/, 2],
    ['a missing colon', '{"a" 1}', /expected ':'/, 5],
    ['a trailing comma', '{"a":1,}', /expected a member name/, 7],
    ['a trailing comma in a list', '{"a":[1,]}', /expected a value/, 8],
    ['an unquoted name', '{a:1}', /expected a member name/, 1],
    ['single quotes', "{'a':1}", /expected a member name/, 1],
    ['a mismatched bracket', '{"a":[1}', /expected ',' or ']'/, 7],
    ['a missing comma', '{"a":1 "b":2}', /expected ',' or '}'/, 7],
    ['a missing comma after a list', '{"a":[1 2]}', /expected ',' or ']'/, 8],
    ['a nested bad number', '{"o":{"a":[-]}}', /a number JSON does not allow/, 12],
    ['an option member without a value', '{"o":{"a":}}', /expected a value/, 10],
    ['a nested missing colon', '{"a":[{"b" 1}]}', /expected ':'/, 11],
  ]
  it.each(cases)('refuses %s', (_what, text, reason, at) => {
    const r = walk(text)
    expect(r.end).toBe(BROKEN)
    expect(r.reason).toMatch(reason)
    expect(r.at).toBe(at)
    // the same texts JSON.parse refuses, or reads as a string no UTF-8 can carry (a lone surrogate)
    expect(reference(Buffer.from(text))).toBe(false)
  })

  it('accepts what the grammar allows at the edges', () => {
    for (const text of [
      '{"a":0}',
      '{"a":-0}',
      '{"a":-0.0e-0}',
      '{"a":1E+400}',
      '{"a":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83C\\uDFE0"}',
      '{"":""}',
      '{"a":[[],{}]}',
      '{"a":"\u007f\u2028é"}',
    ])
      expect(walk(text).end, text).toBe(Buffer.byteLength(text))
  })

  it('refuses a record nested deeper than the cap (the record is level 1), without recursion', () => {
    const nest = (levels: number) => `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`
    expect(walk(nest(64)).end).toBe(nest(64).length)
    const r = walk(nest(65))
    expect(r.end).toBe(BROKEN)
    expect(r.reason).toBe('nested deeper than 64 levels')
    expect(walk(nest(3), new Walk(3)).end).toBeGreaterThan(0)
    expect(walk(nest(4), new Walk(3)).end).toBe(BROKEN)
    // 100,000 levels: refused at level 65, no stack overflow
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`
    expect(walk(deep).reason).toBe('nested deeper than 64 levels')
  })

  it('refuses more members than the cap (of the record and of its objects), deeper members not counted', () => {
    expect(walk('{"a":1,"b":2,"c":3}', new Walk(64, 3)).end).toBe(19)
    expect(walk('{"a":1,"b":2,"c":3,"d":4}', new Walk(64, 3)).reason).toBe('more than 3 members')
    expect(walk('{"a":1,"o":{"b":2,"c":3}}', new Walk(64, 3)).reason).toBe('more than 3 members')
    expect(walk('{"a":1,"o":{"p":{"b":2,"c":3,"d":4}}}', new Walk(64, 3)).end).toBeGreaterThan(0)
    const many = `{${Array.from({length: 100_001}, (_, i) => `"${i}":0`).join(',')}}`
    expect(walk(many).reason).toBe('more than 100000 members')
  })
})

describe('scanString and numberEnd', () => {
  it('flags a string with escapes, or with a comma, and returns its closing quote', () => {
    const w = new Walk()
    const at = (s: string) => scanString(Buffer.from(s), 0, Buffer.byteLength(s), w)
    expect(at('abc"')).toBe(3)
    expect(w.flags).toBe(0)
    expect(at('a,b"')).toBe(3)
    expect(w.flags).toBe(HAS_COMMA)
    expect(at('a\\"b,"')).toBe(5)
    expect(w.flags).toBe(HAS_COMMA | ESCAPED)
    expect(at('abc')).toBe(INCOMPLETE)
    expect(at('abc\\')).toBe(INCOMPLETE)
  })

  it.each([
    ['0', 1, false],
    ['-0', 2, false],
    ['12', 2, false],
    ['1.5', 3, true],
    ['1e5', 3, true],
    ['1E-5', 4, true],
    ['-0.0e+0', 7, true],
  ])('%s ends at %i (fraction or exponent: %s)', (text, end, notInteger) => {
    const b = Buffer.from(`${text},`)
    const r = numberEnd(b, 0, b.length)
    expect(r & 0x3fffffff).toBe(end)
    expect((r & 0x40000000) !== 0).toBe(notInteger)
  })
})

describe('walkValue: property', () => {
  it('walks any record whole, its entries the members JSON.parse finds, compact or pretty-printed', () => {
    fc.assert(
      fc.property(jsonRecord, fc.boolean(), (rec, pretty) => {
        const text = pretty ? JSON.stringify(rec, null, 2) : JSON.stringify(rec)
        const r = walk(text)
        expect(r.end).toBe(Buffer.byteLength(text))
        const top = r.entries.filter((e) => e.parent === -1)
        expect(top.map((e) => JSON.parse(`"${e.key}"`) as string)).toEqual(Object.keys(rec))
        // the values as JSON.parse reads the text (JSON.stringify wrote -0 as 0)
        expect(top.map((e) => JSON.parse(e.value) as unknown)).toEqual(
          Object.values(JSON.parse(text) as Record<string, unknown>),
        )
        for (const e of top) {
          const v = JSON.parse(e.value) as unknown
          const kind =
            v === null
              ? NULL
              : v === true
                ? TRUE
                : v === false
                  ? FALSE
                  : typeof v === 'string'
                    ? STRING
                    : typeof v === 'number'
                      ? NUMBER
                      : Array.isArray(v)
                        ? ARRAY
                        : OBJECT
          expect(e.kind).toBe(kind)
        }
      }),
      {numRuns: 400},
    )
  })

  it('accepts exactly what JSON.parse accepts as a record, but for lone surrogates, for any mutated bytes', () => {
    fc.assert(
      fc.property(jsonRecord, fc.array(mutation, {minLength: 1, maxLength: 3}), (rec, muts) => {
        const bytes = mutate(Buffer.from(JSON.stringify(rec)), muts)
        const w = new Walk()
        let p = 0
        while (p < bytes.length && ' \n\r\t'.includes(String.fromCharCode(bytes[p]!))) p++
        const end = bytes[p] === 0x7b ? walkValue(bytes, p, bytes.length, w) : BROKEN
        const rest = end >= 0 ? bytes.subarray(end).toString('latin1') : 'x'
        const walked = end >= 0 && /^[ \n\r\t]*$/.test(rest)
        expect(walked).toBe(reference(bytes))
        if (end === BROKEN && bytes[p] === 0x7b) {
          expect(w.reason).not.toBe('')
          expect(w.at).toBeGreaterThanOrEqual(p)
          expect(w.at).toBeLessThanOrEqual(bytes.length)
        }
      }),
      {numRuns: 2000},
    )
  })
})

/** JSON.parse's reading: an object, within 64 levels, with no lone surrogate in a string or a name. */
function reference(bytes: Buffer): boolean {
  let v: unknown
  try {
    v = JSON.parse(bytes.toString('utf8'))
  } catch {
    return false
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
  let ok = true
  const visit = (x: unknown, depth: number): void => {
    if (depth > 64) ok = false
    if (typeof x === 'string' && hasLoneSurrogate(x)) ok = false
    if (x === null || typeof x !== 'object') return
    for (const [k, y] of Object.entries(x)) {
      if (hasLoneSurrogate(k)) ok = false
      visit(y, depth + 1)
    }
  }
  visit(v, 1)
  return ok
}
