// node scripts/bench/serve-body.mjs BODY_FILE — the benchmark's server: the whole county response, read once
// into memory, sent as is to every GET of /v1/special-financing (any query), with the headers a service sends
// (spec 8.3 X-RateLimit-*, a budget the run never exhausts). It does no work per request but write the
// Buffer, so it never caps the figure. Prints `listening <base URL>` when ready; logs each request to stderr
// when BENCH_SERVER_LOG is set.
import {readFileSync} from 'node:fs'
import {createServer} from 'node:http'

const body = readFileSync(process.argv[2])
const total = process.argv[3] ?? ''
const server = createServer((req, res) => {
  if (process.env.BENCH_SERVER_LOG) process.stderr.write(`${req.method} ${req.url}\n`)
  const reset = String(Math.ceil(Date.now() / 1000) + 60)
  res.setHeader('X-RateLimit-Limit', '100000')
  res.setHeader('X-RateLimit-Remaining', '99999')
  res.setHeader('X-RateLimit-Reset', reset)
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  if (req.method !== 'GET' || !req.url?.startsWith('/v1/special-financing')) {
    res.statusCode = 404
    res.end(JSON.stringify({status: 'error', code: 404, message: 'Not found.'}))
    return
  }
  res.setHeader('Content-Length', String(body.length))
  if (total) res.setHeader('X-Total-Count', total)
  res.end(body)
})
server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${server.address().port}/v1`))
const stop = () => (server.close(() => process.exit(0)), server.closeAllConnections())
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
