import {describe, expect, it} from 'vitest'

import {apnShape, commonShape, MAX_SHAPE} from '../../src/text/apn-shape.js'

describe('apnShape: the form of a parcel number, never its digits', () => {
  it('turns digits into 9 and letters into A, keeping the separators', () => {
    expect(apnShape('078-0123-045-0001')).toBe('999-9999-999-9999')
    expect(apnShape('12.34 AB/5:6')).toBe('99.99 AA/9:9')
    expect(apnShape('0780123045')).toBe('9999999999')
    expect(apnShape(7801230)).toBe('9999999')
  })

  it('keeps no character of the input other than the separators', () => {
    const shape = apnShape('R12-34x-5678')!
    expect(shape).toBe('A99-99A-9999')
    expect(shape).toMatch(/^[9A-]+$/)
  })

  it('refuses what is not an APN to learn from: empty, other characters, too long, not text', () => {
    expect(apnShape('')).toBeUndefined()
    expect(apnShape('   ')).toBeUndefined()
    expect(apnShape('---')).toBeUndefined()
    expect(apnShape('078_0123')).toBeUndefined()
    expect(apnShape('078\n0123')).toBeUndefined()
    expect(apnShape('sk_live_abc123')).toBeUndefined()
    expect(apnShape('9'.repeat(MAX_SHAPE + 1))).toBeUndefined()
    expect(apnShape('9'.repeat(MAX_SHAPE))).toBe('9'.repeat(MAX_SHAPE))
    expect(apnShape(null)).toBeUndefined()
    expect(apnShape({toString: () => '1'})).toBeUndefined()
  })
})

describe('commonShape: the shape most of a county records have', () => {
  it('picks the most frequent, skipping values with no shape', () => {
    expect(commonShape(['1-2', '11-22', '111-222', '333-444', null, 'x_y'])).toBe('999-999')
  })
  it('is undefined when no value has a shape', () => {
    expect(commonShape([undefined, '', '#'])).toBeUndefined()
  })
})
