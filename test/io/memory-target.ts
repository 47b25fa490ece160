import type {OutputTarget} from '../../src/io/output.js'

/**
 * An OutputTarget in memory for writer tests. With `fullAt`, `write` returns false once that many bytes
 * have been written since the last drain, and `drain` resolves on a later turn of the event loop (a slow
 * disk); `maxOutstanding` is the most bytes ever written between two drains, which a writer that follows
 * backpressure keeps near `fullAt`.
 */
export class MemoryTarget implements OutputTarget {
  readonly chunks: Buffer[] = []
  outstanding = 0
  maxOutstanding = 0
  drains = 0
  committed = false
  aborted = false

  constructor(private readonly fullAt = Infinity) {}

  write(chunk: Buffer | string): boolean {
    const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk)
    this.chunks.push(b)
    this.outstanding += b.length
    this.maxOutstanding = Math.max(this.maxOutstanding, this.outstanding)
    return this.outstanding < this.fullAt
  }

  drain(): Promise<void> {
    if (this.outstanding < this.fullAt) return Promise.resolve()
    this.drains++
    return new Promise((resolve) =>
      setImmediate(() => {
        this.outstanding = 0
        resolve()
      }),
    )
  }

  commit(): Promise<void> {
    this.committed = true
    return Promise.resolve()
  }

  abort(): Promise<void> {
    this.aborted = true
    return Promise.resolve()
  }

  get bytes(): Buffer {
    return Buffer.concat(this.chunks)
  }
}
