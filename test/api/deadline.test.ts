import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {HttpClient, isRetryableNetworkError} from '../../src/api/client.js'
import {cliMessage} from '../../src/cli/error-words.js'
import {startHostileServer, type HostileServer} from '../hostile/server.js'
import {RequestTimeoutError} from '../../src/errors.js'

/**
 * --timeout is one deadline for the whole request, body included (undici's bodyTimeout is per chunk and
 * a dripping server never trips it), and the run's abort signal ends a request at once.
 */
let server: HostileServer
beforeAll(async () => {
  server = await startHostileServer()
})
afterAll(async () => server.close())

function client(timeoutMs: number): HttpClient {
  return new HttpClient({apiKey: 'sk_test_deadline_0123', timeoutMs, userAgent: 'sfl-test'})
}

describe('HttpClient deadline', () => {
  // the drip server sends a byte a second of a 100,000-byte body: only a deadline ends the read before
  // the test's own timeout, so the error's kind and message say which one did (no clock is read)
  it('a dripping body ends at the deadline with a retryable RequestTimeoutError', async () => {
    const res = await client(400).get(`${server.baseUrl('drip')}/special-financing?fips=06067`)
    const error = await res.text().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(RequestTimeoutError)
    expect(isRetryableNetworkError(error)).toBe(true)
    expect((error as Error).message).toMatch(/within 0\.4 s \(connect, headers and body\)/)
    // the CLI words it with its flag (src/cli/error-words.ts)
    expect(cliMessage(error as RequestTimeoutError)).toMatch(
      /within --timeout 0\.4 s \(connect, headers and body\)/,
    )
  })

  it('the body iterator honours the deadline too', async () => {
    const res = await client(400).get(`${server.baseUrl('drip')}/special-financing?fips=06067`)
    const read = async () => {
      for await (const chunk of res.body) void chunk
    }
    await expect(read()).rejects.toBeInstanceOf(RequestTimeoutError)
  })

  it('the run’s abort signal ends a dripping read at once, and is not reported as a timeout', async () => {
    const abort = new AbortController()
    const res = await client(10_000).get(
      `${server.baseUrl('drip')}/special-financing?fips=06067`,
      abort.signal,
    )
    setTimeout(() => abort.abort(), 100)
    const error = await res.text().then(
      () => undefined,
      (e: unknown) => e,
    )
    // had the abort not ended it, the 10 s deadline would have: a RequestTimeoutError, after the test's timeout
    expect(error).not.toBeInstanceOf(RequestTimeoutError)
    expect(error).toBeDefined()
  })

  it('a request that finishes in time leaves no timer behind (the deadline is cleared)', async () => {
    const res = await client(60_000).get(`${server.baseUrl('ok')}/special-financing?fips=06067`)
    expect(JSON.parse(await res.text())).toMatchObject({status: 'success'})
  })
})
