/**
 * The one table of the file formats sfl writes and reads (issue 32, "One registry of formats first"). A
 * format is one entry here plus its writer and reader in src/io; every rule that differs by format asks
 * this table, or switches over `FileFormat` and ends in `unknownFormat` (a `never`), so adding a format
 * fails to compile at each place that must handle it. Pure data; `lookup`'s screen formats (`table`) are
 * src/render/formats.ts's, not a file's.
 */

export const FILE_FORMATS = ['csv', 'ndjson', 'json', 'parquet', 'xlsx'] as const
export type FileFormat = (typeof FILE_FORMATS)[number]

/** The commands (and modes) that write a file format. */
export type FormatWriter = 'county-export' | 'county-export --out-dir' | 'lookup --input' | 'changes'
/** What reads a file format: `sfl changes`/`--changes-since` and `sfl stats` (one export reader), a batch's input. */
export type FormatReader = 'changes' | 'stats' | 'lookup --input'

export interface FormatTraits {
  /** How messages name it. */
  label: string
  /** The extensions that name it (lower case), the first the one sfl gives its files. */
  extensions: readonly string[]
  /**
   * How its records are framed: `text` by the record writer (src/io/record-writer.ts), a line or a row at
   * a time; `columnar` and `workbook` by a writer that takes every record first (Parquet, xlsx).
   */
  family: 'text' | 'columnar' | 'workbook'
  /**
   * Can go to stdout. Parquet is read from its footer and xlsx from the ZIP's central directory, both at
   * the file's end, so neither can be streamed to a pipe (and neither is for a terminal).
   */
  stdout: boolean
  /**
   * What an export spools a page into before its county ends (src/pipeline/spool.ts): CSV rows already in
   * the output's cells, or the NDJSON lines as sent, which NDJSON and JSON copy and Parquet and xlsx read.
   */
  spool: 'csv' | 'ndjson'
  /**
   * gzip by name (`.gz`, docs/exports.md "Output names and compression"): undefined when the output gate
   * compresses it, else why not.
   */
  noGzip: string | undefined
  /**
   * How a value of another type than its field's (spec section 2) is written, when the format types its
   * columns: Parquet as null, xlsx as text (both counted and said); undefined: every value as sent.
   */
  unfitAs: 'null' | 'text' | undefined
  /** Starts with a UTF-8 byte-order mark on `--bom` (for Excel's CSV import); `--bom` with any other is refused. */
  bom: boolean
  writtenBy: readonly FormatWriter[]
  readBy: readonly FormatReader[]
}

const EVERY_WRITER = ['county-export', 'county-export --out-dir', 'lookup --input', 'changes'] as const

/** The table. `satisfies` keeps each entry's literal types, so the types below are derived from it. */
export const FORMATS = {
  csv: {
    label: 'CSV',
    extensions: ['csv'],
    family: 'text',
    stdout: true,
    spool: 'csv',
    noGzip: undefined,
    unfitAs: undefined,
    bom: true,
    writtenBy: EVERY_WRITER,
    readBy: ['changes', 'stats', 'lookup --input'],
  },
  ndjson: {
    label: 'NDJSON',
    extensions: ['ndjson', 'jsonl'],
    family: 'text',
    stdout: true,
    spool: 'ndjson',
    noGzip: undefined,
    unfitAs: undefined,
    bom: false,
    writtenBy: EVERY_WRITER,
    readBy: ['changes', 'stats', 'lookup --input'],
  },
  json: {
    label: 'JSON',
    extensions: ['json'],
    family: 'text',
    stdout: true,
    spool: 'ndjson',
    noGzip: undefined,
    unfitAs: undefined,
    bom: false,
    writtenBy: EVERY_WRITER,
    readBy: ['changes', 'stats'],
  },
  parquet: {
    label: 'Parquet',
    extensions: ['parquet'],
    family: 'columnar',
    stdout: false,
    spool: 'ndjson',
    noGzip: 'a Parquet file compresses its own pages; name it .parquet, without .gz',
    unfitAs: 'null',
    bom: false,
    writtenBy: ['county-export', 'county-export --out-dir'],
    readBy: ['changes', 'stats'],
  },
  xlsx: {
    label: 'xlsx',
    extensions: ['xlsx'],
    family: 'workbook',
    stdout: false,
    spool: 'ndjson',
    noGzip: 'an xlsx workbook is already a ZIP archive; name it .xlsx, without .gz',
    // one workbook: an --out-dir is a dataset folder that engines read as one table (docs/exports.md, "xlsx")
    unfitAs: 'text',
    bom: false,
    writtenBy: ['county-export', 'lookup --input'],
    readBy: ['lookup --input'],
  },
} as const satisfies {readonly [F in FileFormat]: FormatTraits}

/** The formats the record writer frames as text (csv, ndjson, json). */
export type TextFormat = {
  [F in FileFormat]: (typeof FORMATS)[F]['family'] extends 'text' ? F : never
}[FileFormat]
/** The formats a writer writes. */
export type WrittenBy<W extends FormatWriter> = {
  [F in FileFormat]: W extends (typeof FORMATS)[F]['writtenBy'][number] ? F : never
}[FileFormat]
/** The formats a reader reads. */
export type ReadBy<R extends FormatReader> = {
  [F in FileFormat]: R extends (typeof FORMATS)[F]['readBy'][number] ? F : never
}[FileFormat]
/** What the export reader of `sfl changes` and `sfl stats` reads (src/io/export-reader.ts). */
export type ExportFileFormat = ReadBy<'changes'>
/** What `county-export` writes (`--out` or stdout). */
export type ExportFormat = WrittenBy<'county-export'>
/** What `lookup --input` writes. */
export type BatchFormat = WrittenBy<'lookup --input'>
/** What `sfl changes` writes. */
export type ChangeFormat = WrittenBy<'changes'>

export function isTextFormat(f: FileFormat): f is TextFormat {
  return FORMATS[f].family === 'text'
}

/** The formats `writer` writes, in the table's order (for flag options and messages). */
export function formatsWrittenBy<W extends FormatWriter>(writer: W): Array<WrittenBy<W>> {
  return FILE_FORMATS.filter((f) =>
    (FORMATS[f].writtenBy as readonly FormatWriter[]).includes(writer),
  ) as Array<WrittenBy<W>>
}

export function writes<W extends FormatWriter>(writer: W, f: FileFormat): f is WrittenBy<W> {
  return (FORMATS[f].writtenBy as readonly FormatWriter[]).includes(writer)
}

export function reads<R extends FormatReader>(reader: R, f: FileFormat): f is ReadBy<R> {
  return (FORMATS[f].readBy as readonly FormatReader[]).includes(reader)
}

/** Whether a text (a manifest's `format`, a flag's value) names a format of the table. */
export function isFileFormat(s: string): s is FileFormat {
  return (FILE_FORMATS as readonly string[]).includes(s)
}

/** The format an extension names (`jsonl` is NDJSON), case-insensitively; undefined for any other. */
export function formatOfExtension(ext: string): FileFormat | undefined {
  const e = ext.toLowerCase()
  return FILE_FORMATS.find((f) => (FORMATS[f].extensions as readonly string[]).includes(e))
}

/** The extension sfl gives a file of `f`. */
export function extensionOf(f: FileFormat): string {
  return FORMATS[f].extensions[0]
}

/**
 * A list for messages: `.csv, .ndjson or .json`.
 *
 * @example extensionList(['csv', 'ndjson', 'json']) // '.csv, .ndjson or .json'
 */
export function extensionList(formats: readonly FileFormat[]): string {
  const names = formats.map((f) => `.${extensionOf(f)}`)
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)!}`
}

/** The end of an exhaustive switch over a format: a new format fails to compile here until handled. */
export function unknownFormat(f: never): never {
  throw new Error(`sfl: no rule for the format ${String(f)}`)
}

/**
 * `--bom` with a format that never starts with one (every output but CSV): refused before anything is read
 * or sent, by `county-export` and batch lookups alike, rather than ignored. Pure.
 *
 * @example bomProblem('xlsx', true) // '--bom is for CSV output (Excel); xlsx output never starts with a BOM'
 */
export function bomProblem(format: FileFormat, bom: boolean | undefined): string | undefined {
  if (!bom || FORMATS[format].bom) return undefined
  return `--bom is for CSV output (Excel); ${format} output never starts with a BOM`
}
