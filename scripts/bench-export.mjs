// npm run bench — `sfl county-export` of a large sandbox county: records per second, wall time and peak
// memory, beside `curl | jq -r` (when both are installed) and a bare node script that does the same export
// the easy way (fetch, JSON.parse the whole body, write CSV). Then the rate-limit efficiency on a tight window.
import {execSync, spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {BIN, run, startSandbox} from './lib.mjs'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000)
const dir = mkdtempSync(join(tmpdir(), 'sfl-bench-export-'))
const onPath = (b) => spawnSync('sh', ['-c', `command -v ${b}`]).status === 0

const sb = await startSandbox(['--records', String(RECORDS), '--limit', '100000'])
const url = `${sb.baseUrl}/special-financing?fips=48201`
const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full', SFL_CONFIG_DIR: dir}
const rows = []
const row = (name, r, out) => {
  const lines = Number(execSync(`wc -l < ${out}`).toString().trim()) - 1
  rows.push({name, s: r.ms / 1000, rps: lines / (r.ms / 1000), mb: r.rssMb, lines, size: statSync(out).size})
}

const sflOut = join(dir, 'sfl.csv')
row(
  'sfl county-export (streamed)',
  await run(process.execPath, [BIN, 'county-export', '--fips', '48201', '--out', sflOut, '--quiet'], {
    env,
    node: true,
  }),
  sflOut,
)

const bare = join(dir, 'bare.mjs')
writeFileSync(
  bare,
  `const res = await fetch(${JSON.stringify(url)}, {headers: {'x-api-key': 'sandbox-full'}})
const {data} = await res.json()
const cols = Object.keys(data[0]).filter((k) => typeof data[0][k] !== 'object' || data[0][k] === null)
const esc = (v) => v === null || v === undefined ? '' : /[",\\r\\n]/.test(String(v)) ? '"' + String(v).replace(/"/g, '""') + '"' : String(v)
const out = [cols.join(',')]
for (const r of data) out.push(cols.map((c) => esc(r[c])).join(','))
const fs = await import('node:fs')
fs.writeFileSync(process.argv[2], out.join('\\r\\n') + '\\r\\n')
`,
)
const bareOut = join(dir, 'bare.csv')
row(
  'bare node script (whole body in memory)',
  await run(process.execPath, [bare, bareOut], {node: true}),
  bareOut,
)

if (onPath('curl') && onPath('jq')) {
  const jqOut = join(dir, 'jq.csv')
  const cmd = `curl -s -H 'X-Api-Key: sandbox-full' '${url}' | jq -r '(.data[0] | keys_unsorted | map(select(. != "AssumableMortgage" and . != "FHACondoEligibility"))) as $k | ($k | @csv), (.data[] | [.[$k[]]] | @csv)' > ${jqOut}`
  const t = process.hrtime.bigint()
  const res = spawnSync('/usr/bin/time', ['-f', '%M', 'sh', '-c', cmd], {encoding: 'utf8'})
  const ms = Number(process.hrtime.bigint() - t) / 1e6
  const kb = Number(res.stderr.trim().split('\n').pop())
  row('curl | jq -r @csv', {ms, rssMb: Number.isFinite(kb) ? kb / 1024 : undefined}, jqOut)
} else rows.push({name: 'curl | jq (not installed: skipped)'})
await sb.stop()

// rate-limit efficiency: a paged county under a tight window, requests per second achieved / allowed
const LIMIT = 20
const WINDOW = 5
const PAGES = 60
const log = join(dir, 'log.ndjson')
writeFileSync(log, '')
const tight = await startSandbox([
  '--records',
  String(PAGES * 100),
  '--page-size',
  '100',
  '--limit',
  String(LIMIT),
  '--window',
  String(WINDOW),
  '--log',
  log,
])
const r = await run(
  process.execPath,
  [BIN, 'county-export', '--fips', '48201', '--out', join(dir, 't.csv'), '--quiet'],
  {
    env: {...env, SFL_BASE_URL: tight.baseUrl},
    node: true,
  },
)
await tight.stop()
const entries = readFileSync(log, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l))
const times = entries.map((e) => Date.parse(e.time))
const W = WINDOW * 1000
const perWindow = new Map()
for (const t of times) perWindow.set(Math.floor(t / W), (perWindow.get(Math.floor(t / W)) ?? 0) + 1)
// how long after each window opened its first request went out (the scheduler's reaction to a reset)
const lags = [...perWindow.keys()]
  .slice(1)
  .map((w) => Math.min(...times.filter((t) => Math.floor(t / W) === w)) - w * W)
const span = (Math.max(...times) - Math.min(...times)) / 1000
const least =
  ((Math.floor(Math.min(...times) / W) + Math.ceil(PAGES / LIMIT) - 1) * W) / 1000 - Math.min(...times) / 1000
const runRate = PAGES / (r.ms / 1000)
const cpu = execSync("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").toString().trim()
console.log(
  `county-export benchmark: ${RECORDS.toLocaleString('en-US')} records of county 48201 (sandbox-full key), node ${process.version}, ${execSync('nproc').toString().trim()} cores (${cpu}), ${new Date().toISOString().slice(0, 10)}`,
)
console.log('  tool                                         wall s   records/s   peak MB   rows')
const base = rows[0]
for (const x of rows) {
  if (x.s === undefined) {
    console.log(`  ${x.name}`)
    continue
  }
  console.log(
    `  ${x.name.padEnd(44)} ${x.s.toFixed(2).padStart(6)} ${Math.round(x.rps).toLocaleString('en-US').padStart(11)} ${(x.mb ?? NaN).toFixed(0).padStart(9)} ${x.lines.toLocaleString('en-US').padStart(8)}`,
  )
}
for (const x of rows.slice(1))
  if (x.s)
    console.log(
      `  sfl vs ${x.name}: ${(x.s / base.s).toFixed(2)}x the time of sfl, ${(x.mb / base.mb).toFixed(1)}x its memory`,
    )
console.log(
  `rate-limit efficiency: ${PAGES} pages at ${LIMIT} requests per ${WINDOW} s: ${entries.filter((e) => e.status === 429).length} 429s; ` +
    `requests per window ${[...perWindow.values()].join('/')} (${((PAGES / (LIMIT * perWindow.size)) * 100).toFixed(0)}% of the budget of the windows used); ` +
    `first to last request ${span.toFixed(2)} s vs ${least.toFixed(2)} s least possible; first request after each reset ${lags.map((l) => l.toFixed(0)).join('/')} ms; ` +
    `whole run ${(r.ms / 1000).toFixed(1)} s = ${runRate.toFixed(2)} req/s vs ${(LIMIT / WINDOW).toFixed(2)} allowed on average (${(runRate / (LIMIT / WINDOW)).toFixed(2)}x; above 1 because a run that starts mid-window gets that window's budget too)`,
)
rmSync(dir, {recursive: true, force: true})
