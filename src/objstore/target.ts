import {UsageError} from '../errors.js'
import {MAX_PARTS, type ObjectStore} from './client.js'
import {type ObjectUrl, formatObjectUrl} from './url.js'

/**
 * An object written the way the output module writes a file (src/io/output.ts `OutputTarget`: write,
 * drain, commit, abort), so a run writing `s3://bucket/key` keeps the promise of a run writing a path:
 * the object appears whole or not at all.
 *
 * - Bytes are copied into parts of exactly `partSize` and sent as a multipart upload while the run goes on; at most
 *   `partsInFlight` parts are being sent, and `write` returns false (await `drain`) until one is done, so
 *   memory is bounded by about (partsInFlight + 1) x partSize whatever the object's size.
 * - `commit` sends the last part and completes the upload: S3 makes the object visible at once and whole.
 *   An object smaller than one part is one PutObject instead (also atomic).
 * - `abort` (and any failure) aborts the upload: its parts are dropped and nothing appears. An upload a
 *   killed process could not abort stays invisible; `ObjectStore.listMultipartUploads` finds it for cleanup.
 */
export interface ObjectTargetOptions {
  /** Default 8 MiB; S3 needs 5 MiB at least for every part but the last. */
  partSize?: number | undefined
  /** Default 2. */
  partsInFlight?: number | undefined
  contentType?: string | undefined
}

export const DEFAULT_PART_SIZE = 8 * 1024 * 1024
const FIRST_SLAB = 64 * 1024
const SLAB = 1024 * 1024

export class ObjectTarget {
  private readonly partSize: number
  private readonly partsInFlight: number
  /** The current part: full slabs, then the slab being filled (`slabUsed` bytes of it). */
  private slabs: Buffer[] = []
  private slab: Buffer | undefined
  private slabUsed = 0
  private bufferedBytes = 0
  private uploadId: Promise<string> | undefined
  private readonly parts: Array<{partNumber: number; etag: string}> = []
  private readonly inFlight = new Set<Promise<void>>()
  private nextPart = 1
  private failure: Error | undefined
  private waiters: Array<() => void> = []
  private state: 'open' | 'committing' | 'committed' | 'aborted' = 'open'
  private held = 0
  private peak = 0

  constructor(
    private readonly store: ObjectStore,
    private readonly url: ObjectUrl,
    private readonly onFailure: (error: Error) => void,
    private readonly options: ObjectTargetOptions = {},
  ) {
    this.partSize = options.partSize ?? DEFAULT_PART_SIZE
    this.partsInFlight = Math.max(1, options.partsInFlight ?? 2)
  }

  /** Bytes this target holds now (buffered and being sent), and the most it held: the memory bound. */
  get heldBytes(): number {
    return this.held
  }

  get peakHeldBytes(): number {
    return this.peak
  }

  /**
   * Copies the bytes (the caller may reuse its buffer as soon as this returns, as the output module's
   * writers may) into slabs of the current part: 64 KiB first, then 1 MiB, never past the part's end, so a
   * small object costs what it holds and a part is exactly `partSize`.
   */
  write(chunk: Buffer | string): boolean {
    if (this.failure || this.state !== 'open') return true // the run is stopping; drain() reports it
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    for (let at = 0; at < buf.length;) {
      if (!this.slab) {
        const first = this.nextPart === 1 && this.slabs.length === 0
        const size = Math.min(this.partSize - this.bufferedBytes, first ? FIRST_SLAB : SLAB)
        this.slab = Buffer.allocUnsafe(size)
        this.hold(size)
      }
      const n = buf.copy(this.slab, this.slabUsed, at)
      at += n
      this.slabUsed += n
      this.bufferedBytes += n
      if (this.slabUsed === this.slab.length) {
        this.slabs.push(this.slab)
        this.slab = undefined
        this.slabUsed = 0
      }
      if (this.bufferedBytes === this.partSize) this.cutPart()
    }
    return this.inFlight.size < this.partsInFlight
  }

  drain(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure)
    if (this.inFlight.size < this.partsInFlight) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.waiters.push(() => (this.failure ? reject(this.failure) : resolve()))
    })
  }

  async commit(): Promise<void> {
    if (this.state !== 'open') throw new Error(`ObjectTarget.commit in state ${this.state}`)
    this.state = 'committing'
    try {
      this.throwIfFailed()
      if (this.uploadId === undefined) {
        // smaller than one part: one PutObject, visible whole when it returns
        const {chunks, held} = this.take()
        try {
          await this.store.putObject(this.url.bucket, this.url.key, chunks, this.options.contentType)
        } finally {
          this.held -= held
        }
        this.state = 'committed'
        return
      }
      if (this.bufferedBytes > 0) this.cutPart()
      await this.settleAll()
      this.throwIfFailed() // a part failed while the last ones were sent
      const parts = [...this.parts].sort((a, b) => a.partNumber - b.partNumber)
      await this.store.completeMultipartUpload(this.url.bucket, this.url.key, await this.uploadId, parts)
      this.state = 'committed'
    } catch (error) {
      this.state = 'open'
      await this.abort()
      throw error
    }
  }

  /** Give up: nothing appears. Waits for parts in flight, then aborts the upload; never throws. */
  async abort(): Promise<void> {
    if (this.state === 'aborted' || this.state === 'committed') return
    this.state = 'aborted'
    this.held -= this.take().held
    await this.settleAll()
    if (this.uploadId === undefined) return
    try {
      await this.store.abortMultipartUpload(this.url.bucket, this.url.key, await this.uploadId)
    } catch {
      // the upload stays invisible; listMultipartUploads finds it for cleanup (docs/exports.md)
    }
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure
  }

  private hold(bytes: number): void {
    this.held += bytes
    if (this.held > this.peak) this.peak = this.held
  }

  /** The current part's bytes, and what its slabs hold in memory (counted by `hold`, given back when sent). */
  private take(): {chunks: Buffer[]; size: number; held: number} {
    const chunks = this.slabs
    let held = chunks.reduce((n, b) => n + b.length, 0)
    if (this.slab) {
      chunks.push(this.slab.subarray(0, this.slabUsed))
      held += this.slab.length
    }
    const out = {chunks, size: this.bufferedBytes, held}
    this.slabs = []
    this.slab = undefined
    this.slabUsed = 0
    this.bufferedBytes = 0
    return out
  }

  private fail(error: unknown): void {
    if (this.failure) return
    this.failure = error instanceof Error ? error : new Error(String(error))
    // after abort a part cut short is expected, not news for the run
    if (this.state !== 'aborted') this.onFailure(this.failure)
    this.wake()
  }

  private wake(): void {
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w()
  }

  private cutPart(): void {
    const {chunks, held} = this.take()
    const partNumber = this.nextPart++
    if (partNumber > MAX_PARTS) {
      this.held -= held
      this.fail(
        new UsageError(
          `${formatObjectUrl(this.url)}: the object is larger than ${MAX_PARTS} parts of ${this.partSize} bytes, the most S3 takes in one upload; write it as several objects`,
        ),
      )
      return
    }
    this.uploadId ??= this.store.createMultipartUpload(
      this.url.bucket,
      this.url.key,
      this.options.contentType,
    )
    const upload = this.uploadId
      .then((id) => this.store.uploadPart(this.url.bucket, this.url.key, id, partNumber, chunks))
      .then((etag) => {
        this.parts.push({partNumber, etag})
      })
      .catch((error: unknown) => this.fail(error))
      .finally(() => {
        this.held -= held
        this.inFlight.delete(upload)
        this.wake()
      })
    this.inFlight.add(upload)
  }

  private async settleAll(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight])
  }
}
