// node scripts/bench-row-format.mjs (after `npm run build`) — nanoseconds per record to turn one record's JSON
// bytes into its flattened CSV cells, for each candidate, beside JSON.parse of the same bytes. Records are the
// sandbox's own (county 48201, key with both add-on options, ~845 bytes each), built once into Buffers.
// Candidates run interleaved in each round, and every figure is the median of BENCH_RUNS rounds (default 3),
// and the ratio column is the median of each round's ratio to JSON.parse: a noisy shared machine shifts a
// round's figures together, so compare the ratios, not the absolute figures.
//   BENCH_RECORDS (default 20000) distinct records, BENCH_PASSES (default 5) passes over them per round.
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {ROOT, median} from './lib.mjs'

const dist = (p) => import(pathToFileURL(join(ROOT, 'dist-bench', p)).href)
const {Dataset} = await dist('sandbox/dataset.js')
const {countyByFips, LARGE_COUNTY} = await dist('sandbox/counties.js')
const {flattenRecord, newFlatRow} = await dist('io/row-format.js')
const {ShapeTracker, columnsFor, flattenRow, neutraliseFormula} = await dist('model/columns.js')
const {stringify} = await import('csv-stringify')

const N = Number(process.env.BENCH_RECORDS ?? 20_000)
const PASSES = Number(process.env.BENCH_PASSES ?? 5)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)

const ds = new Dataset(1, N)
const county = countyByFips(LARGE_COUNTY)
const texts = []
for (let i = 0; i < N; i++) texts.push(JSON.stringify(ds.record(county, i, {assumable: true, condo: true})))
const records = texts.map((t) => Buffer.from(t))
// the same records as a service that writes floats with a decimal point sends them (FinalValue 688600.0):
// numbers JSON.parse cannot give back as sent
const floaty = texts.map((t) =>
  Buffer.from(t.replace(/"(FinalValue|HighValue|LowValue)":(\d+)/g, '"$1":$2.0')),
)
const avgBytes = records.reduce((a, b) => a + b.length, 0) / N

// ---- candidate (b): JSON.parse + walk, same cell rules; numbers via String(n) --------------------------
const NEEDS_QUOTES = /[",\r\n]/
const q = (t) => (NEEDS_QUOTES.test(t) ? `"${t.replaceAll('"', '""')}"` : t)
const strCell = (v) => q(neutraliseFormula(v))
function scalarCell(v) {
  if (v === null) return ''
  if (typeof v === 'string') return strCell(v)
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  return q(JSON.stringify(v))
}
function walk(bytes, out) {
  const rec = JSON.parse(bytes.toString('utf8'))
  let n = 0
  for (const k in rec) {
    const v = rec[k]
    if (v !== null && typeof v === 'object' && !Array.isArray(v))
      for (const sub in v) {
        out.names[n] = `${k}.${sub}`
        out.cells[n++] = scalarCell(v[sub])
      }
    else {
      out.names[n] = k
      out.cells[n++] = scalarCell(v)
    }
  }
  out.length = n
}
// (b) made correct: numbers that may not survive a float round trip (a fraction ending in 0, an exponent, 16+
// digits, -0) send the record to the tokenizer. Strings can match too (false positives cost a fallback only).
const SUSPECT = /\.\d*0(?!\d)|\d[eE]|\d{16}|-0(?![.\d])/
function walkChecked(bytes, out) {
  const text = bytes.toString('latin1')
  if (SUSPECT.test(text)) flattenRecord(bytes, out, {escapeFormulas: true})
  else walk(bytes, out)
}

// ---- candidate (a-buf): tokenizer over the Buffer's bytes, one native slice per cell ------------------
// A LOWER BOUND for that design: it handles only what the sandbox sends (no escapes, no validation), so if
// even this is slower than (a), the full version would be too.
function bufTokenizer(b, out) {
  const n = b.length
  let i = 1
  let k = 0
  let name = ''
  let parent = ''
  let depth = 1
  let inKey = true
  while (i < n) {
    const c = b[i]
    if (c === 0x22) {
      let j = i + 1
      while (b[j] !== 0x22) j++
      const t = b.utf8Slice(i + 1, j)
      if (inKey) name = depth === 2 ? `${parent}.${t}` : t
      else {
        out.names[k] = name
        out.cells[k++] = t.includes(',') ? `"${t}"` : t
      }
      i = j + 1
    } else if (c === 0x3a) {
      inKey = false
      i++
    } else if (c === 0x2c) {
      inKey = true
      i++
    } else if (c === 0x7b) {
      parent = name
      depth++
      inKey = true
      i++
    } else if (c === 0x7d) {
      depth--
      i++
    } else if (c === 0x6e) {
      out.names[k] = name
      out.cells[k++] = ''
      i += 4
    } else {
      let j = i
      while (j < n && b[j] !== 0x2c && b[j] !== 0x7d) j++
      out.names[k] = name
      out.cells[k++] = b.latin1Slice(i, j)
      i = j
    }
  }
  out.length = k
}

// ---- the old path: JSON.parse, shape tracking, columns.ts flattenRow, csv-stringify transform per row ---
async function oldPath(set) {
  const shape = new ShapeTracker()
  // the spool pass: parse + observe (as spool.ts does); then assembly parses each record again
  for (const b of set) shape.observe(JSON.parse(b.toString('utf8')))
  const cols = columnsFor(shape.shape)
  const csv = stringify({
    header: false,
    columns: cols.map((c) => ({key: c.header, header: c.header})),
    record_delimiter: 'windows',
    cast: {boolean: (x) => String(x)},
  })
  let bytes = 0
  csv.on('data', (d) => (bytes += d.length))
  const done = new Promise((r) => csv.on('end', r))
  for (const b of set) {
    const rec = JSON.parse(b.toString('utf8'))
    if (!csv.write(flattenRow(rec, cols, true))) await new Promise((r) => csv.once('drain', r))
  }
  csv.end()
  await done
  return bytes
}

const row = newFlatRow()
const candidates = [
  ['JSON.parse(bytes.toString()) only (reference)', (set) => set.forEach((b) => JSON.parse(b.toString('utf8')))],
  ['(a) flattenRecord: tokenizer, one decode per record', (set) => set.forEach((b) => flattenRecord(b, row, {escapeFormulas: true}))],
  ['(a-buf) Buffer tokenizer, slice per cell (lower bound)', (set) => set.forEach((b) => bufTokenizer(b, row))],
  ['(b) JSON.parse + walk (numbers NOT as sent)', (set) => set.forEach((b) => walk(b, row))],
  ['(b+check) JSON.parse + walk, tokenizer if suspect', (set) => set.forEach((b) => walkChecked(b, row))],
  ['(a) + row.cells.join(",") + CRLF', (set) => set.forEach((b) => (flattenRecord(b, row, {escapeFormulas: true}), row.cells.slice(0, row.length).join(',') + '\r\n'))],
  ['old: parse+observe, parse+flattenRow+csv-stringify', oldPath],
] // prettier-ignore

async function time(fn, set) {
  const t = process.hrtime.bigint()
  for (let p = 0; p < PASSES; p++) await fn(set)
  return Number(process.hrtime.bigint() - t) / (PASSES * set.length)
}

for (const [label, set] of [
  ['sandbox records (numbers in shortest form)', records],
  ['same records, FinalValue/HighValue/LowValue sent as 688600.0', floaty],
]) {
  for (const [, fn] of candidates) await time(fn, set.slice(0, 2000)) // warm up the JIT
  const runs = candidates.map(() => [])
  for (let r = 0; r < RUNS; r++)
    for (const [i, [, fn]] of candidates.entries()) runs[i].push(await time(fn, set))
  console.log(
    `\n${label}: ${N.toLocaleString('en-US')} records x ${PASSES} passes, ${avgBytes.toFixed(0)} bytes/record, median of ${RUNS}, node ${process.version}`,
  )
  console.log('  candidate                                               ns/record   x JSON.parse   MB/s')
  for (const [i, [name]] of candidates.entries()) {
    const ns = median(runs[i])
    // the ratio to JSON.parse of the same round (the machine is shared), then the median of those
    const x = median(runs[i].map((t, r) => t / runs[0][r]))
    console.log(
      `  ${name.padEnd(55)} ${ns.toFixed(0).padStart(9)} ${x.toFixed(2).padStart(14)} ${((avgBytes / ns) * 1000).toFixed(0).padStart(6)}`,
    )
  }
}
