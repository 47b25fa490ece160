import {UsageError} from '../errors.js'
import {countyByFips, describeCounty, explainResolution, resolveCounty} from './counties.js'

/**
 * `--fips` / `--county` → one checked county code, before any request (spec 4: "The county codes accepted
 * are the standard 5-digit county codes"). A code no county has, or a name that does not resolve, is a
 * usage error (exit 2) with did-you-mean. Returns undefined when neither flag is given. `countyFlag` says
 * whether the command has --county: a hint never names a flag the command lacks (`keys set --fips`).
 * `names` spells the two inputs as the caller's user knows them (`sfl mcp`'s tool parameters fips and county).
 */
export function countyFromFlags(
  flags: {
    fips?: string | undefined
    county?: string | undefined
  },
  opts: {countyFlag: boolean; names?: {fips: string; county: string}},
): {fips: string; label: string} | undefined {
  const names = opts.names ?? {fips: '--fips', county: '--county'}
  if (flags.fips !== undefined && flags.county !== undefined)
    throw new UsageError(`give ${names.fips} or ${names.county}, not both`)
  const given = flags.county ?? flags.fips
  if (given === undefined || given.trim() === '') return undefined
  const name = flags.county !== undefined ? names.county : names.fips
  if (flags.fips !== undefined && !/^\d{5}$/.test(flags.fips.trim()))
    throw new UsageError(
      `${names.fips} "${flags.fips}" ${fipsShapeHint(flags.fips.trim(), opts.countyFlag, names.county)}`,
    )
  const r = resolveCounty(given)
  if ('error' in r) throw new UsageError(`${name} "${given}": ${explainResolution(r)}`)
  return {fips: r.fips, label: describeCounty(r.county)}
}

/** Why a --fips of the wrong shape is refused, and the likeliest fix: a lost leading zero, or a name. */
function fipsShapeHint(given: string, countyFlag: boolean, county: string): string {
  const rule = 'must be exactly 5 digits (2-digit state code + 3-digit county code)'
  // 6067: a spreadsheet or a shell variable dropped the state's leading zero
  const padded = /^\d{3,4}$/.test(given) ? countyByFips(given.padStart(5, '0')) : undefined
  if (padded)
    return `${rule}; did you mean ${padded.fips} (${padded.name}, ${padded.state}, its leading zero restored)?`
  if (countyFlag && /[A-Za-z]/.test(given)) return `${rule}; to give a name, use ${county} "${given}"`
  return countyFlag
    ? `${rule}; to give a name, use ${county} "Sacramento, CA"`
    : `${rule}; find a code with \`sfl counties NAME\``
}
