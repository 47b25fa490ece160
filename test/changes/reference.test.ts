import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {parse} from 'csv-parse/sync'
import fc from 'fast-check'
import {afterAll, describe, expect, it} from 'vitest'

import {compareExports} from '../../src/changes/compare.js'
import {FileTarget} from '../../src/io/output.js'
import {readParquetRecords} from '../../src/io/parquet-reader.js'
import {writeParquet} from '../../src/io/parquet-writer.js'

/**
 * The comparison on the shared readers (csv-reader's grammar, the JSON walker, the Parquet column reader;
 * a digest of values or of bytes) against the plainest reading there is: JSON.parse of each NDJSON line,
 * csv-parse of the CSV, hyparquet's general reader of the Parquet file, then a map per county keyed by
 * ServicePropertyID (else APN) and values compared as text. For random exports a month apart, in any pair
 * of formats, both find the same added, updated (with the same fields) and deleted properties.
 */
const dir = mkdtempSync(join(tmpdir(), 'sfl-changes-ref-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
let n = 0

type Rec = Record<string, unknown>
type Flat = Record<string, string | null>
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/
/** export-reader's asText, written again here from its rule: a number (or a text that is one) in JavaScript's form. */
const textOf = (v: unknown): string | null => {
  if (v === null || v === undefined) return null
  if (typeof v === 'string') return NUMBER.test(v) && Number.isFinite(Number(v)) ? String(Number(v)) : v
  return String(v)
}

/** One flat record as the plain readers give it: option members as `Option.Field`, values as text. */
function flat(rec: Rec): Flat {
  const out: Flat = {}
  for (const [k, v] of Object.entries(rec))
    if ((k === 'AssumableMortgage' || k === 'FHACondoEligibility') && v && typeof v === 'object')
      for (const [s, x] of Object.entries(v as Rec)) out[`${k}.${s}`] = textOf(x)
    else out[k] = textOf(v)
  return out
}

const csvCell = (v: unknown) => {
  if (v === null || v === undefined) return ''
  let s = typeof v === 'string' ? v : String(v)
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}` // the export's formula guard
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}

/**
 * An NDJSON line as another month's export may send the same values: members in another order, a whole
 * number as `300000.0` (the same value in other bytes).
 */
const restyled = (r: Rec, i: number): string => {
  if (i % 3 !== 1) return JSON.stringify(r)
  const reordered = Object.fromEntries(Object.entries(r).reverse())
  return JSON.stringify(reordered).replace(/"FinalValue":(\d+)([,}])/, '"FinalValue":$1.0$2')
}

async function write(format: string, recs: readonly Rec[], style = false): Promise<string> {
  const path = join(dir, `${n++}.${format}`)
  const lines = recs.map((r, i) => (style ? restyled(r, i) : JSON.stringify(r)))
  if (format === 'ndjson') writeFileSync(path, lines.map((l) => `${l}\n`).join(''))
  else if (format === 'json') writeFileSync(path, `[\n${lines.join(',\n')}\n]\n`)
  else if (format === 'csv') {
    const rows = recs.map(flatValues)
    const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))]
    const text = [cols, ...rows.map((r) => cols.map((c) => r[c]))].map((r) => r.map(csvCell).join(','))
    writeFileSync(path, `${text.join('\r\n')}\r\n`)
  } else {
    const part = join(dir, `${n++}.part.ndjson`)
    writeFileSync(part, lines.map((l) => `${l}\n`).join(''))
    const target = await FileTarget.create(path, () => undefined)
    await writeParquet(target, [part])
    await target.commit()
  }
  return path
}

/** A record's values by flat column, as the CSV export writes them (the JSON values, not their text). */
function flatValues(rec: Rec): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(rec))
    if ((k === 'AssumableMortgage' || k === 'FHACondoEligibility') && v && typeof v === 'object')
      for (const [s, x] of Object.entries(v as Rec)) out[`${k}.${s}`] = x
    else if (k !== 'AssumableMortgage' && k !== 'FHACondoEligibility') out[k] = v
  return out
}

/** The plain reading of a file. */
async function plainRead(path: string): Promise<Flat[]> {
  if (path.endsWith('.ndjson'))
    return readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .filter(Boolean)
      .map((l) => flat(JSON.parse(l) as Rec))
  if (path.endsWith('.json')) return (JSON.parse(readFileSync(path, 'utf8')) as Rec[]).map(flat)
  if (path.endsWith('.csv')) {
    const [header, ...rows] = parse(readFileSync(path, 'utf8')) as string[][]
    const unguard = (s: string) => (/^'[=+\-@\t\r]/.test(s) ? s.slice(1) : s)
    return rows.map((r) =>
      Object.fromEntries(header!.map((h, i) => [h, r[i] === '' ? null : textOf(unguard(r[i]!))])),
    )
  }
  const out: Flat[] = []
  for await (const r of readParquetRecords(path)) out.push(flat(r))
  return out
}

/** The reference comparison: `change key fields` lines, sorted. */
function reference(prev: Flat[], cur: Flat[]): string[] {
  const keyOf = (r: Flat) =>
    r['ServicePropertyID'] ? `id:${r['ServicePropertyID']}` : r['APN'] ? `apn:${r['APN']}` : undefined
  const index = (rs: Flat[]) => {
    const m = new Map<string, Flat>()
    for (const r of rs) {
      const k = keyOf(r)
      const at = `${r['Fips'] ?? ''}|${k}`
      if (k !== undefined && !m.has(at)) m.set(at, r) // a repeated key: the first counts
    }
    return m
  }
  const p = index(prev)
  const c = index(cur)
  const out: string[] = []
  for (const [k, r] of c) {
    const old = p.get(k)
    if (!old) out.push(`added ${k}`)
    else {
      const fields = [...new Set([...Object.keys(r), ...Object.keys(old)])]
        .filter((f) => f !== 'ValuationDate' && (r[f] ?? null) !== (old[f] ?? null))
        .sort()
      if (fields.length) out.push(`updated ${k} ${fields.join(';')}`)
    }
  }
  for (const k of p.keys()) if (!c.has(k)) out.push(`deleted ${k}`)
  return out.sort()
}

/** What sfl changes wrote, in the same lines (its NDJSON change file). */
async function sflChanges(previous: string, current: string): Promise<string[]> {
  const out = join(dir, `${n++}.changes.ndjson`)
  await compareExports({previous, current, ignore: ['ValuationDate'], out, format: 'ndjson'})
  return readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec)
    .map((r) => {
      const id = r['ServicePropertyID']
      const k = `${r['Fips'] as string}|${id !== null && id !== undefined ? `id:${textOf(id)}` : `apn:${textOf(r['APN'])}`}`
      return r['Change'] === 'updated'
        ? `updated ${k} ${[...(r['ChangedFields'] as string[])].sort().join(';')}`
        : `${r['Change'] as string} ${k}`
    })
    .sort()
}

const value = fc.oneof(
  fc.integer({min: 0, max: 5}).map((i) => 100_000 + i * 1000),
  fc.constantFrom(3.25, 0.1, -4.5, 1e21),
  fc.constantFrom('A', 'b c', '=x', '+1', '06067', 'é', 'say "hi"', 'a,b', ''),
  fc.constant(null),
)
const record = fc.record(
  {
    Fips: fc.constantFrom('06067', '48201'),
    ServicePropertyID: fc.integer({min: 1, max: 12}),
    APN: fc.constantFrom('A-1', 'A-2', '007', ''),
    City: value,
    FinalValue: value,
    ValuationDate: fc.constantFrom('2026-10-01T00:00:00', '2026-11-01T00:00:00'),
    FHAEligible: fc.oneof(fc.boolean(), fc.constant(null)),
    Zoning: value,
    AssumableMortgage: fc.oneof(
      fc.constant(null),
      fc.record({LoanType: fc.constantFrom('FHA', 'VA'), EstimatedInterestRate: value}, {requiredKeys: []}),
    ),
  },
  {requiredKeys: ['Fips', 'ValuationDate']},
)
/** A month later: some records kept as they were, some changed, some gone, some new. */
const months = fc
  .array(record, {maxLength: 14})
  .chain((prev) =>
    fc.tuple(
      fc.constant(prev),
      fc.array(fc.oneof(fc.constant(undefined), record), {minLength: prev.length, maxLength: prev.length}),
      fc.array(record, {maxLength: 4}),
    ),
  )
  .map(([prev, edits, extra]) => [prev, [...prev.map((r, i) => edits[i] ?? r), ...extra]] as const)

describe('the comparison finds what a plain JSON.parse reading finds', () => {
  it.each([
    ['ndjson', 'ndjson'],
    ['csv', 'csv'],
    ['json', 'ndjson'],
    ['csv', 'ndjson'],
    ['parquet', 'parquet'],
    ['ndjson', 'parquet'],
  ])('%s against %s, on random exports a month apart', async (a, b) => {
    await fc.assert(
      fc.asyncProperty(months, async ([prev, cur]) => {
        const p = await write(a, prev)
        const c = await write(b, cur, true)
        expect(await sflChanges(p, c)).toEqual(reference(await plainRead(p), await plainRead(c)))
      }),
      {numRuns: a === 'parquet' || b === 'parquet' ? 25 : 60},
    )
  })
})
