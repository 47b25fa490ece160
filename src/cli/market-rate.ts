import {UsageError} from '../errors.js'
import {parseMarketRate} from '../api/validate.js'

// the rate's rule is input validation (src/api/validate.ts), where `sfl mcp` finds it too
export {MAX_MARKET_RATE, parseMarketRate} from '../api/validate.js'

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
