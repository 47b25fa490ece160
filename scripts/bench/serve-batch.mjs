// node scripts/bench/serve-batch.mjs — the planner benchmark's server (scripts/bench-batch-plan.mjs): the
// county of scripts/bench/batch-county.mjs built once into pre-built bodies held in memory (its pages of
// PAGE_SIZE with X-Total-Count and Link: rel="next", and one body per record for lookups by
// property_id, apn or the address as sfl sends it), so a request costs a Map lookup and a write, and
// the server never caps the figure. GET /__count answers how many requests it has served since the last
// GET /__reset (county pages and lookups apart). Prints `listening <base URL>` when ready.
import {createServer} from 'node:http'

import {COUNTY_RECORDS, FIPS, PAGE_SIZE, addressOf, record} from './batch-county.mjs'

const pages = []
const byKey = new Map()
for (let p = 0; p * PAGE_SIZE < COUNTY_RECORDS; p++) {
  const recs = []
  for (let i = p * PAGE_SIZE; i < Math.min(COUNTY_RECORDS, (p + 1) * PAGE_SIZE); i++) {
    const r = record(i)
    recs.push(r)
    const body = Buffer.from(JSON.stringify({status: 'success', data: r}))
    byKey.set(`property_id=${r.ServicePropertyID}`, body)
    byKey.set(`apn=${r.APN}`, body)
    byKey.set(`address=${addressOf(r)}`, body)
  }
  pages.push(Buffer.from(JSON.stringify({status: 'success', data: recs})))
}
const notFound = Buffer.from(
  JSON.stringify({status: 'error', code: 404, message: 'No property matches the given parameters.'}),
)
const count = {county: 0, lookup: 0}
let base = ''

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x')
  if (url.pathname === '/__count') return res.end(JSON.stringify(count))
  if (url.pathname === '/__reset') {
    count.county = 0
    count.lookup = 0
    return res.end('{}')
  }
  res.setHeader('X-RateLimit-Limit', '1000000')
  res.setHeader('X-RateLimit-Remaining', '999999')
  res.setHeader('Content-Type', 'application/json')
  const q = url.searchParams
  const key = ['property_id', 'apn', 'address'].find((k) => q.has(k))
  if (key === undefined) {
    count.county++
    const page = Number(q.get('page') ?? '1')
    if (q.get('fips') !== FIPS || !(page >= 1 && page <= pages.length)) {
      res.statusCode = 404
      return res.end(notFound)
    }
    res.setHeader('X-Total-Count', String(COUNTY_RECORDS))
    if (page < pages.length)
      res.setHeader('Link', `<${base}/special-financing?fips=${FIPS}&page=${page + 1}>; rel="next"`)
    return res.end(pages[page - 1])
  }
  count.lookup++
  const body = byKey.get(`${key}=${q.get(key)}`)
  if (!body) res.statusCode = 404
  res.end(body ?? notFound)
})
server.listen(0, '127.0.0.1', () => {
  base = `http://127.0.0.1:${server.address().port}/v1`
  console.log(`listening ${base}`)
})
const stop = () => (server.close(() => process.exit(0)), server.closeAllConnections())
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
