import * as zlib from 'node:zlib'

/**
 * The compressions a Parquet export may use (`county-export --parquet-compression`), their codecs in the
 * file (parquet.thrift CompressionCodec), and their compressors and decompressors from node:zlib. Snappy
 * is hyparquet's own, in both directions; gzip and brotli are in node:zlib on every Node sfl runs on; zstd
 * is in node:zlib only from Node 22.15 (and 23.8), so on Node 20 it is refused before a run starts and a
 * zstd file is named as needing a newer Node when read. No npm package adds a codec: the packed tarball
 * has a size ceiling, and node:zlib is the same code (zlib, brotli, zstd) the C libraries ship.
 */
export const PARQUET_COMPRESSIONS = ['snappy', 'zstd', 'gzip', 'brotli', 'none'] as const
export type ParquetCompression = (typeof PARQUET_COMPRESSIONS)[number]

export type ParquetCodec = 'SNAPPY' | 'ZSTD' | 'GZIP' | 'BROTLI' | 'UNCOMPRESSED'

/** The codec a compression writes into each column chunk's metadata (what `parquet_metadata()` shows). */
export const CODEC_OF: Readonly<Record<ParquetCompression, ParquetCodec>> = {
  snappy: 'SNAPPY',
  zstd: 'ZSTD',
  gzip: 'GZIP',
  brotli: 'BROTLI',
  none: 'UNCOMPRESSED',
}

/**
 * Rows per row group by default. Memory holds one row group's column arrays, and the library's encoding
 * of them, at a time, so the peak depends on this and not on the county's size. Measured on the
 * 200,000-record benchmark county (both options, 59 columns; notes-parquet.md): peak RSS of the whole
 * export 263 MB at 16k rows, 277 MB at 32k, 384 MB at 64k, 651 MB at 128k, for files of 9.0, 8.8, 8.6
 * and 8.5 MB: 16k costs 5% in size and saves a third of the memory of 64k.
 */
export const ROW_GROUP_ROWS = 16_384
/**
 * The bounds of `--parquet-row-group-size` (docs/exports.md "Parquet"). Measured writing the sandbox's
 * 100,000-record county 48201 (and six copies of it for the large groups): at 1,024 rows the file is 49%
 * larger than at 16,384 (per-group headers, statistics and dictionaries); peak RSS 237 MB at 16,384,
 * 1,154 MB at 262,144, 1,898 MB at 524,288 for a file only 1% smaller again: past 262,144 a group costs
 * memory a laptop may not have (Node's heap) and buys almost nothing.
 */
export const MIN_ROW_GROUP_ROWS = 1_024
export const MAX_ROW_GROUP_ROWS = 262_144

/** How a run writes its Parquet files; the defaults are what every sfl before issue 32 wrote. */
export interface ParquetOptions {
  compression: ParquetCompression
  rowGroupRows: number
}

export const DEFAULT_PARQUET: Readonly<ParquetOptions> = {compression: 'snappy', rowGroupRows: ROW_GROUP_ROWS}

type Codec = (input: Uint8Array) => Uint8Array
const zstdCompress = (zlib as {zstdCompressSync?: Codec}).zstdCompressSync
const zstdDecompress = (zlib as {zstdDecompressSync?: Codec}).zstdDecompressSync

/** Whether this Node has zstd in node:zlib (22.15+, 23.8+). */
export function hasZstd(): boolean {
  return typeof zstdCompress === 'function' && typeof zstdDecompress === 'function'
}

/** The Node that reads and writes zstd, and this one: for the one line that says so. */
export const ZSTD_NODE = 'Node 22.15 or later'

/**
 * Levels: gzip 6 and zstd 3 are their libraries' defaults. Brotli's default quality, 11, took 19.1 s of
 * CPU to write the sandbox's 100,000-record county against 4.0 s at quality 5 (snappy 4.2 s), for a file
 * 12% smaller (2.34 MB against 2.66 MB; qualities 5 to 9 all within 1%): the page compressor asks for 5.
 */
const BROTLI_QUALITY = 5

/**
 * The compressors hyparquet-writer needs for `compression` (it has Snappy itself; UNCOMPRESSED needs
 * none). zstd on a Node without it throws: callers refuse it before the run (`parquetOptionsProblem`).
 */
export function compressorsFor(compression: ParquetCompression): Partial<Record<ParquetCodec, Codec>> {
  switch (compression) {
    case 'gzip':
      return {GZIP: (b) => zlib.gzipSync(b)}
    case 'brotli':
      return {
        BROTLI: (b) =>
          zlib.brotliCompressSync(b, {
            params: {
              [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
              [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length,
            },
          }),
      }
    case 'zstd':
      if (!zstdCompress) throw new Error(zstdMissing('write'))
      return {ZSTD: (b) => zstdCompress(b)}
    default:
      return {}
  }
}

/**
 * Decompressors for hyparquet's general reader (it has Snappy itself): gzip, brotli, and zstd where Node
 * has it. Each checks the page's length against its header, as hyparquet does for its own.
 */
export function decompressorsFor(): Partial<
  Record<ParquetCodec, (b: Uint8Array, size: number) => Uint8Array>
> {
  const sized = (f: Codec) => (b: Uint8Array, size: number) => {
    const out = f(b)
    if (out.length !== size) throw new Error(`a page that decompresses to ${out.length} bytes, not ${size}`)
    return out
  }
  return {
    GZIP: sized((b) => zlib.gunzipSync(b)),
    BROTLI: sized((b) => zlib.brotliDecompressSync(b)),
    ...(zstdDecompress ? {ZSTD: sized(zstdDecompress)} : {}),
  }
}

/** A Parquet file whose codec this Node cannot decompress (zstd before Node 22.15): said, never guessed at. */
export class ParquetCodecError extends Error {
  readonly codec = 'zstd'
  readonly needs = ZSTD_NODE
  readonly node = process.versions.node
  constructor() {
    super(zstdMissing('read'))
  }
}

/** The line for zstd on a Node without it: what is needed, what this is, and what else to use. */
export function zstdMissing(what: 'write' | 'read'): string {
  return what === 'write'
    ? `zstd needs ${ZSTD_NODE} (node:zlib has no zstd in Node ${process.versions.node}); use --parquet-compression snappy, gzip or brotli, or run sfl on a newer Node`
    : `its columns are zstd-compressed, which needs ${ZSTD_NODE} to read; this is Node ${process.versions.node}`
}
