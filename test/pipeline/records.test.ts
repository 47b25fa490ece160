import {isUtf8} from 'node:buffer'

import fc from 'fast-check'
import {afterEach, describe, expect, it, vi} from 'vitest'

import {clearSecrets, containsSecret, registerSecret} from '../../src/api/secrets.js'
import {BadResponseError, TruncatedBodyError} from '../../src/errors.js'
import {compactJson} from '../../src/json/values.js'
import {MAX_RECORD_BYTES, RecordScanner} from '../../src/pipeline/records.js'
import {chunkSizes, jsonRecord, mutate, mutation, wellFormed} from '../helpers/json-arbitraries.js'
import {envelope, recordsOf, scanBody} from '../helpers/records.js'

const parse = (texts: string[]) => texts.map((t) => JSON.parse(t) as unknown)

const RECORDS = [
  {
    Fips: '06067',
    APN: 'a"b\\c',
    Name: 'São José {weird} [brackets]',
    AssumableMortgage: {LoanType: 'FHA', x: [1, {y: 2}]},
  },
  {Fips: '06067', data: 'a field named data inside a record', status: 'error', FHACondoEligibility: null},
  {Fips: '06067', Emoji: '🏠', Escaped: '\u0000\n\t', Empty: {}, List: []},
  {},
]
const BODY = JSON.stringify({status: 'success', data: RECORDS})

describe('the records stage yields the records of a body', () => {
  it.each([1, 2, 3, 7, 64, 100_000])(
    'every record of the data list, whatever the chunk size (%i)',
    (size) => {
      expect(parse(recordsOf(BODY, [size]))).toEqual(RECORDS)
    },
  )

  it('with data before status, and pretty-printed (the records as sent, blanks and all)', () => {
    const pretty = JSON.stringify({data: RECORDS, status: 'success'}, null, 2)
    const texts = recordsOf(pretty, [5])
    expect(parse(texts)).toEqual(RECORDS)
    expect(texts[0]).toContain('\n')
    const s = scanBody(pretty)
    expect(s.records.map((r) => compactJson(r).toString())).toEqual(RECORDS.map((r) => JSON.stringify(r)))
  })

  it('with data a single record (the other shape spec 4 leaves open)', () => {
    expect(parse(recordsOf(JSON.stringify({status: 'success', data: RECORDS[0]}), [3]))).toEqual([RECORDS[0]])
  })

  it('with an empty list: no records, a clean end', () => {
    expect(recordsOf('{"status":"success","data":[]}', [4])).toEqual([])
    expect(recordsOf('{"status":"success","data":[ ]} \r\n', [1])).toEqual([])
  })

  it('with envelope members the spec does not name, checked and skipped, a nested "data" ignored', () => {
    expect(
      parse(
        recordsOf('{"meta":{"data":[{"no":1}]},"page":[1,"x"],"data":[{"yes":1}],"status":"success"}', [2]),
      ),
    ).toEqual([{yes: 1}])
  })

  it('with member names written with escapes, as JSON.parse reads them', () => {
    expect(parse(recordsOf('{"st\\u0061tus":"succ\\u0065ss","d\\u0061ta":[{"a":1}]}', [3]))).toEqual([{a: 1}])
  })

  it('each with its 1-based position in the body, rejected records counted too', () => {
    const s = scanBody(envelope('{"a":1}', '{"b":tru}', '{"c":3}'), [4])
    expect(s.index).toEqual([1, 3])
    expect(s.rejected.map((r) => r.index)).toEqual([2])
  })

  it('tells a pretty-printed record from a compact one', () => {
    const scanner = new RecordScanner()
    expect(scanner.push(Buffer.from(envelope('{"a":"b c"}', '{ "a":1}', '{"a":[1, 2]}')))).toBe(3)
    expect(Array.from(scanner.spaced.subarray(0, 3))).toEqual([0, 1, 1])
  })

  it('collects a record larger than a carried chunk (1 MiB) in pieces, and keeps it byte for byte', () => {
    const big = JSON.stringify({a: 'x'.repeat(1_500_000), b: [1, 2, {c: 'é'}], d: 3})
    const body = envelope('{"first":1}', big, '{"last":2}')
    for (const size of [65_536, 1_000_000, 3_000_000]) {
      const s = scanBody(body, [size])
      expect(s.error).toBeUndefined()
      expect(s.records.map((r) => r.toString())).toEqual(['{"first":1}', big, '{"last":2}'])
    }
  })
})

describe('the records stage does bounded work whatever the chunks', () => {
  it('copies a record dripped in small chunks a few times, not once per chunk (no quadratic re-walk)', () => {
    const record = JSON.stringify({a: 'x'.repeat(200_000), b: [{c: 1}]})
    const copied = vi.spyOn(Buffer, 'concat')
    try {
      for (const size of [64, 1000]) {
        copied.mockClear()
        const s = scanBody(envelope(record, '{"ok":1}'), [size])
        expect(s.records.map(String)).toEqual([record, '{"ok":1}'])
        const bytes = copied.mock.calls.reduce((n, [list]) => n + list.reduce((m, b) => m + b.length, 0), 0)
        expect(bytes).toBeLessThan(3 * record.length)
      }
    } finally {
      copied.mockRestore()
    }
  })

  it('refuses a record too deep as soon as it is, whatever the chunks (the same reason as in one chunk)', () => {
    const deep = `{"a":${'['.repeat(1000)}${']'.repeat(1000)}}`
    for (const size of [1, 2, 7, 1 << 20]) {
      const s = scanBody(
        envelope(deep, '{"ok":1}'),
        [size],
        new RecordScanner({maxRecordBytes: 500, maxDepth: 64}),
      )
      expect(s.rejected).toEqual([{index: 1, reason: 'nested deeper than 64 levels'}])
      expect(s.records.map(String)).toEqual(['{"ok":1}'])
    }
  })
})

describe('the envelope rule (spec 4): status "success", data a record or records, nothing after', () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      'status "error"',
      '{"status":"error","code":500,"message":"boom","data":[]}',
      /answered 200 with status "error" instead of "success"/,
    ],
    [
      'status "Success" (case matters)',
      '{"status":"Success","data":[]}',
      /status "Success" instead of "success"/,
    ],
    ['no status', '{"data":[{"a":1}]}', /no `status` field/],
    ['status a number', '{"status":1,"data":[]}', /`status` is not "success"/],
    ['status true', '{"status":true,"data":[]}', /`status` is not "success"/],
    ['status null', '{"status":null,"data":[]}', /`status` is not "success"/],
    ['status an object', '{"status":{"ok":"success"},"data":[]}', /`status` is not "success"/],
    ['status twice', '{"status":"success","data":[],"status":"success"}', /names `status` twice/],
    ['data twice', '{"status":"success","data":[{"a":1}],"data":[{"a":2}]}', /names `data` twice/],
    ['no data', '{"status":"success"}', /no `data` field/],
    ['an empty object', '{}', /no `data` field/],
    [
      'data null',
      '{"status":"success","data":null}',
      /with `data` null instead of a record object or a list of records/,
    ],
    ['data a string', '{"status":"success","data":"none"}', /with `data` "none" instead of a record object/],
    [
      'data a number',
      '{"status":"success","data":42}',
      /with `data` a number \(42\) instead of a record object/,
    ],
    [
      'data true',
      '{"status":"success","data":true}',
      /with `data` a boolean \(true\) instead of a record object/,
    ],
    [
      'an element that is a number',
      '{"status":"success","data":[{"a":1},3]}',
      /element of `data` is not a JSON object/,
    ],
    [
      'an element that is a list',
      '{"status":"success","data":[[{"a":1}]]}',
      /element of `data` is not a JSON object/,
    ],
    [
      'an element that is null',
      '{"status":"success","data":[null]}',
      /element of `data` is not a JSON object/,
    ],
    [
      'trailing bytes after the body',
      '{"status":"success","data":[{"a":1}]} <html>',
      /goes on after its JSON object/,
    ],
    [
      'a second body',
      '{"status":"success","data":[]}{"status":"success","data":[]}',
      /goes on after its JSON object/,
    ],
    ['a top-level list', '[{"a":1}]', /not a JSON object \(spec 4\): "\[/],
    ['a top-level string', '"success"', /not a JSON object/],
    ['a proxy page', '<html><body>502 Bad Gateway</body></html>', /not a JSON object \(spec 4\): "</],
    [
      'a list with a trailing comma',
      '{"status":"success","data":[{"a":1},]}',
      /element of `data` is not a JSON object/,
    ],
    ['a missing comma in the list', '{"status":"success","data":[{"a":1} {"a":2}]}', /expected ',' or '\]'/],
    [
      'a broken envelope member',
      '{"status":"success","page":tru,"data":[]}',
      /not valid JSON: a literal JSON does not allow/,
    ],
    ['an unquoted envelope name', '{status:"success","data":[]}', /not a JSON object with members/],
    ['a missing colon', '{"status" "success","data":[]}', /expected ':'/],
  ]
  it.each(cases)('%s is malformed (BadResponseError), whatever the chunks', (_what, body, message) => {
    for (const size of [1, 5, 1 << 20]) {
      const s = scanBody(body, [size])
      expect(s.error, `chunks of ${size}`).toBeInstanceOf(BadResponseError)
      expect(s.error).not.toBeInstanceOf(TruncatedBodyError)
      expect((s.error as BadResponseError).exitCode).toBe(6)
      expect((s.error as Error).message).toMatch(message)
    }
  })

  it('names a `data` that is no record, whatever the chunks, never with the key', () => {
    const KEY = 'sk_live_9f3a0c1d'
    registerSecret(KEY)
    for (const size of [1, 2, 1 << 20]) {
      const message = (s: string) => (scanBody(s, [size]).error as Error).message
      expect(message('{"status":"success","data":null}')).toMatch(/with `data` null instead/)
      expect(message('{"status":"success","data":-12.5e3}')).toMatch(
        /with `data` a number \(-12\.5e3\) instead/,
      )
      expect(message(`{"status":"success","data":"${KEY}"}`)).toMatch(/with `data` "sk_l…" instead/)
      expect(message(`{"status":"success","data":"${'x'.repeat(60)}"}`)).toMatch(
        /with `data` a long string instead/,
      )
    }
  })

  it('quotes the start of a body that is not JSON', () => {
    expect((scanBody('[{"a":1}]').error as Error).message).toMatch(
      /not a JSON object \(spec 4\): "\[\{"a":1\}\]"$/,
    )
    const page = `<html><body>502 Bad Gateway ${'.'.repeat(200)}</body></html>`
    expect((scanBody(page).error as Error).message).toMatch(
      /not a JSON object \(spec 4\): "<html><body>502 Bad Gateway \.{52}…"$/,
    )
  })

  it('status after data: the records come first, then the failure, and never with status ok', () => {
    const body = '{"data":[{"a":1},{"a":2}],"status":"error","message":"quota"}'
    const scanner = new RecordScanner()
    const ok: boolean[] = []
    const s = scanBody(
      body,
      [10],
      new Proxy(scanner, {
        get(target, prop, receiver) {
          if (prop === 'push')
            return (chunk: Buffer) => {
              const n = target.push(chunk)
              for (let k = 0; k < n; k++) ok.push(target.statusOk)
              return n
            }
          return Reflect.get(target, prop, receiver) as unknown
        },
      }),
    )
    expect(parse(s.records.map(String))).toEqual([{a: 1}, {a: 2}])
    expect(ok).toEqual([false, false])
    expect((s.error as Error).message).toMatch(/status "error" instead of "success"/)
  })

  it('status before data: statusOk as the records arrive', () => {
    const scanner = new RecordScanner()
    scanner.push(Buffer.from('{"status":"success","da'))
    expect(scanner.statusOk).toBe(true)
    expect(scanner.push(Buffer.from('ta":[{"a":1}]}'))).toBe(1)
  })

  it('quotes the start of a body that is not JSON, one line, never the API key', () => {
    const KEY = 'sk_live_9f3a0c1d2e4b5a6f7788'
    registerSecret(KEY)
    for (let at = 0; at < 130; at += 3) {
      const page = `<html>\n<body>${'x'.repeat(at)} key=${KEY} rejected by the proxy</body></html>`
      const s = scanBody(page, [at % 2 === 0 ? 1 << 20 : 7])
      const message = (s.error as Error).message
      // the first chunk's start, blanks made one space
      if (at % 2 === 0) expect(message).toMatch(/not a JSON object \(spec 4\): "<html> <body>/)
      expect(message).not.toContain('\n')
      expect(containsSecret(message), message).toBe(false)
    }
  })

  it('a body cut at any byte is truncated (TruncatedBodyError) or, whole, clean: never a wrong record', () => {
    const records = ['{"a":"x,\\"}]"}', '{"n":-1.5e3,"o":{"t":true}}', '{}']
    const body = `{"status":"success", "data": [${records.join(', ')}]}\n`
    for (let cut = 0; cut <= body.length; cut++)
      for (const size of [1, 4, 1 << 20]) {
        const s = scanBody(body.slice(0, cut), [size])
        const got = s.records.map(String)
        expect(got).toEqual(records.slice(0, got.length))
        if (cut >= body.length - 1) {
          expect(s.error, `cut at ${cut}`).toBeUndefined()
          expect(got).toEqual(records)
        } else expect(s.error, `cut at ${cut}`).toBeInstanceOf(TruncatedBodyError)
      }
  })

  it('an empty or blank body is truncated, not an empty success', () => {
    for (const body of ['', ' \n']) expect(scanBody(body).error).toBeInstanceOf(TruncatedBodyError)
    expect((scanBody('{"status":"success","data":[{"a":1}').error as Error).message).toMatch(
      /ended mid-JSON after 1 records/,
    )
  })
})

describe('a record that breaks the JSON grammar or UTF-8 is rejected with its reason; the rest is kept', () => {
  const cases: Array<[string, string | Buffer, RegExp]> = [
    ['080', '{"a":080}', /^a number JSON does not allow \(at byte 6 of the record\)$/],
    ['01', '{"a":01}', /a number JSON does not allow/],
    ['1.', '{"a":1.}', /a number JSON does not allow/],
    ['-', '{"a":-}', /a number JSON does not allow/],
    ['1e', '{"a":1e}', /a number JSON does not allow/],
    ['+1', '{"a":+1}', /expected a value/],
    ['tru', '{"a":tru}', /a literal JSON does not allow \(expected true\)/],
    ['nul', '{"a":nul}', /a literal JSON does not allow \(expected null\)/],
    ['True', '{"a":True}', /expected a value \(at byte 5 of the record\)/],
    ['a raw control character in a string', '{"a":"x\u0001"}', /a control character inside a string/],
    ['a raw line break in a string', '{"a":"x\ny"}', /a control character inside a string/],
    ['a \\x escape', '{"a":"\\x41"}', /an escape JSON does not allow/],
    ['a short \\u12 escape', '{"a":"\\u12"}', /a \\u escape without four hex digits/],
    ['a lone surrogate escape \\ud800', '{"a":"\\ud800"}', /a lone surrogate in a \\u escape/],
    [
      'byte 0xff',
      Buffer.concat([Buffer.from('{"a":"x'), Buffer.from([0xff]), Buffer.from('"}')]),
      /not valid UTF-8/,
    ],
    [
      'an overlong 0xc0 0xaf',
      Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]),
      /not valid UTF-8/,
    ],
    [
      'a cut multi-byte sequence',
      Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]),
      /not valid UTF-8/,
    ],
    [
      'a UTF-8 encoded surrogate',
      Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
      /not valid UTF-8 \(RFC 8259 section 8\.1\)/,
    ],
    [
      'invalid UTF-8 in a member name',
      Buffer.concat([Buffer.from('{"'), Buffer.from([0xfe]), Buffer.from('":1}')]),
      /not valid UTF-8/,
    ],
    ['a trailing comma', '{"a":1,}', /expected a member name/],
    [
      'nesting 100,000 deep',
      `{"a":${'{"b":'.repeat(100_000)}1${'}'.repeat(100_000)}}`,
      /^nested deeper than 64 levels$/,
    ],
    [
      'nesting 100,000 deep in lists',
      `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      /^nested deeper than 64 levels$/,
    ],
    [
      'more than 100,000 members',
      `{${Array.from({length: 100_001}, (_, i) => `"m${i}":1`).join(',')}}`,
      /^more than 100000 members$/,
    ],
  ]
  it.each(cases)('%s', (_what, record, reason) => {
    const body = Buffer.concat([
      Buffer.from('{"status":"success","data":[{"before":1},'),
      typeof record === 'string' ? Buffer.from(record) : record,
      Buffer.from(',{"after":2}]}'),
    ])
    for (const sizes of [[1 << 24], [1], [7], [3, 11, 64]]) {
      if (sizes[0] === 1 && body.length > 10_000) continue
      const s = scanBody(body, sizes)
      expect(s.error).toBeUndefined()
      expect(s.records.map(String)).toEqual(['{"before":1}', '{"after":2}'])
      expect(s.rejected).toHaveLength(1)
      expect(s.rejected[0]!.index).toBe(2)
      expect(s.rejected[0]!.reason).toMatch(reason)
    }
  })

  it('rejects a record over maxRecordBytes, carried or collected, and keeps the rest', () => {
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`
    const text = `{"data":[${deep},{"ok":1},{"big":"${'x'.repeat(5000)}"},{"ok":2}],"status":"success"}`
    for (const chunk of [7, 1000, text.length]) {
      const s = scanBody(text, [chunk], new RecordScanner({maxRecordBytes: 4096, maxDepth: 64}))
      expect(s.error).toBeUndefined()
      expect(parse(s.records.map(String))).toEqual([{ok: 1}, {ok: 2}])
      expect(s.rejected).toEqual([
        {index: 1, reason: 'nested deeper than 64 levels'},
        {index: 3, reason: 'larger than 4,096 bytes'},
      ])
    }
    // the default cap, on a record collected in pieces
    const huge = `{"big":"${'y'.repeat(MAX_RECORD_BYTES)}"}`
    const s = scanBody(envelope(huge, '{"ok":3}'), [1 << 20])
    expect(s.rejected).toEqual([{index: 1, reason: 'larger than 16,777,216 bytes'}])
    expect(s.records.map(String)).toEqual(['{"ok":3}'])
  })

  it('rejects a broken record larger than a carried chunk with where it breaks', () => {
    const big = `{"a":"${'x'.repeat(1_200_000)}","b":080}`
    const s = scanBody(envelope(big, '{"ok":1}'), [65_536])
    expect(s.records.map(String)).toEqual(['{"ok":1}'])
    expect(s.rejected).toEqual([
      {index: 1, reason: 'a number JSON does not allow (at byte 1200013 of the record)'},
    ])
  })
})

describe('the records stage: properties', () => {
  it('yields exactly the records JSON.parse finds, for any records chunked anywhere, and each record’s bytes parse', () => {
    fc.assert(
      fc.property(fc.array(jsonRecord, {maxLength: 6}), chunkSizes, fc.boolean(), (recs, sizes, pretty) => {
        const body = Buffer.from(
          JSON.stringify({status: 'success', data: recs}, null, pretty ? 1 : undefined),
        )
        const s = scanBody(body, sizes)
        expect(s.error).toBeUndefined()
        expect(s.rejected).toEqual([])
        expect(s.records.map((r) => JSON.parse(r.toString('utf8')) as unknown)).toEqual(
          (JSON.parse(body.toString('utf8')) as {data: unknown[]}).data,
        )
      }),
      {numRuns: 400},
    )
  })

  it('for any server bytes, every record accepted is valid UTF-8 JSON that re-stringifies, and the scan ends cleanly or says malformed/truncated', () => {
    let accepted = 0
    let failed = 0
    fc.assert(
      fc.property(
        fc.array(jsonRecord, {minLength: 1, maxLength: 4}),
        fc.array(mutation, {minLength: 1, maxLength: 4}),
        chunkSizes,
        fc.boolean(),
        (recs, muts, sizes, pretty) => {
          const valid = Buffer.from(
            JSON.stringify({status: 'success', data: recs}, null, pretty ? 1 : undefined),
          )
          const s = scanBody(mutate(valid, muts), sizes)
          if (s.error !== undefined) {
            failed++
            expect(
              s.error instanceof BadResponseError || s.error instanceof TruncatedBodyError,
              String(s.error),
            ).toBe(true)
          }
          for (const r of s.records) {
            accepted++
            expect(isUtf8(r)).toBe(true)
            // the NDJSON line: the record as sent, or compact when pretty-printed
            const line = compactJson(r).toString('utf8')
            expect(line).not.toMatch(/[\r\n]/)
            const v = JSON.parse(line) as unknown
            expect(v !== null && typeof v === 'object' && !Array.isArray(v)).toBe(true)
            expect(JSON.parse(r.toString('utf8'))).toEqual(v)
            // valid JSON once re-written too (a number past the double range, 1e400, becomes null)
            expect(() => JSON.parse(JSON.stringify(v)) as unknown).not.toThrow()
            // no string a UTF-8 writer (CSV, Parquet) would turn into U+FFFD
            expect(wellFormed(v)).toBe(true)
          }
          for (const r of s.rejected) expect(r.reason.length).toBeGreaterThan(0)
        },
      ),
      {numRuns: 1500},
    )
    // the property is not met by refusing everything
    expect(accepted).toBeGreaterThan(500)
    expect(failed).toBeGreaterThan(100)
  })
})

afterEach(() => clearSecrets())
