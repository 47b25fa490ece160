import {posix} from 'node:path'

/**
 * What goes where in an `--out-dir` folder (issue 32, "Folders any reader opens"). The folder is a Hive
 * dataset: only county files live where dataset readers look (`state=CA/fips=06067/data.parquet`).
 * Everything else sfl writes there is under `_sfl/`, a name Spark, Hive and pyarrow/pandas
 * (`ignore_prefixes`) skip, as they skip `.` names (the checkpoint, lock and parts folder of a run,
 * src/jobs/journal.ts, and the output gate's temp files already start with `.`), and that the
 * recursive `.parquet` globs of DuckDB and polars never match. (polars given the folder itself lists `_sfl/`
 * too and refuses the mix: docs/exports.md gives it the glob.)
 * - `_sfl/manifest.json`, the counties written (src/io/manifest.ts);
 * - `_sfl/rejects.ndjson`, records a run skipped;
 * - `_sfl/changes.<ext>`, the change file of `--changes-since` when `--changes-out` is not given.
 * sfl before 0.3 wrote `manifest.json` (and `rejects.ndjson`, `changes.<ext>`) at the root: every reader
 * of a manifest still finds one there when `_sfl/manifest.json` is absent, and a run into such a folder
 * moves it (src/io/manifest.ts ManifestFile). Pure: names only.
 */
export const SIDE_DIR = '_sfl'

/** The manifest's file name, wherever it lies. */
export const MANIFEST_FILE = 'manifest.json'

/** Where a run writes the manifest, relative to the folder. */
export const MANIFEST = `${SIDE_DIR}/${MANIFEST_FILE}`

/** Where sfl before 0.3 wrote it: read when `MANIFEST` is absent, removed once moved. */
export const LEGACY_MANIFEST = MANIFEST_FILE

/** The places a manifest is looked for, in order (relative to the folder). */
export const MANIFEST_PLACES: readonly string[] = [MANIFEST, LEGACY_MANIFEST]

/** The skipped records of a run (relative to the folder). */
export const REJECTS = `${SIDE_DIR}/rejects.ndjson`

/** `--changes-since`'s change file when `--changes-out` is not given (relative to the folder). */
export function changesFile(ext: string): string {
  return `${SIDE_DIR}/changes.${ext}`
}

/**
 * The export folder of a manifest's path (`exports/_sfl/manifest.json` or an earlier sfl's
 * `exports/manifest.json`: `exports`): the folder the manifest's county paths are relative to. Local
 * paths and object keys alike (either separator).
 */
export function exportFolderOf(manifest: string): string {
  const parent = manifest.replace(/[/\\]*[^/\\]*$/, '')
  const name = parent.slice(Math.max(parent.lastIndexOf('/'), parent.lastIndexOf('\\')) + 1)
  if (name !== SIDE_DIR) return parent === '' ? '.' : parent
  const up = parent.replace(/[/\\]*[^/\\]*$/, '')
  return up === '' ? (posix.isAbsolute(parent) ? '/' : '.') : up
}

/** Is `path` (a local path or a key) a manifest by its name: `…/manifest.json`? */
export function isManifestName(path: string): boolean {
  return /(^|[/\\])manifest\.json$/.test(path)
}
