import {ExportFileError, readExport} from '../io/export-reader.js'
import {emptyFacts, StatsAccumulator} from '../stats/accumulator.js'
import {factsOfFlat} from '../stats/facts.js'
import {GroupedStats} from '../stats/grouped.js'
import type {StatsReport} from '../stats/accumulator.js'
import {exportFiles} from '../io/export-files.js'

/**
 * `sfl stats PATH`: the run statistics of an existing export, from the same inputs `sfl changes` reads
 * (src/io/export-files.ts): an export file (CSV, NDJSON, JSON or Parquet), an `--out-dir` folder or its
 * manifest.json. Read as a stream through src/io/export-reader.ts, so memory stays bounded whatever the size
 * (src/stats/grouped.ts). By county: a folder's counties are the manifest's (every one listed, an empty
 * county with 0 records), in its order; a file's are grouped by the Fips field (exports hold each county
 * together, but nothing here relies on it). Without `byCounty` only the whole is kept (half the memory and
 * sorting of a one-county file).
 */
export async function statsOfFile(
  path: string,
  byCounty = true,
): Promise<{run: StatsReport; counties: Array<{fips: string; report: StatsReport}>}> {
  const {files} = await exportFiles(path)
  const groups = byCounty ? new GroupedStats() : undefined
  const all = groups?.all ?? new StatsAccumulator()
  const facts = emptyFacts()
  for (const file of files) {
    const county = file.fips
    if (county !== undefined) groups?.open(county)
    try {
      for await (const rec of readExport(file.path, file.format)) {
        if (!groups) {
          all.add(factsOfFlat(rec, facts))
          continue
        }
        const fips = county ?? rec['Fips']
        groups.add(fips === null || fips === undefined ? '(none)' : String(fips), factsOfFlat(rec, facts))
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (typeof code === 'string' && !(error instanceof ExportFileError))
        throw new ExportFileError(`${file.path}: cannot be read (${code})`)
      throw error
    }
  }
  const counties = groups?.reports().map(({key, report}) => ({fips: key, report})) ?? []
  return {run: all.report(), counties}
}
