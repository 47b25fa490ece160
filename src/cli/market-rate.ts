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
 * refusal is one line naming the fix. A value under 1 is a fraction typed for a percent (0.065 for 6.5%),
 * a value over 30 a typo or basis points (650).
 *
 * @example parseMarketRate('6.5%') // 6.5
 */
export function parseMarketRate(text: string): number {
  const m = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*%?\s*$/.exec(text)
  if (!m) throw new UsageError(`--market-rate "${text}" is not a percent rate; write it as 6.5 or 6.5%`)
  const n = Number(m[1])
  if (n === 0)
    throw new UsageError(`--market-rate "${text}" is 0; give the percent rate of a new loan, e.g. 6.5`)
  if (n < 1) {
    const guess = n * 100 >= 1 ? `; did you mean ${tidy(n * 100)}?` : ''
    throw new UsageError(
      `--market-rate "${text}" reads as ${tidy(n)}%, under 1%: the rate is in percent, not a fraction${guess}`,
    )
  }
  if (n > MAX_MARKET_RATE) {
    const guess = n / 100 >= 1 && n / 100 <= MAX_MARKET_RATE ? `; did you mean ${tidy(n / 100)}?` : ''
    throw new UsageError(
      `--market-rate "${text}" is over ${MAX_MARKET_RATE}%: no 30-year US mortgage rate has come near it (the highest weekly average, in 1981, was 18.63%)${guess}`,
    )
  }
  return n
}

/**
 * The market rate of a single lookup, or a refusal when the output would not show what it prices: the
 * verdicts are in the table, and in json/ndjson only with --explain; CSV carries none. Never ignored.
 */
export function marketRateFor(
  text: string | undefined,
  format: string,
  explain: boolean,
): number | undefined {
  if (text === undefined) return undefined
  const rate = parseMarketRate(text)
  if (format === 'csv')
    throw new UsageError(
      '--market-rate prices the verdicts, and CSV output has none; use --output table, or --output json --explain',
    )
  if ((format === 'json' || format === 'ndjson') && !explain)
    throw new UsageError(
      `--market-rate prices the verdicts, which --output ${format} shows only with --explain: add --explain (the comparison is in the Assumable verdict), or use --output table`,
    )
  return rate
}
