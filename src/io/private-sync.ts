import {
  closeSync,
  constants,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs'
import {basename, dirname, join} from 'node:path'

import {ownerProblem} from './owner-rule.js'

/**
 * The output gate's synchronous primitives for files only sfl reads back (src/io/output.ts says what the
 * gate is): a private folder, a file written whole under an exclusive temp name, a removal. They import
 * nothing but Node's built-ins and the owner rule, because the CLI's entry bundles them (the code cache,
 * src/cli/code-cache.ts; scripts/build.mjs lists what the entry may hold), and because a second Ctrl-C
 * cleans up synchronously (src/io/atomic-file.ts removeTempFilesSync).
 */

/** Created exclusively (never an existing file, not even a dangling symlink) and never through a link. */
export const EXCLUSIVE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

// node:crypto loads only when a temp name is needed: the entry that bundles this answers `sfl --version`
const random = (bytes: number) => process.getBuiltinModule('node:crypto').randomBytes(bytes).toString('hex')

/**
 * A fresh, unpredictable temp path beside `target` (same folder, so the rename is atomic):
 * `.<name>.sfl-tmp-<16 hex>`, the shape src/io/atomic-file.ts removeStaleTemps recognises.
 */
export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.sfl-tmp-${random(8)}`)
}

/**
 * A folder only this user can write: made 0700 when missing (with its missing parents when `recursive`),
 * then taken only when it is a real folder (not a symlink) of this user's (not root's: `rootOk`) that
 * neither group nor others may write. False when it cannot be made or is not such a folder.
 */
export function makePrivateDirSync(dir: string, opts: {recursive?: boolean; rootOk?: boolean} = {}): boolean {
  try {
    mkdirSync(dir, {recursive: opts.recursive ?? false, mode: 0o700})
  } catch (error) {
    if ((error as {code?: string}).code !== 'EEXIST') return false
  }
  try {
    const st = lstatSync(dir)
    if (!st.isDirectory()) return false
    const uid = process.getuid?.()
    // Windows has no uid and no mode bits: the folder is under the user's own profile (LOCALAPPDATA)
    return uid === undefined || ownerProblem(st, uid, {rootOk: opts.rootOk ?? false}) === undefined
  } catch {
    return false
  }
}

/**
 * Write `data` as `target` whole: an exclusive temp file beside it (mode `mode`), then renamed over it, so
 * a reader sees the old file or the new one. `sync: false` skips the fsync where a damaged file is caught
 * on reading (the code cache is sealed with its SHA-256). Throws what failed; the temp file is gone then.
 */
export function writeFileAtomicSync(
  target: string,
  data: Uint8Array,
  opts: {mode?: number; sync?: boolean} = {},
): void {
  const tmp = tempPathFor(target)
  let fd: number | undefined
  try {
    fd = openSync(tmp, EXCLUSIVE, opts.mode ?? 0o600)
    for (let at = 0; at < data.length;) at += writeSync(fd, data, at, data.length - at)
    if (opts.sync ?? true) fsyncSync(fd)
    closeSync(fd)
    fd = undefined
    renameSync(tmp, target)
  } catch (error) {
    if (fd !== undefined) closeSync(fd)
    rmSync(tmp, {force: true})
    throw error
  }
}

/** Remove a file of the run's own (no error when it is gone already). */
export function removeFileSync(path: string): void {
  rmSync(path, {force: true})
}

/**
 * Remove a folder of the run's own and everything in it (a link is removed, never followed). Tried again
 * when a file appeared in it meanwhile (ENOTEMPTY): Ctrl-C removes a comparison's scratch folder while its
 * scan worker may still be making its first files there (nothing makes the folder itself again).
 */
export function removeTreeSync(path: string): void {
  for (let attempt = 1; ; attempt++) {
    try {
      rmSync(path, {recursive: true, force: true})
      return
    } catch (error) {
      if ((error as {code?: string}).code !== 'ENOTEMPTY' || attempt === 5) throw error
    }
  }
}
