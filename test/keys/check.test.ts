import {createServer, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'

import {afterEach, describe, expect, it} from 'vitest'

import {HttpClient} from '../../src/api/client.js'
import {checkKey} from '../../src/keys/check.js'
import {Scheduler} from '../../src/schedule/scheduler.js'

/**
 * `keys check` reads the server's bytes through the stages every path uses (src/pipeline/stages.ts
 * `readBody`), and only as far as it needs: the first record of a county (which may be the whole county in
 * one array), or the one page the --dry-run probe counts. Against loopback servers written here.
 */
const KEY = 'sk_test_KEYCHECK_0123456789'
const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of closers.splice(0)) await c()
})

async function serve(answer: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((_req, res) => answer(res))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
}

function deps(baseUrl: string) {
  return {
    baseUrl,
    apiKey: KEY,
    client: new HttpClient({apiKey: KEY, timeoutMs: 30_000, userAgent: 'sfl-test'}),
    scheduler: new Scheduler({concurrency: 1, retries: 0, maxWaitMs: 0}),
  }
}

const RATE = {'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '999', 'x-ratelimit-reset': '1800000000'}
const record = (i: number) =>
  JSON.stringify({
    ServicePropertyID: 30000000000 + i,
    Fips: '06067',
    AssumableMortgage: null,
    pad: 'x'.repeat(900),
  })

describe('keys check reads a county only as far as it needs', () => {
  it('one record of a county sent as one huge array, then the connection is dropped: the rest is never sent', async () => {
    const CHUNKS = 4000 // 64 records of ~1 KB each: about 256 MB in all if it were read to the end
    let written = 0
    let closed = false
    let onClose = (): void => undefined
    const gone = new Promise<void>((resolve) => (onClose = resolve))
    const baseUrl = await serve((res) => {
      res.writeHead(200, {'content-type': 'application/json', ...RATE})
      res.on('close', () => {
        closed = true
        onClose()
      })
      const chunk = Array.from({length: 64}, (_, i) => record(i)).join(',')
      res.write('{"status":"success","data":[')
      const more = () => {
        while (written < CHUNKS && !closed) {
          written++
          const ok = res.write(written === 1 ? chunk : `,${chunk}`)
          if (!ok) return void res.once('drain', more)
        }
        if (!closed) res.end(']}')
      }
      more()
    })
    const r = await checkKey(deps(baseUrl), {
      profile: 'default',
      keySource: 'env',
      fips: ['06067'],
      why: 'asked',
    })
    expect(r).toMatchObject({valid: true, counties: {'06067': 'permitted'}, requestsUsed: 1})
    expect(r.options).toMatchObject({AssumableMortgage: 'included', FHACondoEligibility: 'not included'})
    // the socket buffers hold a few MB at most: far from the 4,000 chunks of the whole body
    await gone
    expect(written).toBeLessThan(CHUNKS / 4)
  }, 60_000)

  it('the --dry-run probe counts a page as the stages count it: every record, rejected ones included', async () => {
    const page = `{"status":"success","data":[${record(1)},{"ServicePropertyID": tru},${record(3)}]}`
    const baseUrl = await serve((res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        link: '<?fips=06067&page=2>; rel="next"',
        'x-total-count': '30',
        ...RATE,
      })
      res.end(page)
    })
    const r = await checkKey(deps(baseUrl), {
      profile: 'default',
      keySource: 'env',
      fips: ['06067'],
      why: 'asked',
      countPages: true,
    })
    expect(r.firstPage).toEqual({fips: '06067', next: true, total: 30, pageRecords: 3})
    expect(r.options).toMatchObject({AssumableMortgage: 'included'})
  })
})
