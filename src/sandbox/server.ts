import {appendFileSync, closeSync, constants, openSync} from 'node:fs'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'

import {countyByFips} from './counties.js'
import {Dataset} from './dataset.js'
import {demoKey, type DemoKey} from './keys.js'
import type {MatchMode} from './match.js'
import {badApn as apnProblem, badFips as fipsProblem, maskedKey as maskKey} from './rules.js'

export interface SandboxOptions {
  host?: string
  port?: number
  seed?: number
  /** Size of the large county (48201). */
  records?: number
  /** Requests per window per key (spec 8.2 default: 1,000 an hour). */
  limit?: number
  windowSeconds?: number
  /**
   * Where windows are counted from, in ms since the epoch (spec 8 says only "a window"). Default 0: an
   * hour's window turns on the clock hour. A test that spends a window passes its own start, so the
   * window cannot turn between two of its requests whatever the time of day it runs.
   */
  windowOrigin?: number
  /** 0: the county-wide form returns one array; N > 0: pages of N with an RFC 8288 Link next header. */
  pageSize?: number
  failRate?: number
  resetRate?: number
  truncateRate?: number
  latencyMs?: number
  log?: string | undefined
  /** Address matching: `lenient` (default) or `strict`, the service's standardised form only (match.ts). */
  match?: MatchMode
  /** Non-condo records carry the flat FHA project fields (spec 2.1) as null instead of leaving them out. */
  nullFlatFields?: boolean
  now?: () => number
  random?: () => number
  /** How --latency waits: a timer by default; injected in tests, which then see each wait asked for. */
  sleep?: (ms: number) => Promise<void>
}

export interface Sandbox {
  /** The base URL, with its /v1 segment (spec 9.1). */
  baseUrl: string
  server: Server
  /**
   * Resolves once no connection is open and no request is being answered (its --latency wait included):
   * after a client is killed, every request it sent has been answered and logged, or never arrived.
   */
  idle(): Promise<void>
  close(): Promise<void>
}

type Fault = 'fail' | 'reset' | 'truncate' | null

/** The largest page a client may ask for with page_size. */
const MAX_PAGE_SIZE = 10_000
/** Records serialised per write of the county stream: large enough to be fast, small enough to stay flat. */
const BATCH = 256

type Settings = Required<Omit<SandboxOptions, 'log'>> & {log: string | undefined}

type Answer =
  | {kind: 'error'; status: number; body: unknown}
  | {kind: 'one'; status: 200; record: Record<string, unknown>}
  | {kind: 'county'; status: 200; fips: string; from: number; to: number; next?: string}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const o: Settings = {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    seed: options.seed ?? 1,
    records: options.records ?? 100_000,
    limit: options.limit ?? 1000,
    windowSeconds: options.windowSeconds ?? 3600,
    // whole seconds, as X-RateLimit-Reset is (spec 8.3): the window turns at the second it announces
    windowOrigin: Math.floor((options.windowOrigin ?? 0) / 1000) * 1000,
    pageSize: options.pageSize ?? 0,
    failRate: options.failRate ?? 0,
    resetRate: options.resetRate ?? 0,
    truncateRate: options.truncateRate ?? 0,
    latencyMs: options.latencyMs ?? 0,
    log: options.log,
    match: options.match ?? 'lenient',
    nullFlatFields: options.nullFlatFields ?? false,
    now: options.now ?? Date.now,
    random: options.random ?? Math.random,
    sleep: options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
  }
  const service = new Service(o)
  const sockets = new Set<import('node:net').Socket>()
  let answering = 0
  let idlers: Array<() => void> = []
  const settle = () => {
    if (answering > 0 || sockets.size > 0) return
    const waiting = idlers
    idlers = []
    for (const resolve of waiting) resolve()
  }
  const server = createServer((req, res) => {
    answering++
    void service
      .handle(req, res)
      .catch((error: unknown) => {
        if (!res.headersSent)
          sendJson(res, 500, {status: 'error', code: 500, message: `sandbox error: ${String(error)}`})
        else res.destroy()
      })
      .finally(() => {
        answering--
        settle()
      })
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => {
      sockets.delete(s)
      settle()
    })
  })
  service.baseUrl = await new Promise<string>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port, o.host, () => {
      const addr = server.address() as AddressInfo
      // listening on every interface: print the loopback address, which a client on this machine can use
      // (and which the CLI accepts over plain HTTP) rather than 0.0.0.0 or ::
      const ip = addr.address === '0.0.0.0' ? '127.0.0.1' : addr.address === '::' ? '::1' : addr.address
      const host = ip.includes(':') ? `[${ip}]` : ip
      resolve(`http://${host}:${addr.port}/v1`)
    })
  })
  return {
    baseUrl: service.baseUrl,
    server,
    idle: () =>
      new Promise<void>((resolve) => {
        idlers.push(resolve)
        settle()
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/** The request log's open: appended, created 0600, never through a symbolic link (O_NOFOLLOW). */
const LOG_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW

/** The service's side of one request: endpoint, key (spec 5), window (spec 8), faults, then the answer. */
class Service {
  baseUrl = ''
  private readonly dataset: Dataset
  private readonly windows = new Map<string, {start: number; used: number}>()

  private logRefused = false

  constructor(private readonly o: Settings) {
    this.dataset = new Dataset(o.seed, o.records)
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // RFC 9110 6.6.1: the Date is the sandbox's clock, the one its X-RateLimit-Reset is on (an injected
    // clock in tests; a client corrects the reset by the Date's skew)
    res.setHeader('Date', new Date(this.o.now()).toUTCString())
    const url = new URL(req.url ?? '/', 'http://sandbox')
    const query = Object.fromEntries(url.searchParams)
    const rawKey = req.headers['x-api-key']
    const keyText = Array.isArray(rawKey) ? rawKey[0] : rawKey
    if (url.pathname !== '/v1/special-financing' || req.method !== 'GET') {
      const status = req.method === 'GET' ? 404 : 405
      this.log(keyText, query, status, null)
      return sendJson(res, status, {
        status: 'error',
        code: status,
        message: `no such endpoint: ${req.method} ${url.pathname}; use GET /v1/special-financing`,
      })
    }
    if (this.o.latencyMs > 0) await this.o.sleep(this.o.latencyMs)

    // spec 5.1, 5.4, 7: a missing or invalid key gives 401
    const key = demoKey(keyText)
    if (!key) {
      this.log(keyText, query, 401, null)
      return sendJson(res, 401, {
        status: 'error',
        code: 401,
        message: 'The API key is invalid or missing. Send a valid key in the X-Api-Key header.',
      })
    }
    if (!this.admit(key, res)) return this.log(keyText, query, 429, null)

    const fault = this.fault()
    if (fault === 'fail') {
      this.log(keyText, query, 500, fault)
      return sendJson(res, 500, {
        status: 'error',
        code: 500,
        message: 'Unexpected server error (injected by the sandbox).',
      })
    }
    if (fault === 'reset') {
      this.log(keyText, query, 0, fault)
      req.socket.destroy()
      return
    }
    const answer = this.route(query, key)
    this.log(keyText, query, answer.status, fault)
    if (answer.kind === 'error') return sendJson(res, answer.status, answer.body, fault === 'truncate')
    if (answer.kind === 'one')
      return sendJson(res, 200, {status: 'success', data: answer.record}, fault === 'truncate')
    await this.streamCounty(res, answer, key, fault === 'truncate')
  }

  /** Spec 8: a fixed window per key; every response to a valid key carries the X-RateLimit headers. */
  private admit(key: DemoKey, res: ServerResponse): boolean {
    const {limit, windowSeconds, windowOrigin} = this.o
    const now = this.o.now()
    const windowMs = windowSeconds * 1000
    const start = windowOrigin + Math.floor((now - windowOrigin) / windowMs) * windowMs
    let w = this.windows.get(key.name)
    if (!w || w.start !== start) this.windows.set(key.name, (w = {start, used: 0}))
    const reset = Math.ceil((start + windowMs) / 1000)
    if (w.used >= limit) {
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil((reset * 1000 - now) / 1000))))
      rateHeaders(res, limit, 0, reset)
      sendJson(res, 429, {
        status: 'error',
        code: 429,
        message: `Rate limit exceeded: ${limit} requests per ${windowSeconds} s. Retry after the reset.`,
      })
      return false
    }
    w.used++
    rateHeaders(res, limit, limit - w.used, reset)
    return true
  }

  /** Faults: independent per request, never on auth or rate-limit rejections (those are answered before). */
  private fault(): Fault {
    const {failRate, resetRate, truncateRate} = this.o
    const u = this.o.random()
    if (u < failRate) return 'fail'
    if (u < failRate + resetRate) return 'reset'
    if (u < failRate + resetRate + truncateRate) return 'truncate'
    return null
  }

  private log(key: string | undefined, query: Record<string, string>, status: number, fault: Fault): void {
    if (!this.o.log) return
    const line = {
      time: new Date(this.o.now()).toISOString(),
      key: key ? maskKey(key) : null,
      query,
      status,
      fault,
    }
    // appended through a descriptor opened without following a link: a symlink planted at the log's path
    // (a shared folder) is never written through; the line is dropped and said once instead
    let fd: number | undefined
    try {
      fd = openSync(this.o.log, LOG_FLAGS, 0o600)
      appendFileSync(fd, `${JSON.stringify(line)}\n`)
    } catch (error) {
      if (!this.logRefused)
        process.stderr.write(
          `sfl sandbox: not logging to ${this.o.log} (${(error as {code?: string}).code ?? 'error'}): give --log a regular file of yours, not a link\n`,
        )
      this.logRefused = true
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }

  /** Spec 4 and 7. Precedence when several lookup parameters are given: property_id, then apn, then address. */
  private route(q: Record<string, string>, key: DemoKey): Answer {
    const fips = q['fips']
    if (fips === undefined || fips === '')
      return errorAnswer(400, 'Missing required parameter: fips (a 5-digit county code).')
    const problem = parameterProblem(q, fips)
    if (problem) return problem
    // spec 5.3 / 5.4: a key without permission for the county gets 403
    if (key.counties && !key.counties.includes(fips))
      return errorAnswer(403, `This API key is not permitted to access county ${fips}.`)
    const county = countyByFips(fips)
    const opts = {assumable: key.assumable, condo: key.condo, nullFlatFields: this.o.nullFlatFields}
    const notFound = errorAnswer(404, 'No property matches the given parameters.')
    const one = (record: Record<string, unknown>): Answer => ({kind: 'one', status: 200, record})
    if (q['property_id']) {
      const at = this.dataset.byId(q['property_id'])
      if (!at || at.county.fips !== fips) return notFound
      return one(this.dataset.record(at.county, at.index, opts))
    }
    if (q['apn']) {
      const i = county ? this.dataset.byApn(fips, q['apn']) : undefined
      return i === undefined ? notFound : one(this.dataset.record(county!, i, opts))
    }
    if (q['address']) {
      const i = county ? this.dataset.byAddress(fips, q['address'], this.o.match) : undefined
      return i === undefined ? notFound : one(this.dataset.record(county!, i, opts))
    }
    if (!county) return errorAnswer(404, `No records for county ${fips}.`)
    return this.countyPage(q, fips)
  }

  /** The county form: one array (page size 0), or the page asked for with the next page's Link. */
  private countyPage(q: Record<string, string>, fips: string): Answer {
    const total = this.dataset.count(fips)
    let size = this.o.pageSize
    if (q['page_size'] !== undefined) {
      const n = Number(q['page_size'])
      if (!/^\d+$/.test(q['page_size']) || n < 1 || n > MAX_PAGE_SIZE)
        return errorAnswer(400, `Invalid page_size: must be an integer from 1 to ${MAX_PAGE_SIZE}.`)
      size = n
    }
    if (size === 0) return {kind: 'county', status: 200, fips, from: 0, to: total}
    const page = q['page'] === undefined ? 1 : Number(q['page'])
    if (!Number.isInteger(page) || page < 1)
      return errorAnswer(400, 'Invalid page: must be a positive integer.')
    const from = Math.min(total, (page - 1) * size)
    const to = Math.min(total, from + size)
    const answer: Answer = {kind: 'county', status: 200, fips, from, to}
    if (to < total)
      answer.next = `${this.baseUrl}/special-financing?fips=${fips}&page=${page + 1}&page_size=${size}`
    return answer
  }

  /** The county form, streamed with backpressure so server memory does not grow with the county. */
  private async streamCounty(
    res: ServerResponse,
    a: {fips: string; from: number; to: number; next?: string},
    key: DemoKey,
    truncate: boolean,
  ): Promise<void> {
    const county = countyByFips(a.fips)!
    const opts = {assumable: key.assumable, condo: key.condo, nullFlatFields: this.o.nullFlatFields}
    res.statusCode = 200
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.setHeader('X-Total-Count', String(this.dataset.count(a.fips)))
    if (a.next) res.setHeader('Link', `<${a.next}>; rel="next"`)
    const cutAt = truncate ? a.from + Math.floor((a.to - a.from) / 2) : Infinity
    let closed = false
    res.on('close', () => (closed = true))
    await writeDrained(res, '{"status":"success","data":[')
    for (let i = a.from; i < a.to && !closed; i += BATCH) {
      const end = Math.min(a.to, i + BATCH)
      let chunk = ''
      for (let k = i; k < end; k++) {
        if (k === cutAt) {
          // fault: body cut short mid-record (a prefix of a valid body: the comma before the record is there)
          cutShort(res, `${chunk}${k === a.from ? '' : ','}{"Fips":"${a.fips}`)
          return
        }
        chunk += (k === a.from ? '' : ',') + JSON.stringify(this.dataset.record(county, k, opts))
      }
      await writeDrained(res, chunk)
    }
    if (truncate && !closed) {
      cutShort(res, '') // an empty page still gets cut
      return
    }
    res.end(']}')
  }
}

function errorAnswer(status: number, message: string): Answer {
  return {kind: 'error', status, body: {status: 'error', code: status, message}}
}

/** Spec 4.1 and 7: a parameter in the wrong form is a 400 before any permission or lookup. */
function parameterProblem(q: Record<string, string>, fips: string): Answer | undefined {
  const fp = fipsProblem(fips)
  if (fp) return errorAnswer(400, `Invalid fips "${fips}": ${fp}.`)
  const id = q['property_id']
  if (id !== undefined && id !== '' && !/^\d{1,19}$/.test(id))
    return errorAnswer(400, `Invalid property_id "${id}": must be an integer.`)
  if (q['apn'] !== undefined && q['apn'] !== '') {
    const ap = apnProblem(q['apn'])
    if (ap) return errorAnswer(400, `Invalid apn: ${ap}.`)
  }
  return undefined
}

/**
 * Write, then wait for drain or for the client to go away, leaving no listener behind either way. A client
 * already gone (its 'close' may have been emitted before this write) is not waited for: no drain will come.
 */
async function writeDrained(res: ServerResponse, chunk: string): Promise<void> {
  if (res.write(chunk) || res.destroyed || res.socket === null || res.socket.destroyed) return
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

function rateHeaders(res: ServerResponse, limit: number, remaining: number, reset: number): void {
  res.setHeader('X-RateLimit-Limit', String(limit))
  res.setHeader('X-RateLimit-Remaining', String(remaining))
  res.setHeader('X-RateLimit-Reset', String(reset))
}

function sendJson(res: ServerResponse, status: number, body: unknown, truncate = false): void {
  const text = JSON.stringify(body)
  res.statusCode = status
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.setHeader('Content-Length', String(Buffer.byteLength(text)))
  if (truncate) {
    cutShort(res, text.slice(0, Math.floor(text.length / 2)))
    return
  }
  res.end(text)
}

/** Send the headers and a partial body, then drop the connection once they are on the wire. */
function cutShort(res: ServerResponse, partial: string): void {
  res.write(partial, () => setImmediate(() => res.destroy()))
}
