import {UsageError} from '../errors.js'
import {describeCounty, explainResolution, resolveCounty} from './counties.js'

/**
 * `--fips` / `--county` → one checked county code, before any request (spec 4: "The county codes accepted
 * are the standard 5-digit county codes"). A code no county has, or a name that does not resolve, is a
 * usage error (exit 2) with did-you-mean. Returns undefined when neither flag is given.
 */
export function countyFromFlags(flags: {
  fips?: string | undefined
  county?: string | undefined
}): {fips: string; label: string} | undefined {
  if (flags.fips !== undefined && flags.county !== undefined)
    throw new UsageError('give --fips or --county, not both')
  const given = flags.county ?? flags.fips
  if (given === undefined || given.trim() === '') return undefined
  const name = flags.county !== undefined ? '--county' : '--fips'
  if (flags.fips !== undefined && !/^\d{5}$/.test(flags.fips.trim()))
    throw new UsageError(
      `--fips "${flags.fips}" must be exactly 5 digits (2-digit state code + 3-digit county code); to give a name, use --county "Sacramento, CA"`,
    )
  const r = resolveCounty(given)
  if ('error' in r) throw new UsageError(`${name} "${given}": ${explainResolution(r)}`)
  return {fips: r.fips, label: describeCounty(r.county)}
}
