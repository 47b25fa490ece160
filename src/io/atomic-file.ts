import {
  closeSync,
  constants,
  createWriteStream,
  fchmodSync,
  fstatSync,
  fsyncSync,
  truncateSync,
  openSync,
  renameSync,
  rmSync,
  type WriteStream,
} from 'node:fs'
import {link, open, readdir, rename, rm, type FileHandle} from 'node:fs/promises'
import {basename, dirname, join} from 'node:path'

import {runExitCleanups} from './exit-cleanup.js'
import {localIoError} from './fs-errors.js'
import {EXCLUSIVE, tempPathFor} from './private-sync.js'
import {assertReplaceable} from './target-kind.js'

export {tempPathFor}

/**
 * Every file sfl writes beside a user's file (output, checkpoint, config) is first written to a temp file
 * that is created exclusively (O_EXCL: never an existing file, O_NOFOLLOW: never through a planted
 * symlink) under an unpredictable name, flushed to disk (fsync) and only then renamed over the target, so a
 * reader sees the old file or the whole new one, and another local user cannot redirect the write. Just
 * before the rename the target is looked at again (src/io/target-kind.ts assertReplaceable): a FIFO, a
 * device or a folder that appeared there meanwhile is never replaced.
 */

/** Temp files not yet renamed or removed: a second Ctrl-C removes them synchronously before exiting. */
const live = new Set<string>()

/** Open `path` for writing only if nothing (not even a dangling symlink) is there. */
export async function openExclusive(path: string, mode: number): Promise<FileHandle> {
  return open(path, EXCLUSIVE, mode)
}

/**
 * Create `path` holding `data` only if nothing is there (not even a dangling link), in one step: the data
 * goes to an exclusive temp file first, which is then hard-linked to `path` (link(2) fails with EEXIST
 * when the name is taken), so no reader ever sees `path` empty or half written (a lock, a lock's claim:
 * src/jobs/lock.ts). Throws the EEXIST as it comes; on a file system without hard links, `path` is
 * created exclusively and written in place.
 */
export async function createExclusiveWith(path: string, data: string, mode: number): Promise<void> {
  const tmp = tempPathFor(path)
  const fh = await openExclusive(tmp, mode)
  try {
    await fh.writeFile(data)
  } finally {
    await fh.close()
  }
  try {
    await link(tmp, path)
  } catch (error) {
    const code = (error as {code?: unknown}).code
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error
    const direct = await openExclusive(path, mode)
    try {
      await direct.writeFile(data)
    } finally {
      await direct.close()
    }
  } finally {
    await rm(tmp, {force: true})
  }
}

/** A file being written beside its target; `commit` makes it the target, `abort` removes it. */
export class AtomicFile {
  private fd: number | undefined
  private committed = false

  private constructor(
    readonly target: string,
    readonly tmp: string,
    fd: number,
    /** The stream to write to (backpressure as usual); it does not close the descriptor. */
    readonly stream: WriteStream,
    /** An adopted file: its length before this writer appended, and the mode it gets on commit. */
    private readonly adopted?: {size: number; mode: number},
  ) {
    this.fd = fd
    // errors surface through the owner's listener or through commit(); never as an uncaught event
    stream.on('error', () => undefined)
  }

  /**
   * Make a file the run already wrote (a part file in its own 0700 folder on the target's file system)
   * the start of the target: appended to, then fsynced, given the target's mode and renamed, which saves
   * copying its bytes. `abort` cuts it back to its length and keeps it, so the checkpoint still holds.
   */
  static adopt(path: string, target: string, mode = 0o644): AtomicFile {
    let fd: number
    try {
      fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW)
    } catch (error) {
      throw localIoError(error, 'writing', target)
    }
    const size = fstatSync(fd).size
    const stream = createWriteStream('', {fd, autoClose: false, highWaterMark: 1 << 20})
    // the mode a new file gets: what the umask leaves of `mode` (process.umask() only reads it here)
    return new AtomicFile(target, path, fd, stream, {size, mode: mode & ~process.umask()})
  }

  static async create(target: string, mode = 0o644): Promise<AtomicFile> {
    const tmp = tempPathFor(target)
    let fd: number
    try {
      fd = openSync(tmp, EXCLUSIVE, mode)
    } catch (error) {
      throw localIoError(error, 'creating a temp file for', target)
    }
    live.add(tmp)
    const stream = createWriteStream('', {fd, autoClose: false, highWaterMark: 1 << 20})
    return new AtomicFile(target, tmp, fd, stream)
  }

  /** Flush, fsync and rename over the target. */
  async commit(): Promise<void> {
    try {
      await new Promise<void>((resolve, reject) => {
        if (this.stream.errored) return reject(this.stream.errored)
        this.stream.once('error', reject)
        // end's callback is also called when the last writes fail (a disk that fills at the very end):
        // resolving then would rename a cut-short file over the target
        this.stream.end((error?: Error | null) => (error ? reject(error) : resolve()))
      })
      if (this.stream.errored) throw this.stream.errored
      fsyncSync(this.fd!)
      if (this.adopted) fchmodSync(this.fd!, this.adopted.mode)
      await assertReplaceable(this.target)
      renameSync(this.tmp, this.target)
      this.committed = true
      this.closeFd()
      live.delete(this.tmp)
    } catch (error) {
      await this.abort()
      throw localIoError(error, 'writing', this.target)
    }
  }

  /** Remove the temp file (the target is untouched). Safe to call more than once. */
  async abort(): Promise<void> {
    if (!this.stream.closed && this.fd !== undefined) {
      await new Promise<void>((resolve) => {
        // destroy() waits for a write in flight, then closes the descriptor itself
        this.stream.once('close', resolve)
        this.stream.destroy()
      })
      this.fd = undefined
    }
    if (this.adopted) {
      // the part file goes back to what the checkpoint says it holds (unless it already became the target)
      if (!this.committed) truncateSync(this.tmp, this.adopted.size)
      this.closeFd()
      return
    }
    this.closeFd()
    await rm(this.tmp, {force: true})
    live.delete(this.tmp)
  }

  private closeFd(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}

/**
 * Remove temp files of `target` left by a process killed mid-write (kill -9 gives no chance to clean up).
 * Only for a caller that holds the run's lock on the folder (--out-dir): no other writer of `target` can be
 * at work, so every `.<name>.sfl-tmp-<16 hex>` beside it is stale. Anything else in the folder is left alone.
 */
export async function removeStaleTemps(target: string): Promise<void> {
  const dir = dirname(target)
  const prefix = `.${basename(target)}.sfl-tmp-`
  const names = await readdir(dir).catch(() => [] as string[])
  for (const name of names)
    if (name.startsWith(prefix) && /^[0-9a-f]{16}$/.test(name.slice(prefix.length)))
      // best effort: in a shared sticky folder a name like it may be another user's (not ours to remove)
      await rm(join(dir, name), {force: true}).catch(() => undefined)
}

/** Write a small file atomically (checkpoint header, config): exclusive temp, fsync, rename. */
export async function writeFileAtomic(target: string, data: string, mode = 0o600): Promise<void> {
  const tmp = tempPathFor(target)
  let handle: FileHandle | undefined
  try {
    handle = await openExclusive(tmp, mode)
    live.add(tmp)
    await handle.writeFile(data)
    await handle.sync()
    await handle.close()
    handle = undefined
    await assertReplaceable(target)
    await rename(tmp, target)
    live.delete(tmp)
  } catch (error) {
    await handle?.close().catch(() => undefined)
    await rm(tmp, {force: true})
    live.delete(tmp)
    throw localIoError(error, 'writing', target)
  }
}

/**
 * A second Ctrl-C exits at once: remove every temp file first, then whatever else was registered
 * (src/io/exit-cleanup.ts: locks, scratch folders), synchronously, nothing else runs after.
 */
export function removeTempFilesSync(): void {
  for (const tmp of live) rmSync(tmp, {force: true})
  live.clear()
  runExitCleanups()
}

// the gate's kind rule and the --out-dir folder rule live in their own files; their first users import them here
export {assertWritableTarget, type OutKind} from './target-kind.js'
export {prepareOutDir} from './folder-trust.js'
