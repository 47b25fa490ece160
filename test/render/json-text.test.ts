import fc from 'fast-check'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {BadResponseError} from '../../src/errors.js'
import {RawJson, relayout, toJsonText} from '../../src/render/json-text.js'
import {MockLookups} from '../helpers/mock-lookup.js'

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

describe('each record’s text as sent (fetchLookup `raw`), laid out for json output', () => {
  let mock: MockLookups
  beforeEach(() => {
    mock = new MockLookups()
  })
  afterEach(async () => mock.close())

  it('splits out a record, or each of a list, with its tokens as sent', async () => {
    const one = await mock.lookup('{"status":"success","data":{"FinalValue":121000.0}}')
    expect(one.raw).toEqual(['{"FinalValue":121000.0}'])
    const two = await mock.lookup('{"data":[{"a":1.50},\n {"a":2}],"status":"success"}')
    expect(two.raw).toEqual(['{"a":1.50}', '{"a":2}'])
    expect(relayout(two.raw[0]!, 2)).toBe('{\n  "a": 1.50\n}')
  })

  it('reads `data` spelt with an escape as JSON.parse does, and refuses `data` twice (no reading could choose)', async () => {
    const spelt = await mock.lookup('{"status":"success","d\\u0061ta":{"a":1}}')
    expect(spelt.raw).toEqual(['{"a":1}'])
    const twice = await mock
      .lookup('{"status":"success","data":{"a":1},"data":{"a":2}}')
      .catch((e: unknown) => e)
    expect(twice).toBeInstanceOf(BadResponseError)
    expect((twice as Error).message).toMatch(/names `data` twice/)
  })

  it('keeps a pretty-printed record’s text as sent; relayout makes it the json output', async () => {
    const sent = '{\n    "b" : 1E2,\n    "a" : [ "x" ]\n}'
    const answer = await mock.lookup(`{"status":"success","data":${sent}}`)
    expect(answer.raw).toEqual([sent])
    expect(relayout(answer.raw[0]!, 2)).toBe('{\n  "b": 1E2,\n  "a": [\n    "x"\n  ]\n}')
  })
})
