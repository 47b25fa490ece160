import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {Readable} from 'node:stream'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {createTransport} from '../../src/api/transport.js'
import {RequestTimeoutError} from '../../src/errors.js'
import {FakeClock} from '../helpers/fake-clock.js'

/**
 * src/api/transport.ts against a loopback server: any method, streamed bodies both ways, one deadline for
 * the whole request (a virtual clock: nothing waits for real), the caller's signal.
 */
const server = createServer((req, res) => {
  if (req.url === '/drip') {
    res.writeHead(200, {'content-type': 'text/plain'})
    res.write('a')
    const timer = setInterval(() => res.write('b'), 20)
    res.on('close', () => clearInterval(timer))
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    res.writeHead(201, {
      'x-seen': `${req.method} ${req.url} ${body.length} ${req.headers['content-length']}`,
      'x-multi': ['1', '2'],
    })
    res.end(req.method === 'HEAD' ? undefined : body)
  })
})
let origin: string
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})

describe('the plain HTTP transport', () => {
  it('sends a streamed request body and streams the answer back, headers lower-cased and joined', async () => {
    const t = createTransport()
    const parts = [Buffer.alloc(70_000, 'p'), Buffer.alloc(30_000, 'q')]
    const res = await t.send({
      method: 'PUT',
      url: new URL(`${origin}/b/k?partNumber=1`),
      headers: {'content-length': '100000'},
      body: Readable.from(parts),
      timeoutMs: 10_000,
    })
    expect(res.status).toBe(201)
    expect(res.headers['x-seen']).toBe('PUT /b/k?partNumber=1 100000 100000')
    expect(res.headers['x-multi']).toBe('1, 2')
    const got: Buffer[] = []
    for await (const c of res.body) got.push(c)
    expect(Buffer.concat(got).equals(Buffer.concat(parts))).toBe(true)
  })

  it('HEAD and DELETE: no body, dump() releases the connection', async () => {
    const t = createTransport()
    const head = await t.send({method: 'HEAD', url: new URL(`${origin}/x`), headers: {}, timeoutMs: 10_000})
    expect(head.headers['x-seen']).toBe('HEAD /x 0 undefined')
    await head.dump()
    const del = await t.send({method: 'DELETE', url: new URL(`${origin}/x`), headers: {}, timeoutMs: 10_000})
    expect(await del.text()).toBe('')
  })

  it('a dripping body ends at the whole-request deadline with RequestTimeoutError (undici bodyTimeout would not)', async () => {
    const clock = new FakeClock()
    const t = createTransport({timers: clock})
    const res = await t.send({method: 'GET', url: new URL(`${origin}/drip`), headers: {}, timeoutMs: 5_000})
    const reading = res.text().catch((e: unknown) => e)
    await clock.advance(4_999)
    await clock.advance(1)
    const e = await reading
    expect(e).toBeInstanceOf(RequestTimeoutError)
    expect((e as Error).message).toBe(
      `no complete answer from ${new URL(origin).host} within 5 s (connect, headers and body); the store or the network is slow`,
    )
  })

  it('extendDeadline gives a long body more time, and still ends a drip', async () => {
    const clock = new FakeClock()
    const t = createTransport({timers: clock})
    const res = await t.send({method: 'GET', url: new URL(`${origin}/drip`), headers: {}, timeoutMs: 1_000})
    res.extendDeadline(60_000)
    let ended: unknown
    const reading = (async () => {
      for await (const _ of res.body) void _
    })().catch((e: unknown) => (ended = e))
    await clock.advance(30_000)
    expect(ended).toBeUndefined()
    await clock.advance(30_000)
    await reading
    expect(ended).toBeInstanceOf(RequestTimeoutError)
  })

  it("the caller's signal ends a request in flight with its reason", async () => {
    const controller = new AbortController()
    const t = createTransport()
    const res = await t.send({
      method: 'GET',
      url: new URL(`${origin}/drip`),
      headers: {},
      timeoutMs: 60_000,
      signal: controller.signal,
    })
    const reading = res.text().catch((e: unknown) => e)
    controller.abort(new Error('interrupted'))
    expect(((await reading) as Error).message).toBe('interrupted')
    const already = await t
      .send({
        method: 'GET',
        url: new URL(`${origin}/x`),
        headers: {},
        timeoutMs: 60_000,
        signal: controller.signal,
      })
      .catch((e: unknown) => e)
    expect((already as Error).message).toBe('interrupted')
  })

  it('cancel() drops the connection of a body not wanted', async () => {
    const t = createTransport()
    const res = await t.send({method: 'GET', url: new URL(`${origin}/drip`), headers: {}, timeoutMs: 60_000})
    res.cancel()
    const got: Buffer[] = []
    await (async () => {
      for await (const c of res.body) got.push(c)
    })().catch(() => undefined)
    expect(Buffer.concat(got).length).toBeLessThan(10)
  })
})
