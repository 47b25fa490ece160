import {rename, rm, writeFile} from 'node:fs/promises'
import {basename, dirname, join} from 'node:path'

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
