import {existsSync} from 'node:fs'
import {lstat, readFile} from 'node:fs/promises'
import {join} from 'node:path'

import {UsageError} from '../errors.js'
import {isObjectUrl} from '../text/object-url.js'
import {removeStaleTemps} from './atomic-file.js'
import type {ExportDir} from './export-dir-types.js'
import {enterPartitions} from './folder-trust.js'
import {removeFile} from './private-files.js'

export type {ExportDir, LocalFile} from './export-dir-types.js'

/** A file of an output folder, local or `s3://`: `outPath('s3://b/2026-11', '_sfl/manifest.json')`. */
export function outPath(dir: string, rel: string): string {
  return isObjectUrl(dir) ? `${dir.replace(/\/*$/, '/')}${rel}` : join(dir, rel)
}

/** The folder `dir` names; an `s3://` prefix loads the object store (nothing of it otherwise). */
export async function openExportDir(dir: string): Promise<ExportDir> {
  if (isObjectUrl(dir)) return (await import('./object-store.js')).objectExportDir(dir)
  return localExportDir(dir)
}

/**
 * Where a run writing the `s3://` location `value` (`--out-dir` when `prefix`) keeps its checkpoint, on
 * this machine under `stateRoot` (src/io/object-store.ts); undefined for a local path, whose checkpoint
 * is beside it. Makes nothing and sends nothing: for the dry run, which reads the checkpoint the run would.
 */
export async function objectRunStateDir(
  value: string,
  prefix: boolean,
  stateRoot?: string,
): Promise<string | undefined> {
  if (!isObjectUrl(value)) return undefined
  return (await import('./object-store.js')).objectStateDir(value, {prefix, stateRoot})
}

function localExportDir(dir: string): ExportDir {
  return {
    shown: dir,
    at: (rel) => join(dir, rel),
    async prepare(rel) {
      // state=CA/fips=06067: real folders of the user's only (src/io/folder-trust.ts), never a planted link
      await enterPartitions(dir, rel)
      // the run holds the folder's lock: a temp of this file left by a killed run is stale
      await removeStaleTemps(join(dir, rel))
    },
    async readText(rel) {
      const path = join(dir, rel)
      try {
        return await readFile(path, 'utf8')
      } catch (error) {
        if ((error as {code?: string}).code === 'ENOENT') return undefined
        throw new UsageError(`cannot read ${path}: ${(error as Error).message}`)
      }
    },
    present: async () => (rel) => existsSync(join(dir, rel)),
    async local(rel) {
      const path = join(dir, rel)
      return existsSync(path) ? {path, release: async () => undefined} : undefined
    },
    async remove(rel) {
      const path = join(dir, rel)
      // a regular file only: a FIFO, device or link planted in the old manifest's place is left alone
      if ((await lstat(path).catch(() => undefined))?.isFile()) await removeFile(path)
    },
  }
}
