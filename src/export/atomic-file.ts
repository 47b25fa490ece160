import {rename, rm, stat, writeFile} from 'node:fs/promises'
import {basename, dirname, join} from 'node:path'

import {UsageError} from '../api/errors.js'

/** A temporary path beside `target` (same filesystem, so the final rename is atomic). */
export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.sfl-tmp-${process.pid}`)
}

/** Write a small file atomically: temp file, then rename over the target. */
export async function writeFileAtomic(target: string, data: string, mode = 0o600): Promise<void> {
  const tmp = tempPathFor(target)
  try {
    await writeFile(tmp, data, {mode})
    await rename(tmp, target)
  } catch (error) {
    await rm(tmp, {force: true})
    throw error
  }
}

/** Check, before any request, that --out can be written: its folder exists and it is not a folder itself. */
export async function assertWritableTarget(out: string): Promise<void> {
  const dir = dirname(out)
  const d = await stat(dir).catch(() => undefined)
  if (!d?.isDirectory())
    throw new UsageError(`--out ${out}: the folder ${dir} does not exist; create it first`)
  const f = await stat(out).catch(() => undefined)
  if (f?.isDirectory()) throw new UsageError(`--out ${out} is a folder; give a file name`)
}
