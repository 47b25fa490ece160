// npm run bench:batch (second part) — the batch planner (issue 33): a 10,000-row `lookup --input` in one
// county of 200,000 records served in pages of 500, with --plan lookups (a request per distinct row),
// --plan scan and the default --plan auto, against a server in its own process answering from pre-built
// bodies in memory (scripts/bench/serve-batch.mjs), so it never caps the figure. Runs are interleaved
// (lookups, auto, scan, ...) so a busy neighbour slows all alike; medians of BENCH_RUNS (default 2).
// Prints requests (county pages and lookups), wall and CPU time, and checks that every plan wrote the same
// answers (every cell but the source column) and that auto's requests are within 1.1x of the cheaper plan.
import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {createInterface} from 'node:readline'
import {fileURLToPath} from 'node:url'

import {parse} from 'csv-parse/sync'

import {COUNTY_RECORDS, FIPS, PAGE_SIZE, addressOf, record} from './bench/batch-county.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BIN = join(ROOT, 'bin', 'run.js')
const ROWS = Number(process.env.BENCH_PLAN_ROWS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 2)
const MISSES = Math.round(ROWS / 100)
const dir = mkdtempSync(join(tmpdir(), 'sfl-bench-plan-'))

// the batch: distinct records spread over the county (by address, APN or id), and 1% that match nothing
const lines = ['row,fips,address,apn,property_id']
for (let j = 0; j < ROWS - MISSES; j++) {
  const r = record((j * 19) % COUNTY_RECORDS)
  const kind = j % 10
  if (kind < 4) lines.push(`${j},${FIPS},"${addressOf(r)}",,`)
  else if (kind < 7) lines.push(`${j},${FIPS},,${r.APN},`)
  else lines.push(`${j},${FIPS},,,${r.ServicePropertyID}`)
}
for (let j = ROWS - MISSES; j < ROWS; j++)
  lines.push(`${j},${FIPS},"${j} NOWHERE RD, SACRAMENTO, CA 95800",,`)
const input = join(dir, 'in.csv')
writeFileSync(input, `${lines.join('\n')}\n`)

const server = spawn(process.execPath, [join(ROOT, 'scripts', 'bench', 'serve-batch.mjs')], {
  stdio: ['ignore', 'pipe', 'inherit'],
})
const baseUrl = await new Promise((resolve, reject) => {
  server.once('exit', (code) => reject(new Error(`the server exited (${code})`)))
  createInterface({input: server.stdout}).once('line', (l) => resolve(l.replace(/^listening /, '')))
})
const origin = new URL(baseUrl).origin
const control = async (path) => (await fetch(`${origin}${path}`)).json()

async function run(plan, i) {
  await control('/__reset')
  const out = join(dir, `out-${plan}-${i}.csv`)
  const usageFile = join(dir, `usage-${plan}-${i}.json`)
  const started = performance.now()
  const code = await new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '-r',
        join(ROOT, 'scripts', 'usage.cjs'),
        BIN,
        'lookup',
        '--input',
        input,
        '--out',
        out,
        '--plan',
        plan,
        '--concurrency',
        '8',
        '--quiet',
        '--no-stats',
      ],
      {
        env: {
          ...process.env,
          SFL_BASE_URL: baseUrl,
          SFL_API_KEY: 'bench-key-123',
          SFL_CONFIG_DIR: dir,
          BENCH_USAGE_FILE: usageFile,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    )
    child.on('exit', resolve)
  })
  const wall = (performance.now() - started) / 1000
  const u = JSON.parse(readFileSync(usageFile, 'utf8'))
  const sent = await control('/__count')
  return {plan, code, wall, cpu: (u.userMs + u.systemMs) / 1000, rss: u.maxRssKb / 1024, ...sent, out}
}

const plans = ['lookups', 'auto', 'scan']
const results = Object.fromEntries(plans.map((p) => [p, []]))
for (let i = 0; i < RUNS; i++) for (const p of plans) results[p].push(await run(p, i))
server.kill('SIGTERM')

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const answers = (path) =>
  parse(readFileSync(path, 'utf8'), {columns: true}).map(({source: _source, ...rest}) => JSON.stringify(rest))
const reference = answers(results.lookups[0].out)
let same = true
for (const p of plans)
  for (const r of results[p]) {
    const a = answers(r.out)
    if (a.length !== reference.length || a.some((x, k) => x !== reference[k])) same = false
    if (r.code !== 0) same = false
  }
const requests = (p) => median(results[p].map((r) => r.county + r.lookup))
const cheaper = Math.min(requests('lookups'), requests('scan'))
console.log(
  `sfl lookup --input, ${ROWS.toLocaleString('en-US')} rows (${MISSES} matching nothing) in one county of ${COUNTY_RECORDS.toLocaleString('en-US')} records in pages of ${PAGE_SIZE}; medians of ${RUNS} interleaved runs`,
)
console.log(
  '| --plan | requests (pages + lookups) | wall | CPU (user+sys) | peak RSS |\n|---|---|---|---|---|',
)
for (const p of plans) {
  const rs = results[p]
  console.log(
    `| ${p} | ${requests(p).toLocaleString('en-US')} (${median(rs.map((r) => r.county))} + ${median(rs.map((r) => r.lookup)).toLocaleString('en-US')}) | ${median(rs.map((r) => r.wall)).toFixed(1)} s | ${median(rs.map((r) => r.cpu)).toFixed(1)} s | ${median(rs.map((r) => r.rss)).toFixed(0)} MB |`,
  )
}
const ratio = requests('auto') / cheaper
console.log(
  `auto / cheaper plan: ${ratio.toFixed(3)}x requests (target <= 1.1x); auto / lookups wall: ${(median(results.auto.map((r) => r.wall)) / median(results.lookups.map((r) => r.wall))).toFixed(2)}x`,
)
console.log(`every plan wrote the same answers (all cells but source): ${same ? 'yes' : 'NO'}`)
rmSync(dir, {recursive: true, force: true})
if (!same || ratio > 1.1) process.exitCode = 1
