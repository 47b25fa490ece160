import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {
  compactJson,
  decodeEscapes,
  hasLayout,
  numberValue,
  stringIs,
  stringValue,
} from '../../src/json/values.js'
import {jsonValue, trickyText} from '../helpers/json-arbitraries.js'

const num = (text: string) => numberValue(Buffer.from(text), 0, Buffer.byteLength(text))

/** JSON number texts (RFC 8259 section 6), any length of digits. */
const numberText = fc.stringMatching(/^-?(0|[1-9]\d{0,24})(\.\d{1,24})?([eE][+-]?\d{1,3})?$/)

/** The texts a writer may give one double: its shortest form, with `.0`, in exponent form, fixed. */
const doubleTexts = fc.double({noNaN: true, noDefaultInfinity: true}).chain((d) => {
  const forms = [String(d), d.toExponential(), d.toExponential(20), d.toPrecision(17), d.toFixed(3)]
  if (Number.isInteger(d) && Math.abs(d) < 1e21) forms.push(`${String(d)}.0`, `${String(d)}.000`)
  return fc.constantFrom(...forms.filter((t) => /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(t)))
})

describe('numberValue reads a number as JSON.parse does', () => {
  it.each([
    '0',
    '-0',
    '-0.0',
    '688600.0',
    '688600',
    '0.1',
    '0.000123',
    '1e21',
    '1E21',
    '1e+21',
    '1e-7',
    '1.5e-7',
    '-12.25',
    '100.0',
    '1e2',
    '123456789012345',
    '1234567890123456',
    '9007199254740993',
    '12345678901234567890',
    '0.1000000000000000055511151231257827',
    '3.14159265358979323846',
    '99999999999.99',
    '0.0000000000000000000001',
    '1e400',
    '-1e400',
    '1e-400',
    '2.2250738585072014e-308',
    '4.9e-324',
  ])('%s', (text) => {
    expect(Object.is(num(text), Number(text))).toBe(true)
    expect(Object.is(num(text), JSON.parse(text))).toBe(true)
  })

  it('for any JSON number text, however many digits', () => {
    fc.assert(
      fc.property(numberText, (text) => {
        expect(Object.is(num(text), Number(text))).toBe(true)
      }),
      {numRuns: 3000},
    )
  })

  it('for any double, written in any of the forms a writer may choose', () => {
    fc.assert(
      fc.property(doubleTexts, (text) => {
        expect(Object.is(num(text), Number(text))).toBe(true)
      }),
      {numRuns: 3000},
    )
  })

  it('reads a number where it lies in a larger buffer', () => {
    const b = Buffer.from('{"a":688600.0,"b":-0.5}')
    expect(numberValue(b, 5, 13)).toBe(688600)
    expect(numberValue(b, 18, 22)).toBe(-0.5)
    expect(numberValue(b.subarray(5), 0, 8)).toBe(688600)
  })
})

describe('stringValue and decodeEscapes read a string as JSON.parse does', () => {
  it.each([
    ['"plain"', 'plain'],
    ['"São José 🏠"', 'São José 🏠'],
    ['"a\\"b\\\\c\\/d"', 'a"b\\c/d'],
    ['"\\b\\f\\n\\r\\t"', '\b\f\n\r\t'],
    ['"\\u00e9\\u00C9"', 'éÉ'],
    ['"\\ud83c\\udfe0"', '🏠'],
    ['"x\\ud83c\\udfe0y"', 'x🏠y'],
    ['"\\u0000"', '\u0000'],
    ['"\\u2028"', '\u2028'],
    ['"\\\\u0041"', '\\u0041'],
    ['""', ''],
  ])('%s', (json, text) => {
    expect(stringValue(Buffer.from(json), 0, Buffer.byteLength(json), json.includes('\\'))).toBe(text)
    expect(JSON.parse(json)).toBe(text)
  })

  it('for any text, escaped as JSON.stringify escapes it or with every character a \\u escape', () => {
    fc.assert(
      fc.property(trickyText, (text) => {
        const json = JSON.stringify(text)
        const b = Buffer.from(`xx${json}yy`)
        expect(stringValue(b, 2, b.length - 2, true)).toBe(text)
        if (!json.includes('\\')) expect(stringValue(b, 2, b.length - 2, false)).toBe(text)
        const every = Array.from(text, (ch) =>
          Array.from(
            {length: ch.length},
            (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`,
          ).join(''),
        ).join('')
        expect(decodeEscapes(every)).toBe(text)
      }),
      {numRuns: 1000},
    )
  })
})

describe('stringIs compares a plain string in place', () => {
  it('matches only the same bytes between the quotes', () => {
    const b = Buffer.from('{"a":"FHA","b":"FHAX","c":"FH"}')
    const fha = Buffer.from('FHA')
    expect(stringIs(b, 5, 10, fha)).toBe(true)
    expect(stringIs(b, 15, 21, fha)).toBe(false)
    expect(stringIs(b, 26, 30, fha)).toBe(false)
  })
})

describe('compactJson and hasLayout', () => {
  it('take out the blanks outside strings and keep every token as sent', () => {
    const sent = '{ "FinalValue" : 688600.0 ,\n\t"City" : "ELK  GROVE, \\" CA" , "a" : [ 1E2 , { } ] }'
    expect(compactJson(Buffer.from(sent)).toString()).toBe(
      '{"FinalValue":688600.0,"City":"ELK  GROVE, \\" CA","a":[1E2,{}]}',
    )
    expect(hasLayout(Buffer.from(sent), 0, sent.length)).toBe(true)
    expect(hasLayout(Buffer.from('{"a":"b c","d":"\\\\ "}'), 0, 21)).toBe(false)
  })

  it('give JSON.stringify’s compact text for any value laid out in any way', () => {
    fc.assert(
      fc.property(jsonValue, fc.constantFrom<number | string>(0, 1, 2, '\t', ' \r\n'), (v, indent) => {
        const compact = JSON.stringify(v)
        const laid = Buffer.from(JSON.stringify(v, null, indent))
        expect(compactJson(laid).toString()).toBe(compact)
        expect(hasLayout(laid, 0, laid.length)).toBe(laid.length !== Buffer.byteLength(compact))
      }),
      {numRuns: 1000},
    )
  })
})
