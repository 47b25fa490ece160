// npm run bench:batch — `sfl lookup --input` over a large input file (1,000,000 rows by default, a fifth
// of them duplicates): time until the first request reaches the server, peak memory, wall and CPU time.
// The run stops itself after --max-requests (the point is the input and output passes, not the server), so
// the output still has every input row: the answered ones, the rest marked "not looked up".
// The server answers every lookup from one pre-built body held in memory, in this process.
import {spawn} from 'node:child_process'
import {createWriteStream, mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs'
import {createServer} from 'node:http'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BIN = join(ROOT, 'bin', 'run.js')
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000)
// the plan of the run (--plan): auto, the default, first reads the input once more to index it
const PLAN = process.env.BENCH_PLAN ?? 'auto'
const dir = mkdtempSync(join(tmpdir(), 'sfl-bench-batch-'))

// the input: real-looking CSV, every fifth row repeats an earlier one
const input = join(dir, 'in.csv')
const w = createWriteStream(input)
w.write('id,fips,address,notes\n')
for (let i = 0; i < ROWS; i++) {
  const n = i % 5 === 4 ? i - 3 : i
  if (
    !w.write(
      `${i},06067,"${1000 + (n % 9000)} ${n % 2 ? 'OAK' : 'ELM'} ST UNIT ${n}, SACRAMENTO, CA 95838",row ${i}\n`,
    )
  )
    await new Promise((r) => w.once('drain', r))
}
await new Promise((r) => w.end(r))
const inputMb = statSync(input).size / 1e6

const body = Buffer.from(
  JSON.stringify({
    status: 'success',
    data: {
      Fips: '06067',
      ServicePropertyID: 30000000006,
      APN: '078-0123-045',
      FinalValue: 373400,
      FHAEligible: true,
    },
  }),
)
let firstRequestAt
let requests = 0
const server = createServer((req, res) => {
  requests++
  firstRequestAt ??= performance.now()
  res.writeHead(200, {
    'content-type': 'application/json',
    'x-ratelimit-limit': '1000000',
    'x-ratelimit-remaining': '999999',
  })
  res.end(body)
})
await new Promise((r) => server.listen(0, '127.0.0.1', r))
const baseUrl = `http://127.0.0.1:${server.address().port}/v1`

const usageFile = join(dir, 'usage.json')
const out = join(dir, 'out.csv')
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
      '--max-requests',
      String(REQUESTS),
      '--concurrency',
      '8',
      '--plan',
      PLAN,
      '--quiet',
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
server.close()
const u = JSON.parse(readFileSync(usageFile, 'utf8'))
const rows = readFileSync(out, 'utf8').split('\r\n').length - 2
console.log(
  `sfl lookup --input --plan ${PLAN}, ${ROWS.toLocaleString('en-US')} rows (${inputMb.toFixed(0)} MB, ${(ROWS / 5).toLocaleString('en-US')} duplicates), stopped after ${REQUESTS} requests (exit ${code})`,
)
console.log(`| measure | value |\n|---|---|`)
console.log(`| first request after start | ${((firstRequestAt - started) / 1000).toFixed(2)} s |`)
console.log(`| peak RSS | ${(u.maxRssKb / 1024).toFixed(0)} MB |`)
console.log(`| wall time | ${wall.toFixed(1)} s |`)
console.log(`| CPU time (user+sys) | ${((u.userMs + u.systemMs) / 1000).toFixed(1)} s |`)
console.log(`| requests the server saw | ${requests} |`)
console.log(`| output rows | ${rows.toLocaleString('en-US')} |`)
rmSync(dir, {recursive: true, force: true})
if (rows !== ROWS) {
  console.error(`expected ${ROWS} output rows`)
  process.exitCode = 1
}
