import type {Readable} from 'node:stream'

import type {Dispatcher} from 'undici'

import {RequestTimeoutError} from '../errors.js'

/**
 * A plain HTTP exchange for callers other than the service client (the object store, src/objstore): any
 * method, streaming request and response bodies, one deadline for the whole request and the caller's
 * AbortSignal. It lives in src/api because one module family owns HTTP and nothing else imports undici
 * (CONTRIBUTING.md); it knows nothing of the service, its key or its errors, so it neither retries nor
 * redirects: the caller decides what a status means.
 */
export interface TransportRequest {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE'
  url: URL
  headers: Record<string, string>
  /** A body whose length the caller gave in `content-length` (a stream is sent as it is read). */
  body?: Buffer | string | Readable | undefined
  /** Connect, headers and the whole body together; `extendDeadline` moves it for a long body. */
  timeoutMs: number
  signal?: AbortSignal | undefined
}

export interface TransportResponse {
  status: number
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>
  /** The body, read once; ends with RequestTimeoutError when the deadline passes. */
  body: AsyncIterable<Buffer>
  text(): Promise<string>
  /** Read and drop the body (the connection goes back to the pool). */
  dump(): Promise<void>
  /** Stop reading and drop the connection. */
  cancel(): void
  /** Move the deadline to `ms` from now: a body of known length may need longer than the headers did. */
  extendDeadline(ms: number): void
}

export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>
}

export interface TransportTimers {
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

export interface TransportOptions {
  /** Injected in tests; otherwise one EnvHttpProxyAgent (HTTP(S)_PROXY, NO_PROXY), made at the first request. */
  dispatcher?: Dispatcher | undefined
  /** The deadline's timer, injected in tests (a virtual clock); Node's timers, unref'd, otherwise. */
  timers?: TransportTimers | undefined
}

const NODE_TIMERS: TransportTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

let defaultDispatcher: Promise<Dispatcher> | undefined

/** The transport on undici's request API, the same parts and proxy agent as the service client. */
export function createTransport(options: TransportOptions = {}): Transport {
  const timers = options.timers ?? NODE_TIMERS
  return {
    async send(request) {
      const deadline = startDeadline(request, timers)
      try {
        // loaded at the first request: nothing of undici is parsed until an object is read or written
        const undici = await import('./undici-parts.js')
        defaultDispatcher ??= Promise.resolve(new undici.EnvHttpProxyAgent())
        const dispatcher = options.dispatcher ?? (await defaultDispatcher)
        const res = await undici.request(dispatcher, {
          origin: request.url.origin,
          path: `${request.url.pathname}${request.url.search}`,
          method: request.method,
          headers: request.headers,
          body: request.body ?? null,
          // the deadline below is the real bound; these only stop undici's own shorter defaults
          headersTimeout: request.timeoutMs,
          bodyTimeout: request.timeoutMs,
          signal: deadline.signal,
        })
        return wrap(res, deadline)
      } catch (error) {
        deadline.clear()
        throw deadline.reason(error)
      }
    },
  }
}

interface Deadline {
  signal: AbortSignal
  clear(): void
  extend(ms: number): void
  reason(error: unknown): unknown
}

/**
 * One AbortController per request, aborted by the caller's signal or by the deadline. Built by hand, not
 * with AbortSignal.any, so the timer and the listener on a long-lived run signal go as soon as the body is
 * done (a multipart upload sends thousands of requests under one run signal). undici's bodyTimeout is the
 * gap between chunks, so a dripping server never trips it; this deadline does.
 */
function startDeadline(request: TransportRequest, timers: TransportTimers): Deadline {
  const controller = new AbortController()
  const parent = request.signal
  const onParent = (): void => controller.abort(parent?.reason)
  let timeout: RequestTimeoutError | undefined
  let cleared = false
  let limitMs = request.timeoutMs
  const arm = (ms: number): unknown =>
    timers.setTimeout(() => {
      timeout = new RequestTimeoutError(
        `no complete answer from ${request.url.host} within ${Math.round(limitMs / 100) / 10} s (connect, headers and body); the store or the network is slow`,
      )
      controller.abort(timeout)
    }, ms)
  let timer = arm(request.timeoutMs)
  if (parent?.aborted) controller.abort(parent.reason)
  else parent?.addEventListener('abort', onParent, {once: true})
  return {
    signal: controller.signal,
    clear: () => {
      if (cleared) return
      cleared = true
      timers.clearTimeout(timer)
      parent?.removeEventListener('abort', onParent)
    },
    extend: (ms) => {
      if (cleared || timeout) return
      timers.clearTimeout(timer)
      limitMs = ms
      timer = arm(ms)
    },
    reason: (error) => timeout ?? error,
  }
}

function wrap(res: Dispatcher.ResponseData, deadline: Deadline): TransportResponse {
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v
  const body = res.body
  const settle = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      throw deadline.reason(error)
    } finally {
      deadline.clear()
    }
  }
  return {
    status: res.statusCode,
    headers,
    body: {
      async *[Symbol.asyncIterator]() {
        try {
          for await (const chunk of body) yield chunk as Buffer
        } catch (error) {
          throw deadline.reason(error)
        } finally {
          deadline.clear()
        }
      },
    },
    text: () => settle(() => body.text()),
    dump: () => settle(() => body.dump()),
    cancel: () => {
      deadline.clear()
      body.on('error', () => undefined) // the abort error is ours, not news
      body.destroy()
    },
    extendDeadline: (ms) => deadline.extend(ms),
  }
}
