import {PassThrough} from 'node:stream'

import {McpServer} from '@modelcontextprotocol/sdk/server/mcp.js'
import {afterEach, describe, expect, it} from 'vitest'

import {clearSecrets, registerSecret} from '../../src/api/secrets.js'
import {createCore} from '../../src/lib/core.js'
import {createSflMcpServer} from '../../src/mcp/server.js'
import {MAX_LINE_BYTES, serveStdio} from '../../src/mcp/stdio.js'
import {startHangingServer} from '../helpers/hanging-server.js'

/**
 * The stdio wrapping of `sfl mcp` (src/mcp/stdio.ts) on injected streams: stdout carries nothing but the
 * protocol while other writers are sent to the log, every message the server sends is redacted, and the
 * server ends when stdin does.
 */
const KEY = 'sk_live_STDIOTEST_4b1d9e'
afterEach(() => clearSecrets())

function noisyServer(): McpServer {
  const server = new McpServer({name: 't', version: '1'})
  server.registerTool('noisy', {description: 'writes where it must not'}, () => {
    console.log('stray console line')
    process.stdout.write('stray write\n')
    return {content: [{type: 'text', text: `a result that quotes ${KEY}`}]}
  })
  return server
}

describe('serveStdio', () => {
  it('keeps stray writes off the protocol, redacts what it sends, and ends with stdin', async () => {
    registerSecret(KEY)
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    let out = ''
    stdout.on('data', (d: Buffer) => (out += d.toString()))
    const logged: string[] = []
    const realWrite = process.stdout.write
    const served = serveStdio(noisyServer(), {log: (l) => logged.push(l), stdin, stdout})
    const send = (m: object) => stdin.write(`${JSON.stringify(m)}\n`)
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: 't', version: '1'}},
    })
    send({jsonrpc: '2.0', method: 'notifications/initialized'})
    send({jsonrpc: '2.0', id: 2, method: 'tools/call', params: {name: 'noisy', arguments: {}}})
    await new Promise<void>((resolve) => stdout.on('data', () => out.includes('"id":2') && resolve()))
    stdin.end()
    await served
    const messages = out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as {id: number; result: {content?: Array<{text: string}>}})
    expect(messages.map((m) => m.id)).toEqual([1, 2])
    expect(messages[1]!.result.content![0]!.text).toBe('a result that quotes sk_l…')
    expect(out).not.toContain(KEY)
    expect(logged).toEqual(['stray console line', 'stray write'])
    // the diversion ends with the server
    expect(process.stdout.write).toBe(realWrite)
  })
})

/** The server's lines on `stdout`, parsed, as they come. */
function lines(stdout: PassThrough): {
  messages: Array<Record<string, unknown>>
  next: (n: number) => Promise<void>
} {
  const messages: Array<Record<string, unknown>> = []
  let buffered = ''
  const waiters: Array<() => void> = []
  stdout.on('data', (d: Buffer) => {
    buffered += d.toString()
    for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
      messages.push(JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>)
      buffered = buffered.slice(nl + 1)
    }
    for (const w of waiters.splice(0)) w()
  })
  const next = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (messages.length >= n ? resolve() : waiters.push(check))
      check()
    })
  return {messages, next}
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: 't', version: '1'}},
}

describe('the protocol on stdin', () => {
  it('a line that is not JSON gets -32700, one that is no JSON-RPC message -32600, and the server goes on', async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const out = lines(stdout)
    const served = serveStdio(noisyServer(), {log: () => undefined, stdin, stdout})
    stdin.write('{"jsonrpc": "2.0", "id": 1, "method": \n') // cut short
    stdin.write('{"hello": "world"}\n')
    stdin.write('{"jsonrpc": "2.0", "id": 7, "method": 5}\n')
    stdin.write(`${JSON.stringify(INIT)}\n`)
    await out.next(4)
    expect(out.messages.slice(0, 3)).toEqual([
      {jsonrpc: '2.0', id: null, error: {code: -32700, message: 'Parse error: the line is not JSON'}},
      {
        jsonrpc: '2.0',
        id: null,
        error: {code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message'},
      },
      {jsonrpc: '2.0', id: 7, error: {code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message'}},
    ])
    expect(out.messages[3]).toMatchObject({jsonrpc: '2.0', id: 1, result: {serverInfo: {name: 't'}}})
    stdin.end()
    await served
  })

  it('a line over the cap is refused as a parse error without being held', async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const out = lines(stdout)
    const served = serveStdio(noisyServer(), {log: () => undefined, stdin, stdout})
    const chunk = 'x'.repeat(1024 * 1024)
    for (let i = 0; i < 5; i++) stdin.write(chunk)
    stdin.write(`\n${JSON.stringify(INIT)}\n`)
    await out.next(2)
    expect(out.messages[0]).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {code: -32700, message: `Parse error: a line longer than ${MAX_LINE_BYTES} bytes`},
    })
    expect(out.messages[1]).toMatchObject({id: 1, result: {serverInfo: {name: 't'}}})
    stdin.end()
    await served
  })

  it('stdin ending mid-call ends the call: its request is dropped and serveStdio returns', async () => {
    const server = await startHangingServer()
    try {
      const core = createCore({
        baseUrl: server.baseUrl,
        apiKey: 'k-stdio-123456',
        timeoutMs: 60_000,
        retries: 3,
        maxWaitMs: 10_000,
        userAgent: 'test',
      })
      const mcp = createSflMcpServer(
        {
          core,
          keyFrom: 'SFL_API_KEY',
          profile: 'default',
          sandbox: false,
          planCheck: async (fips) => ({fips, why: 'asked', keySource: 'env', countyName: () => undefined}),
          probe: async () => ({...core, profile: 'default'}),
          log: () => undefined,
          now: Date.now,
        },
        '0.0.0-test',
      )
      const stdin = new PassThrough()
      const stdout = new PassThrough()
      const served = serveStdio(mcp, {log: () => undefined, stdin, stdout})
      stdin.write(
        `${JSON.stringify(INIT)}\n${JSON.stringify({jsonrpc: '2.0', method: 'notifications/initialized'})}\n`,
      )
      stdin.write(
        `${JSON.stringify({jsonrpc: '2.0', id: 2, method: 'tools/call', params: {name: 'lookup_property', arguments: {county: '06067', apn: '1'}}})}\n`,
      )
      await server.arrived(1)
      stdin.end()
      await served
      await server.closed(1)
      expect(server.requests).toHaveLength(1)
    } finally {
      await server.close()
    }
  }, 15_000)
})
