import type {OutputTarget} from './output-target.js'

/** What a gathered write holds at most before it goes to the target: 64 KiB of text, as fs streams write. */
const GATHER = 64 * 1024

/**
 * Texts written one short line at a time gathered into writes of about 64 KiB: for a writer that has all
 * its lines at hand (`sfl changes` writes its change rows after the comparison), where each line written
 * to a stream on its own cost a stream write and a Buffer of its own: a 100,000-record comparison's 4,000
 * rows took 30-40 ms to write so (profiled, issue 32), about a third of that gathered. Never for rows that
 * arrive over time (a batch's answers): a reader of a pipe would see them late.
 *
 * The target's rules hold: `write` returns false when the inner target wants `drain()`; `commit` writes
 * what is held first; `abort` drops it. A failure of the inner target is found at the gathered write
 * (its `onFailure` fires then), 64 KiB later at most.
 */
export class GatheredTarget implements OutputTarget {
  private held = ''

  constructor(private readonly inner: OutputTarget) {}

  write(chunk: Buffer | string): boolean {
    if (typeof chunk !== 'string') {
      const took = this.flush()
      return this.inner.write(chunk) && took
    }
    this.held += chunk
    return this.held.length < GATHER || this.flush()
  }

  drain(): Promise<void> {
    // false from write means the inner target has all it took and wants drain: what is held waits here
    return this.inner.drain()
  }

  async commit(): Promise<void> {
    if (!this.flush()) await this.inner.drain()
    await this.inner.commit()
  }

  async abort(): Promise<void> {
    this.held = ''
    await this.inner.abort()
  }

  /** What is held, written; the inner target's answer (true when nothing was held). */
  private flush(): boolean {
    if (this.held === '') return true
    const text = this.held
    this.held = ''
    return this.inner.write(text)
  }
}
