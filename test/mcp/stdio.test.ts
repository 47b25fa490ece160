import {PassThrough} from 'node:stream'

import {McpServer} from '@modelcontextprotocol/sdk/server/mcp.js'
import {afterEach, describe, expect, it} from 'vitest'

import {clearSecrets, registerSecret} from '../../src/api/secrets.js'
import {serveStdio} from '../../src/mcp/stdio.js'

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
