import pLimit from 'p-limit'

import {errorFromResponse, isRetryableNetworkError, type HttpResponse} from '../api/client.js'
import {
  abortedBy,
  CircuitOpenError,
  HttpStatusError,
  InterruptedError,
  RateLimitExceededError,
  RequestCapReachedError,
  ServerError,
  ServerStatusError,
  SflError,
} from '../errors.js'
import {MAX_RESET_DISTANCE_MS, parseRateLimit} from './rate-limit.js'
import {fullJitterDelay, type BackoffPolicy, DEFAULT_BACKOFF} from './retry.js'

/**
 * The one place every request goes through (like octokit's throttling hook): a p-limit pool, one shared
 * budget per key read from every response, pauses for the window reset or a 429, and retries.
 *
 * Budget rule: a request is dispatched only when `remaining - inFlight - reserve > 0`, where `remaining`
 * is the lowest X-RateLimit-Remaining seen in the current window (responses arrive out of order, and
 * within one window the count only goes down). Until the first response tells us the budget, only one
 * request is in flight.
 */
export interface SchedulerOptions {
  concurrency: number
  /** Retries of 5xx / network errors per request (429s are waited out separately). */
  retries: number
  /** The longest single wait for a window reset or Retry-After before giving up (exit 5). */
  maxWaitMs: number
  /** Requests of each window left for colleagues sharing the key. */
  reserve?: number
  /** Hard cap on requests this run may send. */
  maxRequests?: number | undefined
  now?: () => number
  sleep?: (ms: number) => Promise<void>
  random?: () => number
  backoff?: BackoffPolicy
  onEvent?: (event: SchedulerEvent) => void
  /**
   * Circuit breaker: after this many requests in a row failed for the network or a 5xx (each after its
   * retries), nothing more is dispatched (README "Circuit breaker"). Default 5.
   */
  breakAfter?: number
  /** Ctrl-C: waits end at once and nothing more is dispatched. */
  signal?: AbortSignal | undefined
}

export type SchedulerEvent =
  | {type: 'wait'; reason: 'budget' | '429'; ms: number}
  /**
   * Retry `attempt` of at most `of` (--retries), after `delayMs`, because of `reason` (neutral words);
   * `error` is the failure when it is sfl's own, for a caller that words it (src/cli/error-words.ts).
   */
  | {type: 'retry'; attempt: number; of: number; delayMs: number; reason: string; error?: SflError}
  | {type: 'response'; status: number}
  /** A Date header too far from the local clock to correct by (once a run): the local clock is trusted. */
  | {type: 'clock'; skewMs: number}

export interface SchedulerStats {
  requests: number
  rateLimited: number
  retries: number
}

export interface BudgetView {
  limit?: number | undefined
  remaining?: number | undefined
  resetAtMs?: number | undefined
  inFlight: number
}

/** Extra delay after a reset so we do not arrive a hair before the server's window turns. */
const RESET_JITTER_MS = {min: 50, max: 400}
/** Requests in a row that failed after their retries before the scheduler stops sending. */
export const BREAK_AFTER = 5

const MAX_RESET_DISTANCE_DAYS = MAX_RESET_DISTANCE_MS / 86_400_000

/** Consecutive 429s for one request before we stop believing waiting helps. */
const MAX_429_PER_REQUEST = 10

export class Scheduler {
  readonly stats: SchedulerStats = {requests: 0, rateLimited: 0, retries: 0}
  private readonly pool: ReturnType<typeof pLimit>
  private readonly now: () => number
  private readonly sleep: (ms: number) => Promise<void>
  private readonly random: () => number
  private limit: number | undefined
  private remaining: number | undefined
  private resetAtMs: number | undefined
  private lastRolledReset = -Infinity
  private pausedUntil = 0
  private inFlight = 0
  private waiters: Array<() => void> = []
  /** Set by `halt`: nothing more is dispatched, and every wait ends at once with this error. */
  private halted: Error | undefined
  private readonly haltController = new AbortController()
  private failStreak = 0
  private skewTold = false
  /** The last reset the service sent that is no plausible time (rate-limit.ts), for the error that needs it. */
  private unreadableReset: string | undefined

  constructor(readonly options: SchedulerOptions) {
    this.pool = pLimit(Math.max(1, options.concurrency))
    this.now = options.now ?? Date.now
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)))
    this.random = options.random ?? Math.random
  }

  /**
   * Stop dispatching (the run ends for a reason of its own: the circuit breaker, a full disk): requests
   * already in flight finish and keep their answers; every later or waiting one rejects with `reason`.
   */
  halt(reason: Error): void {
    this.halted ??= reason
    this.haltController.abort()
    this.notify()
  }

  /** Why the scheduler stopped dispatching, if it did. */
  get haltedBy(): Error | undefined {
    return this.halted
  }

  /**
   * A window an earlier run of the same checkpoint spent, whose reset has not come yet: wait for it rather
   * than spend a request on a 429 (spec 8.3: the budget returns at X-RateLimit-Reset).
   */
  assumeSpent(resetAtMs: number, limit?: number): void {
    if (resetAtMs <= this.now() || this.remaining !== undefined) return
    this.resetAtMs = resetAtMs
    this.remaining = 0
    if (limit !== undefined) this.limit = limit
  }

  budget(): BudgetView {
    return {limit: this.limit, remaining: this.remaining, resetAtMs: this.resetAtMs, inFlight: this.inFlight}
  }

  /**
   * Send one request (with retries) and hand the successful response to `handle`. `handle` may stream the
   * body; if the stream breaks (reset, truncation) the whole request is retried, so `handle` must start
   * afresh each time it is called. `signal` is this request's own (a library call's, a tool call's
   * deadline or cancel): once it aborts, no wait goes on and no retry is sent, and the call rejects with
   * its reason (src/errors.ts abortedBy); `send` should give it to the request in flight too.
   */
  run<T>(
    send: () => Promise<HttpResponse>,
    handle: (res: HttpResponse) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    return this.pool(() => this.attempt(send, handle, signal))
  }

  private async attempt<T>(
    send: () => Promise<HttpResponse>,
    handle: (res: HttpResponse) => Promise<T>,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    let failures = 0
    let limited = 0
    for (;;) {
      await this.acquire(signal)
      let res: HttpResponse | undefined
      try {
        try {
          res = await send()
        } finally {
          this.inFlight--
          this.notify()
        }
        this.observe(res)
        this.emit({type: 'response', status: res.status})
        if (res.status === 429) {
          // pause everyone before yielding to the event loop, so no waiting worker slips a request in
          this.stats.rateLimited++
          this.pauseFor429(res)
          await res.dump().catch(() => undefined)
          if (++limited > MAX_429_PER_REQUEST)
            throw new RateLimitExceededError(
              `still rate limited (HTTP 429) after ${MAX_429_PER_REQUEST} waits`,
            )
          if (signal?.aborted) throw abortedBy(signal)
          continue
        }
        if (res.status >= 400 && res.status < 500) this.failStreak = 0 // the service answers
        // a 3xx that reached us had no usable Location (the client follows the rest): not a success
        if (res.status >= 300 || res.status < 200) throw await errorFromResponse(res)
        const result = await handle(res)
        this.failStreak = 0
        return result
      } catch (error) {
        // the call was cancelled or passed its deadline: what the request then threw is no failure of the
        // service's, and nothing is retried
        if (signal?.aborted) throw abortedBy(signal)
        if (this.options.signal?.aborted && !(error instanceof SflError)) throw abortedBy(this.options.signal)
        const retryable = error instanceof ServerStatusError || isRetryableNetworkError(error)
        if (!retryable) throw error
        if (failures >= this.options.retries) {
          // the cause stays attached: the CLI names the likely fix from its code (ECONNREFUSED: the base URL)
          const network = !(error instanceof HttpStatusError)
          const detail = network ? describe(error) : (error as Error).message
          const final = new ServerError(
            `${network ? 'network failure: ' : ''}${detail} (gave up after ${failures} retries)`,
            {cause: error, facts: {topic: 'gave-up', retries: failures, network, detail}},
          )
          // trip before this request's caller runs again, so no queued request slips out first
          if (++this.failStreak >= (this.options.breakAfter ?? BREAK_AFTER))
            this.halt(
              new CircuitOpenError(
                `stopped after ${this.failStreak} failures in a row (the service or the network seems down; last: ${final.message})`,
                {cause: final, facts: {topic: 'circuit-open', failures: this.failStreak}},
              ),
            )
          throw final
        }
        const delayMs = fullJitterDelay(failures, this.random, this.options.backoff ?? DEFAULT_BACKOFF)
        failures++
        this.stats.retries++
        this.emit({
          type: 'retry',
          attempt: failures,
          of: this.options.retries,
          delayMs,
          reason: describe(error),
          ...(error instanceof SflError ? {error} : {}),
        })
        await this.pause(delayMs, signal)
      }
    }
  }

  /** Wait until the budget can cover one more request, then count it as in flight. */
  private async acquire(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw abortedBy(signal)
      if (this.options.signal?.aborted) throw new InterruptedError('interrupted')
      if (this.halted) throw this.halted
      const now = this.now()
      const max = this.options.maxRequests
      if (max !== undefined && this.stats.requests >= max)
        throw new RequestCapReachedError(`reached the cap of ${max} requests`, {
          facts: {topic: 'request-cap', maxRequests: max},
        })
      if (this.pausedUntil > now) {
        await this.waitFor(this.pausedUntil - now, '429', signal)
        continue
      }
      if (this.resetAtMs !== undefined && now >= this.resetAtMs) {
        // The window turned: assume a fresh budget until a response says otherwise.
        this.lastRolledReset = this.resetAtMs
        this.resetAtMs = undefined
        this.remaining = this.limit
      }
      const reserve = this.options.reserve ?? 0
      if (this.remaining === undefined) {
        if (this.inFlight === 0) break // probe: the first response tells us the budget
        await this.changed()
        continue
      }
      if (this.remaining - this.inFlight - reserve > 0) break
      if (this.remaining - reserve > 0 || this.inFlight > 0) {
        // requests in flight may come back with news; wait for them rather than guess
        await this.changed(signal)
        continue
      }
      if (this.resetAtMs === undefined)
        throw new RateLimitExceededError(
          `the key's budget is spent${reserve ? ` (keeping ${reserve} requests in reserve)` : ''} and the service did not say when it resets` +
            (this.unreadableReset === undefined
              ? ''
              : ` (it sent ${this.unreadableReset}, which is no time within ${MAX_RESET_DISTANCE_DAYS} days in seconds or milliseconds)`),
          {facts: {topic: 'budget-spent', reserve}},
        )
      const jitter = RESET_JITTER_MS.min + this.random() * (RESET_JITTER_MS.max - RESET_JITTER_MS.min)
      await this.waitFor(this.resetAtMs - now + jitter, 'budget', signal)
    }
    this.inFlight++
    this.stats.requests++
  }

  private async waitFor(
    ms: number,
    reason: 'budget' | '429',
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (ms > this.options.maxWaitMs) {
      const seconds = Math.ceil(ms / 1000)
      const maxWaitSeconds = Math.round(this.options.maxWaitMs / 1000)
      throw new RateLimitExceededError(
        `rate limit: the key's budget returns in ${seconds} s, longer than the longest wait allowed (${maxWaitSeconds} s)` +
          (reason === '429' ? ' (the service answered 429)' : ''),
        {facts: {topic: 'wait-too-long', seconds, maxWaitSeconds, after429: reason === '429'}},
      )
    }
    this.emit({type: 'wait', reason, ms})
    await this.pause(ms, signal)
  }

  /** Sleep, but wake at once on Ctrl-C: an hour's wait for a reset must not make the user wait to quit. */
  private async pause(ms: number, own?: AbortSignal): Promise<void> {
    const signals = [
      this.haltController.signal,
      ...(this.options.signal ? [this.options.signal] : []),
      ...(own ? [own] : []),
    ]
    const signal = AbortSignal.any(signals)
    if (own?.aborted) throw abortedBy(own)
    if (this.options.signal?.aborted) throw new InterruptedError('interrupted')
    if (this.halted) throw this.halted
    if (this.options.sleep) {
      // an injected (virtual) clock: race it with the signal
      let onAbort = (): void => undefined
      const aborted = new Promise<void>((resolve) => {
        onAbort = () => resolve()
        signal?.addEventListener('abort', onAbort, {once: true})
      })
      await Promise.race([this.sleep(ms), aborted])
      signal.removeEventListener('abort', onAbort)
    } else {
      // the real timer is cleared on abort, so it cannot keep the process alive
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', done)
          resolve()
        }
        const timer = setTimeout(done, ms)
        signal?.addEventListener('abort', done, {once: true})
      })
    }
    if (own?.aborted) throw abortedBy(own)
    if (this.options.signal?.aborted) throw new InterruptedError('interrupted')
    // the getter, not the field: TypeScript keeps the field narrowed to undefined across the wait above
    const halted = this.haltedBy
    if (halted) throw halted
  }

  /** Spec 8.3: read the budget from every response; within one window remaining only goes down. */
  private observe(res: HttpResponse): void {
    const now = this.now()
    const o = parseRateLimit(res.headers, now)
    // an implausible reset is no reset: the budget it belongs to is never waited for
    if (o.implausible) this.unreadableReset = o.implausible.join(', ')
    else if (o.resetAtMs !== undefined) this.unreadableReset = undefined
    if (o.skewIgnoredMs !== undefined && !this.skewTold) {
      this.skewTold = true
      this.emit({type: 'clock', skewMs: o.skewIgnoredMs})
    }
    if (o.limit !== undefined) this.limit = o.limit
    if (o.remaining !== undefined) {
      if (o.resetAtMs !== undefined) {
        if (o.resetAtMs <= this.lastRolledReset + 1000 || o.resetAtMs <= now) {
          // a late answer from a window that has already turned: its count is stale
        } else if (this.resetAtMs === undefined || o.resetAtMs > this.resetAtMs + 1000) {
          if (this.resetAtMs !== undefined) this.lastRolledReset = this.resetAtMs
          this.resetAtMs = o.resetAtMs
          this.remaining = o.remaining
        } else {
          this.remaining = Math.min(this.remaining ?? Infinity, o.remaining)
        }
      } else {
        this.remaining = Math.min(this.remaining ?? Infinity, o.remaining)
      }
    }
    this.notify()
  }

  /** A 429 pauses every worker: Retry-After first, then the window reset, else exponential backoff. */
  private pauseFor429(res: HttpResponse): void {
    const now = this.now()
    const o = parseRateLimit(res.headers, now)
    const jitter = RESET_JITTER_MS.min + this.random() * (RESET_JITTER_MS.max - RESET_JITTER_MS.min)
    let until: number
    if (o.retryAfterMs !== undefined) until = now + o.retryAfterMs
    else if (o.resetAtMs !== undefined && o.resetAtMs > now) until = o.resetAtMs
    else until = now + fullJitterDelay(this.stats.rateLimited, () => 1, {baseMs: 1000, capMs: 60_000})
    this.pausedUntil = Math.max(this.pausedUntil, until + jitter)
    if (o.resetAtMs !== undefined && o.resetAtMs > now) {
      this.resetAtMs = o.resetAtMs
      this.remaining = 0
    } else {
      // no reset to wait for: after the pause, probe with one request before trusting any budget
      this.remaining = undefined
    }
    this.notify()
  }

  /** Until the budget's news changes, or `signal` aborts (the caller then checks it). */
  private changed(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve()
      const done = () => {
        signal?.removeEventListener('abort', done)
        resolve()
      }
      signal?.addEventListener('abort', done, {once: true})
      this.waiters.push(done)
    })
  }

  private notify(): void {
    const w = this.waiters
    this.waiters = []
    for (const resolve of w) resolve()
  }

  private emit(e: SchedulerEvent): void {
    this.options.onEvent?.(e)
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    // a system error's code (ECONNRESET) says more than its message; sfl's own errors say it in words
    const code = error instanceof SflError ? undefined : (error as {code?: unknown}).code
    return `${error.message}${typeof code === 'string' ? ` (${code})` : ''}`
  }
  return String(error)
}
