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
  /**
   * Ctrl-C while a status line is drawn: the line is erased, then the signal goes on as before (the
   * process ends as interrupted). Injected in tests; the process's SIGINT otherwise.
   */
  interrupt?: InterruptHooks
}

export interface InterruptHooks {
  on(handler: () => void): void
  off(handler: () => void): void
  /** What Ctrl-C did before sfl listened: the process ends, killed by SIGINT (the shell says 130). */
  resume(): void
}

const PROCESS_INTERRUPT: InterruptHooks = {
  on: (h) => process.on('SIGINT', h),
  off: (h) => process.off('SIGINT', h),
  resume: () => process.kill(process.pid, 'SIGINT'),
}

/** "14:05:09": a clock time on this machine's clock, without Intl (its first use costs start-up time). */
export function clockTime(ms: number): string {
  const d = new Date(ms)
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
}

/** What a rate-limit wait waits for, in words (spec 8: the hourly window; spec 7: HTTP 429). */
function waitFor(reason: 'budget' | '429'): string {
  return reason === '429'
    ? 'the service answered 429 (too many requests); retrying'
    : "the key's requests for this rate-limit window are spent; the window resets"
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
  /** A rate-limit wait in progress: when it ends (this clock) and why. */
  private wait: {until: number; reason: 'budget' | '429'} | undefined
  private readonly interrupt: InterruptHooks
  private readonly onInterrupt = (): void => {
    this.idle()
    this.interrupt.off(this.onInterrupt)
    this.interrupt.resume()
  }

  constructor(
    private readonly out: {write(text: string): unknown; columns?: number | undefined},
    private readonly opts: FeedbackOptions,
  ) {
    this.clock = opts.clock ?? NODE_CLOCK
    this.afterMs = opts.afterMs ?? 2000
    this.interrupt = opts.interrupt ?? PROCESS_INTERRUPT
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
      if (this.pending.size === 0 && this.wait === undefined) this.idle()
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
    else if (e.type === 'wait') this.waiting(e.ms, e.reason)
  }

  /**
   * A rate-limit wait: one line that stays, saying what it waits for and when it ends on this machine's
   * clock ("... the window resets at 14:05:09 (in 18 s)"), from 5 s (in a pipe too); at a terminal, the
   * status line then counts down each second until it ends.
   */
  private waiting(ms: number, reason: 'budget' | '429'): void {
    const until = this.clock.now() + ms
    this.wait = {until, reason}
    if (ms >= ANNOUNCE_WAITS_FROM_MS && !this.opts.quiet)
      this.print(`sfl: ${waitFor(reason)} at ${clockTime(until)} (in ${secs(ms, Math.ceil)})`)
    if (this.opts.live && ms >= 1000) {
      if (this.timer !== undefined) this.clock.clearTimeout(this.timer)
      this.timer = undefined
      this.draw()
      this.arm(1000)
    }
  }

  /** The status line for the request waited on longest, or undefined when none has waited long enough. */
  status(): string | undefined {
    const now = this.clock.now()
    if (this.wait && this.wait.until > now)
      return `sfl: waiting: ${waitFor(this.wait.reason)} at ${clockTime(this.wait.until)} (${secs(this.wait.until - now, Math.ceil)} left)`
    this.wait = undefined
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
      if (this.wait !== undefined) this.arm(1000)
      else if (this.pending.size > 0) this.arm(this.untilDue() ?? 1000)
      else this.erase()
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
    // Ctrl-C from now on erases the line before the process ends
    if (!this.drawn) this.interrupt.on(this.onInterrupt)
    this.drawn = true
  }

  private erase(): void {
    if (this.drawn) {
      this.out.write('\r\x1b[2K')
      this.interrupt.off(this.onInterrupt)
    }
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
