import {exportFormatOf, readExport} from '../io/export-reader.js'
import type {ScanFile} from './scan.js'
import {exportFiles, manifestPathOf, readManifest} from '../io/export-files.js'

/**
 * Check that `path` can be read as a side before anything else happens (a request, a long read of the
 * other side): it exists, and its first record (of each county file, for a manifest) can be read. A
 * Parquet file is checked by its footer and its first pages' headers (src/io/parquet-reader.ts
 * `pagesLookWhole`), nothing decompressed: what the check costs is paid again by the scan. `counties`: the
 * counties compared (--fips); a manifest's county file of another is not read, as the comparison does not
 * read it (src/changes/compare.ts `askedFiles`).
 */
export async function checkSide(path: string, counties?: readonly string[]): Promise<void> {
  const manifest = await manifestPathOf(path)
  const asked = counties && new Set(counties)
  const files = manifest
    ? (await readManifest(manifest)).counties.filter((c) => !asked || asked.has(c.fips)).map((c) => c.path)
    : [path]
  for (const f of files) {
    if ((await exportFormatOf(f).catch(() => undefined)) === 'parquet') {
      const {pagesLookWhole} = await import('../io/parquet-reader.js')
      if (await pagesLookWhole(f)) continue
    }
    const records = readExport(f)
    await records.next()
    await records.return(undefined)
  }
}

/**
 * A side's files for the scan (src/changes/scan.ts), each with its format (src/io/export-files.ts
 * resolves the argument, as for `sfl stats`): a manifest's county files, each its county's, with the
 * manifest's counties in order, or the one export file, whose counties are its records' Fips.
 */
export async function sideFiles(path: string): Promise<{files: ScanFile[]; counties?: string[]}> {
  const {manifest, files} = await exportFiles(path)
  const out: ScanFile[] = []
  for (const f of files)
    out.push({path: f.path, format: f.format ?? (await exportFormatOf(f.path)), group: f.fips})
  if (!manifest) return {files: out}
  return {files: out, counties: [...new Set(files.map((f) => f.fips ?? ''))]}
}
