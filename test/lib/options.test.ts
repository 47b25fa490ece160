import {describe, expect, it} from 'vitest'

import {createClient, UsageError} from '../../src/lib/index.js'
import {startHangingServer} from '../helpers/hanging-server.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * createClient checks every option before it builds anything or sends a request: a program passes what its
 * user typed. Each refusal is a UsageError (code USAGE) naming the option and what it takes; the key's
 * value is never shown. A server that records requests proves none was sent.
 */
describe('createClient refuses a bad option with a UsageError naming it, and sends nothing', () => {
  it.each([
    [
      'concurrency',
      -1,
      'createClient: concurrency must be a whole number from 1 to 64 (requests in flight at once); got -1',
    ],
    [
      'concurrency',
      0,
      'createClient: concurrency must be a whole number from 1 to 64 (requests in flight at once); got 0',
    ],
    [
      'concurrency',
      '2',
      'createClient: concurrency must be a whole number from 1 to 64 (requests in flight at once); got "2"',
    ],
    [
      'concurrency',
      Number.NaN,
      'createClient: concurrency must be a whole number from 1 to 64 (requests in flight at once); got NaN',
    ],
    [
      'concurrency',
      2.5,
      'createClient: concurrency must be a whole number from 1 to 64 (requests in flight at once); got 2.5',
    ],
    [
      'timeout',
      -5,
      'createClient: timeout must be a number of seconds above 0 to 86400 (seconds for each whole request); got -5',
    ],
    [
      'timeout',
      0,
      'createClient: timeout must be a number of seconds above 0 to 86400 (seconds for each whole request); got 0',
    ],
    [
      'timeout',
      Number.POSITIVE_INFINITY,
      'createClient: timeout must be a number of seconds above 0 to 86400 (seconds for each whole request); got Infinity',
    ],
    [
      'retries',
      -1,
      'createClient: retries must be a whole number from 0 to 20 (retries per request); got -1',
    ],
    [
      'retries',
      '3',
      'createClient: retries must be a whole number from 0 to 20 (retries per request); got "3"',
    ],
    [
      'maxWait',
      -1,
      'createClient: maxWait must be a number of seconds from 0 to 86400 (seconds of the longest rate-limit wait); got -1',
    ],
    [
      'maxWait',
      Number.NaN,
      'createClient: maxWait must be a number of seconds from 0 to 86400 (seconds of the longest rate-limit wait); got NaN',
    ],
    ['signal', {aborted: false}, 'createClient: signal must be an AbortSignal'],
    ['onEvent', 'log', 'createClient: onEvent must be a function'],
    [
      'dispatcher',
      {},
      'createClient: dispatcher must be an undici Dispatcher (an object with a dispatch method)',
    ],
    ['baseUrl', 42, 'createClient: baseUrl must be a string (the base URL with its /v1 segment)'],
    ['profile', '', 'createClient: profile must be a profile name (a non-empty string)'],
    ['apiKey', 12345678, 'createClient: apiKey must be a string'],
    [
      'timeOut',
      5,
      'createClient has no option "timeOut"; its options are baseUrl, apiKey, profile, configDir, concurrency, retries, timeout, maxWait, signal, onEvent, dispatcher',
    ],
  ])('%s: %j', async (name, value, message) => {
    const server = await startHangingServer()
    try {
      const options = {baseUrl: server.baseUrl, apiKey: 'k-lib-123456', configDir: tempDir(), [name]: value}
      // a JavaScript caller: the types would refuse these, so they are passed as unknown
      const error = await createClient(options as unknown as Parameters<typeof createClient>[0]).catch(
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(UsageError)
      expect((error as UsageError).code).toBe('USAGE')
      expect((error as UsageError).exitCode).toBe(2)
      expect((error as Error).message).toBe(message)
      expect(server.requests).toEqual([])
    } finally {
      await server.close()
    }
  })

  it('an options value that is no object is refused, and an API key is never shown', async () => {
    const not = await createClient('https://api.example.com/v1' as never).catch((e: unknown) => e)
    expect((not as Error).message).toBe(
      'createClient takes an options object; got "https://api.example.com/v1"',
    )
    const key = await createClient({apiKey: ['sk_live_SHOWNOWHERE'] as never}).catch((e: unknown) => e)
    expect((key as Error).message).toBe('createClient: apiKey must be a string')
  })

  it('every default and a value at each bound is accepted', async () => {
    const base = {baseUrl: 'https://api.example.com/v1', apiKey: 'k-lib-123456', configDir: tempDir()}
    await expect(createClient(base)).resolves.toMatchObject({baseUrl: base.baseUrl})
    await expect(
      createClient({
        ...base,
        concurrency: 64,
        retries: 0,
        timeout: 0.5,
        maxWait: 0,
        signal: new AbortController().signal,
      }),
    ).resolves.toBeDefined()
  })
})
