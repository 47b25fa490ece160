import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {count} from '../../src/text/count.js'

describe('count: a whole number with thousands separators', () => {
  it.each<[number, string]>([
    [0, '0'],
    [7, '7'],
    [999, '999'],
    [1000, '1,000'],
    [200000, '200,000'],
    [1234567, '1,234,567'],
    [-1234, '-1,234'],
  ])('%d reads %j', (x, text) => {
    expect(count(x)).toBe(text)
  })

  it('writes what toLocaleString("en-US") writes, for any number', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({min: -(2 ** 53) + 1, max: 2 ** 53 - 1}), fc.double()), (x) => {
        expect(count(x)).toBe(x.toLocaleString('en-US'))
      }),
      {numRuns: 2000},
    )
  })
})
