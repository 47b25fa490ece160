/**
 * A manual clock for code that takes injected timers: `advance(ms)` fires every timer that falls due, in
 * order, letting real I/O (a socket abort, a promise chain) run between them. Waits of minutes take
 * milliseconds; nothing sleeps for real.
 */
export class FakeClock {
  private t = 0
  private nextId = 1
  private readonly timers = new Map<number, {at: number; fn: () => void}>()

  now = (): number => this.t

  setTimeout = (fn: () => void, ms: number): number => {
    const id = this.nextId++
    this.timers.set(id, {at: this.t + Math.max(0, ms), fn})
    return id
  }

  clearTimeout = (handle: unknown): void => {
    this.timers.delete(handle as number)
  }

  sleep = (ms: number): Promise<void> => new Promise((resolve) => this.setTimeout(resolve, ms))

  /** Move time forward by `ms`, firing what falls due on the way. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms
    for (;;) {
      await settle()
      let due: [number, {at: number; fn: () => void}] | undefined
      for (const entry of this.timers)
        if (entry[1].at <= end && (!due || entry[1].at < due[1].at)) due = entry
      if (!due) break
      this.timers.delete(due[0])
      this.t = due[1].at
      due[1].fn()
    }
    this.t = end
    await settle()
  }
}

/** Let pending promise chains and I/O callbacks run (a few turns of the event loop, no timer). */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve))
}
