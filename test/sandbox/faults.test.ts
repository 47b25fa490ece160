import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {connect} from 'node:net'
import {join} from 'node:path'

import {request} from 'undici'
import {describe, expect, it} from 'vitest'

import {readLog, withSandbox} from '../helpers/sandbox.js'

describe('sandbox fault injection', () => {
  it('injects 500s, resets and truncations at the asked rates (±5 standard deviations), never on 401 or 429', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'sfl-faults-')), 'log.ndjson')
    const N = 800
    const rate = 0.1
    await withSandbox({failRate: rate, resetRate: rate, truncateRate: rate, log, limit: N}, async (sb) => {
      const url = `${sb.baseUrl}/special-financing?fips=06067&property_id=30000000006`
      const outcome = {ok: 0, fail: 0, reset: 0, truncate: 0}
      for (let i = 0; i < N; i++) {
        // a reset fails before any response arrives; a truncation fails while the body is read
        const res = await request(url, {headers: {'x-api-key': 'sandbox-full'}}).catch(() => undefined)
        if (!res) {
          outcome.reset++
          continue
        }
        const text = await res.body.text().catch(() => undefined)
        if (text === undefined) outcome.truncate++
        else if (res.statusCode === 500) outcome.fail++
        else {
          JSON.parse(text)
          outcome.ok++
        }
      }
      const tolerance = 5 * Math.sqrt((rate * (1 - rate)) / N)
      for (const k of ['fail', 'reset', 'truncate'] as const)
        expect(Math.abs(outcome[k] / N - rate), k).toBeLessThan(tolerance)
      const rows = readLog(log)
      expect(rows).toHaveLength(N)
      expect(rows.filter((r) => r.fault === 'fail').length).toBe(outcome.fail)
      expect(rows.filter((r) => r.fault === 'truncate').length).toBe(outcome.truncate)
      // auth and rate-limit rejections never carry a fault
      for (let i = 0; i < 30; i++) await (await request(url, {headers: {'x-api-key': 'bad'}})).body.text()
      for (let i = 0; i < 30; i++)
        await (await request(url, {headers: {'x-api-key': 'sandbox-full'}})).body.text().catch(() => '')
      const after = readLog(log).slice(N)
      expect(after.filter((r) => r.status === 401)).toHaveLength(30)
      expect(after.filter((r) => r.status === 429)).toHaveLength(30)
      expect(after.every((r) => r.fault === null)).toBe(true)
      expect(after[0]!.key).toBe('…') // a key of 4 characters or fewer is masked entirely
      expect(rows[0]!.key).toBe('sand…')
    })
  })

  it('cuts a streamed county body mid-record', async () => {
    await withSandbox({truncateRate: 1}, async (sb) => {
      const res = await request(`${sb.baseUrl}/special-financing?fips=06067`, {
        headers: {'x-api-key': 'sandbox-basic'},
      })
      expect(res.statusCode).toBe(200)
      await expect(res.body.text()).rejects.toThrow()
    })
  })

  it('adds --latency to each request: each waits for it before it is answered', async () => {
    // the sandbox's clock for waits is injected: the test sees each wait asked for and ends it itself
    const asked: number[] = []
    const waits: Array<() => void> = []
    let waiting = (): void => undefined
    const sleep = (ms: number) =>
      new Promise<void>((resolve) => {
        asked.push(ms)
        waits.push(resolve)
        waiting()
      })
    await withSandbox({latencyMs: 120, sleep}, async (sb) => {
      const events: string[] = []
      const asking = new Promise<void>((resolve) => (waiting = resolve))
      const answered = request(`${sb.baseUrl}/special-financing?fips=06067&property_id=30000000006`, {
        headers: {'x-api-key': 'sandbox-basic'},
      }).then(async (res) => {
        events.push(`answered ${res.statusCode}`)
        return res.body.text()
      })
      await asking
      expect(asked).toEqual([120])
      events.push('wait ended')
      waits[0]!()
      expect(JSON.parse(await answered).data.ServicePropertyID).toBe(30000000006)
      expect(events).toEqual(['wait ended', 'answered 200'])
    })
  })

  it('tells when it is done with a killed client: idle() waits for the answer still in its latency', async () => {
    const waits: Array<() => void> = []
    let waiting = (): void => undefined
    const sleep = () =>
      new Promise<void>((resolve) => {
        waits.push(resolve)
        waiting()
      })
    const log = join(mkdtempSync(join(tmpdir(), 'sfl-idle-')), 'log.ndjson')
    writeFileSync(log, '')
    await withSandbox({latencyMs: 50, sleep, log}, async (sb) => {
      let closed = (): void => undefined
      const gone = new Promise<void>((resolve) => (closed = resolve))
      sb.server.on('connection', (socket) => socket.on('close', () => closed()))
      const asking = new Promise<void>((resolve) => (waiting = resolve))
      // one raw connection, so the test knows the socket the request came on
      const {port} = new URL(sb.baseUrl)
      const client = connect(Number(port), '127.0.0.1')
      client.on('error', () => undefined)
      client.write(
        'GET /v1/special-financing?fips=06067&property_id=30000000006 HTTP/1.1\r\nhost: x\r\nx-api-key: sandbox-basic\r\n\r\n',
      )
      await asking
      // the client goes away while its request waits out the latency, as a killed run's does
      client.destroy()
      await gone
      let idle = false
      const done = sb.idle().then(() => (idle = true))
      await Promise.resolve()
      expect(idle).toBe(false)
      expect(readLog(log)).toEqual([])
      waits[0]!()
      await done
      // idle means the answer was made and logged, though nobody was there to read it
      expect(readLog(log).map((r) => r.status)).toEqual([200])
    })
  })
})
