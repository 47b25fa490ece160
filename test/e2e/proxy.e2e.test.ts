import {createServer, request as httpRequest} from 'node:http'
import {connect, type AddressInfo} from 'node:net'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {sfl} from '../helpers/cli.js'

/** A forward proxy on loopback (plain forwarding and CONNECT tunnels) that records what went through it. */
let sb: Sandbox
const seen: Array<{url: string; key?: string | undefined}> = []
const proxy = createServer((req, res) => {
  seen.push({url: req.url ?? '', key: req.headers['x-api-key'] as string | undefined})
  const target = new URL(req.url ?? '')
  const up = httpRequest(target, {method: req.method, headers: req.headers}, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers)
    r.pipe(res)
  })
  req.pipe(up)
})
// undici's ProxyAgent tunnels every request with CONNECT
proxy.on('connect', (req, client, head) => {
  seen.push({url: `CONNECT ${req.url}`})
  const [host, port] = (req.url ?? '').split(':')
  const upstream = connect(Number(port), host!, () => {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    upstream.write(head)
    upstream.pipe(client)
    client.pipe(upstream)
  })
  upstream.on('error', () => client.destroy())
  client.on('error', () => upstream.destroy())
})
let proxyUrl: string

beforeAll(async () => {
  sb = await startSandbox({})
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
})
afterAll(async () => {
  await sb.close()
  proxy.close()
})

describe('proxies', () => {
  const args = ['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json']

  it('sends requests through HTTP_PROXY', async () => {
    seen.length = 0
    const r = await sfl(args, {
      env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full', HTTP_PROXY: proxyUrl, NO_PROXY: ''},
    })
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).APN).toBe('078-0123-045')
    expect(seen).toHaveLength(1)
    expect(seen[0]!.url).toBe(`CONNECT ${new URL(sb.baseUrl).host}`)
  })

  it('goes direct for hosts in NO_PROXY', async () => {
    seen.length = 0
    const r = await sfl(args, {
      env: {
        SFL_BASE_URL: sb.baseUrl,
        SFL_API_KEY: 'sandbox-full',
        HTTP_PROXY: proxyUrl,
        NO_PROXY: '127.0.0.1',
      },
    })
    expect(r.code).toBe(0)
    expect(seen).toHaveLength(0)
  })
})
