import {describe, expect, it} from 'vitest'

import {keySourceText, nextStep, withHint, type RunOrigin} from '../../src/cli/error-hints.js'
import {cliMessage} from '../../src/cli/error-words.js'
import {
  ForbiddenError,
  InvalidKeyError,
  NotFoundError,
  RateLimitExceededError,
  RequestTimeoutError,
  ServerError,
} from '../../src/errors.js'

const origin: RunOrigin = {
  baseUrl: 'https://api.example.com/v1',
  baseUrlSource: 'env',
  keySource: 'env',
  profile: 'default',
  profileHasKey: true,
  configPath: '/home/u/.config/sfl/config.json',
}
const withCode = (code: string) => Object.assign(new Error(`getaddrinfo ${code} api.example.com`), {code})
const h = (err: ServerError | InvalidKeyError | ForbiddenError | NotFoundError, o: Partial<RunOrigin> = {}) =>
  withHint(err, {...origin, ...o})

describe('hints that depend on where the settings came from', () => {
  it.each([
    ['ECONNREFUSED', 'nothing accepts connections at that address'],
    ['ENOTFOUND', 'no such host (or DNS or a proxy failed)'],
    ['EAI_AGAIN', 'the host name could not be looked up just now'],
    ['EHOSTUNREACH', 'no route to that host'],
  ])('%s, deep in the cause chain, names the base URL in use and its source', (code, what) => {
    const err = new ServerError('network failure (gave up after 3 retries)', {
      cause: new Error('fetch failed', {cause: withCode(code)}),
    })
    expect(h(err)).toBe(
      `network failure (gave up after 3 retries); ${what}: check the base URL, in use https://api.example.com/v1 (from SFL_BASE_URL; --base-url overrides it)`,
    )
  })

  it.each([
    ['flag', 'from --base-url'],
    [
      'profile',
      'from profile default in /home/u/.config/sfl/config.json; --base-url or SFL_BASE_URL override it',
    ],
    ['sandbox', 'the embedded sandbox'],
  ] as const)('a base URL from %s says so', (baseUrlSource, text) => {
    const err = new ServerError('x', {cause: withCode('ECONNREFUSED')})
    expect(h(err, {baseUrlSource})).toContain(`(${text})`)
  })

  it('a URL with credentials in it is shown without them', () => {
    const err = new ServerError('x', {cause: withCode('ECONNREFUSED')})
    expect(h(err, {baseUrl: 'https://user:pass@api.example.com/v1'})).toContain(
      'in use https://api.example.com/v1 ',
    )
  })

  it('other failures keep their message', () => {
    expect(h(new ServerError('server error (HTTP 500)'))).toBe('server error (HTTP 500)')
    expect(h(new NotFoundError('no property matches', 404))).toBe('no property matches')
    expect(withHint(new ServerError('x', {cause: withCode('ECONNREFUSED')}), undefined)).toBe('x')
  })

  it.each([
    [
      'env',
      true,
      'The key came from SFL_API_KEY (it is set and overrides profile default): fix SFL_API_KEY, or unset it to use the profile',
    ],
    [
      'env',
      false,
      'The key came from SFL_API_KEY: fix SFL_API_KEY, or unset it and store a key with `sfl keys set`',
    ],
    [
      'flag',
      true,
      'The key came from --api-key (it is set and overrides profile default): check the key given',
    ],
    ['stdin', false, 'The key came from --api-key - (stdin): check the key given'],
    [
      'profile',
      false,
      'The key came from profile default in /home/u/.config/sfl/config.json: store a valid key with `sfl keys set --profile default`',
    ],
    ['sandbox', false, "The key came from the sandbox's demo keys: see `sfl sandbox` for the demo keys"],
  ] as const)('a 401 with a key from %s (profile has a key: %s)', (keySource, profileHasKey, text) => {
    const err = new InvalidKeyError('the API key is invalid or missing (HTTP 401): nope', 401, {
      facts: {topic: 'invalid-key', said: 'nope'},
    })
    expect(h(err, {keySource, profileHasKey})).toBe(
      `the API key is invalid or missing (HTTP 401): nope. ${text}`,
    )
    // without the run's origin, the general advice (one full stop, whatever the service's sentence ends in)
    expect(withHint(err, undefined)).toBe(
      'the API key is invalid or missing (HTTP 401): nope. Set SFL_API_KEY, pass --api-key, or run `sfl keys set`',
    )
  })

  it('a 403 names the key source', () => {
    expect(h(new ForbiddenError('not permitted (HTTP 403): Forbidden', 403), {profileHasKey: false})).toBe(
      'not permitted (HTTP 403): Forbidden; the key came from SFL_API_KEY: a key with permission for this county is needed',
    )
    expect(keySourceText({...origin, keySource: 'profile', profile: 'prod'})).toBe(
      'profile prod in /home/u/.config/sfl/config.json',
    )
  })
})

describe('messages of the third trial (issue 31)', () => {
  it('no sentence repeats the service’s message: a 401 whose message echoes sfl’s is said once', () => {
    const err = new InvalidKeyError('the API key is invalid or missing (HTTP 401): The API key is invalid or missing', 401, {facts: {topic: 'invalid-key', said: 'The API key is invalid or missing'}}) // prettier-ignore
    expect(h(err)).toBe(
      'the API key is invalid or missing (HTTP 401). The key came from SFL_API_KEY (it is set and overrides profile default): fix SFL_API_KEY, or unset it to use the profile',
    )
    // what the service adds is kept
    const more = new InvalidKeyError('the API key is invalid or missing (HTTP 401): key revoked on 2026-11-01', 401, {facts: {topic: 'invalid-key', said: 'key revoked on 2026-11-01'}}) // prettier-ignore
    expect(h(more)).toContain('(HTTP 401): key revoked on 2026-11-01.')
  })

  it('a timeout suggests a longer --timeout', () => {
    const err = new RequestTimeoutError('no complete answer from api.example.com within 4 s (connect, headers and body); the server is slow or dripping its answer', {facts: {topic: 'request-timeout', host: 'api.example.com', seconds: 4}}) // prettier-ignore
    expect(`${cliMessage(err)}${nextStep(err, 0)}`).toBe(
      'no complete answer from api.example.com within --timeout 4 s (connect, headers and body); the server is slow or dripping its answer; if the server is only slow, give it longer with --timeout 10 (each retry waits the same, and --retries 0 fails sooner)',
    )
  })

  it('exit 5 says when the budget returns, as a clock time', () => {
    const err = new RateLimitExceededError(
      "rate limit: the key's budget returns in 1952 s, longer than the longest wait allowed (60 s)",
      {facts: {topic: 'wait-too-long', seconds: 1952, maxWaitSeconds: 60, after429: false}},
    )
    const now = Date.UTC(2026, 10, 26, 12, 0, 0)
    const at = new Date(now + 1_952_000).toTimeString().slice(0, 8)
    expect(withHint(err, origin)).toBe(
      "rate limit: the key's budget returns in 1952 s, longer than --max-wait 60 s",
    )
    expect(`${withHint(err, origin)}${nextStep(err, now)}`).toBe(
      `rate limit: the key's budget returns in 1952 s, longer than --max-wait 60 s: at ${at} on this machine's clock; run again then, or allow the wait with --max-wait 1957`,
    )
  })
})

describe('the error line of the CLI (src/cli/report-error.ts)', () => {
  it('exit 5 ends with the clock time the budget returns; exit code 5', async () => {
    const {reportError} = await import('../../src/cli/report-error.js')
    let out = ''
    const now = Date.UTC(2026, 10, 26, 12, 0, 0)
    reportError(
      new RateLimitExceededError(
        "rate limit: the key's budget returns in 60 s, longer than the longest wait allowed (10 s)",
        {
          facts: {topic: 'wait-too-long', seconds: 60, maxWaitSeconds: 10, after429: false},
        },
      ),
      {message: (e) => cliMessage(e), debug: false, now},
      {write: (t: string) => ((out += t), true)} as unknown as NodeJS.WritableStream,
    )
    expect(out).toBe(
      `Error: rate limit: the key's budget returns in 60 s, longer than --max-wait 10 s: at ${new Date(now + 60_000).toTimeString().slice(0, 8)} on this machine's clock; run again then, or allow the wait with --max-wait 65\n`,
    )
    expect(process.exitCode).toBe(5)
    process.exitCode = undefined
  })
})
