// npm run bench — the export at full speed, measured honestly: a static server in its own process sends a
// pre-built county response from memory (scripts/bench/serve-body.mjs: no work per request, so it never caps the
// figure), and each tool fetches the same county from it. For each tool: wall time, CPU time (user + sys,
// children included) and peak RSS, under GNU time; every figure is the median of BENCH_RUNS runs (default 5; 3 at the big county, BENCH_BIG_RUNS),
// the tools interleaved within a run, and the ratios are medians of the per-run ratios (a shared machine slows
// neighbours together). Then the same county at BENCH_BIG_RECORDS (default 1,000,000; 0 skips) for sfl alone,
// to show flat memory. Then the rate-limit efficiency on a tight window (the sandbox: that measures the
// scheduler, not throughput).
//   BENCH_RECORDS (default 200000), BENCH_BIG_RECORDS, BENCH_RUNS, BENCH_BIG_RUNS. Needs `npm run build` (npm run bench does it).
import {execSync, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {cpus, tmpdir} from 'node:os'
import {join} from 'node:path'

import {BIN, ROOT, countyBody, measure, median, run, startBodyServer, startSandbox} from './lib.mjs'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000)
const BIG = Number(process.env.BENCH_BIG_RECORDS ?? 1_000_000)
// five runs: on a shared 2-core machine one run's CPU figure moved by up to a fifth between runs
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const BIG_RUNS = Number(process.env.BENCH_BIG_RUNS ?? 3)
const KEY = 'sandbox-full'
const FIPS = '48201'
// V8's longest string (0x1fffffe8 chars): a body past it cannot go through res.json() / res.text() at all
const V8_MAX_STRING = 0x1fffffe8

if (
  !existsSync(join(ROOT, 'dist-bench', 'pipeline', 'records.js')) ||
  !existsSync(join(ROOT, 'oclif.manifest.json'))
)
  throw new Error('run `npm run build` first (npm run bench does)')
const onPath = (b) => spawnSync('sh', ['-c', `command -v ${b}`]).status === 0
const dir = mkdtempSync(join(tmpdir(), 'sfl-bench-export-'))
const env = {SFL_API_KEY: KEY, SFL_CONFIG_DIR: dir}
const node = process.execPath
const sh = (s) => `'${s.replaceAll("'", "'\\''")}'`
const rowsOf = (file, header) =>
  Number(
    execSync(`wc -l < ${sh(file)}`)
      .toString()
      .trim(),
  ) - (header ? 1 : 0)

/** A Parquet file's row count, from its footer (hyparquet, the library sfl reads Parquet with). */
async function parquetRows(file) {
  const {asyncBufferFromFile, parquetMetadataAsync} = await import('hyparquet')
  return Number((await parquetMetadataAsync(await asyncBufferFromFile(file))).num_rows)
}

/** The tools, each a function of (county URL, base URL, output file) that resolves to GNU time's figures. */
function tools(columns) {
  // --stats-json: the run statistics are gathered (as they are by default without --quiet) and written;
  // `stats: false` measures the same export with --no-stats (the statistics are a second tokenizer pass
  // for NDJSON, which otherwise passes the bytes through)
  const sfl =
    (format, stats = true) =>
    (_, base, out) =>
      measure(
        node,
        [
          BIN,
          'county-export',
          '--fips',
          FIPS,
          '--output',
          format,
          '--out',
          out,
          '--quiet',
          ...(stats ? ['--stats-json', `${out}.stats.json`] : ['--no-stats']),
        ],
        {env: {...env, SFL_BASE_URL: base}},
      )
  const list = [
    {id: 'csv', name: 'sfl county-export --output csv', header: true, run: sfl('csv')},
    {id: 'ndjson', name: 'sfl county-export --output ndjson', header: false, run: sfl('ndjson')},
    {
      id: 'ndjson-nostats',
      name: 'sfl county-export --output ndjson --no-stats',
      header: false,
      run: sfl('ndjson', false),
    },
    {id: 'parquet', name: 'sfl county-export --output parquet', parquet: true, run: sfl('parquet')},
    {
      id: 'bare',
      name: 'bare node: fetch, JSON.parse all, write CSV',
      header: true,
      run: (url, _, out) => measure(node, [join(ROOT, 'scripts', 'bench', 'bare-export.mjs'), url, KEY, out]),
    },
  ]
  if (onPath('curl') && onPath('jq')) {
    const paths = columns.map(([k, s]) =>
      s === undefined ? `.[${JSON.stringify(k)}]` : `.[${JSON.stringify(k)}][${JSON.stringify(s)}]`,
    )
    const program = `(${JSON.stringify(columns.map((c) => c.join('.')))} | @csv), (.data[] | [${paths.join(', ')}] | @csv)`
    list.push({
      id: 'jq',
      name: 'curl | jq -r @csv (same columns)',
      header: true,
      run: (url, _, out) =>
        measure('sh', [
          '-c',
          `curl -sf -H 'X-Api-Key: ${KEY}' ${sh(url)} | jq -r ${sh(program)} > ${sh(out)}`,
        ]),
    })
  }
  list.push({
    id: 'copy',
    name: 'byte copy through the records stage',
    header: false,
    run: (url, _, out) => measure(node, [join(ROOT, 'scripts', 'bench', 'bytecopy.mjs'), url, KEY, out]),
  })
  return list
}

/** Run `list` `runs` times, interleaved, against a server of `records` records; returns per-tool runs. */
async function measureAll(records, list, runs = RUNS) {
  const body = await countyBody(records)
  const server = await startBodyServer(body.file, records)
  const url = `${server.baseUrl}/special-financing?fips=${FIPS}`
  const byTool = new Map(list.map((t) => [t.id, []]))
  try {
    for (let r = 0; r < runs; r++)
      for (const t of list) {
        const out = join(dir, `${t.id}.out`)
        const m = await t.run(url, server.baseUrl, out)
        m.rows = t.parquet ? await parquetRows(out) : rowsOf(out, t.header)
        m.size = statSync(out).size
        rmSync(out, {force: true})
        rmSync(`${out}.header`, {force: true})
        if (m.rows !== records) throw new Error(`${t.name} wrote ${m.rows} rows, not ${records}`)
        byTool.get(t.id).push(m)
      }
  } finally {
    await server.stop()
  }
  return {body, runs: byTool}
}

const fmt = (x, d = 2) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d))
const med = (ms, k) => median(ms.map((m) => m[k]))
/** Median over runs of a/b, both from the same run. */
const ratio = (runs, a, b, k) =>
  runs.get(a) && runs.get(b) ? median(runs.get(a).map((m, i) => m[k] / runs.get(b)[i][k])) : NaN

function table(title, list, runs, records) {
  console.log(title)
  console.log(
    '  tool                                            wall s    CPU s   peak MB       rows   records/s (wall)   file MB',
  )
  for (const t of list) {
    const ms = runs.get(t.id)
    const wall = med(ms, 'wall')
    console.log(
      `  ${t.name.padEnd(46)} ${fmt(wall).padStart(7)} ${fmt(med(ms, 'cpu')).padStart(8)} ${fmt(med(ms, 'rssMb'), 0).padStart(9)} ${records.toLocaleString('en-US').padStart(10)} ${Math.round(
        records / wall,
      )
        .toLocaleString('en-US')
        .padStart(11)} ${fmt(med(ms, 'size') / 1e6, 1).padStart(9)}`,
    )
  }
}

const cpuModel = cpus()[0]?.model.trim() ?? '?'
console.log(
  `county-export benchmark, ${new Date().toISOString().slice(0, 10)}: node ${process.version}, ${cpus().length} cores (${cpuModel}); ` +
    `county ${FIPS}, key with both add-on options; body served from memory by scripts/bench/serve-body.mjs; ` +
    `medians of ${RUNS} interleaved runs (${BIG_RUNS} at the big county); CPU = user + sys (GNU time), peak = largest process's RSS`,
)
const list = tools((await countyBody(RECORDS)).columns)
const small = await measureAll(RECORDS, list)
table(
  `\n${RECORDS.toLocaleString('en-US')} records, ${(small.body.bytes / 1e6).toFixed(1)} MB body (${Math.round(small.body.bytes / RECORDS)} bytes/record):`,
  list,
  small.runs,
  RECORDS,
)
const csvRss = med(small.runs.get('csv'), 'rssMb')
console.log('  ratios (median of per-run ratios)                       measured   target')
const line = (label, value, target) => console.log(`  ${label.padEnd(55)} ${value.padStart(8)}   ${target}`)
line('sfl csv CPU / bare node CPU', `${fmt(ratio(small.runs, 'csv', 'bare', 'cpu'))}x`, '<= 1.0x')
line('sfl csv wall / bare node wall', `${fmt(ratio(small.runs, 'csv', 'bare', 'wall'))}x`, '')
line('sfl csv wall / curl|jq wall', `${fmt(ratio(small.runs, 'csv', 'jq', 'wall'))}x`, '<= 0.5x')
line('sfl ndjson wall / byte copy wall', `${fmt(ratio(small.runs, 'ndjson', 'copy', 'wall'))}x`, '')
line('sfl ndjson CPU / byte copy CPU', `${fmt(ratio(small.runs, 'ndjson', 'copy', 'cpu'))}x`, '')
line(
  'sfl ndjson --no-stats wall / byte copy wall',
  `${fmt(ratio(small.runs, 'ndjson-nostats', 'copy', 'wall'))}x`,
  '<= 1.2x',
)
line(
  'sfl ndjson --no-stats CPU / byte copy CPU',
  `${fmt(ratio(small.runs, 'ndjson-nostats', 'copy', 'cpu'))}x`,
  '',
)
line('sfl csv peak RSS', `${fmt(csvRss, 0)} MB`, '<= 150 MB')
line('sfl parquet CPU / sfl csv CPU', `${fmt(ratio(small.runs, 'parquet', 'csv', 'cpu'))}x`, '')
line('sfl parquet wall / sfl csv wall', `${fmt(ratio(small.runs, 'parquet', 'csv', 'wall'))}x`, '')
line('sfl parquet file size / csv file size', `${fmt(ratio(small.runs, 'parquet', 'csv', 'size'))}x`, '')
const parquetRss = med(small.runs.get('parquet'), 'rssMb')
line('sfl parquet peak RSS', `${fmt(parquetRss, 0)} MB`, 'flat: see 1,000,000 below')

if (BIG > 0) {
  const body = await countyBody(BIG)
  const bigList = list.filter((t) => t.id === 'csv' || t.id === 'parquet')
  const bareNote =
    body.bytes > V8_MAX_STRING
      ? `bare node script skipped: the ${(body.bytes / 1e6).toFixed(0)} MB body is longer than V8's longest string (${(V8_MAX_STRING / 1e6).toFixed(0)} MB), so fetch + JSON.parse of the whole body cannot run at all, whatever the memory`
      : undefined
  if (!bareNote) bigList.push(list.find((t) => t.id === 'bare'))
  const big = await measureAll(BIG, bigList, BIG_RUNS)
  table(
    `\n${BIG.toLocaleString('en-US')} records, ${(body.bytes / 1e6).toFixed(1)} MB body:`,
    bigList,
    big.runs,
    BIG,
  )
  if (bareNote) console.log(`  ${bareNote}`)
  const bigRss = med(big.runs.get('csv'), 'rssMb')
  line(
    `sfl csv peak RSS at ${BIG.toLocaleString('en-US')} / at ${RECORDS.toLocaleString('en-US')}`,
    `${fmt(bigRss / csvRss)}x`,
    '<= 1.2x',
  )
  line(
    `sfl parquet peak RSS at ${BIG.toLocaleString('en-US')} / at ${RECORDS.toLocaleString('en-US')}`,
    `${fmt(med(big.runs.get('parquet'), 'rssMb') / parquetRss)}x`,
    '<= 1.2x',
  )
}

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
console.log(
  `\nrate-limit efficiency: ${PAGES} pages at ${LIMIT} requests per ${WINDOW} s: ${entries.filter((e) => e.status === 429).length} 429s; ` +
    `requests per window ${[...perWindow.values()].join('/')} (${((PAGES / (LIMIT * perWindow.size)) * 100).toFixed(0)}% of the budget of the windows used); ` +
    `first to last request ${span.toFixed(2)} s vs ${least.toFixed(2)} s least possible; first request after each reset ${lags.map((l) => l.toFixed(0)).join('/')} ms; ` +
    `whole run ${(r.ms / 1000).toFixed(1)} s = ${runRate.toFixed(2)} req/s vs ${(LIMIT / WINDOW).toFixed(2)} allowed on average (${(runRate / (LIMIT / WINDOW)).toFixed(2)}x; above 1 because a run that starts mid-window gets that window's budget too)`,
)
rmSync(dir, {recursive: true, force: true})
