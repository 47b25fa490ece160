import {cliMessage} from './error-words.js'
import {clockNotice} from './notices.js'
import type {ClientEvent} from '../api/client.js'
import {forTerminal} from '../render/terminal.js'
import type {SchedulerEvent} from '../schedule/scheduler.js'

/**
 * What a person at a terminal sees while one lookup (or `keys check`) waits: after about 2 s
 * without an answer, a status line that says what it waits for and how much of --timeout is left, redrawn
 * every second and cleared when the answer is in; a line per retry ("retrying (2 of 3) after 1.2 s: why").
 * The final error is the command's own one line. Only on a terminal and without --quiet; a long wait for
 * the rate limit gets its line in a pipe too (as before: a CI log should say why it stalls).
 *
 * It renders the events of the client and the scheduler (their `onEvent` hooks, which a library can expose
 * as they are); it decides nothing about the requests. The clock is injected: tests run in milliseconds.
 */
export interface FeedbackClock {
  now(): number
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

export interface FeedbackOptions {
  /** Draw the status and retry lines: stderr is a terminal and --quiet was not given. */
  live: boolean
  quiet: boolean
  clock?: FeedbackClock
  /** How long a request goes without an answer before the status line appears. */
  afterMs?: number
}

/** Rate-limit waits this long or longer get a line (in a pipe too). */
const ANNOUNCE_WAITS_FROM_MS = 5000

const NODE_CLOCK: FeedbackClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

interface Pending {
  host: string
  timeoutMs: number
  started: number
  answering: boolean
}

const secs = (ms: number, round: (x: number) => number = Math.round) => `${round(ms / 1000)} s`

export class WaitFeedback {
  private readonly pending = new Map<number, Pending>()
  private readonly clock: FeedbackClock
  private readonly afterMs: number
  private timer: unknown
  /** A status line is on the screen, without its newline. */
  private drawn = false
  private stopped = false

  constructor(
    private readonly out: {write(text: string): unknown; columns?: number | undefined},
    private readonly opts: FeedbackOptions,
  ) {
    this.clock = opts.clock ?? NODE_CLOCK
    this.afterMs = opts.afterMs ?? 2000
  }

  onClientEvent = (e: ClientEvent): void => {
    if (this.stopped || !this.opts.live) return
    if (e.type === 'request') {
      this.pending.set(e.id, {
        host: e.host,
        timeoutMs: e.timeoutMs,
        started: this.clock.now(),
        answering: false,
      })
      if (this.timer === undefined) this.arm(this.afterMs)
    } else if (e.type === 'headers') {
      const p = this.pending.get(e.id)
      if (p) p.answering = true
    } else {
      this.pending.delete(e.id)
      if (this.pending.size === 0) this.idle()
    }
  }

  onSchedulerEvent = (e: SchedulerEvent): void => {
    if (this.stopped) return
    if (e.type === 'retry' && this.opts.live)
      this.print(
        `sfl: retrying (${e.attempt} of ${e.of}) after ${(e.delayMs / 1000).toFixed(1)} s: ${e.error ? cliMessage(e.error) : e.reason}`,
      )
    // a Date header too far off to trust (src/schedule/rate-limit.ts MAX_SKEW_MS): said once, not at --quiet
    else if (e.type === 'clock' && !this.opts.quiet) this.print(clockNotice(e.skewMs))
    else if (e.type === 'wait' && e.ms >= ANNOUNCE_WAITS_FROM_MS && !this.opts.quiet)
      this.print(
        `sfl: waiting ${secs(e.ms, Math.ceil)} for ${e.reason === '429' ? 'a 429' : 'the rate-limit reset'}`,
      )
  }

  /** The status line for the request waited on longest, or undefined when none has waited long enough. */
  status(): string | undefined {
    const now = this.clock.now()
    let oldest: Pending | undefined
    for (const p of this.pending.values()) if (!oldest || p.started < oldest.started) oldest = p
    if (!oldest || now - oldest.started < this.afterMs) return undefined
    const waited = now - oldest.started
    const left = Math.max(0, oldest.timeoutMs - waited)
    const what = oldest.answering
      ? `reading the answer from ${oldest.host}`
      : `waiting for ${oldest.host} to answer`
    return `sfl: ${what} (${secs(waited)}; ${secs(left, Math.ceil)} left of --timeout ${secs(oldest.timeoutMs)})`
  }

  /** No more lines: the command is done, or a long run draws its own progress. */
  stop(): void {
    this.stopped = true
    this.idle()
  }

  private arm(ms: number): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined
      this.draw()
      if (this.pending.size > 0) this.arm(this.untilDue() ?? 1000)
    }, ms)
  }

  /** Milliseconds until the oldest request has waited `afterMs`; undefined once it has (tick each second). */
  private untilDue(): number | undefined {
    const oldest = Math.min(...[...this.pending.values()].map((p) => p.started))
    const due = oldest + this.afterMs - this.clock.now()
    return due > 0 ? due : undefined
  }

  private draw(): void {
    const text = this.status()
    if (text === undefined) return
    // a terminal that reports no width (0, as a pty without one does) is taken as 120 columns
    this.out.write(`\r\x1b[2K${forTerminal(text).slice(0, (this.out.columns || 120) - 1)}`)
    this.drawn = true
  }

  private erase(): void {
    if (this.drawn) this.out.write('\r\x1b[2K')
    this.drawn = false
  }

  /** A line that stays (a retry, a rate-limit wait), above the status line, which the next tick redraws. */
  private print(line: string): void {
    this.erase()
    this.out.write(`${forTerminal(line)}\n`)
  }

  private idle(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer)
    this.timer = undefined
    this.erase()
  }
}
