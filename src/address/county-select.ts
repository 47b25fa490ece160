import {UsageError} from '../errors.js'
import {allCounties} from './counties.js'
import {distance} from '../text/distance.js'

/**
 * `--state CA` (repeatable) and `--all-counties`: counties chosen from the shipped FHFA county table
 * (src/address/counties.ts), in the table's order (by FIPS). Pure.
 */

/** The two-letter codes the table knows (states, DC and territories), sorted. */
export function stateCodes(): string[] {
  return [...new Set(allCounties().map((c) => c.state))].sort()
}

/** How a caller's user names the state input: the CLI's flag by default, `sfl mcp`'s parameter otherwise. */
export interface StateNames {
  /** The input's name: `--state`, `states`. */
  state: string
  /** How to give California: `--state CA (repeatable)`, `states ["CA"]`. */
  example: string
}

const FLAG_NAMES: StateNames = {state: '--state', example: '--state CA (repeatable)'}

/**
 * A `--state` value as the table's code (case-insensitive), or a usage error naming the nearest codes.
 *
 * @example stateCode('ca') // 'CA'
 */
export function stateCode(given: string, names: StateNames = FLAG_NAMES): string {
  const code = given.trim().toUpperCase()
  const codes = stateCodes()
  if (codes.includes(code)) return code
  if (!/^[A-Z]{2}$/.test(code))
    throw new UsageError(
      `${names.state} "${given}": give the two-letter postal code, e.g. ${names.example}; known codes: ${codes.join(' ')}`,
    )
  // a typo of one letter: the codes one edit away (CX: CA CO CT ...), at most five
  const near = codes.filter((c) => distance(code, c) === 1).slice(0, 5)
  throw new UsageError(
    `${names.state} "${given}": no county in the FHFA county list has the state code ${code}${near.length ? `; did you mean ${near.join(', ')}?` : ''} (known codes: ${codes.join(' ')})`,
  )
}

/** Every county of these states (codes already checked), in table order. */
export function countiesOfStates(codes: readonly string[]): string[] {
  const want = new Set(codes)
  return allCounties()
    .filter((c) => want.has(c.state))
    .map((c) => c.fips)
}

/**
 * The run's county list: the named ones first (--fips, --county, --fips-file, in that order), then the
 * counties of each --state, then with --all-counties every county of the table; duplicates removed, the
 * first place kept.
 */
export function selectCounties(
  sel: {
    named: readonly string[]
    states: readonly string[]
    all: boolean
  },
  names: StateNames = FLAG_NAMES,
): string[] {
  const list = [...sel.named, ...countiesOfStates(sel.states.map((s) => stateCode(s, names)))]
  if (sel.all) list.push(...allCounties().map((c) => c.fips))
  return [...new Set(list)]
}
