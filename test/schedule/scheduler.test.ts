import {describe, expect, it} from 'vitest'

import type {HttpResponse} from '../../src/api/client.js'
import {
  InterruptedError,
  NotFoundError,
  RateLimitExceededError,
  ServerError,
  RequestCapReachedError,
} from '../../src/errors.js'
import {cliMessage} from '../../src/cli/error-words.js'
import {fullJitterDelay} from '../../src/schedule/retry.js'
import {Scheduler, type SchedulerOptions} from '../../src/schedule/scheduler.js'

/**
 * A virtual clock: sleeping advances time instantly, so waits of an hour take microseconds. Concurrent
 * sleepers share the timeline: each moves the clock to its own wake-up time, never back.
 */
function clock(start = 1_800_000_000_000) {
  const c = {
    now: start,
    slept: [] as number[],
    sleep: async (ms: number) => {
      c.slept.push(ms)
      const wake = c.now + ms
      await Promise.resolve()
      c.now = Math.max(c.now, wake)
    },
  }
  return c
}

function response(
  status: number,
  headers: Record<string, string> = {},
  body = '{"status":"success","data":{}}',
): HttpResponse {
  return {
    status,
    url: 'http://127.0.0.1/v1/special-financing',
    headers,
    body: (async function* () {
      yield Buffer.from(body)
    })(),
    text: async () => body,
    dump: async () => undefined,
    cancel: () => undefined,
  }
}

/** A fixed-window server on the virtual clock, like spec 8: it records when each request arrived. */
function server(c: ReturnType<typeof clock>, limit: number, windowMs: number, opts: {skewMs?: number} = {}) {
  const s = {
    sent: [] as number[],
    rejected: 0,
    inFlight: 0,
    maxInFlight: 0,
    handle: async (): Promise<HttpResponse> => {
      s.inFlight++
      s.maxInFlight = Math.max(s.maxInFlight, s.inFlight)
      const serverNow = c.now + (opts.skewMs ?? 0)
      const start = Math.floor(serverNow / windowMs) * windowMs
      // count synchronously on arrival, as a real server does, then answer after a tick
      const used = s.sent.filter((t) => t + (opts.skewMs ?? 0) >= start).length
      const reset = String((start + windowMs) / 1000)
      const base = {
        date: new Date(serverNow).toUTCString(),
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-reset': reset,
      }
      if (used < limit) s.sent.push(c.now)
      await Promise.resolve()
      s.inFlight--
      if (used >= limit) {
        s.rejected++
        return response(429, {
          ...base,
          'x-ratelimit-remaining': '0',
          'retry-after': String(Math.ceil((start + windowMs - serverNow) / 1000)),
        })
      }
      return response(200, {...base, 'x-ratelimit-remaining': String(limit - used - 1)})
    },
  }
  return s
}

function scheduler(c: ReturnType<typeof clock>, o: Partial<SchedulerOptions> = {}) {
  return new Scheduler({
    concurrency: 4,
    retries: 3,
    maxWaitMs: 3_600_000,
    now: () => c.now,
    sleep: c.sleep,
    random: () => 0.5,
    ...o,
  })
}

const ok = async () => 'ok'

describe('Scheduler budget', () => {
  it('uses the whole window and not one request more: 50 requests at 20 per 10 s send no 429', async () => {
    const c = clock(1_800_000_000_000)
    const srv = server(c, 20, 10_000)
    const s = scheduler(c)
    await Promise.all(Array.from({length: 50}, () => s.run(srv.handle, ok)))
    expect(srv.rejected).toBe(0)
    expect(srv.sent).toHaveLength(50)
    expect(s.stats.requests).toBe(50)
    // three windows: 20 + 20 + 10, so the run ends early in the third window
    const windows = new Set(srv.sent.map((t) => Math.floor(t / 10_000)))
    expect(windows.size).toBe(3)
    expect(c.now - 1_800_000_000_000).toBeLessThan(20_000 + 500)
  })

  it('sends only one request until the first response tells the budget', async () => {
    const c = clock()
    const srv = server(c, 100, 60_000)
    const s = scheduler(c, {concurrency: 8})
    const order: string[] = []
    const send = async () => {
      order.push(`send:${s.budget().remaining ?? 'unknown'}`)
      return srv.handle()
    }
    await Promise.all(Array.from({length: 3}, () => s.run(send, ok)))
    expect(order[0]).toBe('send:unknown')
    expect(order.slice(1).every((o) => o !== 'send:unknown')).toBe(true)
  })

  it('never dispatches beyond the budget, counting requests in flight', async () => {
    const c = clock()
    let remaining = 3
    let inFlight = 0
    let maxInFlight = 0
    const s = scheduler(c, {concurrency: 10})
    const send = async () => {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      await new Promise((r) => setTimeout(r, 1))
      inFlight--
      remaining--
      return response(200, {
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': String(remaining),
        'x-ratelimit-reset': String(c.now / 1000 + 1e6),
      })
    }
    await s.run(send, ok) // learn the budget: 2 left
    const results = await Promise.allSettled(Array.from({length: 5}, () => s.run(send, ok)))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2)
    expect(maxInFlight).toBeLessThanOrEqual(2)
    // the rest would need a reset a million seconds away: beyond --max-wait
    expect(
      results
        .filter((r) => r.status === 'rejected')
        .every((r) => (r as PromiseRejectedResult).reason instanceof RateLimitExceededError),
    ).toBe(true)
  })

  it('keeps --reserve requests of the window for colleagues', async () => {
    const c = clock()
    const srv = server(c, 10, 60_000)
    const s = scheduler(c, {reserve: 4, maxWaitMs: 1000})
    const results = await Promise.allSettled(Array.from({length: 10}, () => s.run(srv.handle, ok)))
    expect(srv.sent).toHaveLength(6)
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(4)
  })

  it('stops at --max-requests', async () => {
    const c = clock()
    const srv = server(c, 100, 60_000)
    const s = scheduler(c, {maxRequests: 5})
    const results = await Promise.allSettled(Array.from({length: 8}, () => s.run(srv.handle, ok)))
    expect(srv.sent).toHaveLength(5)
    expect(
      results.filter((r) => r.status === 'rejected' && r.reason instanceof RequestCapReachedError),
    ).toHaveLength(3)
  })

  it('takes remaining only downward within a window when responses arrive out of order', async () => {
    const c = clock()
    const reset = String(c.now / 1000 + 600)
    const replies = [8, 5, 9] // the 9 was sent first but arrived last
    const s = scheduler(c, {concurrency: 1})
    for (const r of replies)
      await s.run(
        async () =>
          response(200, {
            'x-ratelimit-limit': '10',
            'x-ratelimit-remaining': String(r),
            'x-ratelimit-reset': reset,
          }),
        ok,
      )
    expect(s.budget().remaining).toBe(5)
  })

  it('waits for the reset of a skewed server clock on the local clock', async () => {
    const c = clock(1_800_000_000_000)
    const srv = server(c, 2, 10_000, {skewMs: 120_000}) // server two minutes ahead
    const s = scheduler(c)
    const t0 = c.now
    await Promise.all(Array.from({length: 4}, () => s.run(srv.handle, ok)))
    expect(srv.rejected).toBe(0)
    // one wait, for the window's end on the local clock: not two minutes more or less
    expect(c.now - t0).toBeGreaterThan(0)
    expect(c.now - t0).toBeLessThan(10_500)
  })

  it('gives up with RateLimitExceededError when the reset is beyond --max-wait', async () => {
    const c = clock()
    const srv = server(c, 1, 3_600_000)
    const s = scheduler(c, {maxWaitMs: 60_000})
    await s.run(srv.handle, ok)
    const error = await s.run(srv.handle, ok).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitExceededError)
    expect((error as Error).message).toMatch(/longer than the longest wait allowed \(60 s\)$/)
    expect(cliMessage(error as RateLimitExceededError)).toMatch(/longer than --max-wait 60 s$/)
    expect(srv.sent).toHaveLength(1)
  })
})

describe('Scheduler and a reset that is no plausible time', () => {
  it('a reset in milliseconds two hours ahead is waited for as two hours, not 1.8 trillion seconds', async () => {
    const c = clock()
    const waits: number[] = []
    const s = scheduler(c, {maxWaitMs: 3 * 3_600_000, onEvent: (e) => e.type === 'wait' && waits.push(e.ms)})
    let calls = 0
    const reset = String(c.now + 7_200_000)
    const send = async () =>
      ++calls === 1
        ? response(200, {'x-ratelimit-limit': '1', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset})
        : response(200, {'x-ratelimit-limit': '1', 'x-ratelimit-remaining': '0'})
    await s.run(send, ok)
    await s.run(send, ok)
    expect(waits).toHaveLength(1)
    expect(waits[0]).toBeGreaterThanOrEqual(7_200_000)
    expect(waits[0]).toBeLessThan(7_200_500)
  })

  it('a spent budget whose reset is no time ends at once (exit 5), naming the header, without waiting', async () => {
    const c = clock()
    const s = scheduler(c)
    const send = async () =>
      response(200, {
        'x-ratelimit-limit': '1000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1793893735937999',
      })
    await s.run(send, ok)
    const error = await s.run(send, ok).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitExceededError)
    expect((error as Error).message).toBe(
      "the key's budget is spent and the service did not say when it resets (it sent X-RateLimit-Reset: 1793893735937999, which is no time within 400 days in seconds or milliseconds)",
    )
    expect(c.slept).toEqual([])
  })

  it('a 429 whose reset is no time is backed off (a second, then two...), never waited for', async () => {
    const c = clock()
    let calls = 0
    const s = scheduler(c)
    const send = async () =>
      ++calls === 1
        ? response(429, {'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1793893735937999'})
        : response(200)
    await expect(s.run(send, ok)).resolves.toBe('ok')
    expect(calls).toBe(2)
    expect(c.slept).toHaveLength(1)
    expect(c.slept[0]).toBeLessThan(60_000 + 400)
  })
})

describe('Scheduler on 429', () => {
  it('honours Retry-After in seconds and retries the request', async () => {
    const c = clock()
    let calls = 0
    const s = scheduler(c)
    const send = async () => (++calls === 1 ? response(429, {'retry-after': '7'}) : response(200))
    await expect(s.run(send, ok)).resolves.toBe('ok')
    expect(calls).toBe(2)
    expect(s.stats.rateLimited).toBe(1)
    expect(c.slept[0]).toBeGreaterThanOrEqual(7000)
    expect(c.slept[0]).toBeLessThan(7500)
  })

  it('honours Retry-After as an HTTP date', async () => {
    const c = clock()
    let calls = 0
    const s = scheduler(c)
    const date = new Date(c.now).toUTCString()
    const send = async () =>
      ++calls === 1
        ? response(429, {date, 'retry-after': new Date(c.now + 20_000).toUTCString()})
        : response(200)
    await s.run(send, ok)
    expect(c.slept[0]).toBeGreaterThanOrEqual(20_000)
    expect(c.slept[0]).toBeLessThan(20_500)
  })

  it('backs off on a 429 with no headers at all, and pauses every worker', async () => {
    const c = clock()
    let calls = 0
    const sentAt: number[] = []
    const s = scheduler(c, {concurrency: 3})
    const send = async () => {
      sentAt.push(c.now)
      return ++calls === 1 ? response(429) : response(200)
    }
    await Promise.all([s.run(send, ok), s.run(send, ok), s.run(send, ok)])
    expect(s.stats.rateLimited, JSON.stringify(sentAt.map((t) => t - sentAt[0]!))).toBe(1)
    // after the 429 at t0, nothing was sent until the pause ended
    expect(
      sentAt.slice(1).every((t) => t >= sentAt[0]! + 1000),
      JSON.stringify(sentAt.map((t) => t - sentAt[0]!)),
    ).toBe(true)
  })

  it('gives up after repeated 429s', async () => {
    const c = clock()
    const s = scheduler(c)
    await expect(s.run(async () => response(429, {'retry-after': '1'}), ok)).rejects.toBeInstanceOf(
      RateLimitExceededError,
    )
  })
})

describe('Scheduler retries', () => {
  it('retries 5xx with full-jitter backoff, then gives up with a ServerError', async () => {
    const c = clock()
    let calls = 0
    const s = scheduler(c, {retries: 3, random: () => 0.999})
    await expect(
      s.run(async () => (calls++, response(503, {}, '<html>busy</html>')), ok),
    ).rejects.toBeInstanceOf(ServerError)
    expect(calls).toBe(4)
    expect(c.slept).toEqual([499, 999, 1998])
  })

  it('retries a connection reset and a broken body stream', async () => {
    const c = clock()
    let calls = 0
    const s = scheduler(c)
    const send = async () => {
      calls++
      if (calls === 1) throw Object.assign(new Error('socket hang up'), {code: 'ECONNRESET'})
      return response(200)
    }
    let handled = 0
    const handle = async () => {
      if (++handled === 1) throw Object.assign(new Error('other side closed'), {code: 'UND_ERR_SOCKET'})
      return 'done'
    }
    await expect(s.run(send, handle)).resolves.toBe('done')
    expect(calls).toBe(3)
    expect(s.stats.retries).toBe(2)
  })

  it.each([400, 401, 403, 404])('never retries %i', async (status) => {
    const c = clock()
    let calls = 0
    const s = scheduler(c)
    await expect(
      s.run(async () => (calls++, response(status, {}, '{"status":"error","code":1,"message":"m"}')), ok),
    ).rejects.toThrow(/m/)
    expect(calls).toBe(1)
  })

  it('maps 404 to NotFoundError with the service message', async () => {
    const c = clock()
    const s = scheduler(c)
    await expect(
      s.run(
        async () => response(404, {}, '{"status":"error","code":404,"message":"No property matches."}'),
        ok,
      ),
    ).rejects.toEqual(
      expect.objectContaining({
        constructor: NotFoundError,
        message: 'no property matches (HTTP 404): No property matches.',
      }),
    )
  })
})

describe('fullJitterDelay', () => {
  it('stays within [0, min(cap, base·2^attempt))', () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const ceiling = Math.min(20_000, 500 * 2 ** attempt)
      expect(fullJitterDelay(attempt, () => 0)).toBe(0)
      expect(fullJitterDelay(attempt, () => 0.999999)).toBeLessThan(ceiling)
      expect(fullJitterDelay(attempt, () => 0.999999)).toBeGreaterThanOrEqual(ceiling - 1)
    }
  })
})

describe('Scheduler and Ctrl-C', () => {
  it('ends a long wait for the reset at once when the run is aborted, and sends nothing more', async () => {
    const abort = new AbortController()
    let sent = 0
    const s = new Scheduler({
      concurrency: 1,
      retries: 0,
      maxWaitMs: 3_600_000,
      signal: abort.signal,
      // a real clock and real timers: the hour-long sleep must be cut short by the abort
      random: () => 0,
    })
    const reset = String(Math.floor(Date.now() / 1000) + 3000)
    const send = async () => (
      sent++,
      response(200, {'x-ratelimit-limit': '1', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset})
    )
    await s.run(send, ok)
    const waiting = s.run(send, ok)
    setTimeout(() => abort.abort(), 20)
    // the wait is 50 minutes: only the abort settles it within the test's timeout (no clock is read)
    await expect(waiting).rejects.toBeInstanceOf(InterruptedError)
    expect(sent).toBe(1)
  })
})
