import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {asText, type FlatValue} from '../../src/io/export-reader.js'
import {
  ByteDigest,
  hashBytes,
  hashDigits,
  hashJsonNumber,
  hashText,
  hashTextBytes,
  nameSeed,
  valueLanes,
} from '../../src/changes/row-digest.js'

const seed = nameSeed('FinalValue')
const lanesOf = (v: FlatValue): string => {
  const out = {a: 0, b: 0}
  valueLanes(v, seed, out)
  return `${out.a},${out.b}`
}
const bytesLanes = (text: string, how: typeof hashTextBytes = hashTextBytes): string => {
  const b = Buffer.from(text, 'utf8')
  const out = {a: 0, b: 0}
  how(b, 0, b.length, seed, out)
  return `${out.a},${out.b}`
}

/** Texts and numbers an export may hold: numbers in JSON's grammar (and near it), codes, words. */
const value = fc.oneof(
  fc.stringMatching(/^-?[0-9]{0,18}(\.[0-9]{0,10})?([eE][+-]?[0-9]{0,3})?$/),
  fc.stringMatching(/^-?0\.0{0,9}[0-9]{1,4}$/),
  fc.constantFrom(
    '688600.0',
    '688600',
    '06067',
    '1e5',
    '100000',
    '-0',
    '0',
    '0.10',
    '0.1',
    '1e400',
    'Infinity',
  ),
  fc.constantFrom('12345678901234567', '12345678901234568', '1.', '.5', '-', 'true', 'x', ''),
  fc.string({maxLength: 8}),
  fc.double({noNaN: true}),
  fc.integer({min: -1e12, max: 1e12}),
  fc.boolean(),
)

describe('the fingerprint of a value', () => {
  it('two values share one exactly when the comparison calls them equal (asText), whatever their type', () => {
    fc.assert(
      fc.property(value, value, (x, y) => {
        expect(lanesOf(x) === lanesOf(y)).toBe(asText(x) === asText(y))
      }),
      {numRuns: 5000},
    )
  })

  it.each<[FlatValue, FlatValue]>([
    ['688600.0', 688600],
    ['1e5', 100000],
    ['-0', 0],
    ['0.10', 0.1],
    ['true', true],
  ])('%j is %j', (x, y) => {
    expect(lanesOf(x)).toBe(lanesOf(y))
  })

  it.each<[FlatValue, FlatValue]>([
    ['06067', 6067], // a code keeps its leading zero
    ['1e400', Infinity], // a number no double holds stays its text
    ['12', 'x12'],
    ['', null],
  ])('%j is not %j', (x, y) => {
    expect(lanesOf(x)).not.toBe(lanesOf(y))
  })

  it('is the same from a text and from its UTF-8 bytes, whatever the text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({unit: 'binary'}), value.map(String)), (text) => {
        const a = {a: 0, b: 0}
        hashText(text, seed, a)
        expect(`${a.a},${a.b}`).toBe(bytesLanes(text))
      }),
    )
  })

  it('a text of digits alone, a JSON number: the same as any text of them', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,20}$/), (digits) => {
        expect(bytesLanes(digits, hashDigits)).toBe(bytesLanes(digits))
      }),
    )
    fc.assert(
      fc.property(fc.oneof(fc.double({noNaN: true, noDefaultInfinity: true}), fc.integer()), (x) => {
        const text = JSON.stringify(x)
        expect(bytesLanes(text, hashJsonNumber)).toBe(lanesOf(x))
      }),
    )
    expect(bytesLanes('1e400', hashJsonNumber)).toBe(lanesOf(Infinity)) // as JSON.parse reads it
  })

  it('depends on the field name, and on each byte of the value', () => {
    const lanes = (text: string, name: string) => {
      const out = {a: 0, b: 0}
      hashText(text, nameSeed(name), out)
      return `${out.a},${out.b}`
    }
    expect(lanes('688600', 'FinalValue')).not.toBe(lanes('688600', 'HighValue'))
    expect(lanes('688600', 'FinalValue')).not.toBe(lanes('688601', 'FinalValue'))
    expect(lanes('Oak', 'City')).not.toBe(lanes('Oal', 'City'))
    const raw = {a: 0, b: 0}
    hashBytes(Buffer.from('\u0000'), 0, 1, nameSeed('FinalValue'), raw)
    expect(lanes('', 'FinalValue')).not.toBe(`${raw.a},${raw.b}`)
    // 10,000 values of one field: no two share a fingerprint (64 bits: a shared one is a bug, not luck)
    expect(new Set(Array.from({length: 10_000}, (_, i) => lanes(String(i), 'FinalValue'))).size).toBe(10_000)
    expect(new Set(Array.from({length: 10_000}, (_, i) => lanes(`${i}x`, 'City'))).size).toBe(10_000)
  })
})

describe('the bytes digest of a record', () => {
  /** The digest of `text`'s bytes placed `at` bytes into a buffer, given in spans cut at `cuts` (the caller's skips). */
  const digestOf = (text: string, at: number, cuts: number[] = []): string => {
    const bytes = Buffer.from(text)
    const buf = Buffer.alloc(at + bytes.length + 8, 0x5a)
    bytes.copy(buf, at)
    const view = new DataView(buf.buffer, buf.byteOffset, buf.length)
    const d = new ByteDigest()
    d.reset()
    let from = at
    for (const c of [...cuts, bytes.length]) {
      d.add(buf, view, from, at + c)
      from = at + c
    }
    const out = {a: 0, b: 0}
    d.finish(out)
    return `${out.a},${out.b}`
  }
  const line = '{"Fips":"48201","ServicePropertyID":50000000000,"APN":"078-0123-039","FinalValue":282000}'

  it('is the same for the same bytes wherever they lie (a record on the other side sits at another offset)', () => {
    const want = digestOf(line, 0, [40, 52])
    for (let at = 1; at < 9; at++) expect(digestOf(line, at, [40, 52])).toBe(want)
  })

  it('changes with any one byte, in either lane, at any place of an 8-byte step or of the tail', () => {
    const want = digestOf(line, 3, [40, 52])
    const seen = new Set([want])
    for (let i = 0; i < line.length; i++) {
      const changed = line.slice(0, i) + (line[i] === '7' ? '8' : '7') + line.slice(i + 1)
      const got = digestOf(changed, 3, [40, 52]).split(',')
      const [a, b] = want.split(',')
      expect(got[0]).not.toBe(a)
      expect(got[1]).not.toBe(b)
      seen.add(got.join(','))
    }
    expect(seen.size).toBe(line.length + 1)
  })

  it('tells records apart by their length: a trailing blank, a NUL byte', () => {
    expect(digestOf(line, 0, [40])).not.toBe(digestOf(`${line} `, 0, [40]))
    expect(digestOf('{"a":1}', 0)).not.toBe(digestOf('{"a":1} ', 0))
    expect(digestOf('', 0)).not.toBe(digestOf('\u0000', 0))
  })
})
