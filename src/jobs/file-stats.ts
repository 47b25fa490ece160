import {openExportSource, TRUSTED_LIMITS, type SourceLimits} from '../io/export-source.js'
import {emptyFacts, StatsAccumulator} from '../stats/accumulator.js'
import {factsOfFlat} from '../stats/facts.js'
import {GroupedStats} from '../stats/grouped.js'
import type {StatsReport} from '../stats/accumulator.js'

/**
 * `sfl stats PATH` and `export_statistics`: the run statistics of an existing export, from the same inputs
 * `sfl changes` reads: an export file (CSV, NDJSON, JSON or Parquet), an `--out-dir` folder or its
 * manifest.json, each checked by the one gate for export paths (src/io/export-source.ts) before it is read.
 * Read as a stream through src/io/export-reader.ts, so memory stays bounded whatever the size
 * (src/stats/grouped.ts). By county: a folder's counties are the manifest's (every one listed, an empty
 * county with 0 records), in its order; a file's are grouped by the Fips field (exports hold each county
 * together, but nothing here relies on it). Without `byCounty` only the whole is kept (half the memory and
 * sorting of a one-county file).
 */
export async function statsOfFile(
  path: string,
  byCounty = true,
  /** The gate's limits (src/io/export-source.ts): the CLI's, or `sfl mcp`'s for an untrusted caller. */
  limits: SourceLimits = TRUSTED_LIMITS,
): Promise<{run: StatsReport; counties: Array<{fips: string; report: StatsReport}>}> {
  const source = await openExportSource(path, limits)
  const files = source.files
  const groups = byCounty ? new GroupedStats() : undefined
  const all = groups?.all ?? new StatsAccumulator()
  const facts = emptyFacts()
  for (const file of files) {
    const county = file.fips
    if (county !== undefined) groups?.open(county)
    for await (const rec of source.records(file)) {
      if (!groups) {
        all.add(factsOfFlat(rec, facts))
        continue
      }
      const fips = county ?? rec['Fips']
      groups.add(fips === null || fips === undefined ? '(none)' : String(fips), factsOfFlat(rec, facts))
    }
  }
  const counties = groups?.reports().map(({key, report}) => ({fips: key, report})) ?? []
  return {run: all.report(), counties}
}
