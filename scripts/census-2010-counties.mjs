// The 2010 county codes of the Census Bureau's ZCTA to County Relationship File against today's: shared by
// the generators that read that file (gen-zip-counties.mjs, gen-county-housing.mjs), so both carry and
// drop the same counties.

/** 2010 county codes and their current ones (Census Bureau, "Substantial changes to counties"). */
export const RENAMED = new Map([
  ['02270', '02158'], // Wade Hampton Census Area → Kusilvak Census Area (2015)
  ['46113', '46102'], // Shannon County → Oglala Lakota County (2015)
  ['51515', '51019'], // Bedford city joined Bedford County (2013)
])

/** 2010 counties that no longer exist as one county: their figures are left out rather than guessed. */
export const GONE = new Set(['02261', '09001', '09003', '09005', '09007', '09009', '09011', '09013', '09015'])
