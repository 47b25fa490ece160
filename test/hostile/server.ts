import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'
import {gzipSync} from 'node:zlib'

/**
 * A loopback HTTP server that misbehaves on purpose, one way per mode. The mode is the first path
 * segment of the base URL (`http://127.0.0.1:PORT/<mode>/v1`), so one server serves every case and each
 * test picks its fault by base URL. Shared with the export/batch suites: modes that only matter there
 * (link-loop, deep, data-null on a county page...) live here too.
 */
export const HOSTILE_MODES = [
  /** A well-formed record (the control case). */
  'ok',
  /** 200 and headers at once, then the body one byte a second: defeats a per-chunk body timeout. */
  'drip',
  /** About 1 MB of response headers (undici: UND_ERR_HEADERS_OVERFLOW). */
  'huge-headers',
  /** A gzip-encoded body the client did not ask for. */
  'gzip',
  /** A 400 whose JSON message holds ESC sequences: window title, clear screen, OSC 52 clipboard write. */
  'esc-error',
  /** A record whose fields hold ESC sequences (and a field name that does). */
  'esc-record',
  /** A 401 HTML page echoing the key so that a 120-character cut keeps the key's first 20 characters. */
  'key-echo-cut',
  /** A 401 JSON message echoing the key lower-cased. */
  'key-lower',
  /** A 401 JSON message echoing the key minus its last character. */
  'key-minus-one',
  /** A record with the key in one of its fields. */
  'key-in-record',
  /** A next link (county export) carrying the key and a token as query parameters. */
  'key-in-link',
  /** HTTP 410 Gone with a JSON error body. */
  'gone',
  /** HTTP 302 without a Location header. */
  'redirect-no-location',
  /** 200 with an HTML body. */
  'non-json',
  /** 200 bodies whose `data` is not a record. */
  'data-null',
  'data-string',
  'data-number',
  'data-empty-array',
  /** 200 with `status: "error"`. */
  'status-not-success',
  /** A county page whose `Link: rel=next` points back at itself (followed forever by a naive loop). */
  'link-loop',
  /** A list whose first record is nested 100,000 objects deep (a recursive walker overflows the stack), then a good one. */
  'deep',
  /** A list whose first record has a 17 MB string field (over a 16 MB record cap), then a good one. */
  'huge-field',
  /** A record with a field named like a spreadsheet formula. */
  'formula-header',
  /** 403: the key lacks permission (spec 5.4). */
  'forbidden',
  /** 401 with the spec's error body, echoing nothing. */
  'unauthorized',
  /** Accepts the request and never answers (a hung service). */
  'hang',
] as const
export type HostileMode = (typeof HOSTILE_MODES)[number]

export interface HostileRequest {
  mode: string
  url: string
  headers: IncomingMessage['headers']
}

export interface HostileServer {
  /** The base URL (with its /v1 segment) that makes the server behave as `mode`. */
  baseUrl(mode: HostileMode): string
  /** Every request received, in order. */
  requests: HostileRequest[]
  close(): Promise<void>
}

/** ESC sequences a terminal acts on: set the title, clear the screen, write the clipboard (OSC 52), bell. */
export const ESC_PAYLOAD = '\x1b]0;pwned\x07\x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4=\x07\x9b31m'

export const RECORD = {
  Fips: '06067',
  ServicePropertyID: 30000000006,
  APN: '078-0123-045',
  CompleteStreetAddress: '3526 HIGH ST',
  StandardizeStreetAddress: '3526 HIGH ST',
  City: 'SACRAMENTO',
  State: 'CA',
  Zip: '95838',
  FinalValue: 350000,
  HighValue: 380000,
  LowValue: 320000,
  ConfidenceScore: 88,
  StandardDeviation: 12,
  ValuationDate: '2024-01-01T00:00:00',
  CRAEligible: 'Moderate',
  FHAEligible: true,
  FHALoanLimit: 600000,
  FHACondoEligible: null,
  USDAAreaEligible: false,
  VAEligible: true,
  Assumable: false,
  TractIncomeLevel: 'Moderate',
  TractMinorityPopulationPercent: 40.5,
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  })
  res.end(text)
}

/** A value nested `depth` objects deep, built without recursion (JSON.stringify would overflow too). */
export function deepJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
}

export async function startHostileServer(): Promise<HostileServer> {
  const requests: HostileRequest[] = []
  const sockets = new Set<Socket>()
  const timers = new Set<NodeJS.Timeout>()
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const mode = url.pathname.split('/')[1] ?? ''
    requests.push({mode, url: req.url ?? '', headers: req.headers})
    const key = String(req.headers['x-api-key'] ?? '')
    const success = (data: unknown, headers: Record<string, string> = {}) =>
      json(res, 200, {status: 'success', data}, headers)
    switch (mode as HostileMode) {
      case 'ok':
        return success(RECORD)
      case 'drip': {
        res.writeHead(200, {'content-type': 'application/json', 'content-length': '100000'})
        res.write('{')
        const t = setInterval(() => res.write(' '), 1000)
        timers.add(t)
        res.on('close', () => clearInterval(t))
        return
      }
      case 'huge-headers': {
        const headers: Record<string, string> = {}
        for (let i = 0; i < 128; i++) headers[`x-pad-${i}`] = 'x'.repeat(8192)
        return success(RECORD, headers)
      }
      case 'gzip': {
        const body = gzipSync(JSON.stringify({status: 'success', data: RECORD}))
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'content-length': body.length,
        })
        return res.end(body)
      }
      case 'esc-error':
        return json(res, 400, {status: 'error', code: 400, message: `bad request${ESC_PAYLOAD} done`})
      case 'esc-record':
        return success({...RECORD, City: `SACRAMENTO${ESC_PAYLOAD}`, [`Note${ESC_PAYLOAD}`]: `x\ry\u202ez`})
      case 'key-echo-cut': {
        // 100 characters of text before the key: describeErrorBody cuts at 120, keeping 20 of the key
        const html = `<html><body><p>${'Access denied for this API key value. '.repeat(3).slice(0, 100)}${key} is not valid.</p></body></html>`
        res.writeHead(401, {'content-type': 'text/html'})
        return res.end(html)
      }
      case 'key-lower':
        return json(res, 401, {status: 'error', code: 401, message: `unknown key ${key.toLowerCase()}`})
      case 'key-minus-one':
        return json(res, 401, {status: 'error', code: 401, message: `unknown key ${key.slice(0, -1)}`})
      case 'key-in-record':
        return success({...RECORD, APN: `echo-${key}`})
      case 'key-in-link': {
        const next = `http://127.0.0.1:${(server.address() as AddressInfo).port}/key-in-link/v1/special-financing?fips=06067&page=2&api_key=${key}&token=t0k3n`
        return success([RECORD], url.searchParams.get('page') ? {} : {link: `<${next}>; rel="next"`})
      }
      case 'gone':
        return json(res, 410, {status: 'error', code: 410, message: 'this API version is gone'})
      case 'redirect-no-location':
        res.writeHead(302, {'content-type': 'text/plain'})
        return res.end('moved somewhere')
      case 'non-json':
        res.writeHead(200, {'content-type': 'text/html'})
        return res.end('<html><body>Welcome to the captive portal</body></html>')
      case 'data-null':
        return success(null)
      case 'data-string':
        return success('no records')
      case 'data-number':
        return success(42)
      case 'data-empty-array':
        return success([])
      case 'status-not-success':
        return json(res, 200, {status: 'error', data: RECORD})
      case 'link-loop':
        return success([RECORD], {
          link: `<http://127.0.0.1:${(server.address() as AddressInfo).port}${req.url}>; rel="next"`,
        })
      case 'deep':
        return json(
          res,
          200,
          `{"status":"success","data":[{"Fips":"06067","Deep":${deepJson(100_000)}},${JSON.stringify(RECORD)}]}`,
        )
      case 'huge-field': {
        // written in pieces so the server does not hold the body twice
        const head = '{"status":"success","data":[{"Fips":"06067","Huge":"'
        const tail = `"},${JSON.stringify(RECORD)}]}`
        const piece = 'x'.repeat(1 << 20)
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': head.length + 17 * piece.length + tail.length,
        })
        res.write(head)
        for (let i = 0; i < 17; i++) res.write(piece)
        return res.end(tail)
      }
      case 'formula-header':
        // a field name a spreadsheet would run as a formula
        return success([{...RECORD, '=HYPERLINK("http://evil.example/","x")': 1}])
      case 'forbidden':
        return json(res, 403, {status: 'error', code: 403, message: 'Forbidden'})
      case 'hang':
        return // the socket stays open until close() destroys it
      case 'unauthorized':
        return json(res, 401, {status: 'error', code: 401, message: 'Invalid or missing API key'})
      default:
        return json(res, 404, {status: 'error', code: 404, message: `unknown hostile mode ${mode}`})
    }
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return {
    baseUrl: (mode) => `http://127.0.0.1:${port}/${mode}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearInterval(t)
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
