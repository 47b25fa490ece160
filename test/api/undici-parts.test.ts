import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {EnvHttpProxyAgent, request} from '../../src/api/undici-parts.js'

/**
 * src/api/undici-parts.ts imports files inside undici by path. These fail when an undici upgrade moves or
 * reshapes them (the build fails too); test/e2e/proxy.e2e.test.ts runs the bundled agent through a proxy.
 */
const server = createServer((req, res) =>
  res.end(JSON.stringify({path: req.url, ua: req.headers['user-agent']})),
)
let origin: string
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => server.close())

describe("undici's request API and proxy agent, imported by path", () => {
  it('sends a GET through the proxy-aware agent and reads the body', async () => {
    const agent = new EnvHttpProxyAgent()
    const res = await request(agent, {
      origin,
      path: '/v1/x?a=1',
      method: 'GET',
      headers: {'user-agent': 't/1'},
    })
    expect(res.statusCode).toBe(200)
    expect(await res.body.json()).toEqual({path: '/v1/x?a=1', ua: 't/1'})
    await agent.close()
  })

  it('gives dispatchers the connect() a proxy tunnel needs (as undici’s entry does)', () => {
    expect(typeof (new EnvHttpProxyAgent() as unknown as {connect?: unknown}).connect).toBe('function')
  })
})
