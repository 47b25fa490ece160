import {readFile, stat} from 'node:fs/promises'
import {join, resolve} from 'node:path'

import {isFileFormat, reads} from '../model/formats.js'
import {ExportFileError, exportFormatOf, formatFromName, type ExportFileFormat} from './export-reader.js'
import {parseManifest} from './manifest.js'
import {exportFolderOf, isManifestName, MANIFEST_PLACES} from './out-dir-layout.js'

/**
 * What an export argument names, for every command that reads exports back (`sfl changes`,
 * `county-export --changes-since`, `sfl stats`): an export file (CSV, NDJSON, JSON or Parquet), an `--out-dir`
 * folder, or that folder's manifest (`_sfl/manifest.json`, or an earlier sfl's `manifest.json`). One resolver, so every reader accepts the same inputs and says
 * the same thing when one is wrong (exit 2: ExportFileError is a usage error).
 */
export interface ExportFiles {
  /** The manifest when the argument is an `--out-dir` folder or its manifest.json. */
  manifest: string | undefined
  /** The files to read, in order: the manifest's county files (each with its county), or the one file. */
  files: Array<{path: string; fips?: string; format?: ExportFileFormat | undefined}>
}

/**
 * Resolve an export argument into its files; every file of a manifest is checked to exist first.
 *
 * @example
 * await exportFiles('exports') // {manifest: 'exports/_sfl/manifest.json', files: [{path, fips: '06067', ...}]}
 */
export async function exportFiles(path: string): Promise<ExportFiles> {
  const manifest = await manifestPathOf(path)
  if (!manifest) return {manifest, files: [{path}]}
  const {format, counties} = await readManifest(manifest)
  // a county file's own extension first (the manifest's format covers files named otherwise)
  const files = counties.map((c) => ({path: c.path, fips: c.fips, format: formatFromName(c.path) ?? format}))
  return {manifest, files}
}

/**
 * Whether every file of the exports `paths` (an export file, or a folder's county files by its manifest)
 * is Parquet; false for anything it cannot tell (the run that asks says what is wrong with it), and for
 * anything but a regular file, which is never opened here (a named pipe would wait for its writer before
 * the export gate refuses it). The CLI raises V8's budget for such runs (src/cli/jit-budget.ts).
 */
export async function allParquet(paths: readonly string[]): Promise<boolean> {
  try {
    for (const p of paths) {
      const {files} = await exportFiles(p)
      for (const f of files) {
        if (!(await stat(f.path)).isFile()) return false
        if ((f.format ?? (await exportFormatOf(f.path))) !== 'parquet') return false
      }
    }
    return paths.length > 0
  } catch {
    return false
  }
}

/** A county of a manifest and its file (an absolute path). */
export interface ManifestCounty {
  fips: string
  path: string
}

/**
 * `DIR/_sfl/manifest.json` of an `--out-dir` export (an earlier sfl's `DIR/manifest.json` when that is
 * absent: src/io/out-dir-layout.ts), or the manifest itself; undefined for an export file.
 */
export async function manifestPathOf(path: string): Promise<string | undefined> {
  const s = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new ExportFileError(
      error.code === 'ENOENT' ? `${path}: no such file or folder` : `${path}: cannot be read (${error.code})`,
    )
  })
  if (s.isDirectory()) {
    for (const rel of MANIFEST_PLACES) {
      const m = join(path, rel)
      if ((await stat(m).catch(() => undefined))?.isFile()) return m
    }
    throw new ExportFileError(
      `${path} is a folder without _sfl/manifest.json; give an export file or an --out-dir folder`,
    )
  }
  return isManifestName(path) ? path : undefined
}

/**
 * Read and check an `--out-dir` manifest: `{"version":1,"format":"csv","counties":[{"fips","path",…}]}`,
 * paths relative to its export folder (the parent of `_sfl/`). Every county file must exist (checked before anything is compared).
 */
export async function readManifest(
  manifest: string,
): Promise<{format: ExportFileFormat | undefined; counties: ManifestCounty[]}> {
  let text: string
  try {
    text = await readFile(manifest, 'utf8')
  } catch (error) {
    throw new ExportFileError(`${manifest}: not a readable manifest (${(error as Error).message})`)
  }
  const m = parseManifest(text)
  if ('problem' in m) throw new ExportFileError(`${manifest}: ${m.problem}`)
  const dir = exportFolderOf(manifest)
  const counties: ManifestCounty[] = []
  for (const e of m.counties) {
    const file = resolve(dir, e.path)
    if (!(await stat(file).catch(() => undefined))?.isFile())
      throw new ExportFileError(`${manifest}: the file of county ${e.fips} (${e.path}) is missing`)
    counties.push({fips: e.fips, path: file})
  }
  const format = isFileFormat(m.format) && reads('changes', m.format) ? m.format : undefined
  return {format, counties}
}
