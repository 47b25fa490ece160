import {describe, expect, it} from 'vitest'

import {cliMessage} from '../../src/cli/error-words.js'
import {
  InterruptedError,
  NotFoundError,
  RateLimitExceededError,
  RequestTimeoutError,
  ServerError,
  SflError,
  UsageError,
  type ErrorFacts,
  type ErrorTopic,
  type ExportSourceProblem,
} from '../../src/errors.js'
import {libraryError, libraryMessage} from '../../src/lib/words.js'
import {mcpMessage} from '../../src/mcp/words.js'

/**
 * One error, three vocabularies (src/errors.ts ErrorFacts): the CLI words the facts with its flags, the
 * library with its option and field names, `sfl mcp` with its tools' parameters. The table holds one error
 * of every topic (typed by topic, so a topic added to ErrorFacts fails to compile here until it has one);
 * no library or MCP message of any of them names a CLI flag.
 */
const timeout = new RequestTimeoutError('no complete answer from api.example.com within 30 s', {
  facts: {topic: 'request-timeout', host: 'api.example.com', seconds: 30},
})
const gaveUp = new ServerError('network failure: x (gave up after 3 retries)', {
  cause: timeout,
  facts: {topic: 'gave-up', retries: 3, network: true, detail: timeout.message},
})

const FACTS: {[T in ErrorTopic]: Extract<ErrorFacts, {topic: T}>} = {
  'not-found': {
    topic: 'not-found',
    by: 'property_id',
    value: '1',
    county: 'Yolo County, CA (06113)',
    said: 'No property matches.',
  },
  'address-not-found': {
    topic: 'address-not-found',
    county: 'Yolo County, CA (06113)',
    said: '',
    tried: '"1 MAIN ST" (standardised)',
    fallback: false,
    box: false,
  },
  'invalid-key': {topic: 'invalid-key', said: 'Invalid API key'},
  'request-timeout': {topic: 'request-timeout', host: 'api.example.com', seconds: 30},
  'wait-too-long': {topic: 'wait-too-long', seconds: 3600, maxWaitSeconds: 60, after429: true},
  'budget-spent': {topic: 'budget-spent', reserve: 5},
  'request-cap': {topic: 'request-cap', maxRequests: 100},
  'gave-up': {topic: 'gave-up', retries: 3, network: true, detail: timeout.message},
  'circuit-open': {topic: 'circuit-open', failures: 5},
  'no-base-url': {topic: 'no-base-url'},
  'base-url-path': {
    topic: 'base-url-path',
    baseUrl: 'https://api.example.com',
    fixed: 'https://api.example.com/v1',
    endpointPath: false,
  },
  'no-key': {topic: 'no-key'},
  'county-needed': {topic: 'county-needed', profile: 'default'},
  'no-profile': {topic: 'no-profile', profile: 'staging', known: ['default']},
  'manifest-unreadable': {topic: 'manifest-unreadable', path: 'exports/manifest.json', problem: 'not JSON'},
  'manifest-format': {topic: 'manifest-format', dir: 'exports', has: 'csv', wanted: 'parquet'},
  deadline: {topic: 'deadline', seconds: 45},
  'export-source': {topic: 'export-source', path: 'x.csv', problem: {kind: 'missing'}},
}

const PROBLEMS: ExportSourceProblem[] = [
  {kind: 'missing'},
  {kind: 'not-regular', is: 'FIFO'},
  {kind: 'system-path'},
  {kind: 'too-large', limitBytes: 2 ** 31},
  {kind: 'line-too-long', limitBytes: 2 ** 20},
  {kind: 'not-an-export', format: 'csv', why: 'column 1 is no field of the spec'},
  {kind: 'folder-without-manifest'},
  {kind: 'county-file-missing', fips: '06067', file: 'state=CA/fips=06067/data.csv'},
  {kind: 'outside-folder', fips: '06067'},
  {kind: 'unreadable', code: 'EACCES'},
  {kind: 'damaged', format: 'csv', line: 7},
  {kind: 'codec-unavailable', codec: 'zstd', needs: 'Node 22.15 or later', node: '20.20.2'},
]

function errorOf(facts: ErrorFacts): SflError {
  const cause = facts.topic === 'gave-up' ? timeout : facts.topic === 'circuit-open' ? gaveUp : undefined
  return new SflError(`neutral words of ${facts.topic}`, {facts, ...(cause ? {cause} : {})})
}

const ALL = [
  ...Object.values(FACTS).map(errorOf),
  ...PROBLEMS.map((problem) => errorOf({topic: 'export-source', path: 'exports', problem})),
]

describe('each caller words the same facts', () => {
  it.each(ALL.map((e) => [e.facts!.topic, e] as const))(
    '%s: no library or MCP message names a CLI flag',
    (_, e) => {
      expect(libraryMessage(e)).not.toMatch(/--[a-z]/)
      expect(mcpMessage(e, {keyFrom: 'SFL_API_KEY'})).not.toMatch(/--[a-z]/)
      expect(cliMessage(e).length).toBeGreaterThan(0)
    },
  )

  it('the CLI keeps its flags, the library its options, sfl mcp its parameters and tools', () => {
    const notFound = new NotFoundError('neutral', 404, {facts: FACTS['not-found']})
    expect(cliMessage(notFound)).toBe(
      'no property matches --property-id 1 in Yolo County, CA (06113) (HTTP 404: No property matches.). Check that --fips names the county the parcel is in, or look it up by --address',
    )
    expect(libraryMessage(notFound)).toBe(
      'no property matches propertyId 1 in Yolo County, CA (06113) (HTTP 404: No property matches.). Check that fips (or county) names the county the parcel is in, or look it up by address',
    )
    expect(mcpMessage(notFound, {keyFrom: 'SFL_API_KEY'})).toBe(
      'no property matches property_id 1 in Yolo County, CA (06113) (HTTP 404; the service said "No property matches."). Check that county names the county the parcel is in (find_counties finds its code), or look it up by address',
    )
    const wait = new RateLimitExceededError('neutral', {facts: FACTS['wait-too-long']})
    expect(cliMessage(wait)).toBe(
      "rate limit: the key's budget returns in 3600 s, longer than --max-wait 60 s (the service answered 429)",
    )
    expect(libraryMessage(wait)).toBe(
      "rate limit: the key's budget returns in 3600 s, longer than maxWait (60 s) (the service answered 429)",
    )
    // a wrapping error words its cause in the same vocabulary
    expect(cliMessage(gaveUp)).toBe(
      'network failure: no complete answer from api.example.com within --timeout 30 s (connect, headers and body); the server is slow or dripping its answer (gave up after 3 retries)',
    )
    expect(libraryMessage(gaveUp)).toContain('within the timeout of 30 s')
    // a manifest's file names are its text: sfl mcp does not repeat them
    const missing = errorOf({topic: 'export-source', path: 'm.json', problem: PROBLEMS[7]!})
    expect(cliMessage(missing)).toBe(
      'm.json: the file of county 06067 (state=CA/fips=06067/data.csv) is missing',
    )
    expect(mcpMessage(missing, {keyFrom: 'x'})).toBe('m.json: the file of county 06067 is missing')
  })
})

describe('libraryError: everything out of the library is its own error', () => {
  it('an SflError keeps its class, code and facts, in the library words', () => {
    const e = new UsageError('neutral', {facts: FACTS['no-base-url']})
    const out = libraryError(e)
    expect(out).toBe(e)
    expect(out.code).toBe('USAGE')
    expect(out.message).toBe(
      'no service base URL: give baseUrl (with its /v1 segment), set SFL_BASE_URL, or store one with `sfl keys set`',
    )
  })

  it('an abort (a DOMException) is InterruptedError; anything else an SflError saying it was unexpected', () => {
    const aborted = libraryError(new DOMException('This operation was aborted', 'AbortError'))
    expect(aborted).toBeInstanceOf(InterruptedError)
    expect(aborted.code).toBe('INTERRUPTED')
    const odd = libraryError(new TypeError('x is not a function'))
    expect(odd).toBeInstanceOf(SflError)
    expect(odd.code).toBe('UNEXPECTED')
    expect(odd.message).toBe('unexpected failure: x is not a function')
    expect(odd.cause).toBeInstanceOf(TypeError)
  })
})

describe('the pure calls keep the promise too', () => {
  it('explain, findCounties and checkRecord given garbage by a JavaScript caller throw SflErrors', async () => {
    const {createClient, findCounties, checkRecord} = await import('../../src/lib/index.js')
    const sfl = await createClient({baseUrl: 'https://api.example.com/v1', apiKey: 'k-lib-123456'})
    const thrown = (call: () => unknown) => {
      try {
        call()
      } catch (e) {
        return e
      }
      return undefined
    }
    const explained = thrown(() => sfl.explain(null as never))
    expect(explained).toBeInstanceOf(SflError)
    expect((explained as SflError).code).toBe('UNEXPECTED')
    expect(thrown(() => findCounties(42 as never))).toBeInstanceOf(UsageError)
    expect(thrown(() => checkRecord(undefined))).toBeInstanceOf(SflError)
  })
})
