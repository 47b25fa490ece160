// The 2010 county codes of the Census Bureau's ZCTA to County Relationship File against today's: shared by
// the generators that read that file (gen-zip-counties.mjs, gen-county-housing.mjs), so both carry and
// drop the same counties, and read it the same way.
import {existsSync, readFileSync} from 'node:fs'

/** 2010 county codes and their current ones (Census Bureau, "Substantial changes to counties"). */
export const RENAMED = new Map([
  ['02270', '02158'], // Wade Hampton Census Area → Kusilvak Census Area (2015)
  ['46113', '46102'], // Shannon County → Oglala Lakota County (2015)
  ['51515', '51019'], // Bedford city joined Bedford County (2013)
])

/** 2010 counties that no longer exist as one county: their figures are left out rather than guessed. */
export const GONE = new Set(['02261', '09001', '09003', '09005', '09007', '09009', '09011', '09013', '09015'])

/**
 * The relationship file a generator was given (its first argument): a column's index by name, and the
 * rows as [fields, line] (blank lines skipped, a BOM dropped). Exits with one line naming the file to pass
 * when it is missing; throws naming the column when the header lacks one.
 */
export function readZctaFile(tool, source) {
  if (!source || !existsSync(source)) {
    console.error(
      `${tool}: pass the path of the Census Bureau's zcta_county_rel_10.txt as the first argument${source ? ` (${source} is not here)` : ''}`,
    )
    process.exit(1)
  }
  const lines = readFileSync(source, 'utf8')
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
  const header = lines[0].split(',')
  const col = (name) => {
    const i = header.indexOf(name)
    if (i < 0) throw new Error(`${tool}: no ${name} column in ${source}`)
    return i
  }
  const rows = lines
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => [line.split(','), line])
  return {col, rows}
}
