import {execFileSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import fc from 'fast-check'
import {afterEach, describe, expect, it, vi} from 'vitest'

import {FileTarget} from '../../src/io/output.js'
import {
  cellOf,
  ParquetColumns,
  readParquetRecords,
  type ColumnValues,
  type ParquetCell,
  type ParquetRecord,
} from '../../src/io/parquet-reader.js'
import {writeParquet} from '../../src/io/parquet-writer.js'
import {ParquetKernel, type PickedValues} from '../../src/changes/kernel/parquet-kernel.js'
import {nameSeed, valueLanes} from '../../src/changes/row-digest.js'
import {loadEntries} from '../../src/changes/entries.js'
import {scanSide} from '../../src/changes/scan.js'
import {duckdbScratch} from '../helpers/duckdb-scratch.js'

/**
 * The comparison's kernel (src/changes/kernel/parquet-kernel.c, WebAssembly) against the rules it stands in
 * for: every column chunk it takes adds, row by row, the fingerprint row-digest.ts gives the value an
 * independent reader (hyparquet's) reads there; what it gives back adds nothing; and a scan with it finds
 * what a scan without it finds, on damaged files too, so it is never more lenient than the JavaScript
 * decoder. The module committed is the one its C source builds to.
 */
const scratch = duckdbScratch('sfl-parquet-kernel-')
const {dir} = scratch
afterEach(() => {
  vi.restoreAllMocks()
})
let n = 0

interface Verdict {
  /** Column chunks the kernel took (each checked row by row). */
  taken: number
  /** Columns of chunks it gave back. */
  given: Set<string>
}

/** Every column chunk of `path` through the kernel, each one taken checked against the records' fingerprints. */
async function kernelAgrees(path: string): Promise<Verdict> {
  const recs: ParquetRecord[] = []
  for await (const r of readParquetRecords(path)) recs.push(r)
  const kernel = ParquetKernel.get()!
  const pq = await ParquetColumns.open(path)
  const verdict: Verdict = {taken: 0, given: new Set()}
  try {
    for (let g = 0; g < pq.groups.length; g++) {
      const {first, rows} = pq.groups[g]!
      for (const c of pq.columns) {
        const [chunk] = pq.chunks(g, [c])
        const seed = nameSeed(c.name)
        const m = chunk!.meta
        expect(kernel.begin(rows, chunk!.bytes.length, Number(m.total_uncompressed_size))).toBe(true)
        if (!kernel.add(chunk!, seed)) {
          verdict.given.add(c.name)
          continue
        }
        verdict.taken++
        const a = new Int32Array(rows)
        const b = new Int32Array(rows)
        kernel.copyInto(a, b)
        const want = {a: new Int32Array(rows), b: new Int32Array(rows)}
        const out = {a: 0, b: 0}
        for (let r = 0; r < rows; r++)
          if (valueLanes(recs[first + r]![c.name], seed, out)) {
            want.a[r] = out.a
            want.b[r] = out.b
          }
        expect(a, `${c.name}, group ${g}`).toEqual(want.a)
        expect(b, `${c.name}, group ${g}`).toEqual(want.b)
      }
    }
  } finally {
    pq.close()
  }
  return verdict
}

async function sflParquet(
  recs: Array<Record<string, unknown>>,
  opts?: {pageBytes?: number; rowGroupRows?: number; compression?: 'snappy' | 'none'},
) {
  const part = join(dir, `${n++}-part.ndjson`)
  writeFileSync(part, recs.map((r) => `${JSON.stringify(r)}\n`).join(''))
  const path = join(dir, `${n++}-sfl.parquet`)
  const target = await FileTarget.create(path, () => undefined)
  await writeParquet(target, [part], opts)
  await target.commit()
  return path
}

// spec-typed fields (src/io/parquet-types.ts), each with nulls, texts that read as numbers and some that do not
const numberText = fc.constantFrom(
  '688600.0',
  '06067',
  '-0',
  '0.10',
  '3.25',
  '123456789012345', // 15 digits: the fast path
  '1234567890123456', // 16: JavaScript's parser (given back)
  '1e5',
  '0.0000000000000000000001', // 22 after the point
  '-12.5',
  '12.',
  '',
  'x1',
)
const textValue = fc.oneof(
  numberText,
  fc.string({maxLength: 10}),
  fc.string({unit: 'grapheme', maxLength: 4}),
)
const day = fc
  .integer({min: -719_000, max: 2_900_000})
  .map((d) => new Date(d * 86_400_000).toISOString().slice(0, 10))
const record = fc.record(
  {
    Fips: fc.constantFrom('06067', '48201'),
    ServicePropertyID: fc.oneof(fc.integer({min: 0, max: 2 ** 40}), fc.constant(null)),
    APN: fc.oneof(textValue, fc.constant(null)),
    City: fc.oneof(fc.constantFrom('Aa', 'Bb', null), textValue),
    FinalValue: fc.oneof(
      fc.double({noNaN: true, noDefaultInfinity: true}),
      fc.constantFrom(1.5, 2, -0, null),
    ),
    ConfidenceScore: fc.oneof(fc.integer({min: -(2 ** 31), max: 2 ** 31 - 1}), fc.constant(null)),
    FHAEligible: fc.oneof(fc.boolean(), fc.constant(null)),
    ValuationDate: fc.oneof(
      fc.constantFrom('2026-10-01T00:00:00', '2026-11-01T10:20:30.250', '1969-12-31T23:59:59.999', null),
      day.map((d) => `${d}T12:00:00`),
    ),
    AssumableMortgage: fc.oneof(
      fc.record({RecordingDate: fc.oneof(day, fc.constant(null)), LoanType: textValue}),
      fc.constant(null),
    ),
  },
  {requiredKeys: ['Fips']},
)

const SELECT = `SELECT i AS id, CASE WHEN i % 5 = 0 THEN NULL ELSE 'x' || (i % 7) END AS s,
    (i % 300)::VARCHAR AS digits, CASE WHEN i % 3 = 0 THEN NULL ELSE (i * 1.5)::DOUBLE END AS d,
    (i / 7)::FLOAT AS f, (i % 9)::INTEGER AS i32, (i % 4)::UINTEGER AS u32, i % 2 = 0 AS b,
    CASE WHEN i % 11 = 0 THEN NULL ELSE i % 3 = 0 END AS nb, DATE '1999-12-25' + i::INTEGER AS dt,
    TIMESTAMP '2024-01-01 10:00:00' + INTERVAL (i) SECOND AS ts,
    TIMESTAMP_MS '1969-12-31 23:59:58' + INTERVAL (i * 7) MILLISECOND AS tms,
    TIMESTAMP_NS '2024-02-29 00:00:00' + INTERVAL (i) MICROSECOND AS tns,
    'ünïcode ' || i AS u FROM range(3000) t(i)`

/** The rows of SELECT written by DuckDB to a Parquet file of its own, with these COPY options: its path. */
async function duckFile(options: string): Promise<string> {
  const path = join(dir, `${n++}-duck.parquet`)
  await scratch.con.run(`COPY (${SELECT}) TO '${path}' (FORMAT parquet, ${options})`)
  return path
}

/** Files sfl writes of these records, pages of about this many bytes, row groups of this many rows. */
const sflFiles = [
  fc.array(record, {minLength: 1, maxLength: 80}),
  fc.integer({min: 1, max: 300}),
  fc.integer({min: 3, max: 50}),
] as const

describe('the kernel adds what the rules add', () => {
  it('files sfl writes (data pages v2, Snappy; dictionaries, plain pages, nulls): every chunk taken agrees', async () => {
    let taken = 0
    await fc.assert(
      fc.asyncProperty(...sflFiles, async (recs, pageBytes, rowGroupRows) => {
        taken += (await kernelAgrees(await sflParquet(recs, {pageBytes, rowGroupRows}))).taken
      }),
      {numRuns: 60},
    )
    expect(taken).toBeGreaterThan(1000)
  })

  it('every column of an ordinary export is taken', async () => {
    const recs = Array.from({length: 3000}, (_, i) => ({
      Fips: '06067',
      ServicePropertyID: 50_000_000_000 + i,
      APN: `078-${String(i).padStart(4, '0')}-045`,
      City: i % 3 ? 'SACRAMENTO' : 'ELK GROVE',
      Zip: String(95_800 + (i % 40)),
      FinalValue: 100_000 + i * 7.5,
      ConfidenceScore: i % 100,
      FHAEligible: i % 2 === 0,
      ValuationDate: '2026-10-01T00:00:00',
      AssumableMortgage: i % 4 ? null : {RecordingDate: '2019-05-01', TermMonths: 360},
    }))
    const v = await kernelAgrees(await sflParquet(recs, {rowGroupRows: 1000}))
    expect(v.given).toEqual(new Set())
    expect(v.taken).toBeGreaterThan(0)
  })

  it('a number only JavaScript reads (16 digits, an exponent) gives its chunk back, the others are taken', async () => {
    const path = await sflParquet([
      {Fips: '06067', APN: '1234567890123456', City: 'x', FinalValue: 1},
      {Fips: '06067', APN: '12', City: '1e5', FinalValue: 2},
    ])
    const v = await kernelAgrees(path)
    expect(v.given).toEqual(new Set(['APN', 'City']))
    expect(v.taken).toBeGreaterThan(0)
  })

  it.each(['snappy', 'uncompressed'])(
    'files DuckDB writes (%s, data pages v1, its own dictionaries): every column taken agrees',
    async (codec) => {
      const path = await duckFile(`COMPRESSION ${codec}, ROW_GROUP_SIZE 1000`)
      const v = await kernelAgrees(path)
      expect(v.given).toEqual(new Set())
    },
  )

  it('every day from 1600 to 2147, and days outside the years 0-9999 given back', async () => {
    const path = join(dir, `${n++}-days.parquet`)
    await scratch.con.run(
      `COPY (SELECT DATE '1600-01-01' + i::INTEGER AS dt, TIMESTAMP '1600-01-01 00:00:00.001' + INTERVAL (i) DAY AS ts
        FROM range(200000) t(i)) TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 50000)`,
    )
    expect(await kernelAgrees(path)).toEqual({taken: 8, given: new Set()})
    const far = join(dir, `${n++}-far.parquet`)
    await scratch.con.run(
      `COPY (SELECT DATE '9999-12-31' + i::INTEGER AS late, DATE '0001-01-01' - (i * 400)::INTEGER AS early
        FROM range(3) t(i)) TO '${far}' (FORMAT parquet)`,
    )
    expect((await kernelAgrees(far)).given).toEqual(new Set(['late', 'early']))
  })

  it.each(['gzip', 'brotli'])(
    'a codec the kernel does not hold (%s): every chunk given back',
    async (codec) => {
      const path = await duckFile(`COMPRESSION ${codec}`)
      const v = await kernelAgrees(path)
      expect(v.taken).toBe(0)
    },
  )

  it('values JavaScript writes as text (NaN, infinities) give their chunk back', async () => {
    const path = join(dir, `${n++}-duck.parquet`)
    await scratch.con.run(
      `COPY (SELECT CASE WHEN i = 3 THEN 'NaN'::DOUBLE WHEN i = 4 THEN 'inf'::DOUBLE ELSE i END AS d,
        CASE WHEN i = 5 THEN '-inf'::FLOAT ELSE i END AS f, i AS ok FROM range(10) t(i)) TO '${path}' (FORMAT parquet)`,
    )
    const v = await kernelAgrees(path)
    expect(v.given).toEqual(new Set(['d', 'f']))
    expect(v.taken).toBe(1)
  })
})

// Column chunks made byte by byte (Thrift's compact protocol, parquet.thrift PageHeader), for the checks
// a damaged file rarely reaches by chance: each one taken by the kernel only when the bytes are whole.
const varint = (v: number): number[] => {
  const out: number[] = []
  for (; v >= 0x80; v = Math.floor(v / 128)) out.push((v & 0x7f) | 0x80)
  return [...out, v]
}
const i32 = (v: number) => varint(v >= 0 ? v * 2 : -v * 2 - 1)
/** A struct of i32 fields (id, value) and bool fields (id, true/false), in order, with its stop byte. */
const struct = (fields: Array<[number, number | boolean]>): number[] => {
  const out: number[] = []
  let last = 0
  for (const [id, v] of fields) {
    const type = typeof v === 'boolean' ? (v ? 1 : 2) : 5
    out.push(((id - last) << 4) | type, ...(typeof v === 'boolean' ? [] : i32(v)))
    last = id
  }
  return [...out, 0]
}
/** A page: its header (type, sizes, and the page-type header as field `sub`) and its body. */
const page = (
  type: number,
  sub: number,
  fields: Array<[number, number | boolean]>,
  body: number[],
  size = body.length,
) => [
  ...struct([
    [1, type],
    [2, size],
    [3, body.length],
  ]).slice(0, -1),
  ((sub - 3) << 4) | 12,
  ...struct(fields),
  0,
  ...body,
]
const DICT_AB = page(
  2,
  7,
  [
    [1, 2],
    [2, 0],
  ],
  [1, 0, 0, 0, 0x61, 1, 0, 0, 0, 0x62],
) // 'a', 'b'
/** A DATA_PAGE_V2 of `rows` rows, RLE_DICTIONARY, its levels (`defs`) and values as given. */
/** A DATA_PAGE_V2 header's fields: `rows` rows, RLE_DICTIONARY, `defs` bytes of levels, compressed or not. */
const v2 = (rows: number, defs: number, compressed: boolean): Array<[number, number | boolean]> => [
  [1, rows],
  [2, 0],
  [3, rows],
  [4, 8],
  [5, defs],
  [6, 0],
  [7, compressed],
]
/**
 * An optional INT64 column's chunk: one DATA_PAGE_V2 of 4 rows, PLAIN, uncompressed, whose levels say all 4
 * rows hold a value (a repeated run: header 4 << 1, level 1), and which holds `values` (8 bytes each).
 */
function int64Chunk(values: number[]) {
  const fields: Array<[number, number | boolean]> = [
    [1, 4],
    [2, 0],
    [3, 4],
    [4, 0],
    [5, 2],
    [6, 0],
    [7, false],
  ]
  const bytes = Uint8Array.from(
    page(3, 8, fields, [8, 1, ...values.flatMap((x) => [x, 0, 0, 0, 0, 0, 0, 0])]),
  )
  const column = {
    name: 'n',
    index: 0,
    kind: 'number',
    physical: 'INT64',
    optional: true,
    msPerUnit: 0,
  } as const
  return {column, meta: {codec: 'UNCOMPRESSED', total_uncompressed_size: bytes.length} as never, bytes}
}

/** A DATA_PAGE_V2 of `rows` rows, RLE_DICTIONARY, uncompressed, its levels (`defs`) and values as given. */
const dataV2 = (rows: number, defs: number[], values: number[]) =>
  page(3, 8, v2(rows, defs.length, false), [...defs, ...values])
const textColumn = (optional: boolean) =>
  ({name: 'x', index: 0, kind: 'string', physical: 'BYTE_ARRAY', optional, msPerUnit: 0}) as const

function kernelTakes(
  bytes: number[],
  rows: number,
  optional = false,
  codec = 'UNCOMPRESSED',
): Int32Array | undefined {
  const kernel = ParquetKernel.get()!
  expect(kernel.begin(rows, bytes.length, 1024)).toBe(true)
  const chunk = {column: textColumn(optional), meta: {codec} as never, bytes: Uint8Array.from(bytes)}
  if (!kernel.add(chunk, nameSeed('x'))) return undefined
  const a = new Int32Array(rows)
  kernel.copyInto(a, new Int32Array(rows))
  return a
}
const laneOf = (text: string) => {
  const out = {a: 0, b: 0}
  valueLanes(text, nameSeed('x'), out)
  return out.a
}

describe('the kernel takes a column chunk only when its bytes are whole', () => {
  it('a dictionary index at the dictionary size is refused, one below it read (repeated and bit-packed runs)', () => {
    // bit width 1; a repeated run of 4 rows (header 4 << 1), then its value
    expect(kernelTakes([...DICT_AB, ...dataV2(4, [], [1, 8, 1])], 4)).toEqual(
      Int32Array.from([1, 1, 1, 1], () => laneOf('b')),
    )
    // bit width 2, so that 2 (the dictionary's size) can be written
    expect(kernelTakes([...DICT_AB, ...dataV2(4, [], [2, 8, 2])], 4)).toBeUndefined()
    // a bit-packed run (header 1 << 1 | 1: one group of 8 values), values 0 1 2 0 at 2 bits: 0b00100100
    expect(kernelTakes([...DICT_AB, ...dataV2(4, [], [2, 3, 0b00100100, 0])], 4)).toBeUndefined()
    expect(kernelTakes([...DICT_AB, ...dataV2(4, [], [2, 3, 0b00000100, 0])], 4)).toEqual(
      Int32Array.from([0, 1, 0, 0], (i) => laneOf(i === 1 ? 'b' : 'a')),
    )
    // eight rows, and eight bytes left in the page from the run on: the group is read as one word
    const word = (first: number) => dataV2(8, [], [2, 3, first, 0, 0, 0, 0, 0, 0, 0])
    expect(kernelTakes([...DICT_AB, ...word(0b00100100)], 8)).toBeUndefined()
    expect(kernelTakes([...DICT_AB, ...word(0b00000100)], 8)).toEqual(
      Int32Array.from({length: 8}, (_, i) => laneOf(i === 1 ? 'b' : 'a')),
    )
  })

  it('a value its levels place past the end of its page is given back when read back', () => {
    // levels say all 4 rows hold a value, the page holds two (16 bytes)
    const chunk = int64Chunk([7, 9])
    const kernel = ParquetKernel.get()!
    expect(valuesOf(kernel.pick(chunk, 4, Int32Array.from([0, 1])))).toEqual([7, 9])
    expect(kernel.pick(chunk, 4, Int32Array.from([3]))).toBeUndefined()
    expect(kernel.pick(chunk, 4, Int32Array.from([1, 2]))).toBeUndefined()
  })

  it('decoding into slots, a page past its values or holding more values than the rows is refused', () => {
    // the page above (levels: 4 values; 2 in the page), and one that holds all 4
    const kernel = ParquetKernel.get()!
    const whole = int64Chunk([7, 9, 11, 13])
    const got = kernel.slots(whole, 4)!
    expect([...got.slot]).toEqual([0, 1, 2, 3])
    expect([...got.num.subarray(0, got.size)]).toEqual([7, 9, 11, 13])
    expect(kernel.slots(whole, 3)).toBeUndefined() // 4 values, 3 rows
    expect(kernel.slots(whole, 3, false)).toBeUndefined()
    const short = int64Chunk([7, 9])
    expect(kernel.slots(short, 4)).toBeUndefined()
    // presence alone reads the levels, not the values (as readGroup's RowPresence)
    expect([...kernel.slots(short, 4, false)!.slot]).toEqual([0, 0, 0, 0])
  })

  it('a definition level above 1 is refused, whatever the run; levels of 0 and 1 read', () => {
    // levels: a repeated run of 4 rows at level 1
    expect(kernelTakes([...DICT_AB, ...dataV2(4, [8, 1], [1, 8, 0])], 4, true)).toEqual(
      Int32Array.from([1, 1, 1, 1], () => laneOf('a')),
    )
    expect(kernelTakes([...DICT_AB, ...dataV2(4, [8, 2], [1, 8, 0])], 4, true)).toBeUndefined()
    // rows 2 and 3 null: two runs, the second at level 0
    expect(kernelTakes([...DICT_AB, ...dataV2(4, [4, 1, 4, 0], [1, 4, 1])], 4, true)).toEqual(
      Int32Array.from([laneOf('b'), laneOf('b'), 0, 0]),
    )
  })

  it("a page header's field it does not know, a map or a list of 2^40 booleans, is refused at once, not looped over", () => {
    const data = dataV2(4, [], [1, 8, 1])
    // the dictionary page above with a field 4 between its sizes and its own header: a map of booleans to
    // booleans (kv 0x11) or a list of booleans (0xf1), 2^40 long, in a page of a few bytes
    const dictWith = (field: number[]) => [
      ...struct([
        [1, 2],
        [2, 10],
        [3, 10],
      ]).slice(0, -1),
      ...field,
      ((7 - 4) << 4) | 12,
      ...struct([
        [1, 2],
        [2, 0],
      ]),
      0,
      ...[1, 0, 0, 0, 0x61, 1, 0, 0, 0, 0x62],
    ]
    expect(kernelTakes([...dictWith([0x1b, ...varint(2 ** 40), 0x11]), ...data], 4)).toBeUndefined()
    expect(kernelTakes([...dictWith([0x19, 0xf1, ...varint(2 ** 40)]), ...data], 4)).toBeUndefined()
    // an empty map and a short list of booleans, a byte each, are skipped and the chunk read
    const read = Int32Array.from([1, 1, 1, 1], () => laneOf('b'))
    expect(kernelTakes([...dictWith([0x1b, 0x00]), ...data], 4)).toEqual(read)
    expect(kernelTakes([...dictWith([0x19, 0x21, 1, 2]), ...data], 4)).toEqual(read)
    expect(kernelTakes([...dictWith([0x1b, 0x02, 0x11, 1, 2, 2, 1]), ...data], 4)).toEqual(read)
  })

  it('a Snappy copy from offset 0, or past what is written, is refused', () => {
    const values = [1, 8, 1] // the data page's values, as above
    // a literal of the three bytes (tag (3 - 1) << 2), as Snappy writes them: taken
    const literal = [3, (3 - 1) << 2, ...values]
    const snappyPage = (body: number[]) => page(3, 8, v2(4, 0, true), body, 3)
    const dict = page(
      2,
      7,
      [
        [1, 2],
        [2, 0],
      ],
      [10, 36, ...[1, 0, 0, 0, 0x61, 1, 0, 0, 0, 0x62]],
      10,
    )
    expect(kernelTakes([...dict, ...snappyPage(literal)], 4, false, 'SNAPPY')).toEqual(
      Int32Array.from([1, 1, 1, 1], () => laneOf('b')),
    )
    // the same three bytes and a fourth (not read) copied: a copy-2 (tag 2) of length 1 from `offset` back
    const copied = (offset: number) => page(3, 8, v2(4, 0, true), [4, 2 << 2, ...values, 2, offset, 0], 4)
    expect(kernelTakes([...dict, ...copied(1)], 4, false, 'SNAPPY')).toEqual(
      Int32Array.from([1, 1, 1, 1], () => laneOf('b')),
    )
    expect(kernelTakes([...dict, ...copied(3)], 4, false, 'SNAPPY')).toBeDefined()
    expect(kernelTakes([...dict, ...copied(0)], 4, false, 'SNAPPY')).toBeUndefined()
    expect(kernelTakes([...dict, ...copied(4)], 4, false, 'SNAPPY')).toBeUndefined()
  })
})

/** An export a few bytes of which the damage tests change: dictionaries, plain values, nulls, booleans, dates. */
const damageable = Array.from({length: 300}, (_, i) => ({
  Fips: '06067',
  ServicePropertyID: i,
  APN: `A-${i % 50}`,
  FinalValue: i % 7 ? i * 2.5 : null,
  City: `c${i % 9}`,
  FHAEligible: i % 3 === 0,
  AssumableMortgage: i % 5 ? null : {RecordingDate: '2020-01-02', LoanType: 'FHA'},
}))
/** A byte of the pages (before `end`) and its new value: small values half the time (levels, indices, bit widths, lengths). */
const change = (end: number) =>
  fc.tuple(
    fc.integer({min: 4, max: end - 1}),
    fc.oneof(fc.integer({min: 0, max: 255}), fc.integer({min: 0, max: 9})),
  )

/** An sfl export of `damageable` (row groups of 60, pages of about 200 bytes) and where its pages end. */
async function damageableFile(compression: 'snappy' | 'none'): Promise<{whole: Buffer; end: number}> {
  const whole = readFileSync(await sflParquet(damageable, {rowGroupRows: 60, pageBytes: 200, compression}))
  // the pages only: a damaged footer is refused before any page is read
  return {whole, end: whole.length - 8 - whole.readUInt32LE(whole.length - 8)}
}

/** A copy of `whole` with `changes` made, in a file of its own: its path. */
function damagedCopy(whole: Buffer, changes: ReadonlyArray<[number, number]>): string {
  const bytes = Buffer.from(whole)
  for (const [at, v] of changes) bytes[at] = v
  const path = join(dir, `${n++}-damaged.parquet`)
  writeFileSync(path, bytes)
  return path
}

/** Whether the column reader opens `path` (a footer or schema damaged is refused before any page is read). */
async function opens(path: string): Promise<boolean> {
  try {
    ;(await ParquetColumns.open(path)).close()
    return true
  } catch {
    return false
  }
}

/** A side's scan, as entries by county; the error's message when it fails. */
async function scanOf(path: string): Promise<unknown> {
  const scratch = mkdtempSync(join(dir, 'scratch-'))
  try {
    const side = await scanSide({
      label: 'side',
      scratch,
      files: [{path, format: 'parquet'}],
      ignore: ['ValuationDate'],
    })
    return {
      bytes: side.bytes,
      groups: side.groups.map((g) => ({fips: g.fips, unkeyed: g.unkeyed, entries: [...loadEntries(g)]})),
    }
  } catch (error) {
    return {error: (error as Error).message}
  } finally {
    rmSync(scratch, {recursive: true, force: true})
  }
}

describe('a scan with the kernel finds what a scan without it finds', () => {
  it('takes chunks through the kernel on an sfl export, keys too, and the entries are the same without it', async () => {
    // keys of both ranks, some rows with neither (unkeyed), an empty APN (no key), the id missing
    const recs = Array.from({length: 500}, (_, i) => ({
      Fips: i % 2 ? '06067' : '48201',
      ServicePropertyID: i % 3 ? i : null,
      APN: i % 4 === 0 ? '' : i % 5 === 0 ? null : `A-${i % 70}`,
      FinalValue: i * 2.5,
      City: `c${i % 9}`,
    }))
    const path = await sflParquet(recs, {rowGroupRows: 100})
    const add = vi.spyOn(ParquetKernel.prototype, 'add')
    const withKernel = await scanOf(path)
    const taken = add.mock.calls.filter((_, i) => add.mock.results[i]!.value === true)
    expect(taken.map(([c]) => c.column.name)).toEqual(
      expect.arrayContaining(['ServicePropertyID', 'APN', 'City']),
    )
    expect((withKernel as {groups: Array<{unkeyed: number}>}).groups.some((g) => g.unkeyed > 0)).toBe(true)
    vi.spyOn(ParquetKernel, 'get').mockReturnValue(undefined)
    expect(await scanOf(path)).toEqual(withKernel)
  })

  // uncompressed pages too: there a changed byte is a changed level, index, length or value, not a Snappy
  // stream that no longer decodes
  it.each(['snappy', 'none'] as const)(
    'damaged files (%s; bytes changed anywhere in the pages): the same entries, or the same error, with and without it',
    async (compression) => {
      const {whole, end} = await damageableFile(compression)
      let compared = 0
      await fc.assert(
        fc.asyncProperty(fc.array(change(end), {minLength: 1, maxLength: 4}), async (changes) => {
          const path = damagedCopy(whole, changes)
          const withKernel = await scanOf(path)
          vi.spyOn(ParquetKernel, 'get').mockReturnValue(undefined)
          const without = await scanOf(path)
          vi.restoreAllMocks()
          expect(withKernel).toEqual(without)
          compared++
        }),
        {numRuns: 300},
      )
      expect(compared).toBe(300)
    },
  )
})

/** Every value picked, in order; undefined for a chunk given back. */
function valuesOf(p: PickedValues | undefined): ParquetCell[] | undefined {
  return p && Array.from({length: p.length}, (_, i) => p.at(i))
}

/**
 * Every column chunk of `path` read back at the rows `every` apart (from `from`) through the kernel, each
 * one taken checked against readRows (the JavaScript reader); the chunks given back are counted. When
 * readRows fails on a chunk the kernel took, the kernel was more lenient: the check fails. A group's
 * values are checked once all its chunks are picked, as the read-back uses them (a third or more of the
 * rows wanted: kept out of the kernel's memory, which the next pick overwrites, and made when asked).
 */
async function picksAgree(path: string, every: number, from = 0): Promise<Verdict> {
  const kernel = ParquetKernel.get()!
  const pq = await ParquetColumns.open(path)
  const verdict: Verdict = {taken: 0, given: new Set()}
  try {
    for (let g = 0; g < pq.groups.length; g++) {
      const rows = pq.groups[g]!.rows
      const want = Int32Array.from(
        {length: Math.max(0, Math.ceil((rows - from) / every))},
        (_, i) => from + i * every,
      )
      const picked = pq.chunks(g, pq.columns).map((chunk) => ({chunk, got: kernel.pick(chunk, rows, want)}))
      for (const {chunk, got} of picked) {
        if (!got) {
          verdict.given.add(chunk.column.name)
          continue
        }
        verdict.taken++
        expect(valuesOf(got), `${chunk.column.name}, group ${g}`).toEqual(
          pq.readRows(g, [chunk.column], want)[0],
        )
      }
    }
  } finally {
    pq.close()
  }
  return verdict
}

describe('the kernel reads rows back as readRows does', () => {
  it('files sfl writes: any rows of any column, every chunk taken', async () => {
    let taken = 0
    await fc.assert(
      fc.asyncProperty(
        ...sflFiles,
        fc.integer({min: 1, max: 7}),
        fc.nat(3),
        async (recs, pageBytes, rowGroupRows, every, from) => {
          const v = await picksAgree(await sflParquet(recs, {pageBytes, rowGroupRows}), every, from)
          expect(v.given).toEqual(new Set())
          taken += v.taken
        },
      ),
      {numRuns: 60},
    )
    expect(taken).toBeGreaterThan(1000)
  })

  it('rows far apart in long runs of levels (present and missing values mixed): every value as readRows', async () => {
    // wanted rows 50-200 apart in row groups of up to 1,500: the levels between two are counted by words
    let taken = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, {minLength: 300, maxLength: 1500}),
        fc.integer({min: 2_000, max: 200_000}),
        fc.integer({min: 50, max: 200}),
        fc.nat(49),
        async (recs, pageBytes, every, from) => {
          const path = await sflParquet(recs, {pageBytes, rowGroupRows: 1_500})
          const v = await picksAgree(path, every, from)
          expect(v.given).toEqual(new Set())
          taken += v.taken
        },
      ),
      {numRuns: 12},
    )
    expect(taken).toBeGreaterThan(100)
  })

  it('rows past the group, twice or out of order are given back (readRows decides)', async () => {
    const path = await sflParquet(damageable.slice(0, 50))
    const pq = await ParquetColumns.open(path)
    try {
      const [chunk] = pq.chunks(0, [pq.column('City')!])
      const kernel = ParquetKernel.get()!
      expect(valuesOf(kernel.pick(chunk!, 50, Int32Array.from([1, 49])))).toEqual(['c1', 'c4'])
      for (const want of [
        [1, 50],
        [3, 3],
        [4, 2],
      ])
        expect(kernel.pick(chunk!, 50, Int32Array.from(want))).toBeUndefined()
    } finally {
      pq.close()
    }
  })

  it.each(['snappy', 'uncompressed'])(
    'files DuckDB writes (%s): every chunk taken, every value as readRows',
    async (codec) => {
      const path = await duckFile(`COMPRESSION ${codec}, ROW_GROUP_SIZE 1000`)
      expect((await picksAgree(path, 13, 5)).given).toEqual(new Set())
      expect((await picksAgree(path, 1)).given).toEqual(new Set())
    },
  )

  it.each(['snappy', 'none'] as const)(
    'damaged files (%s): a chunk the kernel reads back, readRows reads back the same',
    async (compression) => {
      const {whole, end} = await damageableFile(compression)
      await fc.assert(
        fc.asyncProperty(
          fc.array(change(end), {minLength: 1, maxLength: 4}),
          fc.integer({min: 1, max: 9}),
          async (changes, every) => {
            const path = damagedCopy(whole, changes)
            if (await opens(path)) await picksAgree(path, every)
          },
        ),
        {numRuns: 300},
      )
    },
  )
})

/** `a` is `b`, value for value (Object.is); compared here first, as expect's deep equality is slow on long lists. */
function same(a: unknown[], b: unknown[], what: string): void {
  if (a.length !== b.length || a.some((x, i) => !Object.is(x, b[i]))) expect(a, what).toEqual(b)
}

/**
 * Every column chunk of `path` decoded into slots through the kernel, values and presence alone, each one
 * taken checked against readGroup (the JavaScript decoder): the same slot for each row, the same number of
 * slots, the same value in each (by cellOf); presence as readGroup's RowPresence marks it. When readGroup
 * fails on a chunk the kernel took, the kernel was more lenient: the check fails.
 */
async function slotsAgree(path: string): Promise<Verdict> {
  const kernel = ParquetKernel.get()!
  const pq = await ParquetColumns.open(path)
  const verdict: Verdict = {taken: 0, given: new Set()}
  try {
    for (let g = 0; g < pq.groups.length; g++) {
      const rows = pq.groups[g]!.rows
      for (const chunk of pq.chunks(g, pq.columns)) {
        const c = chunk.column
        const got = kernel.slots(chunk, rows)
        const marks = kernel.slots(chunk, rows, false)
        if (!got || !marks) {
          verdict.given.add(c.name)
          continue
        }
        verdict.taken++
        const what = `${c.name}, group ${g}`
        const [js] = pq.readGroup(g, [c])
        same([...got.slot], [...js!.slot.slice(0, rows)], what)
        const cells = (v: ColumnValues) => Array.from({length: v.size}, (_, s) => cellOf(v, s))
        same(cells(got), cells(js!), what)
        const mask = new Uint8Array(rows)
        pq.readGroup(g, [c], undefined, {columns: new Set([c.index]), mask})
        same(
          [...marks.slot].map((x) => (x >= 0 ? 1 : 0)),
          [...mask],
          what,
        )
        same([marks.size], [0], what)
      }
    }
  } finally {
    pq.close()
  }
  return verdict
}

describe('the kernel decodes a chunk into slots as readGroup does', () => {
  it('files sfl writes: every column, its values and its presence alone, every chunk taken', async () => {
    let taken = 0
    await fc.assert(
      fc.asyncProperty(...sflFiles, async (recs, pageBytes, rowGroupRows) => {
        const v = await slotsAgree(await sflParquet(recs, {pageBytes, rowGroupRows}))
        expect(v.given).toEqual(new Set())
        taken += v.taken
      }),
      {numRuns: 60},
    )
    expect(taken).toBeGreaterThan(1000)
  })

  it.each(['snappy', 'uncompressed'])(
    'files DuckDB writes (%s): every chunk taken, every slot as readGroup',
    async (codec) => {
      const path = await duckFile(`COMPRESSION ${codec}, ROW_GROUP_SIZE 1000`)
      const v = await slotsAgree(path)
      expect(v.given).toEqual(new Set())
      expect(v.taken).toBeGreaterThanOrEqual(14) // each of the 14 columns, in every row group
    },
  )

  it.each(['snappy', 'none'] as const)(
    'damaged files (%s): a chunk the kernel decodes, readGroup decodes the same',
    async (compression) => {
      const {whole, end} = await damageableFile(compression)
      await fc.assert(
        fc.asyncProperty(fc.array(change(end), {minLength: 1, maxLength: 4}), async (changes) => {
          const path = damagedCopy(whole, changes)
          if (await opens(path)) await slotsAgree(path)
        }),
        {numRuns: 300},
      )
    },
  )
})

describe('the module committed', () => {
  const kernel = join(import.meta.dirname, '..', '..', 'src', 'changes', 'kernel')

  it('was built from parquet-kernel.c as it is (npm run build:wasm after any change to it)', () => {
    const source = createHash('sha256')
      .update(readFileSync(join(kernel, 'parquet-kernel.c')))
      .digest('hex')
    expect(readFileSync(join(kernel, 'parquet-kernel.wasm.sha256'), 'utf8')).toBe(
      `${source}  parquet-kernel.c\n`,
    )
  })

  const clang = (() => {
    try {
      execFileSync('clang-14', ['--version'], {stdio: 'ignore'})
      execFileSync('wasm-ld-14', ['--version'], {stdio: 'ignore'})
      return true
    } catch {
      return false
    }
  })()
  it.runIf(clang || process.env.CI === 'true')(
    'is the bytes clang-14 builds from it (a reproducible build)',
    () => {
      const script = join(import.meta.dirname, '..', '..', 'scripts', 'build-wasm.mjs')
      expect(() => execFileSync(process.execPath, [script, '--check'], {stdio: 'pipe'})).not.toThrow()
    },
  )
})
