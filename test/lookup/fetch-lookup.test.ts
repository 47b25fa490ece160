import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {clearSecrets, containsSecret, registerSecret} from '../../src/api/secrets.js'
import {BadResponseError, ServerError, TruncatedBodyError} from '../../src/errors.js'
import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {KEY, MockLookups} from '../helpers/mock-lookup.js'

const HOUSE = new Dataset(1, 10).record(countyByFips('06067')!, 6, {assumable: false, condo: false})
const house = JSON.stringify(HOUSE)

let mock: MockLookups
beforeEach(() => {
  mock = new MockLookups()
})
afterEach(async () => {
  clearSecrets()
  await mock.close()
})

describe('fetchLookup reads the answer through the records stage (one envelope rule, one grammar, the spec checks)', () => {
  it('a record: parsed, its text as sent, no problems', async () => {
    const sent = house
      .replace('"FinalValue":', '"FinalValue" : ')
      .replace(/"FinalValue" : (\d+)/, '"FinalValue" : $1.0')
    const answer = await mock.lookup(`{"status":"success","data":${sent}}`)
    expect(answer.records).toEqual([HOUSE])
    expect(answer.raw).toEqual([sent])
    expect(answer.problems).toEqual([[]])
    expect(answer.keyEchoes).toBe(0)
  })

  it('several records: every one, in order, each with its own problems', async () => {
    const bad = JSON.stringify({...HOUSE, ConfidenceScore: 150, State: 'ca'})
    const answer = await mock.lookup(`{"data":[${house},${bad},{"Extra":1}],"status":"success"}`)
    expect(answer.records).toHaveLength(3)
    expect(answer.raw).toEqual([house, bad, '{"Extra":1}'])
    expect(answer.problems[0]).toEqual([])
    expect(answer.problems[1]).toEqual([
      'State: expected a two-letter state abbreviation',
      'ConfidenceScore: 150 is over the maximum 100',
    ])
    expect(answer.problems[2]).toContain('Fips: missing')
  })

  it('a record that echoes the key comes back masked, in the record and its text, with the echoes counted', async () => {
    registerSecret(KEY)
    const answer = await mock.lookup(`{"status":"success","data":${JSON.stringify({...HOUSE, APN: KEY})}}`)
    expect(answer.keyEchoes).toBe(1)
    expect(answer.records[0]!['APN']).toBe('*'.repeat(KEY.length))
    expect(answer.raw[0]).not.toContain(KEY)
    expect(containsSecret(JSON.stringify(answer))).toBe(false)
  })

  const malformed: Array<[string, string | Buffer, RegExp]> = [
    [
      'data an empty list (spec 7 answers no match with 404)',
      '{"status":"success","data":[]}',
      /empty `data` list; spec 7 answers a lookup that matches nothing with 404/,
    ],
    ['status "error"', '{"status":"error","data":{"a":1}}', /status "error" instead of "success"/],
    ['no status', `{"data":${house}}`, /no `status` field/],
    [
      'data null',
      '{"status":"success","data":null}',
      /with `data` null instead of a record object or a list of records/,
    ],
    ['no data', '{"status":"success"}', /no `data` field/],
    ['trailing garbage', `{"status":"success","data":${house}} <html>`, /goes on after its JSON object/],
    [
      'a list holding a non-record',
      `{"status":"success","data":[${house},3]}`,
      /element of `data` is not a JSON object/,
    ],
    ['a top-level list', `[${house}]`, /not a JSON object \(spec 4\): "\[\{/],
    ['a proxy page', '<html>portal</html>', /not a JSON object \(spec 4\): "<html>portal<\/html>"/],
    [
      'a record with 080',
      `{"status":"success","data":${house.replace(/"ConfidenceScore":\d+/, '"ConfidenceScore":080')}}`,
      /a record that cannot be read: a number JSON does not allow \(at byte \d+ of the record\)/,
    ],
    [
      'a record with a broken literal',
      `{"status":"success","data":[${house.replace('"FHAEligible":true', '"FHAEligible":tru')}]}`,
      /cannot be read: a literal JSON does not allow \(expected true\)/,
    ],
    [
      'a record nested 100,000 deep (no stack overflow)',
      `{"status":"success","data":{"a":${'{"b":'.repeat(100_000)}1${'}'.repeat(100_000)}}}`,
      /cannot be read: nested deeper than 64 levels/,
    ],
    [
      'a record that is not UTF-8',
      Buffer.concat([
        Buffer.from('{"status":"success","data":{"City":"'),
        Buffer.from([0xff]),
        Buffer.from('"}}'),
      ]),
      /cannot be read: not valid UTF-8/,
    ],
  ]
  it.each(malformed)('is malformed (BadResponseError, exit 6): %s', async (_what, body, message) => {
    const error = await mock.failure(body)
    expect(error).toBeInstanceOf(BadResponseError)
    expect(error).not.toBeInstanceOf(TruncatedBodyError)
    expect((error as BadResponseError).exitCode).toBe(6)
    expect(error.message).toMatch(message)
  })

  it('never quotes the key from a proxy page', async () => {
    registerSecret(KEY)
    const error = await mock.failure(`<html>denied for ${KEY}</html>`)
    expect(error.message).toMatch(/not a JSON object/)
    expect(containsSecret(error.message)).toBe(false)
  })

  it('a body cut mid-JSON is a truncation, retried like a reset, not malformed', async () => {
    const error = await mock.failure(`{"status":"success","data":${house.slice(0, 100)}`, {times: 3})
    // three tries (the mock asserts every answer was taken), then the run's network failure
    expect(error).toBeInstanceOf(ServerError)
    expect(error).not.toBeInstanceOf(BadResponseError)
    expect(error.message).toMatch(/network failure: the response body ended mid-JSON after 0 records/)
  })
})
