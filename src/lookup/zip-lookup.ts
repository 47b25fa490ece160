import {countyByFips, describeCounty} from '../address/counties.js'
import {addressZip} from '../address/standardise.js'
import type {ZipCounties} from '../address/zip-counties.js'
import {NotFoundError, UsageError} from '../errors.js'
import {lookupOne, type LookupOutcome, type ZipCounty} from './address-lookup.js'
import type {LookupContext} from './fetch-lookup.js'
import type {LookupQuery} from '../api/validate.js'

/**
 * "A ZIP is enough" (docs/lookup.md): an address lookup without --county or --fips finds its county from
 * the ZIP (src/address/zip-counties.ts, the Census Bureau's ZCTA-to-county relationship). A ZIP in one
 * county is looked up there; a ZIP that spans counties is tried in order of each county's share of its
 * housing units, at most MAX_COUNTIES of them, each with the address ladder, until one answers. The
 * outcome says which county was used. The table is the caller's (src/address/zip-counties.ts
 * readZipTable, from where the running code lies), read only on that path and on a 404 in a county the
 * user named: a lookup with --fips that finds its property never reads it.
 */
export const MAX_COUNTIES = 3

/** The ZIP's counties as the table orders them, those of the shipped county list only. */
function zipCounties(table: ZipCounties, zip: string): Array<{fips: string; label: string}> {
  return (table(zip) ?? []).flatMap((fips) => {
    const c = countyByFips(fips)
    return c ? [{fips, label: describeCounty(c)}] : []
  })
}

/**
 * One lookup whose county comes from the address's ZIP. `query.fips` is ignored. A ZIP the table does not
 * hold is a usage error (exit 2) naming the fix; a 404 in every county tried says which were tried.
 */
export async function lookupByZip(
  ctx: LookupContext,
  query: LookupQuery,
  table: ZipCounties,
  opts: {asTyped?: boolean; fallback?: boolean; signal?: AbortSignal | undefined} = {},
  /** The two inputs as the caller's user knows them: the CLI's flags, the library's fields. */
  names: {fips: string; county: string} = {fips: '--fips', county: '--county'},
): Promise<LookupOutcome & {county: ZipCounty}> {
  const address = query.by.value
  const zip = query.by.kind === 'address' ? addressZip(address) : undefined
  if (zip === undefined)
    throw new UsageError(
      `${names.fips} (a 5-digit county code such as 06067) or ${names.county} ("Name, ST") is required, unless the address ends in a ZIP code (sfl then finds the county from it)`,
    )
  const all = zipCounties(table, zip)
  if (all.length === 0)
    throw new UsageError(
      `ZIP ${zip} is not in sfl's ZIP-to-county table (Census 2010 ZIP areas: a PO-box ZIP, a newer one, or one in Connecticut, whose counties are now planning regions); give the county with ${names.county} ("Name, ST") or ${names.fips}`,
    )
  const tried = all.slice(0, MAX_COUNTIES)
  for (const [i, c] of tried.entries()) {
    try {
      const found = await lookupOne(ctx, {...query, fips: c.fips}, {...opts, county: c.label})
      return {...found, county: {...c, zip, rank: i + 1, of: all.length}}
    } catch (error) {
      if (!(error instanceof NotFoundError) || i === tried.length - 1) {
        if (error instanceof NotFoundError && tried.length > 1)
          throw new NotFoundError(
            `${error.message}. ZIP ${zip} spans ${all.length} counties; tried ${tried.map((t) => t.label).join(', ')}${all.length > tried.length ? ` (the ${tried.length} with most of its addresses)` : ''}: name the county with ${names.county} if it is another`,
            404,
          )
        throw error
      }
    }
  }
  /* c8 ignore next */
  throw new Error('unreachable: the loop returns or throws')
}

/**
 * The hint for a 404 in a county the user named, when the address's ZIP lies elsewhere: "ZIP 95838 is in
 * Sacramento County, CA (06067), not Yolo County, CA (06113): try --fips 06067". Undefined when the ZIP
 * is unknown or lies (partly) in the county given.
 */
export function wrongCountyHint(address: string, fips: string, table: ZipCounties): string | undefined {
  const zip = addressZip(address)
  if (zip === undefined) return undefined
  const counties = zipCounties(table, zip)
  if (counties.length === 0 || counties.some((c) => c.fips === fips)) return undefined
  const given = countyByFips(fips)
  const where = counties.length === 1 ? counties[0]!.label : counties.map((c) => c.label).join(' or ')
  return `ZIP ${zip} is in ${where}, not ${given ? describeCounty(given) : fips}: try --fips ${counties[0]!.fips}, or leave the county out and sfl finds it from the ZIP`
}
