import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {DataScanner} from '../../src/io/data-scanner.js'

function scan(text: string, chunkSize: number): unknown[] {
  const s = new DataScanner()
  const buf = Buffer.from(text)
  const out: unknown[] = []
  for (let i = 0; i < buf.length; i += chunkSize)
    for (const r of s.push(buf.subarray(i, i + chunkSize))) out.push(JSON.parse(r.toString('utf8')))
  s.end()
  return out
}

const records = [
  {
    Fips: '06067',
    APN: 'a"b\\c',
    Name: 'São José {weird} [brackets]',
    AssumableMortgage: {LoanType: 'FHA', x: [1, {y: 2}]},
  },
  {Fips: '06067', data: 'a field named data inside a record', FHACondoEligibility: null},
  {Fips: '06067', Emoji: '🏠', Escaped: '\u0000\n\t'},
]

describe('DataScanner', () => {
  const body = JSON.stringify({status: 'success', data: records})
  it.each([1, 2, 3, 7, 64, 100_000])(
    'yields every record of an array, whatever the chunk size (%i)',
    (size) => {
      expect(scan(body, size)).toEqual(records)
    },
  )

  it('handles data before status and pretty-printed JSON', () => {
    expect(scan(JSON.stringify({data: records, status: 'success'}, null, 2), 5)).toEqual(records)
  })

  it('accepts data as a single object (the other shape the spec allows)', () => {
    expect(scan(JSON.stringify({status: 'success', data: records[0]}), 3)).toEqual([records[0]])
  })

  it('accepts an empty array; data null, a string or a number is a malformed answer (spec 4)', () => {
    expect(scan('{"status":"success","data":[]}', 4)).toEqual([])
    for (const v of ['null', '"none"', '42'])
      expect(() => scan(`{"status":"success","data":${v}}`, 4)).toThrow(
        /`data` is not a record or a list of records/,
      )
  })

  it('skips a record nested deeper than the cap, or larger than it, and keeps the rest (no recursion)', () => {
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`
    const text = `{"data":[${deep},{"ok":1},{"big":"${'x'.repeat(5000)}"},{"ok":2}]}`
    for (const chunk of [7, 1000, text.length]) {
      const s = new DataScanner({maxRecordBytes: 4096, maxDepth: 64})
      const got: unknown[] = []
      for (let i = 0; i < text.length; i += chunk)
        for (const b of s.push(Buffer.from(text.slice(i, i + chunk)))) got.push(JSON.parse(b.toString()))
      s.end()
      expect(got).toEqual([{ok: 1}, {ok: 2}])
      expect(s.takeRejected()).toEqual([
        {index: 1, reason: 'nested deeper than 64 levels'},
        {index: 3, reason: 'larger than 4,096 bytes'},
      ])
    }
  })

  it('ignores a "data" key nested deeper than the top level', () => {
    expect(scan('{"meta":{"data":[{"no":1}]},"data":[{"yes":1}]}', 2)).toEqual([{yes: 1}])
  })

  it.each([10, body.length - 3, body.length - 1])('throws on a body cut short at byte %i', (cut) => {
    expect(() => scan(body.slice(0, cut), 8)).toThrow(/ended mid-JSON/)
  })

  it('throws when there is no data field', () => {
    expect(() => scan('{"status":"success"}', 4)).toThrow(/no `data` field/)
  })

  it('yields exactly the records JSON.parse finds, for any records split into chunks anywhere', () => {
    // strings full of quotes, backslashes, brackets and non-ASCII; nesting; chunk edges inside escapes
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        {depthSize: 'small'},
        fc.string({unit: 'binary'}),
        fc.constantFrom('\\', '"', '\\"', '{[', ']}', '"}'),
        fc.double({noNaN: true, noDefaultInfinity: true}),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('v'), {maxLength: 4}),
        fc.dictionary(fc.string({unit: 'binary'}), tie('v'), {maxKeys: 4}),
      ),
    })).v
    const record = fc.dictionary(fc.string({unit: 'binary'}), value, {maxKeys: 6})
    fc.assert(
      fc.property(
        fc.array(record, {maxLength: 6}),
        fc.array(fc.integer({min: 1, max: 40}), {minLength: 1, maxLength: 8}),
        (recs, sizes) => {
          const buf = Buffer.from(JSON.stringify({status: 'success', data: recs}))
          const s = new DataScanner()
          const got: unknown[] = []
          for (let i = 0, k = 0; i < buf.length; k++) {
            const size = sizes[k % sizes.length]!
            for (const r of s.push(buf.subarray(i, i + size))) got.push(JSON.parse(r.toString('utf8')))
            i += size
          }
          s.end()
          expect(got).toEqual(JSON.parse(buf.toString('utf8')).data)
        },
      ),
      {numRuns: 300},
    )
  })
})
