import {Writable, type Readable} from 'node:stream'

import type {McpServer} from '@modelcontextprotocol/sdk/server/mcp.js'
import {StdioServerTransport} from '@modelcontextprotocol/sdk/server/stdio.js'
import type {Transport, TransportSendOptions} from '@modelcontextprotocol/sdk/shared/transport.js'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'

import {redactDeep} from './tool.js'

/**
 * The server on stdin and stdout. stdout IS the protocol: one stray write (a library's console.log, a
 * notice) corrupts the client's stream. So while the server runs, the protocol gets stdout's own write and
 * every other writer to process.stdout or console.log/info/debug is sent to stderr instead; and every
 * message the server sends passes `redact`, whatever produced its text (one wrap point: a tool result, the
 * SDK's own validation messages, an error). Resolves when stdin ends (the client went away) or the
 * transport closes.
 */
export async function serveStdio(
  server: McpServer,
  io: {
    log: (line: string) => void
    /** The protocol's streams (tests): process.stdin and process.stdout by default. */
    stdin?: NodeJS.ReadableStream
    stdout?: NodeJS.WritableStream
  },
): Promise<void> {
  const stdin = (io.stdin ?? process.stdin) as Readable
  const stdout = io.stdout ?? process.stdout
  const write = stdout.write.bind(stdout) as (
    chunk: string | Uint8Array,
    cb?: (e?: Error | null) => void,
  ) => boolean
  const protocolOut = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      write(chunk, (error) => callback(error ?? null))
    },
  })
  // a failed stdout (the client gone: EPIPE) is reported on process.stdout, where the CLI's guard ends the
  // run (src/cli/std-streams.ts); this copy of the error needs no second report
  protocolOut.on('error', () => undefined)
  const restore = divertStdout(io.log)
  const transport = new RedactingTransport(new StdioServerTransport(stdin, protocolOut))
  const ended = new Promise<void>((resolve) => {
    transport.onended = resolve
    stdin.once('end', resolve)
    stdin.once('close', resolve)
  })
  server.server.onerror = (error) => io.log(`sfl mcp: ${error.message}`)
  try {
    await server.connect(transport)
    await ended
  } finally {
    await server.close().catch(() => undefined)
    restore()
  }
}

/** process.stdout.write and console.log/info/debug to stderr, each line redacted; returns the undo. */
function divertStdout(log: (line: string) => void): () => void {
  const stdout = process.stdout as unknown as {write: unknown}
  const saved = {write: stdout.write, log: console.log, info: console.info, debug: console.debug}
  const toLog = (...args: unknown[]) => log(args.map(String).join(' '))
  stdout.write = (chunk: string | Uint8Array, ...rest: unknown[]) => {
    log((typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')).replace(/\n$/, ''))
    const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined
    cb?.()
    return true
  }
  console.log = console.info = console.debug = toLog
  return () => {
    stdout.write = saved.write
    console.log = saved.log
    console.info = saved.info
    console.debug = saved.debug
  }
}

/** A transport whose outgoing messages are redacted; everything else is the inner transport's. */
export class RedactingTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: Transport['onmessage']
  /** Called once the inner transport closed (after onclose). */
  onended?: () => void

  constructor(private readonly inner: Transport) {}

  async start(): Promise<void> {
    this.inner.onclose = () => {
      this.onclose?.()
      this.onended?.()
    }
    this.inner.onerror = (e) => this.onerror?.(e)
    this.inner.onmessage = (m, extra) => this.onmessage?.(m, extra)
    await this.inner.start()
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(redactDeep(message), options)
  }

  close(): Promise<void> {
    return this.inner.close()
  }
}
