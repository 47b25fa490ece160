// npm run bench:deltas (and the last part of npm run bench) — `sfl changes` beside the query an analyst
// would write in DuckDB, on the same two exports. The exports are sfl's own: the sandbox dataset (compiled
// by scripts/bench/build-modules.mjs, as scripts/bench-export.mjs uses it) makes two responses for county
// 48201 a month apart, `sfl county-export` writes each as CSV and NDJSON from a static server
// (scripts/bench/serve-body.mjs). Between them: 1,000 properties gone (the first 1,000 ids), 1,000 new
// (after the last), 2,000 revalued (FinalValue, HighValue for half of them), and every ValuationDate moved
// by a month (both tools leave it out).
//
// Each tool runs as its own process under GNU time (scripts/lib.mjs measure: wall, CPU user + sys of all
// its threads, peak RSS); the two alternate within a run, figures are medians of BENCH_RUNS runs
// (default 5; BENCH_BIG_RUNS, default 3, at the big size) and each ratio is the median of the per-run
// ratios (a shared machine slows neighbours together). Both tools' counts are checked against each other
// and against what the generator changed: the bench fails if any disagree.
// Parquet exports are compared at BENCH_PARQUET_RECORDS too, and at the Parquet sizes `sfl stats` of the
// previous month's file runs beside the DuckDB aggregate of the same figures
// (scripts/bench/duckdb-stats.mjs); the two must agree on the records, the FinalValue quartiles and the
// loans by type. A month of many changes (`revalued`: every property both months hold revalued) is
// compared too, as Parquet at BENCH_MANY_RECORDS: the change rows are then most of the work (read back,
// compared, spooled and written), where the usual months' 4,000 rows are a fraction of it.
//   BENCH_RECORDS (default 200000), BENCH_MANY_RECORDS (default 100000; 0 skips), BENCH_BIG_RECORDS (default 1000000; 0 skips), BENCH_PARQUET_RECORDS
//   (default 100000; 0 skips), BENCH_RUNS, BENCH_BIG_RUNS, BENCH_DELTAS_FORMATS (default
//   "csv,ndjson,parquet"; BENCH_DELTAS_FORMATS=ndjson runs only the NDJSON pairs), BENCH_SFL_BASE (the
//   bin/run.js of another build, e.g. a copy of main's: measured as a third tool, interleaved, for a
//   before/after on one machine; its `sfl stats` too), BENCH_KEEP=1 (keep the exports, printing where they are),
//   BENCH_EXPORTS_DIR (a folder where the exports are written and kept, and taken again when there: for
//   profiling `sfl changes` on them; delete it when sfl's writers change). Needs `npm run build` and scripts/bench/build-modules.mjs (npm run bench:deltas
//   does both).
import {execFileSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {once} from 'node:events'
import {createWriteStream, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync} from 'node:fs'
import {cpus, tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {parse} from 'csv-parse/sync'

import {BIN, ROOT, measure, median, startBodyServer} from './lib.mjs'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000)
const BIG = Number(process.env.BENCH_BIG_RECORDS ?? 1_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const BIG_RUNS = Number(process.env.BENCH_BIG_RUNS ?? 3)
const FORMATS = (process.env.BENCH_DELTAS_FORMATS ?? 'csv,ndjson,parquet').split(',')
const PARQUET_SMALL = Number(process.env.BENCH_PARQUET_RECORDS ?? 100_000)
const MANY = Number(process.env.BENCH_MANY_RECORDS ?? 100_000)
const EXPORTS_DIR = process.env.BENCH_EXPORTS_DIR
const FIPS = '48201'
const GONE = 1000
const NEW = 1000
const REVALUED = 2000

const datasetJs = join(ROOT, 'dist-bench', 'sandbox', 'dataset.js')
if (!existsSync(datasetJs) || !existsSync(join(ROOT, 'oclif.manifest.json')))
  throw new Error(
    'run `npm run build` and `node scripts/bench/build-modules.mjs` first (npm run bench:deltas does)',
  )
const dir = mkdtempSync(join(tmpdir(), 'sfl-bench-deltas-'))
const env = {SFL_API_KEY: 'sandbox-full', SFL_CONFIG_DIR: dir}
const node = process.execPath

/** The ids revalued between the two months: REVALUED of those both months hold, spread evenly. */
function revalued(records) {
  const step = Math.floor((records - GONE) / REVALUED)
  return (i) => i >= GONE && (i - GONE) % step === 0 && (i - GONE) / step < REVALUED
}

/** How many properties a month revalues: REVALUED, or every one both months hold (`revalued`). */
const revaluedCount = (records, month) => (month === 'revalued' ? records - GONE : REVALUED)

/**
 * The county response of one month (`previous`: records 0..n-1; `current`: GONE..n+NEW-1, revalued and
 * with next month's ValuationDate; `revalued`: as `current`, every one of them revalued), written once to
 * the temp folder and reused while the dataset code and this generator are unchanged.
 */
async function body(records, month) {
  const tag = createHash('sha256')
    .update(readFileSync(datasetJs))
    .update(readFileSync(new URL(import.meta.url)))
    .digest('hex')
    .slice(0, 8)
  const file = join(tmpdir(), `sfl-bench-deltas-${FIPS}-${records}-${month}-${tag}.json`)
  if (existsSync(file)) return file
  const {Dataset} = await import(pathToFileURL(datasetJs).href)
  const {countyByFips} = await import(pathToFileURL(join(ROOT, 'dist-bench', 'sandbox', 'counties.js')).href)
  const ds = new Dataset(1, records + NEW)
  const county = countyByFips(FIPS)
  const isRevalued = month === 'revalued' ? () => true : revalued(records)
  const [from, to] = month === 'previous' ? [0, records] : [GONE, records + NEW]
  const tmp = `${file}.${process.pid}.tmp`
  const out = createWriteStream(tmp)
  let chunk = '{"status":"success","data":['
  for (let i = from; i < to; i++) {
    const rec = ds.record(county, i, {assumable: true, condo: true})
    if (month !== 'previous') {
      const [y, m] = rec.ValuationDate.split('-').map(Number)
      const next = m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`
      rec.ValuationDate = `${next}${rec.ValuationDate.slice(7)}`
      if (i < records && isRevalued(i)) {
        rec.FinalValue += 1000
        if (i % 2 === 0) rec.HighValue += 1000
      }
    }
    chunk += (i === from ? '' : ',') + JSON.stringify(rec)
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain')
      chunk = ''
    }
  }
  out.end(`${chunk}]}`)
  await once(out, 'close')
  renameSync(tmp, file)
  return file
}

/** Both months exported by sfl in each format: {csv: {previous, current}, ndjson: {...}}. */
async function exportsOf(records, formats, next = 'current') {
  const files = Object.fromEntries(formats.map((f) => [f, {}]))
  for (const month of ['previous', next]) {
    const server = await startBodyServer(await body(records, month), '')
    try {
      for (const format of formats) {
        const out = join(EXPORTS_DIR ?? dir, `${records}-${month}.${format}`)
        files[format][month === 'previous' ? 'previous' : 'current'] = out
        if (EXPORTS_DIR && existsSync(out)) continue
        await measure(
          node,
          [BIN, 'county-export', '--fips', FIPS, '--output', format, '--out', out, '--quiet', '--no-stats'],
          {env: {...env, SFL_BASE_URL: server.baseUrl}},
        )
      }
    } finally {
      await server.stop()
    }
  }
  return files
}

/** Added, updated and deleted rows of a change file (CSV, first column), or DuckDB's counts file. */
function countsOf(file) {
  if (file.endsWith('.json'))
    return {added: 0, updated: 0, deleted: 0, ...JSON.parse(readFileSync(file, 'utf8'))}
  const c = {added: 0, updated: 0, deleted: 0}
  for (const [change] of parse(readFileSync(file), {from_line: 2})) c[change]++
  return c
}

const BASE = process.env.BENCH_SFL_BASE
const KEEP = process.env.BENCH_KEEP === '1'
const sflTool = (id, name, bin) => ({
  id,
  name,
  run: (prev, cur, out) => measure(node, [bin, 'changes', prev, cur, '--out', out, '--quiet'], {env}),
  counts: (out) => countsOf(out),
})
const TOOLS = [
  sflTool('sfl', 'sfl changes', BIN),
  ...(BASE ? [sflTool('base', 'sfl changes (BENCH_SFL_BASE)', BASE)] : []),
  {
    id: 'duckdb',
    name: 'DuckDB full outer join, a hash per row',
    run: (prev, cur, out) =>
      measure(node, [
        join(ROOT, 'scripts', 'bench', 'duckdb-deltas.mjs'),
        prev,
        cur,
        out,
        `${out}.counts.json`,
      ]),
    counts: (out) => countsOf(`${out}.counts.json`),
  },
]

/** Every tool `runs` times on one pair of files, interleaved; each run's counts checked. */
async function measurePair(prev, cur, records, runs, updated = REVALUED) {
  const expected = {added: NEW, updated, deleted: GONE}
  const byTool = new Map(TOOLS.map((t) => [t.id, []]))
  for (let r = 0; r < runs; r++)
    for (const t of TOOLS) {
      const out = join(dir, `${t.id}.changes.csv`)
      const m = await t.run(prev, cur, out)
      const got = t.counts(out)
      if (JSON.stringify(got) !== JSON.stringify(expected))
        throw new Error(
          `${t.name} on ${records} records counted ${JSON.stringify(got)}, not ${JSON.stringify(expected)}`,
        )
      rmSync(out, {force: true})
      rmSync(`${out}.counts.json`, {force: true})
      byTool.get(t.id).push(m)
    }
  return byTool
}

const fmt = (x, d = 2) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d))
const med = (ms, k) => median(ms.map((m) => m[k]))
const ratio = (runs, k, id = 'sfl') => median(runs.get(id).map((m, i) => m[k] / runs.get('duckdb')[i][k]))

/** `sfl stats FILE --json` and the DuckDB aggregate, `runs` times interleaved; their figures checked against each other. */
async function statsPair(file, records, runs) {
  const out = join(dir, 'duckdb-stats.json')
  const sfl = []
  const base = []
  const duck = []
  for (let r = 0; r < runs; r++) {
    sfl.push(await measure(node, [BIN, 'stats', file, '--json'], {env}))
    if (BASE) base.push(await measure(node, [BASE, 'stats', file, '--json'], {env}))
    duck.push(await measure(node, [join(ROOT, 'scripts', 'bench', 'duckdb-stats.mjs'), file, out]))
    // measure keeps no output: the figures of one more, unmeasured run
    const mine = JSON.parse(
      execFileSync(node, [BIN, 'stats', file, '--json'], {env: {...process.env, ...env}, encoding: 'utf8'}),
    ).run
    const theirs = JSON.parse(readFileSync(out, 'utf8'))
    const loans = (ls) => JSON.stringify(ls.map((l) => [l.type ?? l.LoanType, l.n ?? l.count]).sort())
    const got = [
      mine.records,
      mine.FinalValue.p25,
      mine.FinalValue.median,
      mine.FinalValue.p75,
      loans(mine.assumableLoans),
    ]
    const want = [theirs.records, theirs.p25, theirs.median, theirs.p75, loans(theirs.loans)]
    if (JSON.stringify(got) !== JSON.stringify(want))
      throw new Error(
        `sfl stats and DuckDB disagree on ${file}: ${JSON.stringify(got)} against ${JSON.stringify(want)}`,
      )
  }
  console.log(
    `\nsfl stats of ${records.toLocaleString('en-US')} records, parquet (${(statSync(file).size / 1e6).toFixed(0)} MB): records, FinalValue quartiles and loans by type agree`,
  )
  console.log('  tool                                         wall s    CPU s   peak MB')
  for (const [name, ms] of [
    ['sfl stats --json', sfl],
    ...(BASE ? [['sfl stats --json (BENCH_SFL_BASE)', base]] : []),
    ['DuckDB aggregate of the same figures', duck],
  ])
    console.log(
      `  ${name.padEnd(42)} ${fmt(med(ms, 'wall')).padStart(8)} ${fmt(med(ms, 'cpu')).padStart(8)} ${fmt(med(ms, 'rssMb'), 0).padStart(9)}`,
    )
  for (const [label, ms] of [['sfl', sfl], ...(BASE ? [['base', base]] : [])]) {
    const per = (k) => ms.map((m, i) => m[k] / duck[i][k])
    console.log(
      `  ${label} / DuckDB, median of per-run ratios: wall ${fmt(median(per('wall')))}x (runs: ${per('wall')
        .map((x) => fmt(x))
        .join(' ')}), CPU ${fmt(median(per('cpu')))}x, peak RSS ${fmt(median(per('rssMb')))}x`,
    )
  }
}

const results = new Map()
async function size(records, runs, formats, next = 'current') {
  const files = await exportsOf(records, formats, next)
  const updated = revaluedCount(records, next)
  for (const format of formats) {
    const {previous, current} = files[format]
    const runsOf = await measurePair(previous, current, records, runs, updated)
    if (next === 'current') results.set(`${records}-${format}`, runsOf)
    const mb = (statSync(previous).size + statSync(current).size) / 1e6
    console.log(
      `\n${records.toLocaleString('en-US')} vs ${(records - GONE + NEW).toLocaleString('en-US')} records, ${format} (${mb.toFixed(0)} MB both): ${NEW} added, ${updated} updated, ${GONE} deleted (both tools agree)${next === 'current' ? '' : ': a month of many changes'}`,
    )
    console.log('  tool                                         wall s    CPU s   peak MB')
    for (const t of TOOLS) {
      const ms = runsOf.get(t.id)
      console.log(
        `  ${t.name.padEnd(42)} ${fmt(med(ms, 'wall')).padStart(8)} ${fmt(med(ms, 'cpu')).padStart(8)} ${fmt(med(ms, 'rssMb'), 0).padStart(9)}`,
      )
    }
    for (const id of BASE ? ['sfl', 'base'] : ['sfl']) {
      const per = (k) =>
        runsOf
          .get(id)
          .map((m, i) => fmt(m[k] / runsOf.get('duckdb')[i][k]))
          .join(' ')
      console.log(
        `  ${id === 'sfl' ? 'sfl' : 'base'} / DuckDB, median of per-run ratios: wall ${fmt(ratio(runsOf, 'wall', id))}x (runs: ${per('wall')}), CPU ${fmt(ratio(runsOf, 'cpu', id))}x, peak RSS ${fmt(ratio(runsOf, 'rssMb', id))}x`,
      )
    }
    if (format === 'parquet' && records <= RECORDS && next === 'current')
      await statsPair(previous, records, runs)
  }
  for (const [, month] of Object.entries(files))
    for (const f of Object.values(month))
      if (KEEP || EXPORTS_DIR) console.log(`  kept ${f}`)
      else rmSync(f, {force: true})
}

console.log(
  `deltas benchmark, ${new Date().toISOString().slice(0, 10)}: node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model.trim() ?? '?'}); ` +
    `county ${FIPS}, key with both add-on options; exports written by sfl county-export; medians of ${RUNS} interleaved runs ` +
    `(${BIG_RUNS} at the big size); CPU = user + sys of every thread (GNU time), peak = largest process's RSS`,
)
try {
  if (PARQUET_SMALL > 0 && PARQUET_SMALL !== RECORDS && FORMATS.includes('parquet'))
    await size(PARQUET_SMALL, RUNS, ['parquet'])
  await size(RECORDS, RUNS, FORMATS)
  if (MANY > 0 && FORMATS.includes('parquet')) await size(MANY, Math.min(RUNS, 3), ['parquet'], 'revalued')
  if (BIG > 0) {
    await size(BIG, BIG_RUNS, FORMATS)
    for (const format of FORMATS) {
      const small = results.get(`${RECORDS}-${format}`).get('sfl')
      const big = results.get(`${BIG}-${format}`).get('sfl')
      console.log(
        `  sfl changes ${format} at ${BIG.toLocaleString('en-US')} / at ${RECORDS.toLocaleString('en-US')} records (x${BIG / RECORDS} the data): ` +
          `wall ${fmt(med(big, 'wall') / med(small, 'wall'))}x, CPU ${fmt(med(big, 'cpu') / med(small, 'cpu'))}x, peak RSS ${fmt(med(big, 'rssMb') / med(small, 'rssMb'))}x`,
      )
    }
  }
} finally {
  if (!KEEP) rmSync(dir, {recursive: true, force: true})
}
