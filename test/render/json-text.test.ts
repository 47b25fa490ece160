import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {RawJson, relayout, toJsonText} from '../../src/render/json-text.js'
import {recordTexts} from '../../src/lookup/fetch-lookup.js'

describe('JSON text with the tokens as sent', () => {
  it('lays out any JSON text as JSON.stringify would, pretty or compact', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const compact = JSON.stringify(v)
        const pretty = JSON.stringify(v, null, 2)
        expect(relayout(compact, 2)).toBe(pretty)
        expect(relayout(pretty, 0)).toBe(compact)
        // whitespace of any kind between tokens
        expect(relayout(JSON.stringify(v, null, '\t'), 2)).toBe(pretty)
      }),
    )
  })

  it('serialises plain values exactly as JSON.stringify', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(toJsonText(v, 2)).toBe(JSON.stringify(v, null, 2))
        expect(toJsonText(v, 0)).toBe(JSON.stringify(v))
      }),
    )
    expect(toJsonText({a: undefined, b: [undefined, () => 1], c: 1}, 0)).toBe('{"b":[null,null],"c":1}')
  })

  it('a RawJson inside a wrapper is laid out at its place: the same text JSON.stringify makes of the parsed value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (data, beside) => {
        const raw = new RawJson(JSON.stringify(data, null, 3))
        const wrapped = {data: raw, match: beside}
        expect(toJsonText(wrapped, 2)).toBe(JSON.stringify({data, match: beside}, null, 2))
        expect(toJsonText([raw, raw], 0)).toBe(JSON.stringify([data, data]))
      }),
    )
  })

  it('keeps numbers, escapes and key order as sent', () => {
    const sent =
      '{ "FinalValue" : 121000.0,"StandardDeviation":1E-1, "City":"\\u0053ACRAMENTO\\/x", "b":1, "a":[ ] }'
    expect(relayout(sent, 2)).toBe(
      '{\n  "FinalValue": 121000.0,\n  "StandardDeviation": 1E-1,\n  "City": "\\u0053ACRAMENTO\\/x",\n  "b": 1,\n  "a": []\n}',
    )
    expect(relayout(sent, 0)).toBe(
      '{"FinalValue":121000.0,"StandardDeviation":1E-1,"City":"\\u0053ACRAMENTO\\/x","b":1,"a":[]}',
    )
    // a string holding brackets, quotes and backslashes is copied, not laid out
    expect(relayout('["a\\"{,}:[\\\\", 1]', 0)).toBe('["a\\"{,}:[\\\\",1]')
  })
})

describe('each record’s text from the body (recordTexts)', () => {
  const texts = (body: string) => recordTexts(body, [JSON.parse(body).data].flat())

  it('splits out a record, or each of a list, as sent', () => {
    expect(texts('{"status":"success","data":{"FinalValue":121000.0}}')).toEqual(['{"FinalValue":121000.0}'])
    expect(texts('{"data":[{"a":1.50},\n {"a":2}],"status":"success"}')).toEqual(['{"a":1.50}', '{"a":2}'])
  })

  it('gives up (undefined, the record is then re-serialised) where the two readings could differ', () => {
    // JSON.parse keeps the last `data`; a byte scanner might take the first
    expect(texts('{"status":"success","data":{"a":1},"data":{"a":2}}')).toEqual([undefined])
    // a key spelt with an escape: JSON.parse reads `data`, the scanner compares bytes
    expect(texts('{"status":"success","d\\u0061ta":{"a":1}}')).toEqual([undefined])
    expect(recordTexts('{"status":"success","data":{"a":1}}', [{a: 2}])).toEqual([undefined])
    expect(recordTexts('{"status":"success","data":{"a":1}', [{a: 1}])).toEqual([undefined])
  })
})
