import type {Transform} from 'node:stream'

/**
 * A zlib transform (deflate, gzip) whose output goes to a sink that has backpressure of its own (an
 * OutputTarget): when the sink is full the transform is paused until the sink drains, so the transform's
 * input fills and `write` says so. Memory is one buffer of each, whatever the length of the data. Used by
 * the ZIP writer's streamed parts and by the gzip output target.
 */
export class ZlibPump {
  private failure: Error | undefined
  /** The sink's drain in progress while the transform is paused for it. */
  private waiting: Promise<void> | undefined

  constructor(
    private readonly transform: Transform,
    /** Take a chunk of output; false: the sink is full, `sinkDrain` resolves when it takes more. */
    sink: (chunk: Buffer) => boolean,
    sinkDrain: () => Promise<void>,
  ) {
    transform.on('data', (chunk: Buffer) => {
      if (sink(chunk)) return
      transform.pause()
      this.waiting = sinkDrain().then(
        () => {
          this.waiting = undefined
          transform.resume()
        },
        (error: unknown) => this.fail(error),
      )
    })
    transform.on('error', (error) => this.fail(error))
  }

  get failed(): Error | undefined {
    return this.failure
  }

  fail(error: unknown): void {
    this.failure ??= error instanceof Error ? error : new Error(String(error))
    this.transform.destroy()
  }

  /** Throw the failure, if there was one (a method: a property narrowed before an await stays narrowed). */
  private check(): void {
    if (this.failure) throw this.failure
  }

  /** False: await `drain()`. After a failure, true (drain and end report it). */
  write(chunk: Buffer): boolean {
    if (this.failure) return true
    return this.transform.write(chunk)
  }

  async drain(): Promise<void> {
    this.check()
    if (this.transform.writableNeedDrain) await this.settle('drain')
    if (this.waiting) await this.waiting
    this.check()
  }

  /** Flush the transform's last bytes into the sink. */
  async end(): Promise<void> {
    this.check()
    const ended = this.settle('end')
    this.transform.end()
    await ended
    if (this.waiting) await this.waiting
    this.check()
  }

  /**
   * Wait for an event of the transform, or for its end by failure (the 'error' listener above records
   * it). Plain listeners, not events.once: a once() promise left behind by a race would reject unheard.
   */
  private settle(event: 'drain' | 'end'): Promise<void> {
    const t = this.transform
    return new Promise((resolve) => {
      const done = () => {
        t.off(event, done)
        t.off('close', done)
        t.off('error', done)
        resolve()
      }
      t.on(event, done)
      t.on('close', done)
      t.on('error', done)
    })
  }
}
