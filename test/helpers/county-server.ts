import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'

import {lenientKey} from '../../src/sandbox/match.js'

/**
 * A loopback service for batch plans (issue 33), written for the tests: counties of records it holds in
 * memory, answering both forms of the endpoint as spec 4 describes them.
 *
 * - The county-wide form (`?fips=` alone): every record, or only those `scanHolds` keeps ("all eligible
 *   records for the county", spec 1), whole in one body or in pages of `pageSize` with `Link: rel="next"`
 *   (and `X-Total-Count` unless `total: false`).
 * - A lookup (`property_id`, `apn` or `address`): every record that matches, 404 when none (spec 7), one
 *   record as an object, several as a list. Its matching is its own and looser than sfl's exact one:
 *   property ids as numbers, APNs without spaces and dashes, addresses by the sandbox's lenient key
 *   (src/sandbox/match.ts: case, punctuation, common suffix and directional spellings, the unit's value
 *   without its designator) and the city when one is given; the ZIP is not compared.
 *
 * Every request is logged (its kind and query), so a test can count what each plan spent.
 */
export type Rec = Record<string, unknown>

export interface CountyServerOptions {
  counties: Record<string, Rec[]>
  /** Records per page of the county-wide form; absent: the county in one body. */
  pageSize?: number
  /** Send X-Total-Count with paged answers (default true). */
  total?: boolean
  /** The county-wide form holds only the records this keeps (default: all). */
  scanHolds?: (r: Rec) => boolean
  /** Answer the county-wide form of these counties with this status instead. */
  scanStatus?: Record<string, number>
}

export interface Logged {
  kind: 'county' | 'lookup'
  fips: string
  page: number
  query: Record<string, string>
}

export interface CountyServer {
  baseUrl: string
  log: Logged[]
  count(kind?: 'county' | 'lookup'): number
  close(): Promise<void>
}

const norm = (s: unknown) =>
  String(s ?? '')
    .toUpperCase()
    .replace(/[\s-]+/g, '')

export async function startCountyServer(o: CountyServerOptions): Promise<CountyServer> {
  const log: Logged[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const q = Object.fromEntries(url.searchParams)
    const fips = q['fips'] ?? ''
    const records = o.counties[fips] ?? []
    const headers = {
      'content-type': 'application/json',
      'x-ratelimit-limit': '100000',
      'x-ratelimit-remaining': '99999',
    }
    const send = (status: number, body: unknown, more: Record<string, string> = {}) => {
      res.writeHead(status, {...headers, ...more})
      res.end(JSON.stringify(body))
    }
    const notFound = () =>
      send(404, {status: 'error', code: 404, message: 'No property matches the given parameters.'})
    const lookup = q['property_id'] ?? q['apn'] ?? q['address']
    if (lookup === undefined) {
      const page = Number(q['page'] ?? '1')
      log.push({kind: 'county', fips, page, query: q})
      const status = o.scanStatus?.[fips]
      if (status) return send(status, {status: 'error', code: status, message: `HTTP ${status}`})
      const held = records.filter(o.scanHolds ?? (() => true))
      if (held.length === 0) return notFound()
      if (!o.pageSize) return send(200, {status: 'success', data: held})
      const pages = Math.ceil(held.length / o.pageSize)
      const more: Record<string, string> = {}
      if (o.total !== false) more['x-total-count'] = String(held.length)
      if (page < pages)
        more['link'] = `<${address()}/special-financing?fips=${fips}&page=${page + 1}>; rel="next"`
      return send(
        200,
        {status: 'success', data: held.slice((page - 1) * o.pageSize, page * o.pageSize)},
        more,
      )
    }
    log.push({kind: 'lookup', fips, page: 0, query: q})
    let found: Rec[]
    if (q['property_id'] !== undefined)
      found = records.filter((r) => String(r['ServicePropertyID']) === q['property_id'])
    else if (q['apn'] !== undefined) found = records.filter((r) => norm(r['APN']) === norm(q['apn']))
    else {
      const cities = [...new Set(records.map((r) => String(r['City']).toUpperCase()))]
      const want = lenientKey(q['address']!, cities)
      const city = q['address']!.split(',')[1]?.trim().toUpperCase()
      found = want
        ? records.filter((r) => {
            const have = lenientKey(String(r['StandardizeStreetAddress']), cities)
            return (
              have !== undefined &&
              have.number === want.number &&
              have.street === want.street &&
              (have.unit ?? '') === (want.unit ?? '') &&
              (city === undefined ||
                city === '' ||
                /^[A-Z]{2}( \d{5})?$/.test(city) ||
                city === String(r['City']).toUpperCase())
            )
          })
        : []
    }
    if (found.length === 0) return notFound()
    return send(200, {status: 'success', data: found.length === 1 ? found[0] : found})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return {
    baseUrl: address(),
    log,
    count: (kind) => (kind ? log.filter((l) => l.kind === kind).length : log.length),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const STREETS = ['HIGH ST', 'OAK AVE', 'RIVER OAKS DR', 'ELM CT', 'N MAIN ST', 'PINE LN']
const CITIES = ['SACRAMENTO', 'ELK GROVE', 'FOLSOM']

/** Record i of a county: a distinct street line (every fifth with a unit), city, ZIP, APN and id. */
export function countyRecord(fips: string, i: number): Rec {
  const unit = i % 5 === 4 ? ` UNIT ${100 + (i % 50)}` : ''
  return {
    Fips: fips,
    ServicePropertyID: Number(`${fips.slice(1)}${String(i).padStart(6, '0')}`),
    APN: `${String(100 + Math.floor(i / 1000)).padStart(3, '0')}-${String(i % 1000).padStart(4, '0')}-0${String(i % 100).padStart(2, '0')}`,
    CompleteStreetAddress: `${1000 + i} ${STREETS[i % STREETS.length]}${unit}`,
    StandardizeStreetAddress: `${1000 + i} ${STREETS[i % STREETS.length]}${unit}`,
    City: CITIES[i % CITIES.length],
    State: 'CA',
    Zip: String(95800 + (i % 40)),
    FinalValue: 300000 + i * 10,
    HighValue: 330000 + i * 10,
    LowValue: 270000 + i * 10,
    ConfidenceScore: 50 + (i % 50),
    StandardDeviation: 0.25,
    ValuationDate: '2026-10-01T00:00:00',
    CRAEligible: i % 4 === 0 ? 'Low' : 'Upper',
    FHAEligible: i % 3 !== 0,
    FHALoanLimit: 498257,
    FHACondoEligible: i % 5 === 4 ? true : null,
    USDAAreaEligible: false,
    VAEligible: true,
    Assumable: i % 7 === 0,
    TractIncomeLevel: 'Moderate',
    TractMinorityPopulationPercent: 41.5,
  }
}

/** `n` records of a county. */
export function countyRecords(fips: string, n: number): Rec[] {
  return Array.from({length: n}, (_, i) => countyRecord(fips, i))
}
