import {Flags} from '@oclif/core'

import {UsageError} from '../errors.js'
import {
  DEFAULT_PARQUET,
  hasZstd,
  MAX_ROW_GROUP_ROWS,
  MIN_ROW_GROUP_ROWS,
  PARQUET_COMPRESSIONS,
  ROW_GROUP_ROWS,
  zstdMissing,
  type ParquetCompression,
  type ParquetOptions,
} from '../io/parquet-codecs.js'
import {count} from '../text/count.js'

/** `county-export`'s Parquet flags (docs/exports.md "Parquet"). */
export const parquetFlags = {
  'parquet-compression': Flags.option({
    options: PARQUET_COMPRESSIONS,
    description:
      'With --output parquet: compression of the column pages (zstd needs Node 22.15 or later) [default: snappy]',
  })(),
  'parquet-row-group-size': Flags.string({
    description: `With --output parquet: rows per row group, ${count(MIN_ROW_GROUP_ROWS)} to ${count(MAX_ROW_GROUP_ROWS)} (memory holds one group at a time) [default: ${count(ROW_GROUP_ROWS)}]`,
    helpValue: 'ROWS',
  }),
}

/**
 * The Parquet options of a run from its flags, each checked before any request (exit 2, one line): the
 * flags only with Parquet output, a row-group size a whole number within the bounds, and zstd only on a
 * Node whose node:zlib has it (`hasZstd`, injectable for tests). Undefined for any other format. Pure
 * apart from the Node check.
 *
 * @example parquetOptions({'parquet-compression': 'gzip'}, 'parquet') // {compression: 'gzip', rowGroupRows: 16384}
 * @example parquetOptions({'parquet-compression': 'gzip'}, 'csv') // UsageError: applies to Parquet output only
 */
export function parquetOptions(
  f: {'parquet-compression'?: ParquetCompression | undefined; 'parquet-row-group-size'?: string | undefined},
  format: string,
  zstd: () => boolean = hasZstd,
): ParquetOptions | undefined {
  const compression = f['parquet-compression']
  const size = f['parquet-row-group-size']
  if (format !== 'parquet') {
    const flag = compression !== undefined ? 'parquet-compression' : 'parquet-row-group-size'
    if (compression !== undefined || size !== undefined)
      throw new UsageError(
        `--${flag} applies to Parquet output only; this run writes ${format} (add --output parquet, or drop --${flag})`,
      )
    return undefined
  }
  if (compression === 'zstd' && !zstd()) throw new UsageError(`--parquet-compression ${zstdMissing('write')}`)
  return {
    compression: compression ?? DEFAULT_PARQUET.compression,
    rowGroupRows: size === undefined ? DEFAULT_PARQUET.rowGroupRows : rowGroupRows(size),
  }
}

/** `--parquet-row-group-size` as typed: digits (and `_` or `,` between them), within the bounds. */
function rowGroupRows(typed: string): number {
  const t = typed.trim()
  const n = /^\d+(?:[_,]\d{3})*$/.test(t) ? Number(t.replace(/[_,]/g, '')) : NaN
  if (!(n >= MIN_ROW_GROUP_ROWS && n <= MAX_ROW_GROUP_ROWS))
    throw new UsageError(
      `--parquet-row-group-size ${typed}: must be a whole number of rows from ${count(MIN_ROW_GROUP_ROWS)} to ${count(MAX_ROW_GROUP_ROWS)}, e.g. --parquet-row-group-size ${ROW_GROUP_ROWS}`,
    )
  return n
}
