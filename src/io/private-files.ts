import {
  closeSync,
  constants,
  createWriteStream,
  fstatSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  writeSync,
  type Stats,
  type WriteStream,
} from 'node:fs'
import {lstat, mkdir, rm, rmdir} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pipeline} from 'node:stream/promises'

import {UsageError} from '../errors.js'
import {onImmediateExit} from './exit-cleanup.js'
import {localIoError} from './fs-errors.js'
import {ownerProblem} from './owner-rule.js'
import {removeTreeSync} from './private-sync.js'

/**
 * The output gate's primitives for a run's private files (src/io/output.ts says what the gate is): the
 * checkpoint, the parts folder and its part files, scratch folders, the stdin copy of a batch, the change
 * comparison's scratch files, the config's folder. Folders are 0700 and files 0600 from their first byte,
 * created exclusively or never through a link (O_NOFOLLOW), and a folder or checkpoint found in place is
 * used only when it is this user's (or root's) and no other user may write it (src/io/owner-rule.ts):
 * in a shared folder another user could otherwise plant a checkpoint the run trusts, or a parts folder
 * that is a link to a folder of yours.
 */

/** Why a file or folder found in place is not this user's private one, or undefined. */
function notPrivate(st: Stats, folder: boolean): string | undefined {
  if (st.isSymbolicLink()) return 'it is a symbolic link'
  if (folder ? !st.isDirectory() : !st.isFile()) return `it is not a ${folder ? 'folder' : 'regular file'}`
  const uid = process.getuid?.()
  // Windows has no uid and no mode bits to check
  const p = uid === undefined ? undefined : ownerProblem(st, uid)
  if (p?.kind === 'owner') return `it belongs to another user (uid ${p.uid})`
  if (p?.kind === 'writable') return `other users may write it (mode ${p.mode.toString(8)})`
  return undefined
}

function refuse(what: string, path: string, why: string, folder: boolean): UsageError {
  return new UsageError(
    `refusing to use ${what} ${path}: ${why}, so another user could have made or changed it; remove it (rm ${folder ? '-r ' : ''}${path}) or write elsewhere, and run again`,
  )
}

/** Create a folder 0700 (with its missing parents when `recursive`); one that exists is left as it is. */
export async function createPrivateDir(dir: string, opts: {recursive?: boolean} = {}): Promise<void> {
  try {
    await mkdir(dir, {recursive: opts.recursive ?? false, mode: 0o700})
  } catch (error) {
    if ((error as {code?: string}).code !== 'EEXIST') throw localIoError(error, 'creating', dir)
  }
}

/**
 * One folder level made 0700 (never a recursive mkdir: the caller says which levels it may make); one that
 * exists is fine, any other failure is thrown as the system gave it, for the caller to word.
 */
export async function makeDirLevel(dir: string): Promise<void> {
  try {
    await mkdir(dir, {mode: 0o700})
  } catch (error) {
    if ((error as {code?: string}).code !== 'EEXIST') throw error
  }
}

/**
 * A private folder of the run (the parts folder): made 0700 when missing, and used only when it is a
 * real folder of this user's that no other user may write. Exit 2 otherwise, naming it and the fix.
 */
export async function makePrivateDir(dir: string, what: string): Promise<void> {
  await createPrivateDir(dir)
  let st: Stats
  try {
    st = await lstat(dir)
  } catch (error) {
    throw localIoError(error, 'creating', dir)
  }
  const why = notPrivate(st, true)
  if (why) throw refuse(what, dir, why, true)
}

/**
 * A private file of the run that may already exist (the checkpoint): its stat when it is a regular file of
 * this user's that no other user may write, undefined when there is none, a usage error otherwise.
 */
export async function statPrivateFile(path: string, what: string): Promise<Stats | undefined> {
  const st = await lstat(path).catch(() => undefined)
  if (!st) return undefined
  const why = notPrivate(st, false)
  if (why) throw refuse(what, path, why, false)
  return st
}

/** A run's scratch folder: where it is, and its removal (which also ends its removal at an immediate exit). */
export interface ScratchDir {
  readonly path: string
  remove(): Promise<void>
}

/**
 * A fresh folder in the system's temp folder, 0700 (mkdtemp), for a run that writes nothing beside its
 * output, removed by an immediate exit (Ctrl-C: src/io/exit-cleanup.ts) from the moment it exists. It is made and its removal registered in one synchronous step, so no signal's handler runs
 * between them: with an await there a Ctrl-C could land after the folder was made and before its removal
 * was registered, and leave it behind (test/e2e/changes.e2e.test.ts, "Ctrl-C during a comparison").
 */
export function makeScratchDir(prefix: string): ScratchDir {
  let path: string
  try {
    path = mkdtempSync(join(tmpdir(), prefix))
  } catch (error) {
    throw localIoError(error, 'creating a temp folder in', tmpdir())
  }
  const forget = onImmediateExit(() => removeTreeSync(path))
  return {
    path,
    remove: async () => {
      await removeTree(path)
      forget()
    },
  }
}

/** Remove a folder of the run's own and everything in it (a link in its place is removed, never followed). */
export async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, {recursive: true, force: true})
  } catch (error) {
    throw localIoError(error, 'removing', path)
  }
}

/**
 * Remove a folder of the run's own if it is empty; false when something is in it (another run has begun
 * there) or it is gone. Never removes what is inside.
 */
export async function removeEmptyDir(path: string): Promise<boolean> {
  try {
    await rmdir(path)
    return true
  } catch (error) {
    const code = (error as {code?: string}).code
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT') return false
    throw localIoError(error, 'removing', path)
  }
}

/** Remove a file of the run's own (no error when it is gone already). */
export async function removeFile(path: string): Promise<void> {
  try {
    await rm(path, {force: true})
  } catch (error) {
    throw localIoError(error, 'removing', path)
  }
}

const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW

/**
 * A private file appended to synchronously (the checkpoint, the change comparison's scratch files): 0600,
 * never opened through a link; `fresh` creates it exclusively (nothing may be there). Errors are thrown as
 * the system gives them: the caller names what it was doing.
 */
export class AppendFile {
  private constructor(
    readonly path: string,
    private fd: number | undefined,
  ) {}

  static open(path: string, opts: {fresh?: boolean} = {}): AppendFile {
    const fd = openSync(path, opts.fresh ? APPEND | constants.O_EXCL : APPEND, 0o600)
    try {
      // O_NOFOLLOW keeps a link out; an existing file must also be a regular file of this user's
      const why = notPrivate(fstatSync(fd), false)
      if (why) throw refuse('the file', path, why, false)
    } catch (error) {
      closeSync(fd)
      throw error
    }
    return new AppendFile(path, fd)
  }

  /** Append `data` (or `length` bytes of it from `offset`) whole. */
  write(data: string | Uint8Array, offset = 0, length?: number): void {
    if (typeof data === 'string') writeSync(this.fd!, data)
    else writeSync(this.fd!, data, offset, length ?? data.length - offset)
  }

  /** Cut the file to `size` bytes (a line a crash cut short, dropped before appending). */
  truncate(size: number): void {
    ftruncateSync(this.fd!, size)
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}

/** `APPEND` once for a scratch file written in one go: open, append, close. */
export function appendOnce(path: string, data: Uint8Array, offset: number, length: number): void {
  const f = AppendFile.open(path)
  try {
    f.write(data, offset, length)
  } finally {
    f.close()
  }
}

const FRESH = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW

/**
 * A part file of the run (in its 0700 parts folder), written through a stream that owns the descriptor:
 * created 0600 or cut to nothing (a retried page starts its part afresh), never through a link. The
 * descriptor is returned too, for the write-back hint of an NDJSON part (src/pipeline/spool.ts).
 */
export function openPartStream(path: string): {fd: number; stream: WriteStream} {
  // a numeric fd owned by the stream (a FileHandle would be closed again when collected)
  const fd = openSync(path, FRESH, 0o600)
  return {fd, stream: createWriteStream('', {fd, highWaterMark: 1 << 20})}
}

/**
 * Copy a stream (`--input -`) to a private file in a fresh scratch folder, since it is read more than
 * once. Returns the file and the removal of its folder; on a failure the folder is gone already.
 */
export async function copyToScratch(
  from: NodeJS.ReadableStream,
  prefix: string,
): Promise<{path: string; cleanup: () => Promise<void>}> {
  const dir = makeScratchDir(prefix)
  const path = join(dir.path, 'stdin')
  const cleanup = () => dir.remove()
  try {
    await streamToPrivateFile(from, path)
  } catch (error) {
    await cleanup()
    throw error
  }
  return {path, cleanup}
}

/**
 * Write a stream to a new private file of the run's own (a decoded input in its scratch folder): 0600,
 * created exclusively, so nothing already there (not even a dangling link) is written through.
 */
export async function streamToPrivateFile(from: NodeJS.ReadableStream, path: string): Promise<void> {
  await pipeline(from, createWriteStream(path, {flags: 'wx', mode: 0o600}))
}
