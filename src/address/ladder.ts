import {standardiseAddress, standardWithoutUnit} from './standardise.js'

/**
 * The bounded 404 ladder for one address lookup (README "Addresses"): at most three requests in all.
 *
 * 1. the standardised form (`standardise.ts`), or the text as typed with `--address-as-typed`;
 * 2. on 404, the text as typed, when it differs from what was sent (a server with its own standardiser may
 *    read the original better than ours did);
 * 3. on 404, the standardised form without its unit (the record is then marked `matched_without_unit`,
 *    as batch lookups do): some records carry no unit, or a different designator.
 *
 * `--no-fallback` keeps only step 1. Steps that would repeat an earlier request are skipped.
 */
export interface Attempt {
  address: string
  /** Why this form: shown in the 404 message ("standardised", "as typed", "without the unit"). */
  label: 'standardised' | 'as typed' | 'without the unit'
  withoutUnit: boolean
}

export function addressLadder(
  typed: string,
  /** `state`: the county's, for an address typed without one (standardise.ts). */
  opts: {asTyped?: boolean; fallback?: boolean; state?: string | undefined} = {},
): Attempt[] {
  const std = standardiseAddress(typed, {state: opts.state})
  const attempts: Attempt[] = opts.asTyped
    ? [{address: typed, label: 'as typed', withoutUnit: false}]
    : [{address: std.text, label: 'standardised', withoutUnit: false}]
  if (opts.fallback === false) return attempts
  if (!opts.asTyped) attempts.push({address: typed, label: 'as typed', withoutUnit: false})
  const bare = standardWithoutUnit(std)
  if (bare !== undefined) attempts.push({address: bare, label: 'without the unit', withoutUnit: true})
  const seen = new Set<string>()
  return attempts.filter((a) => !seen.has(a.address) && seen.add(a.address))
}

/** "tried "X" (standardised), "Y" (as typed)": the what-was-tried part of a 404 message. */
export function describeAttempts(tried: readonly Attempt[]): string {
  return tried.map((a) => `"${a.address}" (${a.label})`).join(', ')
}
