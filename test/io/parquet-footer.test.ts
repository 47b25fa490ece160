import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import fc from 'fast-check'
import {parquetMetadata, type FileMetaData as HyparquetMetaData} from 'hyparquet'
import {describe, expect, it} from 'vitest'

import {FileTarget} from '../../src/io/output.js'
import {hasZstd, type ParquetCompression} from '../../src/io/parquet-codecs.js'
import {parseFooter, ParquetLayoutError, type FileMetaData} from '../../src/io/parquet-footer.js'
import {cellOf, ParquetColumns} from '../../src/io/parquet-reader.js'
import {writeParquet} from '../../src/io/parquet-writer.js'
import {duckdbScratch} from '../helpers/duckdb-scratch.js'

/**
 * The column reader's own footer reader (src/io/parquet-footer.ts) against hyparquet's `parquetMetadata`,
 * which read the footers before it: the same fields from every file the tests write (DuckDB's, sfl's,
 * hyparquet-writer's) and from footers written here field by field; and a footer damaged, cut short or
 * made hostile is a ParquetLayoutError, never another error and never a hang.
 */
const scratch = duckdbScratch('sfl-parquet-footer-')
const {dir} = scratch
let n = 0

/** A Parquet file's footer: its metadata alone, and with its last 8 bytes (as hyparquet takes it). */
function footerOf(path: string): {metadata: Uint8Array; whole: Uint8Array} {
  const b = readFileSync(path)
  const length = b.readUInt32LE(b.length - 8)
  return {metadata: b.subarray(b.length - 8 - length, b.length - 8), whole: b.subarray(b.length - 8 - length)}
}

/** hyparquet's reading of a footer, cut to the fields ours reads, its BigInts as numbers (an unset field undefined). */
function hyparquets(m: HyparquetMetaData): unknown {
  return {
    schema: m.schema.map((e) => ({
      name: e.name,
      type: e.type,
      repetition_type: e.repetition_type,
      num_children: e.num_children,
      converted_type: e.converted_type,
      // parquet.thrift names LogicalType's member 11 UNKNOWN; hyparquet, NULL
      logical_type: e.logical_type && {
        type: e.logical_type.type === 'NULL' ? 'UNKNOWN' : e.logical_type.type,
        ...('unit' in e.logical_type ? {unit: e.logical_type.unit} : {}),
      },
    })),
    row_groups: m.row_groups.map((g) => ({
      num_rows: Number(g.num_rows),
      columns: g.columns.map((c) => {
        const d = c.meta_data
        if (!d) return {}
        return {
          meta_data: {
            codec: d.codec,
            encodings: d.encodings,
            total_uncompressed_size: Number(d.total_uncompressed_size),
            total_compressed_size: Number(d.total_compressed_size),
            data_page_offset: Number(d.data_page_offset),
            dictionary_page_offset:
              d.dictionary_page_offset === undefined ? undefined : Number(d.dictionary_page_offset),
          },
        }
      }),
    })),
  }
}

/** Ours and hyparquet's readings of `path`'s footer are the same (toEqual: an unset field is undefined). */
function expectAsHyparquet(path: string): FileMetaData {
  const {metadata, whole} = footerOf(path)
  const ours = parseFooter(metadata)
  expect(ours).toEqual(hyparquets(parquetMetadata(whole)))
  return ours
}

async function duckdb(select: string, options = ''): Promise<string> {
  const path = join(dir, `${n++}.parquet`)
  await scratch.con.run(`COPY (${select}) TO '${path}' (FORMAT parquet${options ? `, ${options}` : ''})`)
  return path
}

async function sfl(compression: ParquetCompression, rows = 300, groupRows = 64): Promise<string> {
  const part = join(dir, `${n++}.ndjson`)
  const recs = Array.from({length: rows}, (_, i) => ({
    Fips: '06067',
    ServicePropertyID: 30_000_000_000 + i,
    City: i % 7 ? `c${i % 5}` : null,
    FinalValue: i % 3 ? i * 1.5 : null,
    FHAEligible: i % 4 === 0,
    ValuationDate: '2026-10-02T13:45:07',
    AssumableMortgage: i % 2 ? {LoanType: 'FHA', RecordingDate: '2022-05-12'} : null,
  }))
  writeFileSync(part, recs.map((r) => `${JSON.stringify(r)}\n`).join(''))
  const path = join(dir, `${n++}.parquet`)
  const target = await FileTarget.create(path, () => undefined)
  await writeParquet(target, [part], {compression, rowGroupRows: groupRows})
  await target.commit()
  return path
}

const SELECT = `SELECT i AS id, CASE WHEN i % 5 = 0 THEN NULL ELSE 'x' || (i % 7) END AS s,
  CASE WHEN i % 3 = 0 THEN NULL ELSE (i * 1.5)::DOUBLE END AS d, i % 2 = 0 AS b,
  DATE '2024-01-01' + i::INTEGER AS dt, TIMESTAMP '2024-01-01 10:00:00' + INTERVAL (i) SECOND AS ts,
  'ünïcode ' || i AS u FROM range(3000) t(i)`

/** Every flat type DuckDB writes: each physical type, converted types, TIME and TIMESTAMP in each unit, UUID, a NULL column. */
const EVERY_TYPE = `SELECT i % 2 = 0 AS bo, (i % 100)::TINYINT AS ti, i::SMALLINT AS si, i::INTEGER AS it,
  i::BIGINT AS bi, (i % 200)::UTINYINT AS uti, i::USMALLINT AS usi, i::UINTEGER AS ui, i::UBIGINT AS ubi, i::FLOAT AS fl, i::DOUBLE AS db,
  'x' || i AS vc, ('b' || i)::BLOB AS bl, DATE '2024-01-01' + i::INTEGER AS dt, TIME '10:00:00' AS tm,
  TIMESTAMP '2024-01-01 10:00:00' AS ts, TIMESTAMP_MS '2024-01-01 10:00:00' AS tsms,
  TIMESTAMP_NS '2024-01-01 10:00:00' AS tsns, TIMESTAMPTZ '2024-01-01 10:00:00+00' AS tstz,
  INTERVAL (i) DAY AS iv, uuid() AS uu, NULL AS nu FROM range(2500) t(i)`

describe('the footer of each Parquet file the tests write, as hyparquet reads it', () => {
  it.each(['snappy', 'gzip', 'brotli', 'uncompressed', 'zstd', 'lz4'])(
    "DuckDB's (%s, two row groups)",
    async (codec) => {
      const path = await duckdb(SELECT, `COMPRESSION ${codec}, ROW_GROUP_SIZE 1000`)
      const footer = expectAsHyparquet(path)
      // DuckDB's row groups hold whole vectors of 2,048 rows
      expect(footer.row_groups.map((g) => g.num_rows)).toEqual([2048, 952])
    },
  )

  it("DuckDB's with every flat type it writes (integers signed and not, TIME and TIMESTAMP in each unit, UUID, INTERVAL, NULL)", async () => {
    const footer = expectAsHyparquet(await duckdb(EVERY_TYPE))
    const type = (name: string) => footer.schema.find((e) => e.name === name)
    expect(type('tsns')?.logical_type).toEqual({type: 'TIMESTAMP', unit: 'NANOS'})
    expect(type('tm')?.logical_type).toEqual({type: 'TIME', unit: 'MICROS'})
    expect(type('uu')?.logical_type).toEqual({type: 'UUID'})
  })

  it.each((['snappy', 'gzip', 'brotli', 'none', 'zstd'] as const).filter((c) => c !== 'zstd' || hasZstd()))(
    "sfl's own (%s, five row groups)",
    async (compression) => {
      const footer = expectAsHyparquet(await sfl(compression))
      expect(footer.row_groups.map((g) => g.num_rows)).toEqual([64, 64, 64, 64, 44])
    },
  )

  it("hyparquet-writer's, with REQUIRED columns and logical types", async () => {
    const {parquetWriteBuffer} = await import('hyparquet-writer')
    const ids = Array.from({length: 2500}, (_, i) => i)
    const path = join(dir, `${n++}.parquet`)
    const buffer = parquetWriteBuffer({
      columnData: [
        {name: 'id', data: ids, type: 'INT32', nullable: false},
        {name: 's', data: ids.map((i) => `x${i % 3}`), type: 'STRING', nullable: false},
        {name: 'd', data: ids.map((i) => (i % 4 === 0 ? null : i * 1.5)), type: 'DOUBLE'},
        {name: 'ts', data: ids.map((i) => new Date(i * 1000)), type: 'TIMESTAMP'},
      ],
      rowGroupSize: 1000,
    })
    writeFileSync(path, new Uint8Array(buffer))
    expectAsHyparquet(path)
  })

  it('nested columns (a struct, a list, a map): as hyparquet reads them, and the column reader still refuses them as nested', async () => {
    for (const select of [
      `SELECT i AS id, {'a': i, 'b': 'x'} AS st FROM range(10) t(i)`,
      `SELECT i AS id, [i, i + 1] AS li FROM range(10) t(i)`,
      `SELECT i AS id, MAP {'k': i} AS ma FROM range(10) t(i)`,
    ]) {
      const path = await duckdb(select)
      const footer = expectAsHyparquet(path)
      expect(footer.schema.length).toBeGreaterThan(3)
      await expect(ParquetColumns.open(path)).rejects.toThrow(/^nested columns$/)
    }
  })

  it('DECIMAL columns (INT32, INT64, FIXED_LEN_BYTE_ARRAY): as hyparquet reads them, and each still refused by name', async () => {
    for (const [sql, refused] of [
      ['(i / 10)::DECIMAL(4,1)', 'the column d (INT32 DECIMAL)'],
      ['(i / 1000)::DECIMAL(18,3)', 'the column d (INT64 DECIMAL)'],
      ['(i / 100)::DECIMAL(30,2)', 'the column d (FIXED_LEN_BYTE_ARRAY DECIMAL)'],
    ]) {
      const path = await duckdb(`SELECT i AS id, ${sql} AS d FROM range(10) t(i)`)
      const footer = expectAsHyparquet(path)
      expect(footer.schema[2]).toMatchObject({converted_type: 'DECIMAL', logical_type: {type: 'DECIMAL'}})
      const error = await ParquetColumns.open(path).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ParquetLayoutError)
      expect((error as Error).message).toBe(refused)
    }
  })
})

// ---------------------------------------------------------------------------------------------------
// Footers written here, field by field (Thrift's compact protocol)

/** Just enough of a compact-protocol writer for the footers below; i64s as BigInts, so any can be written. */
class Compact {
  readonly out: number[] = []
  private readonly last = [0]

  varint(v: bigint): this {
    for (; v >= 0x80n; v >>= 7n) this.out.push(Number(v & 0x7fn) | 0x80)
    this.out.push(Number(v))
    return this
  }

  zigzag(v: bigint): this {
    return this.varint(v >= 0n ? v << 1n : (-v << 1n) - 1n)
  }

  /** A field's header: the id's delta from the last in the high nibble, or the id itself after. */
  field(id: number, type: number): this {
    const delta = id - this.last[this.last.length - 1]!
    this.last[this.last.length - 1] = id
    if (delta > 0 && delta < 16) {
      this.out.push((delta << 4) | type)
      return this
    }
    this.out.push(type)
    return this.zigzag(BigInt(id))
  }

  i32(id: number, v: number): this {
    return this.field(id, 5).zigzag(BigInt(v))
  }

  i64(id: number, v: bigint): this {
    return this.field(id, 6).zigzag(v)
  }

  bytes(s: string): this {
    const b = Buffer.from(s)
    this.varint(BigInt(b.length)).out.push(...b)
    return this
  }

  string(id: number, s: string): this {
    return this.field(id, 8).bytes(s)
  }

  /** A struct's fields, then its STOP. */
  body(fields: (w: this) => void): this {
    this.last.push(0)
    fields(this)
    this.last.pop()
    this.out.push(0)
    return this
  }

  struct(id: number, fields: (w: this) => void): this {
    return this.field(id, 12).body(fields)
  }

  /** A list of `type` (12: structs, each `item`'s fields; else `item` writes each value). */
  list<T>(id: number, type: number, items: T[], item: (w: this, x: T) => void): this {
    this.field(id, 9)
    if (items.length < 15) this.out.push((items.length << 4) | type)
    else {
      this.out.push(0xf0 | type)
      this.varint(BigInt(items.length))
    }
    for (const x of items) {
      if (type === 12) this.body((w) => item(w, x))
      else item(this, x)
    }
    return this
  }
}

interface Made {
  physical: number
  converted?: number
  /** LogicalType's member, and for 7 (TIME) and 8 (TIMESTAMP) TimeUnit's member. */
  logical?: [member: number, unit?: number]
  codec: number
  encodings: number[]
  sizes: [uncompressed: bigint, compressed: bigint, data: bigint, dictionary?: bigint]
  rows: bigint
  /** ColumnMetaData's fields left out. */
  without?: number[]
  /** Fields written first in FileMetaData (the fields the reader reads follow them). */
  extra?: (w: Compact) => void
}

/**
 * A footer of one leaf column `c` (under the root, `schema`) and one row group, with fields the column
 * reader skips in each struct (version, field_id, path_in_schema, num_values, key_value_metadata,
 * statistics, created_by...).
 */
function made(m: Made): {metadata: Uint8Array; whole: Uint8Array} {
  const w = new Compact().body((f) => {
    m.extra?.(f)
    f.i32(1, 2)
    f.list(2, 12, [0, 1], (e, i) => (i === 0 ? e.string(4, 'schema').i32(5, 1) : leaf(e, m)))
    f.i64(3, m.rows)
    f.list(4, 12, [0], (g) =>
      g
        .list(1, 12, [0], (c) => c.i64(2, 4n).struct(3, (d) => columnMetaData(d, m)))
        .i64(2, 100n)
        .i64(3, m.rows),
    )
    f.list(5, 12, ['a'], (kv, k) => kv.string(1, k).string(2, 'value'))
    f.string(6, 'tests')
  })
  const metadata = Uint8Array.from(w.out)
  const trailer = Buffer.alloc(8)
  trailer.writeUInt32LE(metadata.length, 0)
  trailer.write('PAR1', 4, 'latin1')
  return {metadata, whole: Buffer.concat([metadata, trailer])}
}

function leaf(e: Compact, m: Made): void {
  e.i32(1, m.physical).i32(3, 1).string(4, 'c')
  if (m.converted !== undefined) e.i32(6, m.converted)
  e.i32(9, 7) // field_id
  const [member, unit] = m.logical ?? []
  if (member === undefined) return
  e.struct(10, (lt) =>
    lt.struct(member, (t) => {
      if (unit !== undefined) t.field(1, 1).struct(2, (u) => u.struct(unit, () => undefined))
    }),
  )
}

function columnMetaData(d: Compact, m: Made): void {
  const has = (id: number) => !m.without?.includes(id)
  d.i32(1, m.physical)
  if (has(2)) d.list(2, 5, m.encodings, (e, x) => e.zigzag(BigInt(x)))
  d.list(3, 8, ['c'], (p, x) => p.bytes(x)) // path_in_schema
  if (has(4)) d.i32(4, m.codec)
  d.i64(5, m.rows)
  if (has(6)) d.i64(6, m.sizes[0])
  if (has(7)) d.i64(7, m.sizes[1])
  if (has(9)) d.i64(9, m.sizes[2])
  if (m.sizes[3] !== undefined) d.i64(11, m.sizes[3])
  d.list(8, 12, ['a', 'b'], (kv, k) => kv.string(1, k).string(2, 'value')) // key_value_metadata
  d.struct(12, (s) => s.i64(3, 0n).i64(4, 5n)) // statistics (min and max left out: hyparquet decodes them by type)
}

const PLAIN: Made = {physical: 2, codec: 1, encodings: [0, 3], sizes: [1000n, 500n, 4n], rows: 10n}

describe('footers written field by field, as hyparquet reads them', () => {
  it("every member of parquet.thrift's enums and of the LogicalType union", () => {
    const cases: Made[] = [
      ...Array.from({length: 8}, (_, physical) => ({...PLAIN, physical})),
      ...Array.from({length: 22}, (_, converted) => ({...PLAIN, converted})),
      ...Array.from({length: 8}, (_, codec) => ({...PLAIN, codec})),
      {...PLAIN, encodings: Array.from({length: 10}, (_, e) => e)},
      ...[1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15, 16, 17, 18].map(
        (member) => ({...PLAIN, logical: [member]}) as Made,
      ),
      ...[7, 8].flatMap((member) => [1, 2, 3].map((unit) => ({...PLAIN, logical: [member, unit]}) as Made)),
      {...PLAIN, sizes: [1000n, 500n, 104n, 4n]},
    ]
    for (const m of cases) {
      const {metadata, whole} = made(m)
      expect(
        parseFooter(metadata),
        JSON.stringify(m, (_, v: unknown) => String(v)),
      ).toEqual(hyparquets(parquetMetadata(whole)))
    }
  })

  it('a size, offset or row count is read exactly up to 2^53 - 1; past it, or negative, it is refused (no BigInt)', () => {
    const max = BigInt(Number.MAX_SAFE_INTEGER)
    const edges = [
      0n,
      1n,
      max - 1n,
      max,
      max + 1n,
      max + 2n,
      2n ** 63n - 1n,
      -1n,
      -max,
      -max - 1n,
      -(2n ** 63n),
    ]
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom(...edges), fc.bigInt({min: -(2n ** 63n), max: 2n ** 63n - 1n})),
        fc.integer({min: 0, max: 4}),
        (v, where) => {
          const sizes: Made['sizes'] = [1000n, 500n, 4n, 4n]
          const m = where === 4 ? {...PLAIN, sizes, rows: v} : {...PLAIN, sizes}
          if (where < 4) m.sizes[where] = v
          const {metadata} = made(m)
          if (v >= 0n && v <= max) {
            const meta = parseFooter(metadata).row_groups[0]!
            const read = [
              meta.columns[0]!.meta_data!.total_uncompressed_size,
              meta.columns[0]!.meta_data!.total_compressed_size,
              meta.columns[0]!.meta_data!.data_page_offset,
              meta.columns[0]!.meta_data!.dictionary_page_offset,
              meta.num_rows,
            ]
            expect(read[where]).toBe(Number(v))
          } else expect(() => parseFooter(metadata)).toThrow(v < 0n && v >= -max ? /negative/ : /past 2\^53/)
        },
      ),
      {numRuns: 500},
    )
  })

  it.each([2, 4, 6, 7, 9])('a column chunk without a field parquet.thrift requires (%i) is refused', (id) => {
    expect(parseFooter(made(PLAIN).metadata).row_groups).toHaveLength(1)
    expect(() => parseFooter(made({...PLAIN, without: [id]}).metadata)).toThrow(
      'a column chunk metadata without a field parquet.thrift requires',
    )
  })
})

describe("fields parquet.thrift may gain, of each of the compact protocol's types", () => {
  it('are skipped whole: a list of booleans a byte each, a set, a map, a double, a struct in a struct', () => {
    const extra = (w: Compact) => {
      w.field(20, 1).field(21, 2) // booleans, in their types
      w.field(22, 3).out.push(0xff) // a byte
      w.i32(23, -5)
        .i64(24, 2n ** 62n)
        .field(25, 4)
        .zigzag(300n) // i32, i64, i16
      w.field(26, 7).out.push(...new Uint8Array(new Float64Array([1.5]).buffer)) // a double
      w.field(27, 9).out.push(0x31, 1, 0, 1) // list<bool> of 3, a byte each
      w.field(28, 10).out.push(0x25, 2, 4) // set<i32> {1, 2}
      w.field(29, 11).varint(2n).out.push(0x81, 1, 0x61, 1, 0, 0) // map<binary, bool> {a: true, '': false}
      w.field(30, 11).varint(0n) // an empty map: no types byte
      w.struct(31, (s) => s.struct(1, (t) => t.string(2, 'x').field(3, 9).out.push(0x0c))) // an empty list of structs
    }
    const plain = parseFooter(made(PLAIN).metadata)
    expect(parseFooter(made({...PLAIN, extra}).metadata)).toEqual(plain)
    // a field the footer reads is refused when of another type than parquet.thrift's (the row groups, as a string)
    expect(() => parseFooter(made({...PLAIN, extra: (w) => w.string(4, 'x')}).metadata)).toThrow(
      'the row groups of Thrift type 8 in the footer',
    )
  })
})

// ---------------------------------------------------------------------------------------------------
// Damage and hostility

/**
 * What parsing `b` does: 'parsed' (into a footer whose every field set is defined, each size, offset and
 * row count a whole number from 0 to 2^53 - 1), 'refused' (a ParquetLayoutError), or what went wrong.
 */
function outcome(b: Uint8Array): string {
  let footer: FileMetaData
  try {
    footer = parseFooter(b)
  } catch (error) {
    return error instanceof ParquetLayoutError ? 'refused' : String(error)
  }
  return malformed(footer) ?? 'parsed'
}

function malformed(f: FileMetaData): string | undefined {
  const unset = (o: object) => Object.entries(o).find(([, v]) => v === undefined)?.[0]
  const counts = (ns: Array<number | undefined>) =>
    ns.find((v) => v !== undefined && !(Number.isSafeInteger(v) && v >= 0))
  for (const e of f.schema) {
    const k = typeof e.name === 'string' ? (unset(e) ?? (e.logical_type && unset(e.logical_type))) : 'name'
    if (k) return `a schema element's ${k} unset`
  }
  for (const g of f.row_groups)
    for (const {meta_data: m} of g.columns) {
      if (!m) continue
      const k = unset(m) ?? (m.encodings.some((e) => typeof e !== 'string') ? 'encoding' : undefined)
      if (k) return `a column chunk's ${k} unset`
      const {total_uncompressed_size: u, total_compressed_size: c, data_page_offset: d} = m
      const bad = counts([g.num_rows, u, c, d, m.dictionary_page_offset])
      if (bad !== undefined) return `a count of ${bad}`
    }
  return undefined
}

describe('a damaged or hostile footer', () => {
  it('bytes changed anywhere in real footers: each parses, or is a ParquetLayoutError; never another error', async () => {
    const footers = [
      footerOf(await duckdb(EVERY_TYPE, 'ROW_GROUP_SIZE 1000')).metadata,
      footerOf(await sfl('snappy')).metadata,
    ]
    const byte = fc.oneof(
      fc.integer({min: 0, max: 255}),
      // a STOP, varints' continuation bits, and headers of lists and structs (the lengths and nesting a parser trusts)
      fc.constantFrom(0x00, 0x7f, 0x80, 0xff, 0x19, 0x1c, 0x29, 0xf9, 0xfc, 0xf8, 0x18, 0x16),
    )
    fc.assert(
      fc.property(
        fc.constantFrom(...footers),
        fc.array(fc.record({at: fc.nat(), to: byte}), {minLength: 1, maxLength: 4}),
        // cut short one time in five (every cut is tried below)
        fc.oneof({arbitrary: fc.constant(undefined), weight: 4}, {arbitrary: fc.nat(), weight: 1}),
        (footer, edits, cut) => {
          const b = Uint8Array.from(footer)
          for (const {at, to} of edits) b[at % b.length] = to
          expect(outcome(cut === undefined ? b : b.subarray(0, cut % b.length))).toMatch(/^(parsed|refused)$/)
        },
      ),
      {numRuns: 4000},
    )
  }, 20_000)

  it('a real footer cut short at any byte is refused', async () => {
    const {metadata} = footerOf(await duckdb(EVERY_TYPE))
    expect(outcome(metadata)).toBe('parsed')
    for (let cut = 0; cut < metadata.length; cut++)
      expect(outcome(metadata.subarray(0, cut)), `${cut}`).toBe('refused')
  })

  it('a file whose footer is damaged opens, or is refused with a ParquetLayoutError (the column reader then leaves it to the record reader)', async () => {
    const path = await sfl('none', 100, 40)
    const whole = readFileSync(path)
    const {metadata} = footerOf(path)
    const from = whole.length - 8 - metadata.length
    const damaged = join(dir, `${n++}-damaged.parquet`)
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({at: fc.nat(), to: fc.integer({min: 0, max: 255})}), {minLength: 1, maxLength: 3}),
        async (edits) => {
          const b = Buffer.from(whole)
          for (const {at, to} of edits) b[from + (at % metadata.length)] = to
          writeFileSync(damaged, b)
          const opened = await ParquetColumns.open(damaged).then(
            (f) => f.close(),
            (e: unknown) => e,
          )
          if (opened !== undefined) expect(opened).toBeInstanceOf(ParquetLayoutError)
        },
      ),
      {numRuns: 300},
    )
  })

  it('structs or lists nested thousands deep are refused at depth 32, not recursed into until the stack overflows', () => {
    // field 1 a struct, whose field 1 is a struct...; and field 1 a list of one list of one list...
    const structs = Uint8Array.from([...Array<number>(100_000).fill(0x1c), ...Array<number>(100_000).fill(0)])
    const lists = Uint8Array.from([0x19, ...Array<number>(100_000).fill(0x19), 0x15, 0x00, 0x00])
    expect(() => parseFooter(structs)).toThrow('the footer nested deeper than 32')
    expect(() => parseFooter(lists)).toThrow('the footer nested deeper than 32')
  })

  it('a list, a set or a map longer than the bytes left is refused before any element is read', () => {
    const big = [0x80, 0x80, 0x80, 0x80, 0x80, 0x20] // a varint, 2^40
    // the schema (field 2), a list of structs; a field 1 the reader skips, a set of i32s; one, a map
    expect(() => parseFooter(Uint8Array.from([0x29, 0xfc, ...big, 0x00]))).toThrow(
      'a list longer than the footer',
    )
    expect(() => parseFooter(Uint8Array.from([0x1a, 0xf5, ...big, 0x00]))).toThrow(
      'a list longer than the footer',
    )
    expect(() => parseFooter(Uint8Array.from([0x1b, ...big, 0x55, 0x00]))).toThrow(
      'a map longer than the footer',
    )
  })

  it('a string longer than the bytes left is refused, read or skipped', () => {
    const {metadata} = made(PLAIN)
    // the root's name, 'schema' (field 4, length 6), given a length past the footer's end
    const b = Buffer.from(metadata)
    const at = b.indexOf(Buffer.from([0x48, 0x06]))
    b[at + 1] = 0x7f
    expect(outcome(b.subarray(0, at + 40))).toBe('refused')
    // said as such, before its bytes are taken (a view past the end would only be cut short, silently)
    expect(() => parseFooter(b.subarray(0, at + 40))).toThrow('a string longer than the footer')
    // and a string the reader skips (a field 1, its length past the end), in a struct it skips too
    expect(() => parseFooter(Uint8Array.from([0x18, 0x7f, 0x00]))).toThrow('a string longer than the footer')
    expect(() => parseFooter(Uint8Array.from([0x1c, 0x18, 0x7f, 0x00]))).toThrow(
      'a string longer than the footer',
    )
  })

  it('a Thrift type the compact protocol does not have is refused', () => {
    // field 1 of type 13 (the compact protocol's types end at 12 in parquet.thrift's use)
    expect(() => parseFooter(Uint8Array.from([0x1d, 0x00]))).toThrow('a Thrift type 13 in the footer')
  })

  it("a page header's field the reader does not know, a list of 2^40 booleans, is refused at once, not looped over", async () => {
    const path = await sfl('none', 40, 40)
    const before = await ParquetColumns.open(path)
    const city = before.column('City')!
    const [chunk] = before.chunks(0, [city])
    const start = Number(chunk!.meta.dictionary_page_offset ?? chunk!.meta.data_page_offset)
    before.close()
    // the first DATA_PAGE_V2 header ends with repetition_levels_byte_length 0 (field 6: 0x15 0x00) and two
    // STOPs; made a field 10 (delta 4), a list of booleans (0xf1) of length 2^40 - 1, over the page's bytes
    const bytes = readFileSync(path)
    const at = bytes.indexOf(Buffer.from([0x15, 0x00, 0x00, 0x00]), start)
    expect(at).toBeGreaterThan(start)
    Buffer.from([0x49, 0xf1, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f]).copy(bytes, at)
    writeFileSync(path, bytes)
    const file = await ParquetColumns.open(path)
    try {
      expect(() => file.readGroup(0, [file.column('City')!])).toThrow('a list longer than a page header')
      expect(() => file.readRows(0, [file.column('City')!], Int32Array.from([0]))).toThrow(ParquetLayoutError)
      // the other columns are whole
      const [fips] = file.readGroup(0, [file.column('Fips')!])
      expect(cellOf(fips!, fips!.slot[0]!)).toBe('06067')
    } finally {
      file.close()
    }
  })
})
