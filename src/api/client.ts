import type {Dispatcher} from 'undici'

import {
  BadRequestError,
  BadResponseError,
  ForbiddenError,
  HttpStatusError,
  InvalidKeyError,
  NotFoundError,
  RequestTimeoutError,
  ServerError,
  ServerStatusError,
  TruncatedBodyError,
  UnexpectedStatusError,
  systemCode,
  UsageError,
} from '../errors.js'
import {maskKey, redact} from './secrets.js'

/**
 * The only module that talks HTTP. Every request of every command goes through `HttpClient.get`, called
 * by the scheduler (src/schedule/scheduler.ts), which owns retries and rate limits.
 */
export interface HttpResponse {
  status: number
  url: string
  headers: Record<string, string>
  body: AsyncIterable<Buffer>
  text(): Promise<string>
  dump(): Promise<void>
  /** Stop reading and drop the connection (after the first record of a huge body, say). */
  cancel(): void
}

export interface ClientOptions {
  apiKey: string
  timeoutMs: number
  userAgent: string
  /** Injected in tests (undici MockAgent); an EnvHttpProxyAgent honouring HTTP(S)_PROXY/NO_PROXY otherwise. */
  dispatcher?: Dispatcher | undefined
  debug?: ((line: string) => void) | undefined
  /**
   * What the client is doing, for a caller that keeps a person informed (src/cli/wait-feedback.ts) or a
   * library that exposes the same events: a request started (its host and deadline), a request settled
   * (answered in full, failed, or cancelled). Called synchronously; must not throw.
   */
  onEvent?: ((event: ClientEvent) => void) | undefined
  /** The --timeout timer, injected in tests (a virtual clock); Node's timers, unref'd, otherwise. */
  timers?: DeadlineTimers | undefined
}

export type ClientEvent =
  | {type: 'request'; id: number; host: string; timeoutMs: number}
  | {type: 'headers'; id: number; status: number}
  | {type: 'settled'; id: number}

export interface DeadlineTimers {
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

const NODE_TIMERS: DeadlineTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

const MAX_REDIRECTS = 5
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i

/** Refuse to send a key in clear text anywhere but this machine (exit 2 before any request). */
export function assertSafeBaseUrl(baseUrl: string): URL {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new UsageError(
      `base URL "${baseUrl}" is not a valid URL; expected something like https://api.example.com/v1`,
    )
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UsageError(`base URL must use https:// (got ${url.protocol})`)
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname))
    throw new UsageError(
      `refusing to send the API key over plain http:// to ${url.hostname}; use https:// (plain http is allowed only for localhost)`,
    )
  if (url.search || url.hash) throw new UsageError('base URL must not carry a query string or fragment')
  return url
}

/** undici's request API and proxy agent, loaded at the first request (not by `sfl --version`). */
export function loadUndici(): Promise<typeof import('./undici-parts.js')> {
  return import('./undici-parts.js')
}

let defaultDispatcher: Promise<Dispatcher> | undefined
async function getDefaultDispatcher(): Promise<Dispatcher> {
  defaultDispatcher ??= loadUndici().then((u) => new u.EnvHttpProxyAgent())
  return defaultDispatcher
}

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
])

/** Errors worth retrying: connection resets, timeouts, truncated bodies (not 4xx, not our own bugs). */
export function isRetryableNetworkError(error: unknown): boolean {
  if (error instanceof TruncatedBodyError || error instanceof RequestTimeoutError) return true
  if (!(error instanceof Error)) return false
  const code = (error as {code?: unknown}).code
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true
  const cause = (error as {cause?: unknown}).cause
  return cause !== undefined && cause !== error && isRetryableNetworkError(cause)
}

export class HttpClient {
  private requests = 0

  constructor(private readonly options: ClientOptions) {}

  /**
   * GET with the key in X-Api-Key only (spec 5.1). Redirects are followed by hand so the key never leaves
   * its origin. `signal` is the run's abort signal (Ctrl-C); on top of it, --timeout is one deadline for
   * the whole request: connect, headers, redirects and reading the body (the returned body, text() and
   * dump() all end with a RequestTimeoutError when it passes).
   */
  async get(url: string, signal?: AbortSignal): Promise<HttpResponse> {
    const id = ++this.requests
    const {onEvent, timeoutMs} = this.options
    onEvent?.({type: 'request', id, host: hostOf(url), timeoutMs})
    const deadline = startDeadline(timeoutMs, signal, url, this.options.timers ?? NODE_TIMERS, () =>
      onEvent?.({type: 'settled', id}),
    )
    try {
      return await this.send(url, deadline, id)
    } catch (error) {
      deadline.clear()
      throw deadline.reason(error)
    }
  }

  private async send(url: string, deadline: Deadline, id: number): Promise<HttpResponse> {
    const {request} = await loadUndici()
    const dispatcher = this.options.dispatcher ?? (await getDefaultDispatcher())
    const origin = new URL(url).origin
    let current = url
    for (let hop = 0; ; hop++) {
      const sameOrigin = new URL(current).origin === origin
      const headers: Record<string, string> = {
        accept: 'application/json',
        // say so: a compressed body we did not ask for is refused below
        'accept-encoding': 'identity',
        'user-agent': this.options.userAgent,
      }
      if (sameOrigin) headers['x-api-key'] = this.options.apiKey
      const started = Date.now()
      this.debug(
        `→ GET ${current}${sameOrigin ? `  X-Api-Key: ${maskKey(this.options.apiKey)}` : '  (no key: other origin)'}`,
      )
      const target = new URL(current)
      const res = await guard(current, () =>
        request(dispatcher, {
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          method: 'GET',
          headers,
          headersTimeout: this.options.timeoutMs,
          bodyTimeout: this.options.timeoutMs,
          signal: deadline.signal,
        }),
      )
      const flat: Record<string, string> = {}
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v
      this.debug(`← ${res.statusCode} ${current} (${Date.now() - started} ms)${rateLimitSummary(flat)}`)
      this.options.onEvent?.({type: 'headers', id, status: res.statusCode})
      const location = flat['location']
      if ([301, 302, 303, 307, 308].includes(res.statusCode) && location) {
        await res.body.dump()
        if (hop >= MAX_REDIRECTS)
          throw new ServerError(`too many redirects (more than ${MAX_REDIRECTS}) starting at ${url}`)
        const next = new URL(location, current)
        // Never downgrade to clear text with a key attached.
        if (next.protocol === 'http:' && new URL(current).protocol === 'https:')
          throw new ServerError(`refusing a redirect from https to http (${next.origin})`)
        current = next.toString()
        continue
      }
      const encoding = flat['content-encoding']?.trim().toLowerCase()
      if (encoding && encoding !== 'identity') {
        res.body.on('error', () => undefined) // destroying emits an error nobody else listens for
        res.body.destroy()
        throw new BadResponseError(
          `the server sent a body encoded with Content-Encoding: ${encoding}, which sfl did not ask for (it sends Accept-Encoding: identity); check the base URL or the proxy in between`,
        )
      }
      return wrapResponse(res, current, flat, deadline)
    }
  }

  private debug(line: string): void {
    this.options.debug?.(redact(line))
  }
}

interface Deadline {
  signal: AbortSignal
  /** Stop the timer and detach from the run's signal (the body is done). */
  clear(): void
  /** The error to report for `error`: the RequestTimeoutError when the deadline is what ended it. */
  reason(error: unknown): unknown
}

/**
 * One AbortController per request, aborted by the run's signal or by the --timeout timer. Built by hand
 * rather than with AbortSignal.any so that the timer and the listener on the long-lived run signal are
 * removed as soon as the body is done (an export sends thousands of requests under one run signal).
 */
function startDeadline(
  timeoutMs: number,
  parent: AbortSignal | undefined,
  url: string,
  timers: DeadlineTimers,
  settled: () => void,
): Deadline {
  const controller = new AbortController()
  const onParent = (): void => controller.abort(parent?.reason)
  let timeout: RequestTimeoutError | undefined
  let cleared = false
  const timer = timers.setTimeout(() => {
    const seconds = Math.round(timeoutMs / 100) / 10
    timeout = new RequestTimeoutError(
      `no complete answer from ${hostOf(url)} within ${seconds} s (connect, headers and body); the server is slow or dripping its answer`,
      {facts: {topic: 'request-timeout', host: hostOf(url), seconds}},
    )
    controller.abort(timeout)
  }, timeoutMs)
  if (parent?.aborted) controller.abort(parent.reason)
  else parent?.addEventListener('abort', onParent, {once: true})
  return {
    signal: controller.signal,
    clear: () => {
      if (cleared) return
      cleared = true
      timers.clearTimeout(timer)
      parent?.removeEventListener('abort', onParent)
      settled()
    },
    reason: (error) => timeout ?? error,
  }
}

/** "api.example.com:8443", or the text itself when it is not a URL. */
function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return url
  }
}

/** The response with a body that honours the deadline and releases it when read, dumped or cancelled. */
function wrapResponse(
  res: Dispatcher.ResponseData,
  url: string,
  headers: Record<string, string>,
  deadline: Deadline,
): HttpResponse {
  const body = res.body
  const settle = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      throw deadline.reason(bodyError(error, url))
    } finally {
      deadline.clear()
    }
  }
  return {
    status: res.statusCode,
    url,
    headers,
    body: {
      async *[Symbol.asyncIterator]() {
        try {
          for await (const chunk of body) yield chunk as Buffer
        } catch (error) {
          throw deadline.reason(bodyError(error, url))
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
  }
}

/**
 * What a failure while reading the body is. The connection closing in the middle of a chunked body is
 * the same fault as a Content-Length body cut short (a truncation, retried like a reset): undici sees
 * it as llhttp's "Invalid EOF state" when the answer said `Connection: close` (RFC 9112 7.1: a chunked
 * body ends only with its last chunk), and as UND_ERR_SOCKET otherwise. Any other parse error in the
 * body is a broken answer (exit 6, not retried), as it is in the headers (`guard`).
 */
function bodyError(error: unknown, url: string): unknown {
  const parse = parserFault(error)
  if (parse === undefined) return error
  if (parse === 'Invalid EOF state' || systemCode(error) === 'HPE_INVALID_EOF_STATE')
    return new TruncatedBodyError(
      `the connection to ${hostOf(url)} closed in the middle of the response body (a chunk was cut short)`,
      {cause: error},
    )
  return new BadResponseError(
    `the server at ${hostOf(url)} sent a response body sfl cannot read (${parse}); check the base URL or the proxy in between`,
    {cause: error},
  )
}

/**
 * llhttp's reason for an undici HTTPParserError ("Invalid status code", "Invalid EOF state"), or
 * undefined for any other error. undici 7 leaves such errors without a code (it looks llhttp's error
 * number up in a map of names), so the name and the message are what tell them.
 */
function parserFault(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== 'HTTPParserError') return undefined
  return /\(([^()]+)\)\s*$/.exec(error.message)?.[1] ?? error.message
}

function rateLimitSummary(h: Record<string, string>): string {
  const r = h['x-ratelimit-remaining']
  return r === undefined
    ? ''
    : `  remaining ${r}/${h['x-ratelimit-limit'] ?? '?'} reset ${h['x-ratelimit-reset'] ?? '?'}`
}

/**
 * Turn a non-2xx response into the error class of its status (spec 7). The service's JSON message is
 * kept; an HTML page from a proxy becomes one readable line.
 */
export async function errorFromResponse(res: HttpResponse): Promise<HttpStatusError> {
  let text = ''
  try {
    text = (await res.text()).slice(0, 4096)
  } catch {
    // the body itself failed; the status is still worth reporting
  }
  // redact before describeErrorBody cuts the page at 120 characters: a cut key is no longer the whole key
  const message = redact(describeErrorBody(res.status, res.headers['content-type'], redact(text)))
  switch (res.status) {
    case 400:
      return new BadRequestError(`the service rejected the request (HTTP 400): ${message}`, 400)
    case 401: {
      // the service's sentence ends in a full stop more often than not; the wordings add their own
      const said = message.replace(/[.\s]+$/, '')
      return new InvalidKeyError(`the API key is invalid or missing (HTTP 401): ${said}`, 401, {
        facts: {topic: 'invalid-key', said},
      })
    }
    case 403:
      return new ForbiddenError(`the API key is not permitted for this resource (HTTP 403): ${message}`, 403)
    case 404:
      return new NotFoundError(`no property matches (HTTP 404): ${message}`, 404)
    default:
      if (res.status >= 500)
        return new ServerStatusError(`server error (HTTP ${res.status}): ${message}`, res.status)
      // 410, 418, a 3xx without Location...: the service's fault or a proxy's, not the user's input
      return new UnexpectedStatusError(
        res.status >= 300 && res.status < 400
          ? `the service answered HTTP ${res.status} without a usable Location header: ${message}`
          : `unexpected HTTP ${res.status} from the service: ${message}`,
        res.status,
      )
  }
}

export function describeErrorBody(status: number, contentType: string | undefined, text: string): string {
  const trimmed = text.trim()
  if (trimmed.startsWith('{')) {
    try {
      const body = JSON.parse(trimmed) as {message?: unknown}
      // one line: the message goes into an error line
      if (typeof body.message === 'string' && body.message.trim() !== '')
        return body.message.replace(/\s*[\r\n]+\s*/g, ' ').trim()
    } catch {
      // fall through to the plain-text description
    }
  }
  if (trimmed === '') return `empty response body`
  const plain = trimmed
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  const kind = contentType?.split(';')[0] ?? 'unknown type'
  return `non-JSON response (${kind}) from the server or a proxy in between: "${plain.slice(0, 120)}${plain.length > 120 ? '…' : ''}"`
}

const TLS_CODES =
  /^(CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_CERT_ALTNAME_INVALID|ERR_SSL_)/
/**
 * What OpenSSL says when the bytes that came back are not a TLS record at all: an https:// URL pointed at a
 * port that speaks plain HTTP ("wrong version number"; "packet length too long" on newer OpenSSL).
 */
const PLAIN_HTTP_CODES = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG'])

/**
 * Failures that retrying cannot fix get a message that says what to do: an untrusted certificate (a
 * corporate proxy's CA belongs in NODE_EXTRA_CA_CERTS), a plain-HTTP port behind an https:// URL, or a
 * host name that does not resolve. The low-level error stays as `cause` (the CLI adds the base URL in use).
 */
async function guard<T>(url: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send()
  } catch (error) {
    const code = systemCode(error)
    const {host} = new URL(url)
    const cause = {cause: error}
    if (PLAIN_HTTP_CODES.has(code))
      throw new ServerError(
        `the server at ${host} answered in plain HTTP, not TLS (${code}): the URL says https:// but that port speaks http://`,
        cause,
      )
    if (TLS_CODES.test(code))
      throw new ServerError(
        `the TLS certificate of ${host} is not trusted (${code}); if your network uses its own certificate authority, point NODE_EXTRA_CA_CERTS at its PEM file`,
        cause,
      )
    if (code === 'UND_ERR_HEADERS_OVERFLOW')
      throw new ServerError(
        `the server at ${host} sent response headers larger than allowed (UND_ERR_HEADERS_OVERFLOW); check the base URL or the proxy in between`,
        cause,
      )
    // llhttp parse errors (HPE_*) and undici's response errors: a broken answer, not a local failure
    const parse = parserFault(error)
    if (/^HPE_/.test(code) || parse !== undefined || code === 'UND_ERR_INFO' || code === 'UND_ERR_RESPONSE')
      throw new ServerError(
        `the server at ${host} sent an HTTP answer sfl cannot read (${code || parse}); check the base URL or the proxy in between`,
        cause,
      )
    if (code === 'ENOTFOUND')
      throw new ServerError(
        `cannot resolve the host ${host} (ENOTFOUND); check the base URL and your DNS or proxy settings`,
        cause,
      )
    throw error
  }
}
