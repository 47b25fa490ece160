import {open} from 'node:fs/promises'

import {OPTION_NAMES} from '../api/spec.js'
import {systemCode, UsageError} from '../errors.js'
import {
  FILE_FORMATS,
  FORMATS,
  formatOfExtension,
  reads,
  unknownFormat,
  type ExportFileFormat,
  type FileFormat,
} from '../model/formats.js'
import {unguardCell} from '../text/csv-cell.js'
import {CsvSyntaxError, readCsv} from './csv-reader.js'
import {readLines} from './lines.js'
import {exportSourceText} from './export-source-words.js'
import {ParquetCodecError} from './parquet-codecs.js'

/**
 * Reads an export back (ours or one shaped like it) as flat records: one object per property, keyed by
 * the CSV header names (`Fips`, `AssumableMortgage.LoanType`), whatever the file's format. `sfl stats`
 * and `--changes-since` read through it, so a CSV export and an NDJSON export of the same county give
 * the same records, up to types: CSV cells are text, NDJSON/JSON values keep their JSON type. A missing
 * value and null are the same thing here (an empty CSV cell, an absent field, a null option object).
 */
export type FlatValue = string | number | boolean | null
export type FlatRecord = Record<string, FlatValue>
/** The formats this reader reads: the registry's (src/model/formats.ts) read by `changes` and `stats`. */
export type {ExportFileFormat}

/** The file cannot be read as an export: one line naming the file and what to do (exit 2). */
export class ExportFileError extends UsageError {}

/** An export's format from its extension (`.jsonl` is NDJSON); undefined for any other name. */
export function formatFromName(path: string): ExportFileFormat | undefined {
  const ext = /\.([a-z]+)$/i.exec(path)?.[1]
  const f = ext === undefined ? undefined : formatOfExtension(ext)
  return f !== undefined && reads('changes', f) ? f : undefined
}

/** The format a name asks for when this reader does not read it (xlsx: the registry, src/model/formats.ts). */
export function writtenNotRead(path: string): FileFormat | undefined {
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]
  const f = ext === undefined ? undefined : formatOfExtension(ext)
  return f !== undefined && !reads('changes', f) ? f : undefined
}

/** Why a file of such a format is not read as an export, and what to give instead (never its bytes). */
export function notReadWhy(f: FileFormat): string {
  const readable = FILE_FORMATS.filter((x) => reads('changes', x)).map((x) => FORMATS[x].label)
  return `it is an ${FORMATS[f].label} file, which sfl writes but does not read back as an export; count or compare a ${readable.slice(0, -1).join(', ')} or ${readable.at(-1)!} export`
}

/** An export's format from its name, else from its first bytes (`PAR1`, `[`, `{`, anything else CSV). */
export async function exportFormatOf(path: string): Promise<ExportFileFormat> {
  const other = writtenNotRead(path)
  if (other) throw new ExportFileError(`${path} is not an sfl export: ${notReadWhy(other)}`)
  const named = formatFromName(path)
  if (named) return named
  const head = await readHead(path, 4)
  if (head.toString('latin1') === 'PAR1') return 'parquet'
  const first = head
    .toString('utf8')
    .replace(/^\ufeff/, '')
    .trimStart()[0]
  return first === '[' ? 'json' : first === '{' ? 'ndjson' : 'csv'
}

/** Every record of an export file, streamed (constant memory whatever the file's size). */
export async function* readExport(
  path: string,
  format?: ExportFileFormat,
): AsyncGenerator<FlatRecord, void, undefined> {
  const fmt = format ?? (await exportFormatOf(path))
  try {
    switch (fmt) {
      case 'csv':
        yield* readCsvExport(path)
        break
      case 'parquet':
        yield* readParquetExport(path)
        break
      case 'ndjson':
      case 'json':
        yield* readJsonLines(path, fmt)
        break
      default:
        unknownFormat(fmt)
    }
  } catch (error) {
    if (error instanceof ExportFileError) throw error
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new ExportFileError(`${path}: no such file`)
    if (code === 'EISDIR') throw new ExportFileError(`${path}: is a directory, not an export file`)
    if (error instanceof CsvSyntaxError)
      throw new ExportFileError(`${path} line ${error.line}: not a readable CSV export (${error.message})`)
    throw error
  }
}

async function* readCsvExport(path: string): AsyncGenerator<FlatRecord> {
  let header: string[] | undefined
  for await (const {fields} of readCsv(path)) {
    if (!header) {
      header = fields.map((h) => unguardCell(h.replace(/^\ufeff/, '')))
      continue
    }
    const rec = flatRecord()
    for (let i = 0; i < header.length; i++) {
      const v = fields[i]!
      rec[header[i]!] = v === '' ? null : unguardCell(v)
    }
    yield rec
  }
}

/**
 * NDJSON (a record a line) and our JSON (an array with a record a line, src/io/record-writer.ts). A JSON
 * file laid out otherwise (pretty-printed) is refused with what to do, rather than read whole.
 */
async function* readJsonLines(path: string, fmt: 'ndjson' | 'json'): AsyncGenerator<FlatRecord> {
  let n = 0
  for await (const l of readLines(path)) {
    n++
    let text = l.bytes.toString('utf8')
    if (n === 1) text = text.replace(/^\ufeff/, '')
    text = text.trim()
    if (fmt === 'json') {
      if (text === '[' || text === ']' || text === '[]' || text === '') continue
      if (text.endsWith(',')) text = text.slice(0, -1)
    } else if (text === '') continue
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      throw new ExportFileError(
        fmt === 'json'
          ? `${path} line ${n}: not one record per line; export as NDJSON (--output ndjson) or CSV to read it back`
          : `${path} line ${n}: not a JSON record`,
      )
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new ExportFileError(`${path} line ${n}: a record must be a JSON object`)
    yield flattenRecord(value as Record<string, unknown>)
  }
}

/**
 * One record flattened the way the CSV is (the one column rule, src/model/columns.ts): top-level scalars
 * as they are, an option object's fields (spec 2.2, 2.3) as `Option.Field`, any other object, a list or
 * anything deeper as its JSON text.
 */
export function flattenRecord(record: Record<string, unknown>): FlatRecord {
  const out = flatRecord()
  for (const k in record) {
    const v = record[k]
    if (OPTIONS.has(k) && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>
      for (const s in o) out[`${k}.${s}`] = scalar(o[s])
    } else out[k] = scalar(v)
  }
  return out
}

const OPTIONS: ReadonlySet<string> = new Set(OPTION_NAMES)

/**
 * An empty flat record, with no prototype: field names are the service's (a hostile one may send any),
 * and on an ordinary object a field named `__proto__` would set its prototype (the field lost) and one
 * named `constructor` would answer, where a record lacks it, with what every object inherits.
 */
export function flatRecord(): FlatRecord {
  return Object.create(null) as FlatRecord
}

function scalar(v: unknown): FlatValue {
  if (v === undefined || v === null) return null
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v
  return JSON.stringify(v)
}

/**
 * A Parquet file's records: through the column reader (src/io/parquet-reader.ts, a row group at a time)
 * when it lays the file out, else through hyparquet's general reader; the same values either way.
 */
async function* readParquetExport(path: string): AsyncGenerator<FlatRecord> {
  // loaded only for a Parquet file (hyparquet): CSV and NDJSON readers never pay for it
  const {cellOf, ParquetColumns, ParquetLayoutError, readParquetRecords} = await import('./parquet-reader.js')
  try {
    let file: Awaited<ReturnType<typeof ParquetColumns.open>> | undefined
    try {
      file = await ParquetColumns.open(path)
    } catch (error) {
      if (!(error instanceof ParquetLayoutError)) throw error
    }
    if (!file) {
      yield* readParquetRecords(path)
      return
    }
    try {
      for (let g = 0; g < file.groups.length; g++) {
        const values = file.readGroup(g, file.columns)
        for (let r = 0; r < file.groups[g]!.rows; r++) {
          const rec = flatRecord()
          for (const v of values) rec[v.column.name] = cellOf(v, v.slot[r]!)
          yield rec
        }
      }
    } finally {
      file.close()
    }
  } catch (error) {
    throw parquetReadError(path, error)
  }
}

/**
 * Whether reading a file failed for the machine's sake (ENOENT, EIO, EMFILE...: the error's own code), not
 * for its bytes: a zlib code (Z_DATA_ERROR, a damaged page) and Node's argument codes (ERR_...) are the
 * file's.
 */
export function machineError(error: unknown): boolean {
  const code = systemCode(error)
  return code !== '' && !code.startsWith('Z_') && !code.startsWith('ERR_')
}

/**
 * What a failure reading the Parquet file `path` is said as, for every reader of one (this module's
 * records, `sfl stats`' columns: src/jobs/file-stats.ts): the file system's own errors (ENOENT, EISDIR...)
 * as they are, for the caller to name; a codec this Node lacks as such (readable on a newer Node); anything
 * else (a damaged page, a zlib error such as Z_DATA_ERROR, a layout the reader refuses) as the file's, in
 * one line, exit 2.
 */
export function parquetReadError(path: string, error: unknown): Error {
  if (machineError(error)) return error as Error
  if (error instanceof ExportFileError) return error
  if (error instanceof ParquetCodecError) {
    // not damaged: readable on a newer Node, and said so (src/io/parquet-codecs.ts)
    const problem = {
      kind: 'codec-unavailable',
      codec: error.codec,
      needs: error.needs,
      node: error.node,
    } as const
    return new ExportFileError(exportSourceText(path, problem), {
      facts: {topic: 'export-source', path, problem},
    })
  }
  return new ExportFileError(`${path}: not a readable Parquet file (${(error as Error).message})`)
}

async function readHead(path: string, n: number): Promise<Buffer> {
  const fh = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    throw new ExportFileError(
      error.code === 'ENOENT'
        ? `${path}: no such file`
        : `${path}: cannot be read (${error.code ?? error.message})`,
    )
  })
  try {
    const buf = Buffer.alloc(n)
    const {bytesRead} = await fh.read(buf, 0, n, 0)
    return buf.subarray(0, bytesRead)
  } finally {
    await fh.close()
  }
}

/** A value as a number: JSON numbers as they are, text parsed strictly; anything else undefined. */
export function asNumber(v: FlatValue | undefined): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined
  if (typeof v !== 'string' || v.trim() === '') return undefined
  const n = Number(v)
  return Number.isFinite(n) ? n : undefined
}

/** A value as a boolean: JSON booleans and the CSV's `true`/`false`; anything else undefined. */
export function asBoolean(v: FlatValue | undefined): boolean | undefined {
  if (typeof v === 'boolean') return v
  if (v === 'true') return true
  if (v === 'false') return false
  return undefined
}

/** A value as text for comparing across formats: numbers in JS's shortest form, null as null. */
export function asText(v: FlatValue | undefined): string | null {
  if (v === null || v === undefined) return null
  if (typeof v === 'string') {
    const n = asNumber(v)
    // "688600.0" in a CSV and 688600 from JSON are the same value; "06067" is a code, not a number
    return n !== undefined && /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(v) ? String(n) : v
  }
  return String(v)
}
