// The xlsx writer's memory and time at a county's size: N records (sandbox records with both options,
// every column of an export, 1,000 distinct ones cycled so the generator costs nothing) written as one
// workbook the way an export will write it (src/io/xlsx-writer.ts writeXlsx onto a FileTarget). Not a
// benchmark with a peer: a measurement of the writer alone, for docs/design.md.
//
//   node scripts/measure-xlsx.mjs build                                   # compile the modules once
//   /usr/bin/time -f '%e s %U+%S s CPU %M KB' node scripts/measure-xlsx.mjs [rows=1000000] [level=1]
//   node --expose-gc scripts/measure-xlsx.mjs 1000000                    # also the live heap as it goes
import {mkdtempSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {ROOT} from './lib.mjs'

const MODULES = join(ROOT, 'dist-bench', 'measure-xlsx')

if (process.argv[2] === 'build') {
  const {build} = await import('esbuild')
  await build({
    absWorkingDir: ROOT,
    entryPoints: [
      'src/io/xlsx-writer.ts',
      'src/io/output.ts',
      'src/sandbox/dataset.ts',
      'src/sandbox/counties.ts',
      'src/model/columns.ts',
    ],
    outbase: 'src',
    outdir: MODULES,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.18',
    logLevel: 'warning',
  })
  process.exit(0)
}

const rows = Number(process.argv[2] ?? 1_000_000)
const level = Number(process.argv[3] ?? 1)
const load = (p) => import(pathToFileURL(join(MODULES, p)).href)
const [{writeXlsx}, {FileTarget}, {Dataset}, {countyByFips}, {columnsFor, ShapeTracker}] = await Promise.all(
  ['io/xlsx-writer.js', 'io/output.js', 'sandbox/dataset.js', 'sandbox/counties.js', 'model/columns.js'].map(
    load,
  ),
)
const ds = new Dataset(1, 1_000_000)
const county = countyByFips('48201')
const opts = {assumable: true, condo: true}
const shape = new ShapeTracker()
for (let i = 0; i < 100; i++) shape.observe(ds.record(county, i, opts))
const columns = columnsFor(shape.shape)
const pool = []
for (let i = 0; i < 1000; i++) {
  const r = ds.record(county, i, opts)
  const f = {}
  for (const c of columns) {
    const v = r[c.key]
    f[c.header] = c.sub === undefined ? v : v !== null && typeof v === 'object' ? v[c.sub] : null
  }
  pool.push(f)
}
// with --expose-gc: the live heap after a full collection every 100,000 rows (flat when nothing is kept)
const heap = []
async function* flat() {
  for (let i = 0; i < rows; i++) {
    if (globalThis.gc && i % 100_000 === 0) {
      globalThis.gc()
      heap.push(Math.round(process.memoryUsage().heapUsed / 1024 ** 2))
    }
    yield pool[i % pool.length]
  }
}

const dir = mkdtempSync(join(tmpdir(), 'sfl-measure-xlsx-'))
try {
  const out = join(dir, 'county.xlsx')
  const target = await FileTarget.create(out, () => undefined)
  const t0 = performance.now()
  const result = await writeXlsx(target, {flat: flat()}, {columns: columns.map((c) => c.header), level})
  await target.commit()
  const s = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage()
  console.log(
    `${result.rows} rows, ${columns.length} columns, sheets ${result.sheets.join(', ')}; ` +
      `${(statSync(out).size / 1024 ** 2).toFixed(1)} MB at level ${level}; ${s.toFixed(1)} s wall, ` +
      `${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`,
  )
  if (heap.length) console.log(`live heap (MB) every 100,000 rows: ${heap.join(' ')}`)
} finally {
  rmSync(dir, {recursive: true, force: true})
}
