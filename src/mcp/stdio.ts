import {Writable, type Readable} from 'node:stream'

import type {McpServer} from '@modelcontextprotocol/sdk/server/mcp.js'
import type {Transport, TransportSendOptions} from '@modelcontextprotocol/sdk/shared/transport.js'
import {JSONRPCMessageSchema, type JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'

import {redactDeep} from './tool.js'

/**
 * The server on stdin and stdout. stdout IS the protocol: one stray write (a library's console.log, a
 * notice) corrupts the client's stream. So while the server runs, the protocol gets stdout's own write and
 * every other writer to process.stdout or console.log/info/debug is sent to stderr instead; and every
 * message the server sends passes `redact`, whatever produced its text (one wrap point: a tool result, the
 * SDK's own validation messages, an error). Resolves when stdin ends (the client went away) or the
 * transport closes; the server is then closed, which ends every call in flight (the SDK aborts their
 * signals, src/mcp/tool.ts).
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
  const transport = new RedactingTransport(new LineTransport(stdin, protocolOut))
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

/** A line of the protocol longer than this is refused unread (a message of sfl's tools is a few KB). */
export const MAX_LINE_BYTES = 4 * 1024 * 1024

/** JSON-RPC 2.0's error codes for what cannot be a request (section 5.1). */
const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600

/**
 * MCP's stdio transport (one JSON-RPC message a line), written for what the SDK's drops: a line that is not
 * JSON gets JSON-RPC's parse error (-32700) and one that is JSON but no JSON-RPC message gets "invalid
 * request" (-32600), each with id null unless the line carried a usable one, so a client that sent it
 * hears why instead of waiting; a line over MAX_LINE_BYTES is refused as a parse error without being
 * held. When stdin ends the transport closes.
 */
export class LineTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: Transport['onmessage']
  private buffered: Buffer[] = []
  private size = 0
  /** The rest of an over-long line is being skipped. */
  private skipping = false
  private closed = false

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
  ) {}

  private readonly onData = (chunk: Buffer | string) => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    let start = 0
    for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a, start)) {
      this.take(data.subarray(start, nl), true)
      start = nl + 1
    }
    if (start < data.length) this.take(data.subarray(start), false)
  }

  private readonly onEnd = () => void this.close()
  private readonly onError = (error: Error) => this.onerror?.(error)

  /** A piece of a line; `ends` when the line ends with it. */
  private take(piece: Buffer, ends: boolean): void {
    if (!this.skipping) {
      this.size += piece.length
      if (this.size > MAX_LINE_BYTES) {
        this.buffered = []
        this.size = 0
        this.skipping = true
        this.reply(null, PARSE_ERROR, `Parse error: a line longer than ${MAX_LINE_BYTES} bytes`)
      } else this.buffered.push(piece)
    }
    if (!ends) return
    const line = this.skipping ? undefined : Buffer.concat(this.buffered).toString('utf8')
    this.buffered = []
    this.size = 0
    this.skipping = false
    if (line !== undefined) this.line(line.replace(/\r$/, ''))
  }

  private line(text: string): void {
    if (text.trim() === '') return
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      this.reply(null, PARSE_ERROR, 'Parse error: the line is not JSON')
      return
    }
    const parsed = JSONRPCMessageSchema.safeParse(value)
    if (!parsed.success) {
      const id = (value as {id?: unknown} | null)?.id
      const usable = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))
      this.reply(usable ? id : null, INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message')
      return
    }
    this.onmessage?.(parsed.data)
  }

  private reply(id: string | number | null, code: number, message: string): void {
    // the SDK's message types require an id; JSON-RPC answers an unreadable request with id null
    this.write({jsonrpc: '2.0', id, error: {code, message}}).catch(() => undefined)
  }

  async start(): Promise<void> {
    this.stdin.on('data', this.onData)
    this.stdin.on('end', this.onEnd)
    this.stdin.on('close', this.onEnd)
    this.stdin.on('error', this.onError)
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    return this.write(message)
  }

  private write(message: unknown): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.stdout.once('drain', resolve)
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.stdin.off('data', this.onData)
    this.stdin.off('end', this.onEnd)
    this.stdin.off('close', this.onEnd)
    this.stdin.off('error', this.onError)
    this.stdin.pause()
    this.onclose?.()
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
