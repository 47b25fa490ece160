import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {marketRateFor, parseMarketRate} from '../../src/cli/market-rate.js'

describe('--market-rate', () => {
  it('reads any rate from 1 to 30 percent, with or without a % sign', () => {
    fc.assert(
      fc.property(fc.double({min: 1, max: 30, noNaN: true}), fc.constantFrom('', '%', ' %'), (rate, sign) => {
        expect(parseMarketRate(`${rate}${sign}`)).toBe(rate)
      }),
    )
    expect(parseMarketRate('7.')).toBe(7)
    expect(parseMarketRate(' 6.25 % ')).toBe(6.25)
  })

  it.each([
    ['0.065', 'did you mean 6.5?'],
    ['0.0725', 'did you mean 7.25?'],
    ['0.005', 'under 1%: the rate is in percent, not a fraction'],
    ['725', 'did you mean 7.25?'],
    ['30.01', 'is over 30%'],
    ['1e1', 'is not a percent rate'],
    ['6,5', 'is not a percent rate'],
    ['%', 'is not a percent rate'],
    ['', 'is not a percent rate'],
  ])('%j is refused: %s', (text, message) => {
    expect(() => parseMarketRate(text)).toThrow(message)
  })

  it('a suggestion is only made when it would itself be accepted', () => {
    expect(() => parseMarketRate('0.005')).not.toThrow(/did you mean/)
    expect(() => parseMarketRate('9000')).not.toThrow(/did you mean/)
  })

  it('applies to the table and to json/ndjson with --explain; refused where nothing would show it', () => {
    expect(marketRateFor(undefined, 'csv', false)).toBeUndefined()
    expect(marketRateFor('6.5%', 'table', false)).toBe(6.5)
    expect(marketRateFor('6.5', 'json', true)).toBe(6.5)
    expect(marketRateFor('6.5', 'ndjson', true)).toBe(6.5)
    expect(() => marketRateFor('6.5', 'json', false)).toThrow(/add --explain/)
    expect(() => marketRateFor('6.5', 'csv', true)).toThrow(/CSV output has none/)
  })
})
