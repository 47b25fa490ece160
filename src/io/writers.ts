import {createReadStream, createWriteStream} from 'node:fs'
import {rename, rm} from 'node:fs/promises'
import {createInterface} from 'node:readline'
import {Readable, Writable} from 'node:stream'
import {pipeline} from 'node:stream/promises'

import {columnsFor, flattenRow, selectColumns, type Column, type Shape} from '../render/columns.js'
import {tempPathFor} from './atomic-file.js'

export type ExportFormat = 'csv' | 'ndjson' | 'json'

export interface SinkOptions {
  format: ExportFormat
  shape: Shape
  fields?: readonly string[] | undefined
  bom: boolean
  escapeFormulas: boolean
  /** Extra leading columns for batch output (input columns, status, error). */
  prefix?: readonly string[]
}

/** Records arrive as NDJSON lines from the part files, in unit order. */
export type Line = string

/** The CSV columns the run writes: decided from every record's fields before the header is written. */
export function outputColumns(o: SinkOptions): Column[] {
  return selectColumns(columnsFor(o.shape), o.fields)
}

async function* linesOf(files: readonly string[]): AsyncGenerator<Line> {
  for (const f of files) {
    const rl = createInterface({input: createReadStream(f), crlfDelay: Infinity})
    for await (const line of rl) if (line !== '') yield line
  }
}

/**
 * Turn NDJSON part files into the requested format on `dest`, through stream.pipeline so backpressure and
 * errors propagate (csv-stringify stalls if its output is not consumed). `rowOf` lets batch output put its
 * own columns first.
 */
export async function writeFormatted(
  files: readonly string[],
  o: SinkOptions,
  dest: Writable,
  rowOf?: (record: Record<string, unknown>, cols: Column[]) => unknown[],
): Promise<number> {
  let count = 0
  const sinkFor = dest === process.stdout ? keepOpen(dest) : dest
  if (o.format === 'csv') {
    const {stringify} = await import('csv-stringify')
    const cols = outputColumns(o)
    const header = [...(o.prefix ?? []), ...cols.map((c) => c.header)]
    const rows = async function* () {
      for await (const line of linesOf(files)) {
        const rec = JSON.parse(line) as Record<string, unknown>
        count++
        yield rowOf ? rowOf(rec, cols) : flattenRow(rec, cols, o.escapeFormulas)
      }
    }
    // RFC 4180: CRLF line ends, quotes doubled; formulas were neutralised by flattenRow
    const csv = stringify({
      header: true,
      columns: header.map((h) => ({key: h, header: h})),
      bom: o.bom,
      record_delimiter: 'windows',
      cast: {boolean: (b) => String(b)},
    })
    await pipeline(Readable.from(rows()), csv, sinkFor)
    return count
  }
  const json = o.format === 'json'
  const text = async function* () {
    if (json) yield '['
    for await (const line of linesOf(files)) {
      yield `${json ? (count === 0 ? '\n' : ',\n') : ''}${line}${json ? '' : '\n'}`
      count++
    }
    if (json) yield count === 0 ? ']\n' : '\n]\n'
  }
  await pipeline(Readable.from(text()), sinkFor)
  return count
}

/** Write to a temporary file beside `out` and rename it into place only when complete. */
export async function writeAtomically(
  out: string,
  write: (dest: Writable) => Promise<number>,
): Promise<number> {
  const tmp = tempPathFor(out)
  try {
    const n = await write(createWriteStream(tmp, {mode: 0o644}))
    await rename(tmp, out)
    return n
  } catch (error) {
    await rm(tmp, {force: true})
    throw error
  }
}

/**
 * A writable that forwards to `dest` with its backpressure but never ends it: stream.pipeline ends its
 * destination, and process.stdout must stay open.
 */
export function keepOpen(dest: Writable): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (dest.write(chunk)) callback()
      else dest.once('drain', () => callback())
    },
  })
}
