/**
 * Where places.txt lies (scripts/gen-places.mjs, read by places.ts): beside this module in src/address/
 * when the tests run the sources. The build replaces this module in each bundle with one that names
 * dist/places.txt from the bundle's own place (placesFile in scripts/build.mjs), as it does for the county
 * table: import.meta has no value in dist/lookup.cjs.
 */
export const PLACES_FILE: string | URL = new URL('places.txt', import.meta.url)
