import {columnOf, columnsFor, ShapeTracker, type Column} from '../model/columns.js'
import {CheckpointError} from '../errors.js'
import {readLines} from './lines.js'
import type {OutputTarget} from './output.js'
import {CODEC_OF, compressorsFor, ROW_GROUP_ROWS, type ParquetCompression} from './parquet-codecs.js'
import {parquetType, toParquetValue, UNFIT, type ParquetType, type ParquetValue} from './parquet-types.js'

export interface ParquetResult {
  /** Records written. */
  records: number
  columns: Column[]
  /** Values of another type than the spec's, written as null, by column header (spec order). */
  unfit: Array<{column: string; count: number}>
}

/** hyparquet-writer's schema elements (its types come from hyparquet; kept structural here). */
interface SchemaElement {
  name: string
  type?: 'BOOLEAN' | 'INT32' | 'INT64' | 'DOUBLE' | 'BYTE_ARRAY'
  repetition_type?: 'OPTIONAL'
  converted_type?: 'UTF8' | 'DATE'
  logical_type?:
    {type: 'STRING'} | {type: 'DATE'} | {type: 'TIMESTAMP'; isAdjustedToUTC: boolean; unit: 'MILLIS'}
  num_children?: number
}

/** The Parquet schema element of one column: OPTIONAL, named exactly as the CSV header. */
function schemaElement(name: string, type: ParquetType): SchemaElement {
  const base = {name, repetition_type: 'OPTIONAL'} as const
  switch (type) {
    case 'STRING':
      return {...base, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: {type: 'STRING'}}
    case 'DATE':
      return {...base, type: 'INT32', converted_type: 'DATE', logical_type: {type: 'DATE'}}
    case 'TIMESTAMP':
      // spec 2.1 datetimes carry no zone: a local (not UTC-adjusted) timestamp, TIMESTAMP in DuckDB
      return {
        ...base,
        type: 'INT64',
        logical_type: {type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS'},
      }
    default:
      return {...base, type}
  }
}

async function* records(files: readonly string[]): AsyncGenerator<Record<string, unknown>> {
  for (const file of files)
    for await (const l of readLines(file)) {
      if (!l.complete)
        throw new CheckpointError(
          `the part file ${file} ends mid-record (damaged); add --restart to fetch the run again`,
        )
      yield JSON.parse(l.bytes.toString('utf8')) as Record<string, unknown>
    }
}

/**
 * Write the records spooled in NDJSON part files (one record a line, in order) as one Parquet file on
 * `target`, a row group at a time, so memory stays flat whatever the county's size. The columns are the
 * run's (the CSV's); without them a first pass over the files learns which fields and options occur. Each column has its spec type (`parquetType`); a value that does not fit
 * it is written as null and counted in the result. The caller commits or aborts the target.
 *
 * Called once per output file: once for `--out` with every finished county's pages, or once per county.
 */
export async function writeParquet(
  target: OutputTarget,
  /** NDJSON part files (records as sent), or flat records keyed by column (a Parquet file read back to be rewritten). */
  source: readonly string[] | {flat: AsyncIterable<Record<string, unknown>>},
  opts: {
    /** The run's columns (src/pipeline/schema.ts): every file of a run has the same. */
    columns?: readonly string[] | undefined
    /** Rows per row group (default ROW_GROUP_ROWS); the last group holds the rest. */
    rowGroupRows?: number | undefined
    /** The pages' compression (default snappy); zstd only where node:zlib has it. */
    compression?: ParquetCompression | undefined
    /**
     * Bytes of values after which a column chunk starts a new data page (hyparquet-writer's `pageSize`,
     * default 1 MiB: one page per chunk for sfl's row groups). Tests use small pages to give the readers
     * chunks of many pages.
     */
    pageBytes?: number | undefined
  } = {},
): Promise<ParquetResult> {
  const files = Array.isArray(source) ? (source as readonly string[]) : undefined
  let columns: Column[]
  if (opts.columns) columns = opts.columns.map(columnOf)
  else {
    const shape = new ShapeTracker()
    for await (const r of records(files ?? [])) shape.observe(r)
    columns = columnsFor(shape.shape)
  }
  const types = columns.map((c) => parquetType(c))
  const unfit = new Array<number>(columns.length).fill(0)
  const {ParquetWriter, ByteWriter} = await import('hyparquet-writer')

  // the library encodes into a growing buffer; each row group's bytes go to the target, with backpressure
  const bytes = new ByteWriter()
  const flush = async () => {
    if (bytes.index === 0) return
    // a copy: the library reuses its buffer for the next row group
    const chunk = Buffer.from(bytes.buffer.slice(0, bytes.index))
    bytes.index = 0
    if (!target.write(chunk)) await target.drain()
  }
  Object.assign(bytes, {flush, finish: flush})
  const schema: SchemaElement[] = [
    {name: 'root', num_children: columns.length},
    ...columns.map((c, i) => schemaElement(c.header, types[i]!)),
  ]
  // spec-named fields; SNAPPY pages unless asked otherwise, what DuckDB, Spark and pandas expect by default
  const compression = opts.compression ?? 'snappy'
  const writer = new ParquetWriter({
    writer: bytes,
    schema,
    codec: CODEC_OF[compression],
    compressors: compressorsFor(compression),
    createdBy: 'sfl',
  })

  const groupRows = opts.rowGroupRows ?? ROW_GROUP_ROWS
  const data: ParquetValue[][] = columns.map(() => [])
  let n = 0
  const writeGroup = async () => {
    if (n === 0) return
    await writer.write({
      columnData: columns.map((c, i) => ({name: c.header, data: data[i]!})),
      rowGroupSize: n,
      ...(opts.pageBytes === undefined ? {} : {pageSize: opts.pageBytes}),
    })
    for (const d of data) d.length = 0
    n = 0
  }
  let count = 0
  const rows = files ? records(files) : (source as {flat: AsyncIterable<Record<string, unknown>>}).flat
  for await (const r of rows) {
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i]!
      let v = files ? r[c.key] : r[c.header]
      if (files && c.sub !== undefined)
        v =
          v !== null && typeof v === 'object' && !Array.isArray(v)
            ? (v as Record<string, unknown>)[c.sub]
            : null
      const p = toParquetValue(types[i]!, v)
      if (p === UNFIT) {
        unfit[i]!++
        data[i]!.push(null)
      } else data[i]!.push(p)
    }
    count++
    if (++n === groupRows) await writeGroup()
  }
  await writeGroup()
  await writer.finish()
  return {
    records: count,
    columns,
    unfit: columns.flatMap((c, i) => (unfit[i]! > 0 ? [{column: c.header, count: unfit[i]!}] : [])),
  }
}
