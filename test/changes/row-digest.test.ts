import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {asText} from '../../src/io/export-reader.js'
import {
  hashBytes,
  hashText,
  nameSeed,
  NUMBER_CANONICAL,
  NUMBER_NO,
  NUMBER_OTHER,
  numberForm,
} from '../../src/changes/row-digest.js'

const form = (t: string) => numberForm(Buffer.from(t, 'latin1'), 0, t.length)
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/

describe('numberForm: what asText makes of a text, decided on its bytes', () => {
  it.each<[string, number]>([
    ['688600', NUMBER_CANONICAL],
    ['0', NUMBER_CANONICAL],
    ['3.25', NUMBER_CANONICAL],
    ['-4.5', NUMBER_CANONICAL],
    ['0.000001', NUMBER_CANONICAL],
    ['999999999999999', NUMBER_CANONICAL], // 15 digits: exact in a double
    ['688600.0', NUMBER_OTHER], // a trailing zero after the point
    ['0.10', NUMBER_OTHER],
    ['1e5', NUMBER_OTHER],
    ['1.5E-3', NUMBER_OTHER],
    ['-0', NUMBER_OTHER], // -0 prints as 0
    ['0.0000001', NUMBER_OTHER], // below 1e-6 JavaScript prints 1e-7
    ['12345678901234567', NUMBER_OTHER], // past 15 digits: converted to be sure
    ['06067', NUMBER_NO], // a code: a leading zero is not JSON's grammar
    ['2026-10-01', NUMBER_NO],
    ['1.', NUMBER_NO],
    ['.5', NUMBER_NO],
    ['-', NUMBER_NO],
    ['1e', NUMBER_NO],
    ['', NUMBER_NO],
    ['12 Oak St', NUMBER_NO],
  ])('%j', (text, expected) => {
    expect(form(text)).toBe(expected)
  })

  it('canonical means asText keeps the text; not a number means asText keeps it too', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.stringMatching(/^-?[0-9]{0,18}(\.[0-9]{0,10})?([eE][+-]?[0-9]{0,3})?$/),
          // small magnitudes, where JavaScript's shortest form turns to exponents
          fc.stringMatching(/^-?0\.0{0,9}[0-9]{1,4}$/),
        ),
        (t) => {
          const f = form(t)
          if (f === NUMBER_CANONICAL) expect(String(Number(t))).toBe(t)
          if (f === NUMBER_NO) {
            expect(JSON_NUMBER.test(t)).toBe(false)
            expect(asText(t)).toBe(t)
          }
          if (f === NUMBER_OTHER) expect(JSON_NUMBER.test(t)).toBe(true)
        },
      ),
      {numRuns: 3000},
    )
  })
})

describe('the fingerprint of a value', () => {
  it('is the same from a text and from its UTF-8 bytes, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({unit: 'binary'}), fc.string(), (text, name) => {
        const seed = nameSeed(name)
        const a = {a: 0, b: 0}
        const b = {a: 0, b: 0}
        hashText(text, seed, a)
        const bytes = Buffer.from(text, 'utf8')
        hashBytes(bytes, 0, bytes.length, seed, b)
        expect(a).toEqual(b)
      }),
    )
  })

  it('depends on the field name, and on each byte of the value', () => {
    const lanes = (text: string, name: string) => {
      const out = {a: 0, b: 0}
      hashText(text, nameSeed(name), out)
      return `${out.a},${out.b}`
    }
    expect(lanes('688600', 'FinalValue')).not.toBe(lanes('688600', 'HighValue'))
    expect(lanes('688600', 'FinalValue')).not.toBe(lanes('688601', 'FinalValue'))
    expect(lanes('', 'FinalValue')).not.toBe(lanes('\u0000', 'FinalValue'))
    // 10,000 values of one field: no two share a fingerprint (64 bits: a shared one is a bug, not luck)
    const seen = new Set(Array.from({length: 10_000}, (_, i) => lanes(String(i), 'FinalValue')))
    expect(seen.size).toBe(10_000)
  })
})
