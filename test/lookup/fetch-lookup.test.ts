import {describe, expect, it} from 'vitest'

import {BadResponseError, TruncatedBodyError} from '../../src/errors.js'

import {jsonDepth, parseSuccessBody} from '../../src/lookup/fetch-lookup.js'

describe('parseSuccessBody accepts only {status: "success", data: record | [records]} (spec 4)', () => {
  it('a record', () => {
    expect(parseSuccessBody('{"status":"success","data":{"Fips":"06067"}}')).toEqual([{Fips: '06067'}])
  })

  it('a list of records', () => {
    expect(parseSuccessBody('{"status":"success","data":[{"a":1},{"a":2}]}')).toEqual([{a: 1}, {a: 2}])
  })

  const malformed: Array<[string, string, RegExp]> = [
    ['data null', '{"status":"success","data":null}', /`data` null/],
    ['data a string', '{"status":"success","data":"x"}', /`data` "x"/],
    ['data a number', '{"status":"success","data":42}', /`data` a number \(42\)/],
    ['data missing', '{"status":"success"}', /`data` missing/],
    [
      'data an empty list (spec 7 answers no match with 404)',
      '{"status":"success","data":[]}',
      /empty `data` list/,
    ],
    [
      'a list holding a non-record',
      '{"status":"success","data":[{"a":1},3]}',
      /something other than records/,
    ],
    ['status not success', '{"status":"error","data":{}}', /status "error"/],
    ['status missing', '{"data":{}}', /status missing/],
    ['a top-level list', '[{"a":1}]', /not an object/],
    ['a top-level string', '"hello"', /not an object/],
    ['HTML', '<html>portal</html>', /not JSON: "<html>portal<\/html>"/],
    [
      'a record nested 100,000 deep (would overflow every recursive walker)',
      `{"status":"success","data":{"a":${'{"b":'.repeat(100_000)}1${'}'.repeat(100_000)}}}`,
      /nested deeper than 64 levels/,
    ],
  ]
  for (const [what, body, message] of malformed)
    it(`is malformed (exit 6): ${what}`, () => {
      let error: unknown
      try {
        parseSuccessBody(body)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(BadResponseError)
      expect((error as BadResponseError).exitCode).toBe(6)
      expect((error as Error).message).toMatch(message)
    })

  it('a body cut mid-JSON is a truncation (retryable), not malformed', () => {
    expect(() => parseSuccessBody('{"status":"success","data":{"a"')).toThrow(TruncatedBodyError)
  })
})

describe('jsonDepth walks without recursion', () => {
  it.each([
    [1, 0],
    [{}, 1],
    [{a: {b: [1]}}, 3],
  ])('%j is %i deep', (value, depth) => {
    expect(jsonDepth(value)).toBe(depth)
  })
})
