import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'

/**
 * A loopback server whose every answer a test scripts, independent of the sandbox: a county's pages, a
 * 404 or 403 county, a county that fails on page 3, a server that dies. Records are small but real JSON
 * objects with the fields the export keys on.
 */
export interface ScenarioRequest {
  fips: string
  page: number
  /** 1-based count of requests so far, this one included. */
  n: number
  query: URLSearchParams
}

export type Reply =
  | {status: number; body?: unknown; headers?: Record<string, string>}
  | {page: {records: unknown[]; next?: number | undefined}; headers?: Record<string, string>}
  | {destroy: true}
  | {hang: true}

export interface Scenario {
  baseUrl: string
  requests: ScenarioRequest[]
  /** Resolves once no connection is open (a killed client's are closed, its hung requests let go). */
  idle(): Promise<void>
  close(): Promise<void>
}

export function record(fips: string, i: number): Record<string, unknown> {
  return {
    Fips: fips,
    ServicePropertyID: Number(`${fips}${String(i).padStart(7, '0')}`),
    APN: `${fips}-${i}`,
    FinalValue: 300_000 + i,
    FHAEligible: i % 2 === 0,
  }
}

/** `n` records of a county, starting at `from`. */
export function records(fips: string, from: number, n: number): Array<Record<string, unknown>> {
  return Array.from({length: n}, (_, k) => record(fips, from + k))
}

export async function startScenario(answer: (r: ScenarioRequest) => Reply): Promise<Scenario> {
  const requests: ScenarioRequest[] = []
  const open = new Set<ServerResponse>()
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const r: ScenarioRequest = {
      fips: url.searchParams.get('fips') ?? '',
      page: Number(url.searchParams.get('page') ?? '1'),
      n: requests.length + 1,
      query: url.searchParams,
    }
    requests.push(r)
    const reply = answer(r)
    const base = {
      'content-type': 'application/json',
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '900',
    }
    if ('destroy' in reply) return void req.socket.destroy()
    if ('hang' in reply) {
      open.add(res)
      return
    }
    if ('page' in reply) {
      const headers: Record<string, string> = {...base, ...reply.headers}
      if (reply.page.next !== undefined)
        headers['link'] =
          `<${address()}/special-financing?fips=${r.fips}&page=${reply.page.next}>; rel="next"`
      res.writeHead(200, headers)
      return void res.end(JSON.stringify({status: 'success', data: reply.page.records}))
    }
    res.writeHead(reply.status, {...base, ...reply.headers})
    res.end(
      typeof reply.body === 'string'
        ? reply.body
        : JSON.stringify(reply.body ?? {status: 'error', message: `HTTP ${reply.status}`}),
    )
  })
  const sockets = new Set<Socket>()
  const idlers: Array<() => void> = []
  const settle = () => {
    if (sockets.size > 0) return
    for (const resolve of idlers.splice(0)) resolve()
  }
  server.on('connection', (s: Socket) => {
    sockets.add(s)
    s.on('close', () => {
      sockets.delete(s)
      for (const res of open) if (res.socket === null || res.socket === s) open.delete(res)
      settle()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return {
    baseUrl: address(),
    requests,
    idle: () =>
      new Promise<void>((resolve) => {
        idlers.push(resolve)
        settle()
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A county of `pages` pages of `per` records each. */
export function paged(r: ScenarioRequest, pages: number, per: number): Reply {
  return {
    page: {records: records(r.fips, (r.page - 1) * per, per), next: r.page < pages ? r.page + 1 : undefined},
  }
}

/**
 * A single lookup's answer from a table keyed `fips|value` of the query's `param` (`address`, `apn`): the
 * record (spec 4, 200), or the spec's 404 for anything the table does not hold. The servers of the lookup
 * trials answer only the exact form sfl sends.
 */
export function answerFrom(
  table: () => ReadonlyMap<string, Record<string, unknown>>,
  param: string,
): (r: ScenarioRequest) => Reply {
  return (r) => {
    const rec = table().get(`${r.fips}|${r.query.get(param) ?? ''}`)
    return rec
      ? {status: 200, body: {status: 'success', data: rec}}
      : {
          status: 404,
          body: {status: 'error', code: 404, message: 'No property matches the given parameters.'},
        }
  }
}
