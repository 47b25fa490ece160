import {createServer, type Server} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'

import {afterEach, describe, expect, it} from 'vitest'

import {HttpClient} from '../../src/api/client.js'
import {cliMessage} from '../../src/cli/error-words.js'
import {WaitFeedback} from '../../src/cli/wait-feedback.js'
import {ServerError} from '../../src/errors.js'
import {Scheduler} from '../../src/schedule/scheduler.js'
import {FakeClock, settle} from '../helpers/fake-clock.js'

/** A terminal's stderr: what was written, and the screen as a person sees it (status lines overwritten). */
function terminal() {
  const writes: string[] = []
  return {
    writes,
    columns: 200,
    write: (text: string) => writes.push(text),
    /** Every line that stayed, then the status line on screen (if any). */
    screen(): string[] {
      const lines: string[] = []
      let current = ''
      // eslint-disable-next-line no-control-regex -- the erase-line sequence is what splits the screen
      for (const ch of writes.join('').split(/(\r\x1b\[2K|\n)/)) {
        if (ch === '\r\x1b[2K') current = ''
        else if (ch === '\n') {
          lines.push(current)
          current = ''
        } else current += ch
      }
      return current ? [...lines, `[status] ${current}`] : lines
    },
  }
}

describe('the status line while a request waits', () => {
  it('appears after 2 s, counts down --timeout every second, says when the answer is being read, clears after', async () => {
    const clock = new FakeClock()
    const tty = terminal()
    const f = new WaitFeedback(tty, {live: true, quiet: false, clock})
    f.onClientEvent({type: 'request', id: 1, host: 'api.example.com', timeoutMs: 30_000})
    await clock.advance(1999)
    expect(tty.writes).toEqual([])
    await clock.advance(1)
    expect(tty.screen()).toEqual([
      '[status] sfl: waiting for api.example.com to answer (2 s; 28 s left of --timeout 30 s)',
    ])
    await clock.advance(5000)
    expect(tty.screen()).toEqual([
      '[status] sfl: waiting for api.example.com to answer (7 s; 23 s left of --timeout 30 s)',
    ])
    f.onClientEvent({type: 'headers', id: 1, status: 200})
    await clock.advance(1000)
    expect(tty.screen()).toEqual([
      '[status] sfl: reading the answer from api.example.com (8 s; 22 s left of --timeout 30 s)',
    ])
    f.onClientEvent({type: 'settled', id: 1})
    expect(tty.screen()).toEqual([])
    const written = tty.writes.length
    await clock.advance(10_000)
    expect(tty.writes).toHaveLength(written) // no tick after the answer
  })

  it('a narrow terminal cuts the line to its width; one that reports no width (0) is taken as wide', async () => {
    for (const [columns, shown] of [
      [40, 'sfl: waiting for api.example.com to ans'], // 39 characters: the last column stays free
      [0, 'sfl: waiting for api.example.com to answer (2 s; 28 s left of --timeout 30 s)'],
    ] as const) {
      const clock = new FakeClock()
      const tty = {...terminal(), columns}
      const f = new WaitFeedback(tty, {live: true, quiet: false, clock})
      f.onClientEvent({type: 'request', id: 1, host: 'api.example.com', timeoutMs: 30_000})
      await clock.advance(2000)
      expect(tty.writes).toEqual([`\r\x1b[2K${shown}`])
    }
  })

  it('an answer within 2 s prints nothing at all', async () => {
    const clock = new FakeClock()
    const tty = terminal()
    const f = new WaitFeedback(tty, {live: true, quiet: false, clock})
    f.onClientEvent({type: 'request', id: 1, host: 'h', timeoutMs: 30_000})
    await clock.advance(1500)
    f.onClientEvent({type: 'settled', id: 1})
    await clock.advance(5000)
    expect(tty.writes).toEqual([])
  })

  it('not at a terminal, or with --quiet: no status or retry line', async () => {
    for (const opts of [
      {live: false, quiet: false},
      {live: false, quiet: true},
    ]) {
      const clock = new FakeClock()
      const tty = terminal()
      const f = new WaitFeedback(tty, {...opts, clock})
      f.onClientEvent({type: 'request', id: 1, host: 'h', timeoutMs: 30_000})
      f.onSchedulerEvent({type: 'retry', attempt: 1, of: 3, delayMs: 500, reason: 'boom'})
      await clock.advance(20_000)
      expect(tty.writes).toEqual([])
    }
  })

  it('a long rate-limit wait is said in a pipe too, what it waits for and when it ends as a clock time; not with --quiet', () => {
    const clock = new FakeClock()
    const at = (ms: number) => new Date(ms).toTimeString().slice(0, 8) // HH:MM:SS, written independently
    const pipe = terminal()
    new WaitFeedback(pipe, {live: false, quiet: false, clock}).onSchedulerEvent({
      type: 'wait',
      reason: '429',
      ms: 12_500,
    })
    expect(pipe.writes).toEqual([
      `sfl: the service answered 429 (too many requests); retrying at ${at(12_500)} (in 13 s)\n`,
    ])
    const quiet = terminal()
    new WaitFeedback(quiet, {live: false, quiet: true, clock}).onSchedulerEvent({
      type: 'wait',
      reason: 'budget',
      ms: 60_000,
    })
    expect(quiet.writes).toEqual([])
  })

  it('at a terminal the wait counts down each second and clears when it ends', async () => {
    const clock = new FakeClock()
    const at = new Date(18_000).toTimeString().slice(0, 8)
    const tty = terminal()
    const f = new WaitFeedback(tty, {live: true, quiet: false, clock})
    f.onSchedulerEvent({type: 'wait', reason: 'budget', ms: 18_000})
    const said = `sfl: the key's requests for this rate-limit window are spent; the window resets at ${at}`
    expect(tty.screen()).toEqual([`${said} (in 18 s)`, `[status] sfl: waiting: the key's requests for this rate-limit window are spent; the window resets at ${at} (18 s left)`]) // prettier-ignore
    await clock.advance(1000)
    expect(tty.screen().at(-1)).toMatch(/\(17 s left\)$/)
    await clock.advance(10_000)
    expect(tty.screen().at(-1)).toMatch(/\(7 s left\)$/)
    await clock.advance(8000)
    expect(tty.screen()).toEqual([`${said} (in 18 s)`])
  })

  it('Ctrl-C while a status line is drawn erases it, then ends the process as before', async () => {
    const clock = new FakeClock()
    const tty = terminal()
    const handlers = new Set<() => void>()
    let resumed = 0
    const interrupt = {on: (h: () => void) => handlers.add(h), off: (h: () => void) => handlers.delete(h), resume: () => resumed++} // prettier-ignore
    const f = new WaitFeedback(tty, {live: true, quiet: false, clock, interrupt})
    f.onClientEvent({type: 'request', id: 1, host: 'api.example.com', timeoutMs: 30_000})
    expect(handlers.size).toBe(0) // nothing on screen yet: Ctrl-C is left alone
    await clock.advance(2000)
    expect(tty.screen().at(-1)).toMatch(/^\[status\] sfl: waiting for api.example.com to answer/)
    expect(handlers.size).toBe(1)
    for (const h of [...handlers]) h()
    expect(tty.screen()).toEqual([])
    expect(resumed).toBe(1)
    expect(handlers.size).toBe(0)
  })

  it('stop() clears the line and ignores what follows (a long run draws its own progress)', async () => {
    const clock = new FakeClock()
    const tty = terminal()
    const f = new WaitFeedback(tty, {live: true, quiet: false, clock})
    f.onClientEvent({type: 'request', id: 1, host: 'h', timeoutMs: 30_000})
    await clock.advance(3000)
    f.stop()
    expect(tty.screen()).toEqual([])
    f.onClientEvent({type: 'request', id: 2, host: 'h', timeoutMs: 30_000})
    await clock.advance(10_000)
    expect(tty.screen()).toEqual([])
  })
})

describe('a server that hangs, at a terminal, on a virtual clock', () => {
  let server: Server | undefined
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
    server = undefined
  })

  it('says what it waits for, each retry with its reason, and ends with the one error', async () => {
    const sockets = new Set<Socket>()
    let received = 0
    server = createServer(() => {
      received++ // and never answer
    })
    server.on('connection', (s) => {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
    })
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`
    const clock = new FakeClock()
    const tty = terminal()
    const feedback = new WaitFeedback(tty, {live: true, quiet: false, clock})
    const client = new HttpClient({
      apiKey: 'sk_test_FEEDBACK_0123456789',
      timeoutMs: 30_000,
      userAgent: 'test',
      onEvent: feedback.onClientEvent,
      timers: clock,
    })
    const scheduler = new Scheduler({
      concurrency: 1,
      retries: 2,
      maxWaitMs: 60_000,
      now: clock.now,
      sleep: clock.sleep,
      random: () => 0.5,
      onEvent: feedback.onSchedulerEvent,
    })
    const run = scheduler.run(
      () => client.get(`http://${host}/v1/special-financing?fips=06067&apn=1`),
      (res) => res.text(),
    )
    const outcome = run.then(
      () => undefined,
      (error: unknown) => error,
    )
    // the request itself is real I/O (loopback connect): wait for the server to see it, a few ms
    const arrived = async (n: number) => {
      for (let i = 0; i < 400 && received < n; i++) await new Promise((r) => setTimeout(r, 5))
      expect(received).toBe(n)
      await settle()
    }
    await arrived(1)
    await clock.advance(2000)
    expect(tty.screen()).toEqual([
      `[status] sfl: waiting for ${host} to answer (2 s; 28 s left of --timeout 30 s)`,
    ])
    await clock.advance(28_000) // the deadline: the first attempt fails, retry 1 after 0.25 s
    const timedOut = `no complete answer from ${host} within --timeout 30 s (connect, headers and body); the server is slow or dripping its answer`
    const neutral = timedOut.replace('--timeout ', '')
    expect(tty.screen()).toEqual([`sfl: retrying (1 of 2) after 0.3 s: ${timedOut}`])
    await clock.advance(250)
    await arrived(2)
    await clock.advance(30_000)
    await clock.advance(500)
    await arrived(3)
    await clock.advance(30_000)
    const error = await outcome
    expect(error).toBeInstanceOf(ServerError)
    // the error's own words name no flag; the CLI prints its own (src/cli/error-words.ts)
    expect((error as Error).message).toBe(`network failure: ${neutral} (gave up after 2 retries)`)
    expect(cliMessage(error as ServerError)).toBe(`network failure: ${timedOut} (gave up after 2 retries)`)
    // every line a person saw, in order; no status line left under the error the command prints
    expect(tty.screen()).toEqual([
      `sfl: retrying (1 of 2) after 0.3 s: ${timedOut}`,
      `sfl: retrying (2 of 2) after 0.5 s: ${timedOut}`,
    ])
    expect(tty.writes.join('')).toContain(`waiting for ${host} to answer (29 s; 1 s left of --timeout 30 s)`)
    expect(received).toBe(3)
    for (const s of sockets) s.destroy()
  })
})
