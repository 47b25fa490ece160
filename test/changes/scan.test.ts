import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import fc from 'fast-check'
import {afterAll, describe, expect, it} from 'vitest'

import {
  asText,
  ExportFileError,
  formatFromName,
  flattenRecord,
  readExport,
  type FlatRecord,
} from '../../src/io/export-reader.js'
import {FileTarget} from '../../src/io/output.js'
import {guardCell} from '../../src/text/csv-cell.js'
import {writeParquet} from '../../src/io/parquet-writer.js'
import {entryRef, ENTRY_WORDS, loadEntries} from '../../src/changes/entries.js'
import {RecordReader} from '../../src/changes/read.js'
import {scanSide, type ScanFile} from '../../src/changes/scan.js'
import {ObjectDigester} from '../../src/changes/row-digest.js'
import {compareText, csvCellText, recordObject, type ChangeRecord} from '../../src/changes/cells.js'

/**
 * The byte scanners (CSV, NDJSON, JSON lines) against the reading they stand in for: export-reader's
 * record objects, fingerprinted by ObjectDigester. For any records, written in any of the ways an export
 * (or a hand-made file) may write them, every county's entries, keys, digests, unkeyed count and field
 * names are those of the objects, in order, and each entry's record read back is the very object.
 */
const dir = mkdtempSync(join(tmpdir(), 'sfl-change-scan-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
let n = 0
const IGNORE = ['ValuationDate']

interface Expected {
  fips: string
  entries: number[]
  unkeyed: number
  names: string[]
  /** Each record's fields and their values as the comparison reads them (asText). */
  records: Array<Array<[string, string | null]>>
}
const texts = (rec: FlatRecord): Array<[string, string | null]> =>
  Object.entries(rec).map(([k, v]) => [k, asText(v)])
const cellTexts = (rec: ChangeRecord): Array<[string, string | null]> =>
  Object.entries(rec).map(([k, v]) => [k, compareText(v)])

/** What the scan must give, from export-reader's objects. */
async function expected(f: ScanFile): Promise<Expected[]> {
  const groups = new Map<string, Expected>()
  const d = new ObjectDigester(new Set(IGNORE))
  for await (const rec of readExport(f.path, f.format)) {
    const fips = f.group ?? asText(rec['Fips']) ?? ''
    let g = groups.get(fips)
    if (!g) groups.set(fips, (g = {fips, entries: [], unkeyed: 0, names: [], records: []}))
    for (const k in rec) if (!g.names.includes(k)) g.names.push(k)
    d.take(rec)
    if (!d.hasKey) g.unkeyed++
    else {
      g.entries.push(d.key.a >>> 0, d.key.b >>> 0, d.digest.a >>> 0, d.digest.b >>> 0)
      g.records.push(texts(rec))
    }
  }
  return [...groups.values()]
}

/** The scan of one file, in the same shape; `bytes`: whether the byte scanner read it. */
async function scanned(f: ScanFile): Promise<{bytes: boolean; groups: Expected[]; cells: ChangeRecord[][]}> {
  const scratch = mkdtempSync(join(dir, 'scratch-'))
  try {
    const side = await scanSide({label: 'side', scratch, files: [f], ignore: IGNORE})
    const reader = await RecordReader.create(side.files)
    try {
      const cells: ChangeRecord[][] = []
      const groups = side.groups.map((g) => {
        const e = loadEntries(g)
        const entries: number[] = []
        const records: ChangeRecord[] = []
        for (let i = 0; i < g.count; i++) {
          entries.push(...e.subarray(i * ENTRY_WORDS, i * ENTRY_WORDS + 4))
          const {file, offset} = entryRef(e, i)
          records.push(recordObject(reader.read(file, offset)))
        }
        cells.push(records)
        return {fips: g.fips, entries, unkeyed: g.unkeyed, names: g.names, records: records.map(cellTexts)}
      })
      return {bytes: side.bytes, groups, cells}
    } finally {
      reader.close()
    }
  } finally {
    rmSync(scratch, {recursive: true, force: true})
  }
}

// ---------------------------------------------------------------------------------------------------
// Records, and the ways files hold them

const text = fc.oneof(
  fc.string({maxLength: 12}),
  fc.string({unit: 'grapheme', maxLength: 6}),
  fc.constantFrom(
    'a,b',
    'say "hi"',
    'two\nlines',
    'cr\rhere',
    'back\\slash',
    '=1+2',
    '+x',
    '-y',
    '@z',
    "'q",
    '\t',
  ),
  fc.constantFrom('688600.0', '06067', '1e5', '-0', '0.10', '12345678901234567890', '0.0000001', '3.25', ''),
  fc.constantFrom('true', 'false', 'null', '[1,2]', ' 5', 'é', '😀', '\u2028'),
)
const scalar = fc.oneof(
  {weight: 3, arbitrary: text},
  {weight: 2, arbitrary: fc.integer({min: -1e6, max: 1e12})},
  {weight: 1, arbitrary: fc.double({noNaN: true, noDefaultInfinity: true})},
  {weight: 1, arbitrary: fc.boolean()},
  {weight: 1, arbitrary: fc.constant(null)},
)
const option = fc.oneof(
  {weight: 4, arbitrary: fc.dictionary(fc.constantFrom('LoanType', 'Rate', 'Lender', 'x.y', ''), scalar)},
  {weight: 1, arbitrary: fc.constant(null)},
  // deeper than the CSV's columns: one JSON-text column
  {
    weight: 1,
    arbitrary: fc.record({Deep: fc.array(scalar, {maxLength: 2}), More: fc.dictionary(text, scalar)}),
  },
)
const record = fc
  .record(
    {
      Fips: fc.oneof(fc.constantFrom('06067', '48201', 6067, ''), fc.constant(null)),
      ServicePropertyID: fc.oneof(fc.integer({min: 0, max: 40}), fc.constantFrom('7', '7.0', 7.0, '', null)),
      APN: fc.constantFrom('A-1', 'A-2', 'A-3', '', null),
      FinalValue: scalar,
      ValuationDate: fc.constantFrom('2026-10-01T00:00:00', '2026-11-01T00:00:00'),
      City: text,
      AssumableMortgage: option,
      Tags: fc.array(scalar, {maxLength: 2}),
    },
    {requiredKeys: []},
  )
  .map((r) => r as Record<string, unknown>)

/** An NDJSON line as a person or another tool might write it: spaces, \u escapes, a name twice. */
const jsonLine = (rec: Record<string, unknown>, style: number): string => {
  let line = JSON.stringify(rec)
  if (style & 1) line = line.replace(/([:,])/g, '$1 ').replace(/^\{/, '{ ')
  if (style & 2) line = line.replace(/[éA]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  if (style & 4 && line !== '{}') line = line.replace(/^\{/, '{"City":"first",')
  if (style & 8) line = line.replace(/"FinalValue":(-?\d+)([,}])/, '"FinalValue":$1.0$2')
  return line
}

/** A CSV of the records' flattened columns (RFC 4180, some cells quoted whether needed or not). */
function csvText(recs: Array<Record<string, unknown>>, style: number): string {
  const flat = recs.map((r) => flattenRecord(r))
  const cols: string[] = []
  for (const r of flat) for (const k in r) if (!cols.includes(k)) cols.push(k)
  if (cols.length === 0) cols.push('Fips')
  const cell = (v: unknown, i: number) => {
    // strings guarded against formulas as the export guards them (src/model/columns.ts)
    const s = v === null || v === undefined ? '' : typeof v === 'string' ? guardCell(v, true) : String(v)
    return /[",\r\n]/.test(s) || (style & 2 && i % 3 === 0) ? `"${s.replaceAll('"', '""')}"` : s
  }
  const eol = style & 1 ? '\r\n' : '\n'
  const lines = [cols.map(cell).join(','), ...flat.map((r) => cols.map((c, i) => cell(r[c], i)).join(','))]
  return (style & 4 ? '\ufeff' : '') + lines.join(eol) + (style & 8 ? '' : eol)
}

function write(name: string, text: string): string {
  const p = join(dir, `${n++}-${name}`)
  writeFileSync(p, text)
  return p
}

describe('the byte scanners read what export-reader reads', () => {
  const files = fc.tuple(fc.array(record, {maxLength: 25}), fc.nat(15))

  it('NDJSON: every entry, key, digest, county and name, and each record read back', async () => {
    await fc.assert(
      fc.asyncProperty(files, async ([recs, style]) => {
        const body = recs.map((r) => jsonLine(r, style)).join(style & 1 ? '\r\n\n' : '\n')
        const f: ScanFile = {path: write('x.ndjson', body), format: 'ndjson'}
        const got = await scanned(f)
        expect(got.bytes).toBe(true)
        expect(got.groups).toEqual(await expected(f))
      }),
      {numRuns: 150},
    )
  })

  it('NDJSON with blanks after its records, CRLF and spaced members: read as export-reader reads it', async () => {
    const body =
      '{"Fips": "06067", "ServicePropertyID": 1, "City": "A"}  \r\n' +
      '{"Fips":"06067","ServicePropertyID":2,"City":"B"}\t\n' +
      '{"Fips":"06067","ServicePropertyID":3,"City":"C"}\r\n'
    const f: ScanFile = {path: write('x.ndjson', body), format: 'ndjson'}
    const got = await scanned(f)
    expect(got.bytes).toBe(true)
    expect(got.groups).toEqual(await expected(f))
    expect(got.groups[0]!.records).toHaveLength(3)
  })

  it('JSON lines (our --output json): the same, around the brackets and commas', async () => {
    await fc.assert(
      fc.asyncProperty(files, async ([recs, style]) => {
        const body = `[\n${recs.map((r) => jsonLine(r, style)).join(',\n')}\n]\n`
        const f: ScanFile = {path: write('x.json', body), format: 'json'}
        const got = await scanned(f)
        expect(got.bytes).toBe(true)
        expect(got.groups).toEqual(await expected(f))
      }),
      {numRuns: 100},
    )
  })

  it('CSV: the same, quoted cells, a BOM, CRLF and a last line without one included', async () => {
    await fc.assert(
      fc.asyncProperty(files, async ([recs, style]) => {
        const f: ScanFile = {path: write('x.csv', csvText(recs, style)), format: 'csv'}
        const got = await scanned(f)
        expect(got.bytes).toBe(true)
        expect(got.groups).toEqual(await expected(f))
      }),
      {numRuns: 150},
    )
  })

  it("a manifest's county file: every record is the manifest's county, whatever its Fips", async () => {
    const path = write('m.csv', 'Fips,ServicePropertyID\r\n48201,1\r\n,2\r\n06067,3\r\n')
    const got = await scanned({path, format: 'csv', group: '17031'})
    expect(got.groups.map((g) => [g.fips, g.entries.length / 4])).toEqual([['17031', 3]])
  })

  it('a file of interleaved counties is split by Fips in one pass, each county in file order', async () => {
    const recs = [1, 2, 3, 4, 5].map((i) => ({Fips: i % 2 ? '06067' : '48201', ServicePropertyID: i}))
    for (const [name, body] of [
      ['i.ndjson', recs.map((r) => JSON.stringify(r)).join('\n')],
      ['i.csv', csvText(recs, 0)],
    ] as const) {
      const f: ScanFile = {path: write(name, body), format: name.endsWith('csv') ? 'csv' : 'ndjson'}
      const got = await scanned(f)
      expect(got.groups.map((g, i) => [g.fips, got.cells[i]!.map((r) => r['ServicePropertyID'])])).toEqual([
        ['06067', [{n: '1'}, {n: '3'}, {n: '5'}]],
        ['48201', [{n: '2'}, {n: '4'}]],
      ])
    }
  })
})

describe('files the byte scanners leave to export-reader', () => {
  it.each([
    [
      'a quote inside a field',
      'x.csv',
      'Fips,ServicePropertyID\r\n06067,1\r\n06067,2"\r\n',
      /line 3: not a readable CSV/,
    ],
    ['a short record', 'x.csv', 'Fips,ServicePropertyID\r\n06067,1\r\n06067\r\n', /Invalid Record Length/],
    ['text after a quoted name', 'x.csv', '"Fips"x\r\n06067\r\n', /line 1: .*Invalid Closing Quote/],
    ['a quote inside a name', 'x.csv', 'Fi"ps\r\n06067\r\n', /line 1: .*Invalid Opening Quote/],
    ['an unclosed quote', 'x.csv', 'Fips,ServicePropertyID\r\n06067,"1\r\n', /Quote Not Closed/],
    ['a line that is not JSON', 'x.ndjson', '{"Fips":"06067"}\n{"Fips":tru}\n', /line 2: not a JSON record/],
    ['a control character', 'x.ndjson', '{"Fips":"06\t067"}\n', /line 1: not a JSON record/],
    ['an array', 'x.ndjson', '{"Fips":"06067"}\n[1]\n', /line 2: a record must be a JSON object/],
    [
      'a record over two lines',
      'x.ndjson',
      '{"Fips":"06067"}\n{"Fips":\n"06067"}\n',
      /line 2: not a JSON record/,
    ],
    [
      'a spaced record over two lines',
      'x.ndjson',
      '{"Fips": "06067",\n "APN": "1"}\n',
      /line 1: not a JSON record/,
    ],
    ['two records on a line', 'x.ndjson', '{"Fips":"06067"}{"Fips":"06067"}\n', /line 1: not a JSON record/],
    ['text after a record', 'x.ndjson', '{"Fips":"06067"}\n{"Fips":"06067"}x\n', /line 2: not a JSON record/],
    ['a comma after an NDJSON record', 'x.ndjson', '{"Fips":"06067"},\n', /line 1: not a JSON record/],
    [
      'two commas after a JSON line',
      'x.json',
      '[\n{"Fips":"06067"},,\n]\n',
      /line 2: not one record per line/,
    ],
    [
      'pretty-printed JSON',
      'x.json',
      '[\n  {\n    "Fips": "06067"\n  }\n]\n',
      /line 2: not one record per line/,
    ],
  ])('%s: the same one-line error as reading it', async (_name, file, body, message) => {
    const path = write(file, body)
    const format = formatFromName(file)!
    const scratch = mkdtempSync(join(dir, 'scratch-'))
    const scan = scanSide({label: 'side', scratch, files: [{path, format}], ignore: []})
    await expect(scan).rejects.toThrow(ExportFileError)
    await expect(scan).rejects.toThrow(message)
    rmSync(scratch, {recursive: true, force: true})
  })

  // few distinct values, so the writer makes dictionaries (and, past its dictionary size, plain pages after them)
  const repeating = fc.record(
    {
      Fips: fc.constantFrom('06067', '48201'),
      ServicePropertyID: fc.oneof(fc.integer({min: 0, max: 40}), fc.constant(null)),
      City: fc.oneof(fc.constantFrom('Aa', 'Bb', 'Cc', null), text),
      FinalValue: fc.oneof(fc.constantFrom(1.5, 2, null), scalar),
      FHAEligible: fc.oneof(fc.boolean(), fc.constant(null)),
    },
    {requiredKeys: ['Fips']},
  )
  it('Parquet of many pages a column chunk (dictionary and plain pages, nulls): the entries its record objects give, each row read back', async () => {
    // the scan adds a compared column's fingerprints into the row sums page by page (RowSums), the key
    // and county columns by slot; export-reader's objects come from the slots alone
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(record, repeating), {minLength: 1, maxLength: 120}),
        fc.integer({min: 1, max: 200}),
        fc.integer({min: 2, max: 40}),
        async (recs, pageBytes, rowGroupRows) => {
          const part = write('p.ndjson', recs.map((r) => `${JSON.stringify(r)}\n`).join(''))
          const path = join(dir, `${n++}-pages.parquet`)
          const target = await FileTarget.create(path, () => undefined)
          await writeParquet(target, [part], {pageBytes, rowGroupRows})
          await target.commit()
          const f: ScanFile = {path, format: 'parquet'}
          const got = await scanned(f)
          expect(got.bytes).toBe(true)
          expect(got.groups).toEqual(await expected(f))
        },
      ),
      {numRuns: 100},
    )
  })

  it('Parquet is read by column: the same entries as its record objects give, each row read back', async () => {
    const part = write(
      'p.ndjson',
      [1, 2, 3]
        .map(
          (i) =>
            `${JSON.stringify({Fips: '06067', ServicePropertyID: i, FinalValue: i * 1.5, AssumableMortgage: i === 2 ? null : {LoanType: 'FHA'}})}\n`,
        )
        .join(''),
    )
    const path = join(dir, `${n++}-x.parquet`)
    const target = await FileTarget.create(path, () => undefined)
    await writeParquet(target, [part])
    await target.commit()
    const f: ScanFile = {path, format: 'parquet'}
    const got = await scanned(f)
    expect(got.bytes).toBe(true)
    expect(got.groups).toEqual(await expected(f))
    // a double has no text as sent: the number, written in JSON's shortest form
    expect(got.cells[0]!.map((r) => r['FinalValue'])).toEqual([1.5, 3, 4.5])
    expect(got.cells[0]!.map((r) => csvCellText(r['FinalValue']))).toEqual(['1.5', '3', '4.5'])
  })
})
