import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import * as zlib from 'node:zlib'

import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {readExport} from '../../src/io/export-reader.js'
import {FileTarget} from '../../src/io/output.js'
import {
  cellOf,
  ParquetColumns,
  ParquetLayoutError,
  readParquetRecords,
  pagesLookWhole,
  type ParquetRecord,
} from '../../src/io/parquet-reader.js'
import {writeParquet} from '../../src/io/parquet-writer.js'
import {duckdbScratch} from '../helpers/duckdb-scratch.js'

/**
 * The column reader (ParquetColumns) against two independent readers: DuckDB, for files DuckDB writes
 * (data pages v1, its own dictionary choices, every codec it offers), and hyparquet's general reader for
 * files sfl writes (data pages v2, Snappy). Every value of every row must agree, whole groups and picked rows.
 */
const scratch = duckdbScratch('sfl-parquet-reader-')
const {dir} = scratch
let n = 0

/** Every record of a file through the column reader, a row group at a time. */
async function byColumns(path: string): Promise<ParquetRecord[]> {
  const pq = await ParquetColumns.open(path)
  try {
    const out: ParquetRecord[] = []
    for (let g = 0; g < pq.groups.length; g++) {
      const values = pq.readGroup(g, pq.columns)
      for (let r = 0; r < pq.groups[g]!.rows; r++)
        out.push(Object.fromEntries(values.map((v) => [v.column.name, cellOf(v, v.slot[r]!)])))
    }
    return out
  } finally {
    pq.close()
  }
}

/** The same rows picked a few at a time (readRows), group by group. */
async function picked(path: string, every: number): Promise<Array<[number, ParquetRecord]>> {
  const pq = await ParquetColumns.open(path)
  try {
    const out: Array<[number, ParquetRecord]> = []
    for (let g = 0; g < pq.groups.length; g++) {
      const {first, rows} = pq.groups[g]!
      const want = Int32Array.from({length: Math.ceil(rows / every)}, (_, i) => i * every)
      const values = pq.readRows(g, pq.columns, want)
      want.forEach((r, i) =>
        out.push([first + r, Object.fromEntries(pq.columns.map((c, ci) => [c.name, values[ci]![i]!]))]),
      )
    }
    return out
  } finally {
    pq.close()
  }
}

/**
 * For every column of every group: read for presence only (RowPresence), the rows marked are those whose
 * slot a full read gives (a value, not null); the values are left undecoded.
 */
async function presenceAgrees(path: string): Promise<void> {
  const pq = await ParquetColumns.open(path)
  try {
    for (let g = 0; g < pq.groups.length; g++) {
      const rows = pq.groups[g]!.rows
      const full = pq
        .readGroup(g, pq.columns)
        .map((v) => Uint8Array.from(v.slot.subarray(0, rows), (s) => (s >= 0 ? 1 : 0)))
      for (const c of pq.columns) {
        const mask = new Uint8Array(rows)
        const [v] = pq.readGroup(g, [c], undefined, {columns: new Set([c.index]), mask})
        expect(v!.size, c.name).toBe(0)
        expect(mask, `${c.name} in group ${g}`).toEqual(full[c.index])
      }
    }
  } finally {
    pq.close()
  }
}

const SELECT = `SELECT i AS id, CASE WHEN i % 5 = 0 THEN NULL ELSE 'x' || (i % 7) END AS s,
  CASE WHEN i % 3 = 0 THEN NULL ELSE (i * 1.5)::DOUBLE END AS d, i % 2 = 0 AS b,
  DATE '2024-01-01' + i::INTEGER AS dt, TIMESTAMP '2024-01-01 10:00:00' + INTERVAL (i) SECOND AS ts,
  'ünïcode ' || i AS u FROM range(3000) t(i)`

describe('the Parquet column reader', () => {
  it.each(['snappy', 'gzip', 'brotli', 'uncompressed'])(
    'a file DuckDB wrote (%s, data pages v1): every value as DuckDB reads it',
    async (codec) => {
      const path = join(dir, `${n++}-${codec}.parquet`)
      await scratch.con.run(
        `COPY (${SELECT}) TO '${path}' (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE 1000)`,
      )
      const expected = (
        await scratch.con.runAndReadAll(
          `SELECT id, s, d, b, strftime(dt, '%Y-%m-%d') AS dt, strftime(ts, '%Y-%m-%dT%H:%M:%S') AS ts, u FROM '${path}' ORDER BY id`,
        )
      )
        .getRowObjectsJson()
        .map((r) => ({...r, id: Number(r['id'])}))
      const got = await byColumns(path)
      expect(got).toHaveLength(3000)
      expect(got).toEqual(expected)
      // the export reader reads it through the column reader too
      const viaExport = []
      for await (const r of readExport(path)) viaExport.push(r)
      expect(viaExport).toEqual(expected)
      for (const [row, rec] of await picked(path, 97)) expect(rec).toEqual(expected[row])
      // the side check's look at the first pages takes every codec's bodies as whole
      expect(await pagesLookWhole(path)).toBe(true)
      await presenceAgrees(path)
    },
  )

  it('presence only (RowPresence) of REQUIRED columns (no definition levels): every row', async () => {
    const {parquetWriteBuffer} = await import('hyparquet-writer')
    const path = join(dir, `${n++}-required.parquet`)
    const ids = Array.from({length: 2500}, (_, i) => i)
    const buffer = parquetWriteBuffer({
      columnData: [
        {name: 'id', data: ids, type: 'INT32', nullable: false},
        {name: 's', data: ids.map((i) => `x${i % 3}`), type: 'STRING', nullable: false},
        {name: 'd', data: ids.map((i) => (i % 4 === 0 ? null : i * 1.5)), type: 'DOUBLE'},
      ],
      rowGroupSize: 1000,
    })
    writeFileSync(path, new Uint8Array(buffer))
    const pq = await ParquetColumns.open(path)
    try {
      expect(pq.columns.map((c) => [c.name, c.optional])).toEqual([
        ['id', false],
        ['s', false],
        ['d', true],
      ])
    } finally {
      pq.close()
    }
    await presenceAgrees(path)
  })

  it('zstd: read when node:zlib has it, else left to the record reader (a ParquetLayoutError)', async () => {
    const path = join(dir, `${n++}-zstd.parquet`)
    await scratch.con.run(`COPY (${SELECT}) TO '${path}' (FORMAT parquet, COMPRESSION zstd)`)
    if ('zstdDecompressSync' in zlib) expect(await byColumns(path)).toHaveLength(3000)
    else await expect(ParquetColumns.open(path)).rejects.toThrow(ParquetLayoutError)
  })

  it('a page header field the reader does not know, of type binary, is skipped whole (its length too)', async () => {
    const part = join(dir, `${n++}-part.ndjson`)
    writeFileSync(
      part,
      Array.from({length: 20}, (_, i) => `${JSON.stringify({Fips: '06067', City: `c${i}`})}\n`).join(''),
    )
    const path = join(dir, `${n++}-v2.parquet`)
    const target = await FileTarget.create(path, () => undefined)
    await writeParquet(target, [part], {compression: 'none'})
    await target.commit()
    const before = await byColumns(path)
    // the first data page header (DATA_PAGE_V2, field 8) ends with repetition_levels_byte_length 0 (field 6:
    // 0x15 0x00) and two stops; made a binary field 9 of length 0 (0x48 0x00), which a reader must skip
    const bytes = readFileSync(path)
    const at = bytes.indexOf(Buffer.from([0x15, 0x00, 0x00, 0x00]), 4)
    expect(at).toBeGreaterThan(0)
    bytes[at] = 0x48
    writeFileSync(path, bytes)
    expect(await byColumns(path)).toEqual(before)
  })

  it('a damaged page is read the same way, or refused, by a whole read and by picked rows', async () => {
    const part = join(dir, `${n++}-part.ndjson`)
    // runs of one value (repeated runs of the hybrid: levels, indices, booleans) and mixed stretches
    const recs = Array.from({length: 200}, (_, i) => ({
      Fips: '06067',
      City: i < 100 ? `c${Math.floor(i / 25)}` : `c${i % 5}`,
      FinalValue: i % 50 < 20 ? null : i % 4 ? i * 1.5 : null,
      FHAEligible: i < 120 ? i < 60 : i % 3 === 0,
    }))
    writeFileSync(part, recs.map((r) => `${JSON.stringify(r)}\n`).join(''))
    const path = join(dir, `${n++}-plain.parquet`)
    const target = await FileTarget.create(path, () => undefined)
    await writeParquet(target, [part], {compression: 'none', rowGroupRows: 50, pageBytes: 100})
    await target.commit()
    const whole = readFileSync(path)
    const end = whole.length - 8 - whole.readUInt32LE(whole.length - 8)
    const outcome = (f: () => unknown) => {
      try {
        return f()
      } catch (error) {
        return (error as Error).message
      }
    }
    // every byte of the pages that is 0 or 1 (a level, a boolean, a small index or count) given a bit more:
    // a value with a bit past its run's width among them
    let tried = 0
    for (let at = 4; at < end; at++) {
      if (whole[at]! > 1) continue
      const bytes = Buffer.from(whole)
      bytes[at] = whole[at]! + 2
      const damaged = join(dir, `${n++}-damaged.parquet`)
      writeFileSync(damaged, bytes)
      const pq = await ParquetColumns.open(damaged)
      try {
        for (let g = 0; g < pq.groups.length; g++)
          for (const c of pq.columns) {
            // the chunk that holds the byte changed
            const m = pq.metadata.row_groups[g]!.columns[c.index]!.meta_data!
            const from = Number(m.dictionary_page_offset ?? m.data_page_offset)
            if (at < from || at >= from + Number(m.total_compressed_size)) continue
            const rows = pq.groups[g]!.rows
            const full = outcome(() => {
              const [v] = pq.readGroup(g, [c])
              return Array.from({length: rows}, (_, r) => cellOf(v!, v!.slot[r]!))
            })
            const picked = outcome(
              () =>
                pq.readRows(
                  g,
                  [c],
                  Int32Array.from({length: rows}, (_, r) => r),
                )[0],
            )
            // a value both read must be one value; a page one refuses, the other may not reach
            if (Array.isArray(full) && Array.isArray(picked))
              expect(picked, `byte ${at}: ${c.name}`).toEqual(full)
          }
      } finally {
        pq.close()
      }
      tried++
    }
    expect(tried).toBeGreaterThan(100)
  })

  it('a DATA_PAGE_V2 whose levels run past its body is refused, by the whole read and the picked one', async () => {
    const part = join(dir, `${n++}-part.ndjson`)
    const recs = Array.from({length: 40}, (_, i) => ({Fips: '06067', City: i % 3 ? null : `c${i % 4}`}))
    writeFileSync(part, recs.map((r) => `${JSON.stringify(r)}\n`).join(''))
    const path = join(dir, `${n++}-v2.parquet`)
    const target = await FileTarget.create(path, () => undefined)
    await writeParquet(target, [part], {compression: 'none'})
    await target.commit()
    const pq = await ParquetColumns.open(path)
    const [chunk] = pq.chunks(0, [pq.column('City')!])
    const start = Number(chunk!.meta.dictionary_page_offset ?? chunk!.meta.data_page_offset)
    pq.close()
    // the chunk's pages: each header's compressed_page_size (field 3, a one-byte zigzag varint here) found
    // by walking Thrift's compact protocol, the data page's set to 1 byte, less than its levels' length
    const b = chunk!.bytes
    let pos = 0
    let sizeAt = -1
    while (sizeAt < 0 && pos < b.length) {
      let type = -1
      let size = 0
      let at = -1
      const varint = () => {
        let v = 0
        for (let shift = 0; ; shift += 7) {
          const c = b[pos++]!
          v += (c & 0x7f) * 2 ** shift
          if (c < 0x80) return v
        }
      }
      const struct = (top: boolean): void => {
        let last = 0
        for (;;) {
          const h = b[pos++]!
          if ((h & 15) === 0) return
          last = h >> 4 ? last + (h >> 4) : varint()
          const t = h & 15
          if (t === 12) struct(false)
          else if (t === 5 || t === 6) {
            if (top && last === 3) at = pos
            const v = varint() / 2
            if (top && last === 1) type = v
            if (top && last === 3) size = v
          } else if (t === 8) pos += varint()
        }
      }
      struct(true)
      if (type === 3) sizeAt = at
      else pos += size
    }
    expect(sizeAt).toBeGreaterThan(0)
    const bytes = readFileSync(path)
    bytes[start + sizeAt] = 2 // zigzag 1
    writeFileSync(path, bytes)
    const damaged = await ParquetColumns.open(path)
    try {
      const city = damaged.column('City')!
      expect(() => damaged.readGroup(0, [city])).toThrow('levels longer than their page')
      expect(() => damaged.readRows(0, [city], Int32Array.from([0, 3]))).toThrow(
        'levels longer than their page',
      )
    } finally {
      damaged.close()
    }
  })

  it('a nested column is left to the record reader, which still reads the file', async () => {
    const path = join(dir, `${n++}-struct.parquet`)
    await scratch.con.run(
      `COPY (SELECT i AS id, {'a': i} AS st FROM range(10) t(i)) TO '${path}' (FORMAT parquet)`,
    )
    await expect(ParquetColumns.open(path)).rejects.toThrow(/nested/)
    let count = 0
    for await (const r of readExport(path)) if (r['id'] === count) count++
    expect(count).toBe(10)
  })

  it('files sfl writes (data pages v2, Snappy): every value as hyparquet reads it, whole groups and picked rows', async () => {
    const value = fc.oneof(fc.constant(null), fc.string({maxLength: 6}), fc.constantFrom('', 'é', '06067'))
    const record = fc.record(
      {
        Fips: fc.constantFrom('06067', '48201'),
        ServicePropertyID: fc.integer({min: 1, max: 99_999_999_999}),
        City: value,
        FinalValue: fc.oneof(
          fc.constant(null),
          fc.double({noNaN: true, noDefaultInfinity: true}),
          fc.integer(),
        ),
        ConfidenceScore: fc.oneof(fc.constant(null), fc.integer({min: 0, max: 100})),
        FHAEligible: fc.oneof(fc.constant(null), fc.boolean()),
        ValuationDate: fc.constantFrom('2026-10-01T00:00:00', '2026-10-02T13:45:07', null),
        AssumableMortgage: fc.oneof(
          fc.constant(null),
          fc.record({
            LoanType: fc.constantFrom('FHA', 'VA'),
            RecordingDate: fc.constantFrom('2022-05-12', null),
          }),
        ),
      },
      {requiredKeys: ['Fips']},
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, {minLength: 1, maxLength: 300}),
        fc.integer({min: 1, max: 40}),
        async (recs, every) => {
          const part = join(dir, `${n++}.ndjson`)
          writeFileSync(part, recs.map((r) => `${JSON.stringify(r)}\n`).join(''))
          const path = join(dir, `${n++}.parquet`)
          const target = await FileTarget.create(path, () => undefined)
          await writeParquet(target, [part], {rowGroupRows: 64})
          await target.commit()
          const expected: ParquetRecord[] = []
          for await (const r of readParquetRecords(path)) expected.push(r)
          expect(await byColumns(path)).toEqual(expected)
          for (const [row, rec] of await picked(path, every)) expect(rec).toEqual(expected[row])
          await presenceAgrees(path)
        },
      ),
      {numRuns: 40},
    )
  })

  it('the first pages looked at, nothing decompressed (a side checked before a comparison): true for a whole file, false for a broken one', async () => {
    const path = join(dir, `${n++}-first.parquet`)
    await scratch.con.run(`COPY (${SELECT}) TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 1000)`)
    expect(await pagesLookWhole(path)).toBe(true)
    const bytes = readFileSync(path)
    // the first column chunk's page overwritten (its header and data), the footer intact
    const broken = join(dir, `${n++}-broken.parquet`)
    writeFileSync(broken, Buffer.concat([bytes.subarray(0, 4), Buffer.alloc(64, 0xff), bytes.subarray(68)]))
    expect(await pagesLookWhole(broken)).toBe(false)
    const truncated = join(dir, `${n++}-truncated.parquet`)
    writeFileSync(truncated, bytes.subarray(0, bytes.length >> 1))
    expect(await pagesLookWhole(truncated)).toBe(false)
    expect(await pagesLookWhole(join(dir, 'no-such.parquet'))).toBe(false)
  })
})

describe('a file opened again', () => {
  it('is read by the footer it has now: a file replaced between two opens is not taken for the one before', async () => {
    const path = join(dir, `${n++}-replaced.parquet`)
    await scratch.con.run(`COPY (SELECT i AS a, i * 2 AS b FROM range(5) t(i)) TO '${path}' (FORMAT parquet)`)
    const first = await ParquetColumns.open(path)
    first.close()
    expect(first.columns.map((c) => c.name)).toEqual(['a', 'b'])
    expect(first.rows).toBe(5)
    await scratch.con.run(
      `COPY (SELECT i AS a, 'x' AS b, i AS c FROM range(7) t(i)) TO '${path}' (FORMAT parquet)`,
    )
    const second = await ParquetColumns.open(path)
    try {
      expect(second.columns.map((c) => [c.name, c.kind])).toEqual([
        ['a', 'number'],
        ['b', 'string'],
        ['c', 'number'],
      ])
      expect(second.rows).toBe(7)
      expect(second.readGroup(0, [second.column('b')!])[0]!.size).toBeGreaterThan(0)
    } finally {
      second.close()
    }
    // and the same footer again, after others: the same reading
    const third = await ParquetColumns.open(path)
    third.close()
    expect(third.columns).toEqual(second.columns)
  })
})
