import {MockAgent} from 'undici'

import {HttpClient} from '../../src/api/client.js'
import {fetchLookup, type LookupAnswer} from '../../src/lookup/fetch-lookup.js'
import {Scheduler} from '../../src/schedule/scheduler.js'

export const ORIGIN = 'https://api.example.test'
export const KEY = 'sk_live_0123456789abcdef'

/**
 * A lookup against undici's MockAgent (no network: a request the mock does not expect fails), answered
 * with `body` as the service's bytes. Each call asks for its own APN, so answers never mix.
 */
export class MockLookups {
  readonly agent = new MockAgent()
  private n = 0

  constructor() {
    this.agent.disableNetConnect()
  }

  async lookup(
    body: string | Buffer,
    opts: {status?: number; times?: number; apiKey?: string} = {},
  ): Promise<LookupAnswer> {
    const apn = `apn-${++this.n}`
    this.agent
      .get(ORIGIN)
      .intercept({path: `/v1/special-financing?fips=06067&apn=${apn}`, method: 'GET'})
      .reply(opts.status ?? 200, body, {headers: {'content-type': 'application/json'}})
      .times(opts.times ?? 1)
    const client = new HttpClient({
      apiKey: KEY,
      timeoutMs: 1000,
      userAgent: 'sfl-test',
      dispatcher: this.agent,
    })
    const scheduler = new Scheduler({
      concurrency: 1,
      retries: 2,
      maxWaitMs: 1000,
      sleep: async () => undefined,
    })
    return fetchLookup(
      {client, scheduler, baseUrl: `${ORIGIN}/v1`, apiKey: opts.apiKey ?? KEY},
      {fips: '06067', by: {kind: 'apn', value: apn}},
    )
  }

  /** What the lookup threw. */
  async failure(body: string | Buffer, opts: {status?: number; times?: number} = {}): Promise<Error> {
    return this.lookup(body, opts).then(
      () => {
        throw new Error('the lookup did not fail')
      },
      (error: unknown) => error as Error,
    )
  }

  async close(): Promise<void> {
    this.agent.assertNoPendingInterceptors()
    await this.agent.close()
  }
}
