/**
 * An `--out-dir` as a run writes and reads it: a local folder, or an `s3://bucket/prefix` (issue 34). The
 * run names its files by their path relative to the folder (`state=CA/fips=06067/data.csv`, the manifest)
 * and writes them through the output gate (src/io/output.ts `openOutput`, `writeOutputFile` on `at(rel)`),
 * so one code path keeps every promise for both. What differs is here:
 * - before a file is written (`prepare`): a local folder's partition folders are entered on the folder
 *   rule (src/io/folder-trust.ts) and a temp left by a killed run is removed; a prefix needs neither (a
 *   key has no folders to plant, and uploads a killed run left are aborted when the run starts);
 * - what is there (`present`): a stat per file, or one listing of the prefix for the whole run (so
 *   `--max-age` costs the store one request, not one per county, and the service none);
 * - a file read back whole (`local`: the columns of an earlier run's file, a resumed run's statistics):
 *   the file itself, or a private copy of the object in the run's own folder, removed after.
 */
export interface ExportDir {
  /** As the user gave it, for messages. */
  readonly shown: string
  /** The path, or the `s3://` location, of the folder's file `rel` (forward slashes). */
  at(rel: string): string
  /** Make ready for writing `rel`: its partition folders entered, a stale temp of it removed. */
  prepare(rel: string): Promise<void>
  /** The text of `rel`, or undefined when there is none. */
  readText(rel: string): Promise<string | undefined>
  /** What is there now, asked once: a test for a relative path. */
  present(): Promise<(rel: string) => boolean>
  /** A local file with the bytes of `rel` (a private copy in `scratch` for a prefix), or undefined. */
  local(rel: string, scratch: string): Promise<LocalFile | undefined>
  /** Remove the file `rel` (a regular file or an object; nothing when it is gone): a moved manifest. */
  remove(rel: string): Promise<void>
}

export interface LocalFile {
  path: string
  /** Drop the copy (nothing for a local folder's own file). */
  release(): Promise<void>
}
