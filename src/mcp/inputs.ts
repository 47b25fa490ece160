import {UsageError} from '../errors.js'
import {countyFromFlags} from '../address/county-flags.js'
import {selectCounties} from '../address/county-select.js'

/**
 * The tools' inputs checked by the CLI's own rules (src/api/validate.ts, the counties table of
 * src/address/), so a bad input is refused with the CLI's sentence, naming the tool's parameter where the
 * CLI names its flag. Pure; nothing is sent before these pass.
 */

/** Counties a tool sends a request for at most (check_key: one request each). */
export const MAX_CHECKED_COUNTIES = 10

/**
 * One county given as a code ("06067") or a name ("Sacramento, CA"): digits are a code (so a lost leading
 * zero gets its hint, "did you mean 06067"), anything else a name resolved with did-you-mean. `where`
 * names the parameter in the message.
 */
export function countyOf(value: string, where: string): {fips: string; label: string} {
  const names = {fips: where, county: where}
  const code = /^\s*\d+\s*$/.test(value)
  const county = countyFromFlags(code ? {fips: value} : {county: value}, {countyFlag: true, names})
  if (!county)
    throw new UsageError(
      `${where} is empty: give a 5-digit county code such as 06067 or a name such as "Sacramento, CA"`,
    )
  return county
}

/**
 * The counties of a plan, as `county-export` chooses them: the named ones first, then each state's, then
 * with `all` every county of the table; duplicates removed, the first place kept (src/address/county-select.ts).
 */
export function countyListOf(input: {
  counties?: string[] | undefined
  states?: string[] | undefined
  all?: boolean | undefined
}): string[] {
  const named = (input.counties ?? []).map((c, i) => countyOf(c, `counties[${i}]`).fips)
  const states = input.states ?? []
  if (named.length === 0 && states.length === 0 && !input.all)
    throw new UsageError(
      'give at least one county: counties ["06067"] or ["Sacramento, CA"], states ["CA"], or all_counties true',
    )
  return selectCounties({named, states, all: input.all === true}, {state: 'states', example: 'states ["CA"]'})
}

/**
 * A command line as a POSIX shell reads it: words of safe characters as they are, anything else in single
 * quotes ("Sacramento, CA" → 'Sacramento, CA'; a quote inside becomes '\'').
 */
export function shellLine(words: string[]): string {
  return words
    .map((w) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`))
    .join(' ')
}
