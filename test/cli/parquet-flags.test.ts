import * as zlib from 'node:zlib'

import {describe, expect, it} from 'vitest'

import {parquetOptions} from '../../src/cli/parquet-flags.js'
import {UsageError} from '../../src/errors.js'
import {hasZstd} from '../../src/io/parquet-codecs.js'

const yes = () => true
const no = () => false

describe('--parquet-compression and --parquet-row-group-size', () => {
  it('a Parquet run without them writes what sfl always wrote: snappy in groups of 16,384 rows', () => {
    expect(parquetOptions({}, 'parquet')).toEqual({compression: 'snappy', rowGroupRows: 16_384})
  })

  it.each(['snappy', 'gzip', 'brotli', 'none'] as const)('%s is taken on any Node', (c) => {
    expect(parquetOptions({'parquet-compression': c}, 'parquet', no)).toEqual({
      compression: c,
      rowGroupRows: 16_384,
    })
  })

  it.each([
    ['1024', 1024],
    ['16384', 16_384],
    ['65,536', 65_536],
    ['131_072', 131_072],
    [' 262144 ', 262_144],
  ])('row-group size %j is %d rows', (typed, rows) => {
    expect(parquetOptions({'parquet-row-group-size': typed}, 'parquet')).toEqual({
      compression: 'snappy',
      rowGroupRows: rows,
    })
  })

  it.each(['1023', '262145', '0', '-2048', '', 'abc', '16k', '1e4', '16384.5', '0x4000', '16,38', '1,,024'])(
    'row-group size %j: one line naming the bounds and an example',
    (typed) => {
      expect(() => parquetOptions({'parquet-row-group-size': typed}, 'parquet')).toThrow(
        new UsageError(
          `--parquet-row-group-size ${typed}: must be a whole number of rows from 1,024 to 262,144, e.g. --parquet-row-group-size 16384`,
        ),
      )
    },
  )

  it.each(['csv', 'ndjson', 'json'])('with %s output either flag is refused, naming the format', (format) => {
    expect(() => parquetOptions({'parquet-compression': 'gzip'}, format)).toThrow(
      new UsageError(
        `--parquet-compression applies to Parquet output only; this run writes ${format} (add --output parquet, or drop --parquet-compression)`,
      ),
    )
    expect(() => parquetOptions({'parquet-row-group-size': '4096'}, format)).toThrow(
      `--parquet-row-group-size applies to Parquet output only; this run writes ${format}`,
    )
    // the flags absent: nothing to refuse, and no Parquet options for another format
    expect(parquetOptions({}, format)).toBeUndefined()
  })

  it('zstd on a Node without it: one line naming Node 22.15, this Node and the other codecs', () => {
    expect(() => parquetOptions({'parquet-compression': 'zstd'}, 'parquet', no)).toThrow(
      new UsageError(
        `--parquet-compression zstd needs Node 22.15 or later (node:zlib has no zstd in Node ${process.versions.node}); use --parquet-compression snappy, gzip or brotli, or run sfl on a newer Node`,
      ),
    )
    expect(parquetOptions({'parquet-compression': 'zstd'}, 'parquet', yes)).toEqual({
      compression: 'zstd',
      rowGroupRows: 16_384,
    })
  })

  it("this Node's own answer: zstd taken exactly when node:zlib has zstdCompressSync", () => {
    const has = typeof (zlib as {zstdCompressSync?: unknown}).zstdCompressSync === 'function'
    expect(hasZstd()).toBe(has)
    const run = () => parquetOptions({'parquet-compression': 'zstd'}, 'parquet')
    if (has) expect(run()).toEqual({compression: 'zstd', rowGroupRows: 16_384})
    else expect(run).toThrow(/^--parquet-compression zstd needs Node 22\.15 or later/)
  })
})
