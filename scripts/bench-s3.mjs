// npm run bench:s3 — the export to object storage against the same export to local disk (issue 34: wall
// time within 1.2x, memory within the export's bound). The county body is served from memory
// (scripts/bench/serve-body.mjs) and the object store is a loopback S3 endpoint that does no work per byte
// (scripts/bench/s3-sink.mjs), each in its own process, so both measure sfl's side: the same
// `county-export --output csv`, once with `--out FILE` and once with `--out s3://bench/KEY` (a multipart
// upload of 8 MiB parts, each signed with its SHA-256). Figures under GNU time, medians of BENCH_RUNS
// interleaved runs; ratios are medians of per-run ratios.
//   BENCH_RECORDS (default 200000), BENCH_RUNS (default 5), BENCH_FORMAT (csv). Needs `npm run build`.
import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync, statSync} from 'node:fs'
import {cpus, tmpdir} from 'node:os'
import {join} from 'node:path'

import {BIN, ROOT, countyBody, measure, median, startBodyServer} from './lib.mjs'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const FORMAT = process.env.BENCH_FORMAT ?? 'csv'
const FIPS = '48201'
const dir = mkdtempSync(join(tmpdir(), 'sfl-bench-s3-'))

async function startSink() {
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'bench', 's3-sink.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const endpoint = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /listening (\S+)/.exec(out)
      if (m) resolve(m[1])
    })
    child.on('exit', (c) => reject(new Error(`s3 sink exited ${c}`)))
  })
  return {endpoint, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM')))}
}

const body = await countyBody(RECORDS)
const server = await startBodyServer(body.file, RECORDS)
const sink = await startSink()
const env = {
  SFL_API_KEY: 'sandbox-full',
  SFL_CONFIG_DIR: dir,
  SFL_CACHE_DIR: join(dir, 'cache'),
  SFL_BASE_URL: server.baseUrl,
  AWS_ENDPOINT_URL_S3: sink.endpoint,
  AWS_ACCESS_KEY_ID: 'AKIABENCHBENCHBENCH0',
  AWS_SECRET_ACCESS_KEY: 'bench/bench+bench0123456789abcdefghijklmn',
  AWS_REGION: 'us-east-1',
  AWS_CONFIG_FILE: join(dir, 'none'),
  AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
  AWS_EC2_METADATA_DISABLED: 'true',
}
const args = (out) => ['county-export', '--fips', FIPS, '--output', FORMAT, '--out', out, '--quiet']
const runs = {disk: [], s3: []}
try {
  for (let r = 0; r < RUNS; r++) {
    const file = join(dir, `out.${FORMAT}`)
    const d = await measure(process.execPath, [BIN, ...args(file)], {env})
    d.size = statSync(file).size
    rmSync(file)
    runs.disk.push(d)
    const key = `run${r}/out.${FORMAT}`
    const s = await measure(process.execPath, [BIN, ...args(`s3://bench/${key}`)], {env})
    const o = await (await fetch(`${sink.endpoint}/_sink/?key=${encodeURIComponent(`bench/${key}`)}`)).json()
    if (o.bytes !== d.size) throw new Error(`the object holds ${o.bytes} bytes, the file ${d.size}`)
    s.size = o.bytes
    runs.s3.push(s)
  }
} finally {
  await server.stop()
  await sink.stop()
  rmSync(dir, {recursive: true, force: true})
}

const fmt = (x, d = 2) => x.toFixed(d)
const med = (ms, k) => median(ms.map((m) => m[k]))
const ratio = (k) => median(runs.s3.map((m, i) => m[k] / runs.disk[i][k]))
console.log(
  `county-export to s3:// vs local disk, ${new Date().toISOString().slice(0, 10)}: node ${process.version}, ${cpus().length} cores; ` +
    `county ${FIPS}, ${RECORDS.toLocaleString('en-US')} records (${(body.bytes / 1e6).toFixed(1)} MB body), --output ${FORMAT}; medians of ${RUNS} interleaved runs`,
)
console.log('  target                  wall s    CPU s   peak MB   output MB')
for (const [name, ms] of [
  ['--out FILE (local disk)', runs.disk],
  ['--out s3://bench/KEY', runs.s3],
])
  console.log(
    `  ${name.padEnd(22)} ${fmt(med(ms, 'wall')).padStart(7)} ${fmt(med(ms, 'cpu')).padStart(8)} ${fmt(med(ms, 'rssMb'), 0).padStart(9)} ${fmt(med(ms, 'size') / 1e6, 1).padStart(11)}`,
  )
console.log(`  s3 wall / disk wall   ${fmt(ratio('wall'))}x   (target <= 1.2x)`)
console.log(`  s3 CPU / disk CPU     ${fmt(ratio('cpu'))}x`)
console.log(`  s3 peak / disk peak   ${fmt(ratio('rssMb'))}x   (target: within the local export's bound)`)
