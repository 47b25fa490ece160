import type {Writable} from 'node:stream'

import {constants, createWriteStream} from 'node:fs'
import {open} from 'node:fs/promises'

import {OutputClosedError} from '../errors.js'
import {isObjectUrl} from '../text/object-url.js'
import {AtomicFile} from './atomic-file.js'
import {localIoError} from './fs-errors.js'
import {classifyOutputName} from './output-name.js'
import type {OutputTarget} from './output-target.js'
import {assertOpenedStream, assertWritableTarget} from './target-kind.js'

/**
 * The output gate: every byte sfl writes to a path goes through src/io, on one set of rules.
 * - What a path is, and so how it is written, is decided once (src/io/target-kind.ts): a regular file (or
 *   none) is written to an exclusive, unpredictable temp beside it (O_EXCL|O_NOFOLLOW), fsynced and
 *   renamed (src/io/atomic-file.ts), and looked at again just before the rename; a FIFO, a character
 *   device, a socket or /dev/fd/N is written into in order, never replaced; a symlink is never followed to
 *   replace or write a file; a block device or a folder is refused. Streamed outputs (`openOutput`) and
 *   small whole files (`writeOutputFile`: --stats-json, the manifest, the rejects) take the same path.
 * - The folders of an `--out-dir` are created or entered only when they are real folders of the user's (or
 *   root's) that others cannot write unless sticky (src/io/folder-trust.ts, on src/io/owner-rule.ts, the
 *   rule the config's check uses too).
 * - A run's private files (checkpoint, parts folder and part files, lock, scratch folders, the code
 *   cache, the config's folder) are made 0700/0600, exclusively or never through a link
 *   (src/io/private-files.ts; src/io/private-sync.ts for the synchronous few the CLI's entry bundles).
 * Outside src/io, lint refuses node:fs's writers (eslint.config.js, "the output gate"), so a new path
 * inherits these rules by having no other way to write.
 *
 * - An `s3://bucket/key` (issue 34) is the object store's target (src/io/object-store.ts, on
 *   src/objstore/target.ts): chosen in `openOutput` from the value's form before the file-system kinds,
 *   and loaded with import() only then. Its bytes go up in parts as they come (memory bounded by the part
 *   size) and `commit` completes the upload, so the object appears whole or not at all, as a renamed
 *   file does; `abort` aborts the upload. `assertWritableTarget` checks it with a probe write first.
 * A new file format (xlsx) is a writer over an `OutputTarget` (as src/io/record-writer.ts and
 * parquet-writer.ts are), never a target of its own; compression the name asks for (`.gz`) wraps the
 * target here, a file's or an object's, so every path that writes gets it.
 *
 * Where a run's records go: a file written atomically beside --out, or stdout. Writes follow the
 * stream's backpressure (`write` returns false: await `drain`). A failure of the destination (disk full,
 * the reader of stdout gone) is remembered, reported through `onFailure` at once (so the run stops sending)
 * and thrown by the next `drain`/`commit`.
 */
export type {OutputTarget} from './output-target.js'

abstract class StreamTarget implements OutputTarget {
  protected failure: Error | undefined
  protected readonly onError = (error: unknown): void => this.fail(error)

  constructor(
    protected readonly stream: Writable,
    private readonly onFailure: (error: Error) => void,
  ) {
    stream.on('error', this.onError)
  }

  protected abstract describe(error: unknown): Error

  protected fail(error: unknown): void {
    if (this.failure) return
    this.failure = this.describe(error)
    this.onFailure(this.failure)
  }

  write(chunk: Buffer | string): boolean {
    if (this.failure) return true // the run is stopping; drain() reports it
    try {
      return this.stream.write(chunk)
    } catch (error) {
      // stdout on a file or device writes synchronously and throws (ENOSPC on /dev/full)
      this.fail(error)
      return true
    }
  }

  drain(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure)
    if (!this.stream.writableNeedDrain) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const done = () => {
        this.stream.off('drain', done)
        this.stream.off('error', done)
        if (this.failure) reject(this.failure)
        else resolve()
      }
      this.stream.on('drain', done)
      this.stream.on('error', done)
    })
  }

  abstract commit(): Promise<void>
  abstract abort(): Promise<void>
}

/** stdout: EPIPE (the reader went away, `| head`) ends the run quietly with exit 141. */
export class StdoutTarget extends StreamTarget {
  /** oclif's own stdout 'error' listener throws anything but EPIPE: set aside while the run owns stdout. */
  private readonly others: Array<(...args: unknown[]) => void>

  constructor(onFailure: (error: Error) => void, stream: Writable = process.stdout) {
    const others = stream.listeners('error') as Array<(...args: unknown[]) => void>
    stream.removeAllListeners('error')
    super(stream, onFailure)
    this.others = others
  }

  /** Hand stdout back (the summary may follow). */
  release(): void {
    // this run's listener goes (a process that runs many, the library's or a test's, would gather them)
    this.stream.off('error', this.onError)
    // a stdout that already failed stays quiet: oclif's final flush would throw the same error again
    if (this.failure) this.stream.on('error', () => undefined)
    else for (const l of this.others) this.stream.on('error', l)
    this.others.length = 0
  }

  protected describe(error: unknown): Error {
    const code = (error as {code?: string}).code
    if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED')
      return new OutputClosedError('stdout was closed by its reader')
    return localIoError(error, 'writing to', 'stdout')
  }

  async commit(): Promise<void> {
    await this.drain()
    // stdout writes are synchronous on Linux; a failure of the last one is emitted on the next tick
    await new Promise((resolve) => setImmediate(resolve))
    this.release()
    if (this.failure) throw this.failure
  }

  async abort(): Promise<void> {
    // stdout stays open for whatever prints the summary; nothing to remove
    this.release()
  }
}

/**
 * --out that is a FIFO, a character device or a descriptor the shell opened (src/io/atomic-file.ts
 * OutKind): written into in order, with no temp file, rename or lock beside it. Not atomic: a reader sees
 * the records as they come, and a run that stops leaves what it wrote (as on stdout).
 */
export class StreamFileTarget extends StreamTarget {
  private constructor(
    stream: import('node:fs').WriteStream,
    private readonly path: string,
    onFailure: (error: Error) => void,
  ) {
    super(stream, onFailure)
  }

  /**
   * Open `path` for writing in order (a FIFO waits for its reader), or write to the descriptor `fd`.
   * `viaLink`: the path is the user's own link to the FIFO or device (src/io/target-kind.ts); otherwise
   * a link put there since the check is not followed.
   */
  static async create(
    path: string,
    fd: number | undefined,
    onFailure: (error: Error) => void,
    viaLink = false,
  ): Promise<StreamFileTarget> {
    if (fd !== undefined) {
      // a descriptor the shell opened (/dev/fd/N): written, never closed (it is not ours)
      const stream = createWriteStream('', {fd, autoClose: false, highWaterMark: 1 << 20})
      return new StreamFileTarget(stream, path, onFailure)
    }
    let handle: import('node:fs/promises').FileHandle
    try {
      // no O_CREAT, no O_TRUNC: the FIFO or device is written into, never made or cut
      const flags = constants.O_WRONLY | constants.O_NOCTTY | (viaLink ? 0 : constants.O_NOFOLLOW)
      handle = await open(path, flags)
    } catch (error) {
      throw localIoError(error, 'opening', path)
    }
    try {
      // still a FIFO or device: a regular file swapped in since the check would be overwritten in place
      assertOpenedStream(handle.fd, path)
    } catch (error) {
      await handle.close()
      throw error
    }
    // the stream owns the handle and closes it; taking only its number would leave the handle to close
    // the same descriptor again when it is collected (EBADF, fatal on Node 20)
    return new StreamFileTarget(handle.createWriteStream({highWaterMark: 1 << 20}), path, onFailure)
  }

  protected describe(error: unknown): Error {
    const code = (error as {code?: string}).code
    if (code === 'EPIPE') return new OutputClosedError(`the reader of ${this.path} went away`)
    return localIoError(error, 'writing', this.path)
  }

  async commit(): Promise<void> {
    await this.drain()
    await new Promise<void>((resolve, reject) => {
      this.stream.end((error?: Error | null) => (error ? reject(this.describe(error)) : resolve()))
    })
    if (this.failure) throw this.failure
  }

  async abort(): Promise<void> {
    // what was written stays written (a stream cannot be taken back); the descriptor is let go
    this.stream.end()
  }
}

/**
 * The target a path names: a stream written in order, or a file written atomically (OutKind). `flag`
 * names the path in a usage error (`--out`, `--stats-json`). The one way to a path's target.
 */
export async function openOutput(
  out: string,
  onFailure: (error: Error) => void,
  flag = '--out',
): Promise<OutputTarget> {
  const inner = await plainTarget(out, onFailure, flag)
  if (!gzipNamed(out)) return inner
  // a name ending .gz is written as gzip (RFC 1952) on every path that writes through here; zlib loads
  // only then (src/io/output-name.ts is the one rule for names: callers refused what it cannot write)
  const {GzipTarget} = await import('./gzip.js')
  return new GzipTarget(inner)
}

/** The target of `out` before any compression: an object, a FIFO or device written into, or a file. */
async function plainTarget(
  out: string,
  onFailure: (error: Error) => void,
  flag: string,
): Promise<OutputTarget> {
  // no signal: after Ctrl-C a run still writes what finished (README "Exit codes", 130), as to a file
  if (isObjectUrl(out)) return (await import('./object-store.js')).openObjectTarget(out, onFailure, flag)
  const kind = await assertWritableTarget(out, flag)
  if (kind.kind === 'object') throw new Error(`openOutput: ${out} is an object`) // checked just above
  if (kind.kind === 'stream') return StreamFileTarget.create(out, kind.fd, onFailure, kind.viaLink)
  return FileTarget.create(out, onFailure)
}

/** Does `out`'s name ask for gzip (`.csv.gz`, `.ndjson.gz`, `.json.gz`: src/io/output-name.ts)? */
export function gzipNamed(out: string): boolean {
  const named = classifyOutputName(out)
  return named.ok && named.compression === 'gzip'
}

/**
 * A small file written whole (--stats-json, an `--out-dir` manifest, the rejects) on the same rules as a
 * streamed output: a regular file atomically (mode 0644 before the umask), a FIFO or device written into,
 * an object put whole.
 */
export async function writeOutputFile(path: string, data: string, flag = '--out'): Promise<void> {
  let failure: Error | undefined
  const target = await openOutput(path, (e) => (failure ??= e), flag)
  try {
    if (!target.write(data)) await target.drain()
    if (failure) throw failure
    await target.commit()
  } catch (error) {
    await target.abort()
    throw error
  }
}

/** --out: an exclusive temp file beside the target, renamed over it only by `commit`. */
export class FileTarget extends StreamTarget {
  private constructor(
    private readonly file: AtomicFile,
    onFailure: (error: Error) => void,
  ) {
    super(file.stream, onFailure)
  }

  static async create(target: string, onFailure: (error: Error) => void): Promise<FileTarget> {
    return new FileTarget(await AtomicFile.create(target), onFailure)
  }

  /** The target begins with the bytes of `path`, a file of the run's own (see AtomicFile.adopt). */
  static adopt(path: string, target: string, onFailure: (error: Error) => void): FileTarget {
    return new FileTarget(AtomicFile.adopt(path, target), onFailure)
  }

  protected describe(error: unknown): Error {
    return localIoError(error, 'writing', this.file.target)
  }

  async commit(): Promise<void> {
    if (this.failure) {
      await this.file.abort()
      throw this.failure
    }
    await this.file.commit()
  }

  async abort(): Promise<void> {
    await this.file.abort()
  }
}
