import {stat} from 'node:fs/promises'

import {ExportFileError, readExport} from '../io/export-reader.js'
import {emptyFacts} from '../stats/accumulator.js'
import {factsOfFlat} from '../stats/facts.js'
import {GroupedStats} from '../stats/grouped.js'
import type {StatsReport} from '../stats/accumulator.js'

/**
 * `sfl stats FILE`: the run statistics of an existing export (CSV, NDJSON or our JSON), read as a stream
 * through src/io/export-reader.ts, so memory stays flat whatever the file's size. By county: grouped by the
 * Fips field (exports hold each county together, but nothing here relies on it: src/stats/grouped.ts).
 */
export async function statsOfFile(
  path: string,
): Promise<{run: StatsReport; counties: Array<{fips: string; report: StatsReport}>}> {
  const st = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new ExportFileError(
      error.code === 'ENOENT'
        ? `${path}: no such file`
        : `${path}: cannot be read (${error.code ?? error.message})`,
    )
  })
  if (st.isDirectory()) throw new ExportFileError(`${path}: is a directory, not an export file`)
  const groups = new GroupedStats()
  const facts = emptyFacts()
  try {
    for await (const rec of readExport(path)) {
      const fips = rec['Fips']
      groups.add(fips === null || fips === undefined ? '(none)' : String(fips), factsOfFlat(rec, facts))
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (typeof code === 'string' && !(error instanceof ExportFileError))
      throw new ExportFileError(`${path}: cannot be read (${code})`)
    throw error
  }
  return {run: groups.all.report(), counties: groups.reports().map(({key, report}) => ({fips: key, report}))}
}
