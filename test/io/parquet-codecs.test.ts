import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {DuckDBInstance} from '@duckdb/node-api'
import {describe, expect, it} from 'vitest'

import {ExportFileError, readExport, type FlatRecord} from '../../src/io/export-reader.js'
import {FileTarget} from '../../src/io/output.js'
import {
  compressorsFor,
  hasZstd,
  ParquetCodecError,
  type ParquetCompression,
} from '../../src/io/parquet-codecs.js'
import {readParquetRecords, type ParquetRecord} from '../../src/io/parquet-reader.js'
import {writeParquet} from '../../src/io/parquet-writer.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * Each compression sfl writes, checked by DuckDB (an independent reader): `parquet_metadata()` names the
 * codec of every column chunk and the rows of every row group as asked, and the values are the same
 * whatever the codec. sfl's own readers (the column reader behind sfl stats / sfl changes, and
 * hyparquet's general reader behind it) read every codec this Node can decompress, and say which Node
 * reads the rest.
 */
const tmp = () => tempDir('sfl-parquet-codecs-')

/** 2,500 records of varied shape: text with repeats (dictionaries), numbers, dates, nulls, an option object. */
function records(n: number): Array<Record<string, unknown>> {
  return Array.from({length: n}, (_, i) => ({
    Fips: i % 3 === 0 ? '06067' : '48201',
    ServicePropertyID: 30_000_000_000 + i,
    City: i % 11 === 0 ? null : ['Sacramento', 'Elk Grove', 'Ñandú 🏠', 'Houston'][i % 4],
    FinalValue: i % 13 === 0 ? null : 100_000 + ((i * 7919) % 900_000) + (i % 2) * 0.5,
    ConfidenceScore: i % 101,
    ValuationDate: `2026-${String((i % 12) + 1).padStart(2, '0')}-15T08:30:00`,
    FHAEligible: i % 5 === 0 ? null : i % 2 === 0,
    AssumableMortgage:
      i % 4 === 0
        ? null
        : {LoanType: ['FHA', 'VA', 'USDA'][i % 3], RecordingDate: '2012-11-13', TermMonths: 360},
  }))
}

const RECORDS = records(2500)

async function write(dir: string, compression: ParquetCompression, rowGroupRows: number): Promise<string> {
  const part = join(dir, 'part.ndjson')
  writeFileSync(part, RECORDS.map((r) => `${JSON.stringify(r)}\n`).join(''))
  const out = join(dir, `${compression}.parquet`)
  const target = await FileTarget.create(out, () => undefined)
  await writeParquet(target, [part], {compression, rowGroupRows})
  await target.commit()
  return out
}

/** What DuckDB says of a file: the codecs of its column chunks, the rows of its row groups, its rows. */
async function duck(
  path: string,
  withRows = true,
): Promise<{codecs: string[]; groups: number[]; rows: unknown[]}> {
  const db = await DuckDBInstance.create(':memory:')
  const c = await db.connect()
  try {
    const p = path.replace(/'/g, "''")
    const codecs = (
      await c.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata('${p}') ORDER BY 1`)
    ).getRows()
    const groups = (
      await c.runAndReadAll(
        `SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${p}') ORDER BY 1`,
      )
    ).getRows()
    const rows = withRows
      ? (
          await c.runAndReadAll(`SELECT * FROM read_parquet('${p}') ORDER BY ServicePropertyID`)
        ).getRowObjectsJson()
      : []
    return {codecs: codecs.map((r) => String(r[0])), groups: groups.map((r) => Number(r[1])), rows}
  } finally {
    c.closeSync()
    db.closeSync()
  }
}

async function ours(path: string): Promise<{general: ParquetRecord[]; columns: FlatRecord[]}> {
  const general: ParquetRecord[] = []
  for await (const r of readParquetRecords(path)) general.push(r)
  const columns: FlatRecord[] = []
  for await (const r of readExport(path)) columns.push(r)
  return {general, columns}
}

const CODEC = {snappy: 'SNAPPY', gzip: 'GZIP', brotli: 'BROTLI', none: 'UNCOMPRESSED', zstd: 'ZSTD'}

describe('Parquet compressions', () => {
  it('snappy, gzip, brotli and none: DuckDB reads each codec and the row groups asked, with the same values', async () => {
    const d = tmp()
    const seen = new Map<string, {rows: unknown[]; general: ParquetRecord[]; columns: FlatRecord[]}>()
    for (const c of ['snappy', 'gzip', 'brotli', 'none'] as const) {
      const path = await write(d, c, 1024)
      const m = await duck(path)
      expect(m.codecs).toEqual([CODEC[c]])
      expect(m.groups).toEqual([1024, 1024, 452])
      expect(m.rows).toHaveLength(2500)
      seen.set(c, {rows: m.rows, ...(await ours(path))})
    }
    const snappy = seen.get('snappy')!
    expect(snappy.general).toHaveLength(2500)
    expect(snappy.columns).toEqual(snappy.general)
    // a value that is easy to get wrong, read the same by DuckDB and by sfl
    expect(snappy.general[2]).toMatchObject({City: 'Ñandú 🏠', 'AssumableMortgage.LoanType': 'USDA'})
    for (const [c, got] of seen) {
      expect(got.rows, c).toEqual(snappy.rows)
      expect(got.general, c).toEqual(snappy.general)
      expect(got.columns, c).toEqual(snappy.general)
    }
    // and the codecs do compress: none is the largest file
    const size = (c: string) => readFileSync(join(d, `${c}.parquet`)).length
    for (const c of ['snappy', 'gzip', 'brotli']) expect(size(c)).toBeLessThan(size('none'))
  })

  it('the default row groups are 16,384 rows; another size gives groups of exactly that many', async () => {
    const d = tmp()
    const part = join(d, 'part.ndjson')
    writeFileSync(
      part,
      records(20_000)
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    )
    for (const [rows, want] of [
      [undefined, [16_384, 3616]],
      [4096, [4096, 4096, 4096, 4096, 3616]],
    ] as const) {
      const out = join(d, `g${rows ?? 'default'}.parquet`)
      const target = await FileTarget.create(out, () => undefined)
      await writeParquet(target, [part], {compression: 'gzip', rowGroupRows: rows})
      await target.commit()
      const m = await duck(out, false)
      expect(m.groups).toEqual(want)
      expect(m.codecs).toEqual(['GZIP'])
    }
  })

  it('zstd: written and read back where node:zlib has it (Node 22.15+), else refused in one line naming that Node', async () => {
    const d = tmp()
    // a zstd file DuckDB wrote: what a reader of this Node meets whatever wrote it
    const theirs = join(d, 'duck-zstd.parquet')
    const db = await DuckDBInstance.create(':memory:')
    const c = await db.connect()
    await c.run(
      `COPY (SELECT 'x' || (i % 7) AS City, i AS id FROM range(3000) t(i)) TO '${theirs}' (FORMAT parquet, COMPRESSION zstd)`,
    )
    c.closeSync()
    db.closeSync()
    if (hasZstd()) {
      const path = await write(d, 'zstd', 1024)
      const m = await duck(path)
      expect(m.codecs).toEqual(['ZSTD'])
      expect(m.groups).toEqual([1024, 1024, 452])
      const snappy = await duck(await write(d, 'snappy', 1024))
      expect(m.rows).toEqual(snappy.rows)
      const {general, columns} = await ours(path)
      expect(general).toHaveLength(2500)
      expect(columns).toEqual(general)
      const rows: FlatRecord[] = []
      for await (const r of readExport(theirs)) rows.push(r)
      expect(rows).toHaveLength(3000)
      expect(rows[10]).toEqual({City: 'x3', id: 10})
    } else {
      const line = `zstd needs Node 22.15 or later (node:zlib has no zstd in Node ${process.versions.node}); use --parquet-compression snappy, gzip or brotli, or run sfl on a newer Node`
      expect(() => compressorsFor('zstd')).toThrow(line)
      await expect(write(d, 'zstd', 1024)).rejects.toThrow(line)
      // the column reader leaves it to the general reader, which says which Node reads it
      const general = readParquetRecords(theirs)[Symbol.asyncIterator]().next()
      await expect(general).rejects.toThrow(ParquetCodecError)
      const viaExport = readExport(theirs)[Symbol.asyncIterator]().next()
      const error = (await viaExport.catch((e: unknown) => e)) as ExportFileError
      expect(error).toBeInstanceOf(ExportFileError)
      expect(error.message).toBe(
        `${theirs}: its columns are zstd-compressed, which needs Node 22.15 or later to read; this is Node ${process.versions.node}`,
      )
      // facts, not text, for the library and sfl mcp to word (src/io/export-source-words.ts)
      expect(error.facts).toEqual({
        topic: 'export-source',
        path: theirs,
        problem: {
          kind: 'codec-unavailable',
          codec: 'zstd',
          needs: 'Node 22.15 or later',
          node: process.versions.node,
        },
      })
    }
  })

  it('a gzip page whose header claims another length than it decompresses to is refused, not decoded', async () => {
    const d = tmp()
    const path = await write(d, 'gzip', 1024)
    const db = await DuckDBInstance.create(':memory:')
    const con = await db.connect()
    const [[start]] = (
      await con.runAndReadAll(
        `SELECT coalesce(dictionary_page_offset, data_page_offset) FROM parquet_metadata('${path}') WHERE row_group_id = 0 AND path_in_schema = 'City'`,
      )
    ).getRows() as unknown as [[bigint]]
    con.closeSync()
    db.closeSync()
    const bytes = readFileSync(path)
    const at = Number(start)
    // the page header in Thrift's compact protocol: field 1 (type, i32), then field 2, the uncompressed size
    expect([bytes[at], bytes[at + 2]]).toEqual([0x15, 0x15])
    // one more byte claimed (zigzag: +2 on the varint's low bits), the varint's length unchanged
    expect(bytes[at + 3]! & 0x7f).toBeLessThan(0x7e)
    bytes[at + 3] = bytes[at + 3]! + 2
    writeFileSync(path, bytes)
    const read = async () => {
      for await (const r of readExport(path)) void r
    }
    await expect(read()).rejects.toThrow(/not a readable Parquet file \(.*decompresses to \d+ bytes/)
  })

  it('a gzip or brotli page whose bytes were damaged is an error naming the file, never other values', async () => {
    for (const c of ['gzip', 'brotli'] as const) {
      const d = tmp()
      const path = await write(d, c, 1024)
      // the last bytes of the first column chunk: the end of its last compressed page (gzip's CRC and size)
      const db = await DuckDBInstance.create(':memory:')
      const con = await db.connect()
      const [[start, size]] = (
        await con.runAndReadAll(
          `SELECT coalesce(dictionary_page_offset, data_page_offset), total_compressed_size FROM parquet_metadata('${path}') WHERE row_group_id = 0 AND path_in_schema = 'City'`,
        )
      ).getRows() as unknown as [[bigint, bigint]]
      con.closeSync()
      db.closeSync()
      const bytes = readFileSync(path)
      const end = Number(start) + Number(size)
      for (let i = end - 6; i < end; i++) bytes[i] = bytes[i]! ^ 0x5a
      writeFileSync(path, bytes)
      const read = async () => {
        for await (const r of readExport(path)) void r
      }
      await expect(read(), c).rejects.toThrow(new RegExp(`^${path}: not a readable Parquet file \\(`))
      const general = async () => {
        for await (const r of readParquetRecords(path)) void r
      }
      await expect(general(), c).rejects.toThrow()
    }
  })
})
