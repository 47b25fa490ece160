import {UsageError} from '../errors.js'

/**
 * Rates above this are refused: no 30-year US mortgage rate has come near it (Freddie Mac's weekly
 * survey peaked at 18.63% in October 1981), so such a value is a typo or a rate in basis points.
 */
export const MAX_MARKET_RATE = 30

/** 0.065 * 100 without the float's tail (6.500000000000001). */
const tidy = (n: number) => String(Number(n.toPrecision(12)))

/**
 * `--market-rate`: the percent rate of a new loan, typed as people write it, `6.5` or `6.5%`. Pure; every
 * refusal is one line naming the fix (and `name`, the flag or the MCP tool's parameter). A value under 1 is a fraction typed for a percent (0.065 for 6.5%),
 * a value over 30 a typo or basis points (650).
 *
 * @example parseMarketRate('6.5%') // 6.5
 */
export function parseMarketRate(text: string, name = '--market-rate'): number {
  const m = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*%?\s*$/.exec(text)
  if (!m) throw new UsageError(`${name} "${text}" is not a percent rate; write it as 6.5 or 6.5%`)
  const n = Number(m[1])
  if (n === 0) throw new UsageError(`${name} "${text}" is 0; give the percent rate of a new loan, e.g. 6.5`)
  if (n < 1) {
    const guess = n * 100 >= 1 ? `; did you mean ${tidy(n * 100)}?` : ''
    throw new UsageError(
      `${name} "${text}" reads as ${tidy(n)}%, under 1%: the rate is in percent, not a fraction${guess}`,
    )
  }
  if (n > MAX_MARKET_RATE) {
    const guess = n / 100 >= 1 && n / 100 <= MAX_MARKET_RATE ? `; did you mean ${tidy(n / 100)}?` : ''
    throw new UsageError(
      `${name} "${text}" is over ${MAX_MARKET_RATE}%: no 30-year US mortgage rate has come near it (the highest weekly average, in 1981, was 18.63%)${guess}`,
    )
  }
  return n
}
