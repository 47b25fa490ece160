import {fstatSync, lstatSync, statSync, type Stats} from 'node:fs'
import {dirname} from 'node:path'

import {LocalIoError, UsageError} from '../errors.js'
import {isObjectUrl} from '../text/object-url.js'
import {ownerProblem} from './owner-rule.js'

/**
 * What a path sfl writes names, decided here and nowhere else (`--out`, an `--out-dir` county file,
 * `--stats-json`, a change file, the manifest, the rejects):
 * - a regular file, or nothing yet: written atomically beside itself (an exclusive temp, fsync, rename);
 * - a stream: a FIFO, a character device (/dev/null), a socket, or a descriptor the shell opened
 *   (/dev/stdout, /dev/fd/N, /proc/self/fd/N): written into in order, never replaced (a rename over it
 *   would swap the FIFO or device for a regular file: as root, `--out /dev/null` would replace /dev/null);
 * - a block device or a folder: refused (exit 2);
 * - `s3://bucket/key`: an object (issue 34), checked with a probe write.
 *
 * A symlink is never followed to replace or write a file: a link to a regular file (or a dangling one) is
 * itself replaced by the new file, its target left as it was. A link to a FIFO or device is written into
 * only when the link is the user's (or root's), as a user's own `out -> /dev/null` would be; another
 * user's link is refused, since it may point anywhere the user can write, and so is another user's FIFO,
 * socket or device (root's, such as /dev/null, are fine).
 */
export type OutKind =
  | {kind: 'file'}
  | {kind: 'stream'; fd?: number | undefined; viaLink?: boolean}
  /** `s3://bucket/key`: an object, put whole (src/io/object-store.ts). */
  | {kind: 'object'}

const FD_PATH = /^\/(?:dev\/fd|proc\/self\/fd)\/(\d+)$/
const STD_PATH: Record<string, number> = {'/dev/stdout': 1, '/dev/stderr': 2}

/** Written into in order: a FIFO, a character device, a socket. */
export function isStreamNode(st: Pick<Stats, 'isFIFO' | 'isCharacterDevice' | 'isSocket'>): boolean {
  return st.isFIFO() || st.isCharacterDevice() || st.isSocket()
}

/** Check, before any request, that `out` can be written, and say how (see OutKind). Usage errors exit 2. */
export async function assertWritableTarget(out: string, flag = '--out'): Promise<OutKind> {
  if (isObjectUrl(out)) {
    // the location's form, the credentials and a probe write, before any request to the service
    await (await import('./object-store.js')).probeObjectTarget(out, flag, false)
    return {kind: 'object'}
  }
  const fdMatch = FD_PATH.exec(out)
  const fd = fdMatch ? Number(fdMatch[1]) : STD_PATH[out]
  if (fd !== undefined) {
    try {
      fstatSync(fd)
    } catch {
      throw new UsageError(
        `${flag} ${out}: no file descriptor ${fd} is open in this process; redirect it in the shell first (${fd}>file)`,
      )
    }
    return {kind: 'stream', fd}
  }
  // synchronous: a few calls through libuv's thread pool took 5-10 ms of a comparison's end, the pool's
  // thread waiting behind V8's compiler threads on a machine of two (issue 32, timings)
  const link = statOrNothing(lstatSync, out)
  const viaLink = link?.isSymbolicLink() === true
  const f = viaLink ? statOrNothing(statSync, out) : link
  if (f?.isDirectory()) throw new UsageError(`${flag} ${out} is a folder; give a file name`)
  if (f?.isBlockDevice())
    throw new UsageError(
      `${flag} ${out} is a block device; sfl writes files, FIFOs and character devices only`,
    )
  if (f && isStreamNode(f)) {
    const uid = process.getuid?.()
    const problem = viaLink && uid !== undefined ? ownerProblem(link, uid) : undefined
    if (problem?.kind === 'owner')
      throw new UsageError(
        `${flag} ${out} is another user's symbolic link (uid ${problem.uid}) to a ${nodeName(f)}; sfl does not write through it: remove it or give another name`,
      )
    // another user's FIFO or socket (planted where sfl writes: a shared folder's rejects.ndjson) would
    // receive the data, or hold the run forever with no reader; root's devices (/dev/null) are fine
    const node = uid === undefined ? undefined : ownerProblem(f, uid)
    if (node?.kind === 'owner')
      throw new UsageError(
        `${flag} ${out} is another user's ${nodeName(f)} (uid ${node.uid}); sfl does not write into it: remove it or give another name`,
      )
    return {kind: 'stream', viaLink}
  }
  const dir = dirname(out)
  const d = statOrNothing(statSync, dir)
  if (!d?.isDirectory())
    throw new UsageError(`${flag} ${out}: the folder ${dir} does not exist; create it first`)
  return {kind: 'file'}
}

/** A FIFO, a character device, a socket, a folder...: what a stat says a path is, in words. */
export function nodeName(st: Stats): string {
  if (st.isFIFO()) return 'FIFO'
  if (st.isCharacterDevice()) return 'character device'
  if (st.isSocket()) return 'socket'
  if (st.isBlockDevice()) return 'block device'
  if (st.isDirectory()) return 'folder'
  if (st.isSymbolicLink()) return 'symbolic link'
  return 'file'
}

/**
 * Just before a temp file is renamed over `target`: the rename may replace a regular file or a symlink
 * (the link, not what it points to) or nothing, never a FIFO, a device, a socket or a folder that appeared
 * there since the target was checked. Exit 8 (the local file system changed under the run).
 */
export async function assertReplaceable(target: string): Promise<void> {
  const st = statOrNothing(lstatSync, target)
  if (!st || st.isFile() || st.isSymbolicLink()) return
  throw new LocalIoError(
    `refusing to replace ${target}: it became a ${nodeName(st)} while sfl was writing it (the new file was discarded); write elsewhere or run again`,
  )
}

/**
 * After a stream target was opened: the descriptor must be what was checked (a FIFO, a device, a socket),
 * not a regular file or a folder swapped in since, which writing into would overwrite in place.
 */
export function assertOpenedStream(fd: number, path: string): void {
  const st = fstatSync(fd)
  if (!isStreamNode(st))
    throw new LocalIoError(
      `refusing to write into ${path}: it is now a ${nodeName(st)}, not the FIFO or device it was when checked; run again`,
    )
}

/** A path's stats, or undefined where there is nothing (or nothing this user may look at). */
function statOrNothing(
  how: (path: string, opts: {throwIfNoEntry: false}) => Stats | undefined,
  path: string,
) {
  try {
    return how(path, {throwIfNoEntry: false})
  } catch {
    return undefined
  }
}
