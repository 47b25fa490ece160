import {createReadStream} from 'node:fs'
import {join} from 'node:path'

import {derived, type Redacted} from '../api/secrets.js'
import {CheckpointError} from '../errors.js'
import {guardCell} from '../text/csv-cell.js'
import {readCsv} from '../io/csv-reader.js'
import {readLines} from '../io/lines.js'
import type {OutputTarget} from '../io/output.js'
import type {ParquetOptions} from '../io/parquet-codecs.js'
import {RecordWriter} from '../io/record-writer.js'
import {compactJson} from '../json/values.js'
import {FORMATS, unknownFormat, type ExportFormat} from '../model/formats.js'
import {CsvRowEncoder} from './cells.js'
import {PartFile, type PagePart, type Segment} from './spool.js'
import type {RecordView} from './view.js'

/**
 * The sinks stage: where records go once they passed the checks. While a page is read they go to its
 * part files (`PageSpool`), or straight to stdout for the county at the head of a streamed run
 * (`StreamSink`); when counties end, their spooled pages are copied to the outputs (`copyPage`,
 * `writeFile`): one file, one file per county (--out-dir), or stdout.
 */
export type {ExportFormat}

/** Bytes between write-back starts of an NDJSON part file (see PartFile `syncEvery`). */
const SYNC_EVERY = 16 * 1024 * 1024

/** The bytes NDJSON writes for a record: as sent (redacted), or compact when the service pretty-printed it (one line a record). */
export function lineOf(view: RecordView): Redacted<Buffer> {
  return view.spaced ? derived(view.bytes, compactJson) : view.bytes
}

/** What a page's spool needs from its run: where parts go, the format, and (CSV) the columns now. */
export interface SpoolEnv {
  partsDir: string
  format: ExportFormat
  encoder: CsvRowEncoder | undefined
  /** CSV: the id of the layout rows are written in now (the run's columns; journaled when new). */
  layout(): number
  /** CSV: a layout's columns, as field ids. */
  columnsOf(layout: number): Int32Array
}

/** One page's records on their way to its part files. */
export class PageSpool {
  private part: PartFile | undefined
  private seg: (Segment & {part: PartFile}) | undefined
  private readonly segments: Array<Segment & {part: PartFile}> = []
  readonly file: string

  constructor(
    private readonly env: SpoolEnv,
    private readonly fips: string,
    n: number,
  ) {
    this.file = `${fips}-${String(n).padStart(5, '0')}.ndjson`
  }

  /** One record; a promise when the file needs draining first. */
  record(view: RecordView): Promise<void> | undefined {
    if (this.env.encoder) return this.row(view)
    if (!this.part) return this.open().then(() => this.record(view))
    this.part.write(lineOf(view))
    return this.part.needsDrain ? this.part.drain() : undefined
  }

  private row(view: RecordView): Promise<void> | undefined {
    // the layout is taken before any await: the run's columns are shared by every page in flight
    const layout = this.env.layout()
    if (this.seg?.layout !== layout) return this.segment(layout).then(() => this.row(view))
    this.seg.part.writeRow(this.env.encoder!, view, this.env.columnsOf(layout))
    this.seg.records++
    return this.seg.part.needsDrain ? this.seg.part.drain() : undefined
  }

  private async open(): Promise<void> {
    // an NDJSON part may become the output itself: its write-back starts as it is written
    this.part = await PartFile.create(join(this.env.partsDir, this.file), {syncEvery: SYNC_EVERY})
  }

  /** A new column: the rows from here on go to a file of their own in the new layout. */
  private async segment(layout: number): Promise<void> {
    await this.seg?.part.close()
    const file = `${this.file.slice(0, -'.ndjson'.length)}-${this.segments.length + 1}.csv`
    const part = await PartFile.create(join(this.env.partsDir, file))
    this.seg = {file, layout, records: 0, part}
    this.segments.push(this.seg)
  }

  /** The page is whole: its files closed, what the journal records of them. */
  async close(): Promise<{file: string; segments?: Segment[]}> {
    if (this.env.encoder) {
      await this.seg?.part.close()
      return {
        file: this.file,
        segments: this.segments.map(({file, layout, records}) => ({file, layout, records})),
      }
    }
    // an empty page still gets its (empty) part, so every journaled page names a file that exists
    if (!this.part) await this.open()
    await this.part!.close()
    return {file: this.file}
  }

  async discard(): Promise<void> {
    await this.part?.discard()
    for (const s of this.segments) await s.part.discard()
  }
}

/** Records of the county at the head of a streamed run, straight to stdout (NDJSON, JSON, CSV with --fields). */
export class StreamSink {
  private scratch = Buffer.allocUnsafe(64 * 1024)

  constructor(
    readonly writer: RecordWriter,
    private readonly encoder: CsvRowEncoder | undefined,
    private readonly columns: Int32Array | undefined,
  ) {}

  record(view: RecordView): Promise<void> | undefined {
    let ok: boolean
    if (this.encoder) {
      const most = CsvRowEncoder.bound(view, this.columns!)
      if (most > this.scratch.length) this.scratch = Buffer.allocUnsafe(most)
      const end = this.encoder.encode(view, this.columns!, this.scratch, 0)
      ok = this.writer.csvRow(Buffer.from(this.scratch.subarray(0, end)))
    } else ok = this.writer.json(lineOf(view))
    return ok ? undefined : this.writer.target.drain()
  }
}

/** The header cells of `names`, guarded (the formula guard applies to header cells too); the writer quotes them. */
export function headerCells(names: readonly string[], escapeFormulas: boolean): string[] {
  return names.map((h) => guardCell(h, escapeFormulas))
}

/**
 * Copy one spooled page to a writer. NDJSON: the part file as whole chunks; JSON: a line at a time; CSV:
 * each segment as whole chunks when its layout is the output's columns (the usual case), otherwise its
 * rows read back and laid out in the output's columns (a column that appeared later in the run).
 */
export async function copyPage(
  dir: string,
  part: PagePart,
  writer: RecordWriter,
  columns: readonly string[] | undefined,
  layouts: ReadonlyArray<readonly string[]>,
): Promise<void> {
  const chunks = async (file: string) => {
    for await (const chunk of createReadStream(join(dir, file), {highWaterMark: 1 << 20}))
      if (!writer.target.write(chunk as Buffer)) await writer.target.drain()
  }
  if (columns) {
    const want = columns.join('\u0000')
    for (const seg of part.segments ?? []) {
      const layout = layouts[seg.layout]!
      if (layout.join('\u0000') === want) {
        writer.csvChunks(seg.records)
        await chunks(seg.file)
        continue
      }
      const at = new Map(layout.map((c, i) => [c, i]))
      for await (const {fields} of readCsv(join(dir, seg.file))) {
        const row = columns.map((c) => {
          const i = at.get(c)
          return i === undefined ? '' : fields[i]!
        })
        // the cells are already CSV text of the run's own writing: only their quoting is redone
        if (!writer.csv(row)) await writer.target.drain()
      }
    }
    return
  }
  if (writer.format === 'ndjson') {
    writer.ndjsonChunks(part.records)
    return chunks(part.file)
  }
  for await (const l of readLines(join(dir, part.file))) {
    if (!l.complete)
      throw new CheckpointError(
        `the part file ${part.file} ends mid-record (damaged); add --restart to fetch the run again`,
      )
    if (!writer.json(l.bytes)) await writer.target.drain()
  }
}

/** How a file of the run is written: its columns (the run's schema), the layouts of CSV parts, and its commit. */
export interface FileOptions {
  /** The run's columns, by name (CSV header, Parquet schema). */
  columns: readonly string[]
  layouts: ReadonlyArray<readonly string[]>
  escapeFormulas: boolean
  bom: boolean
  commit: () => Promise<void>
  /** Values of another type than their column's (Parquet: written as null; xlsx: as text), by column. */
  onUnfit?: ((column: string, count: number) => void) | undefined
  /** xlsx: texts longer than a cell holds (Excel's 32,767 characters), cut to it, by column. */
  onCut?: ((column: string, count: number) => void) | undefined
  /** Parquet: the compression and row-group size (`--parquet-compression`, `--parquet-row-group-size`). */
  parquet?: ParquetOptions | undefined
  /** xlsx: the sheet's row limit (tests lower it). */
  xlsx?: {rowsPerSheet?: number} | undefined
}

/** The pages framed in `format` (the registry's, src/model/formats.ts): the records written. */
async function writeFrame(
  partsDir: string,
  pages: readonly PagePart[],
  target: OutputTarget,
  format: ExportFormat,
  opts: FileOptions,
): Promise<number> {
  const parts = () => pages.map((p) => join(partsDir, p.file))
  switch (format) {
    case 'csv':
    case 'ndjson':
    case 'json': {
      const header = headerCells(opts.columns, opts.escapeFormulas)
      const writer = new RecordWriter(target, format, {header, bom: opts.bom})
      const columns = FORMATS[format].spool === 'csv' ? opts.columns : undefined
      for (const p of pages) await copyPage(partsDir, p, writer, columns, opts.layouts)
      writer.end()
      return writer.count
    }
    case 'parquet': {
      const {writeParquet} = await import('../io/parquet-writer.js')
      const result = await writeParquet(target, parts(), {
        columns: opts.columns,
        compression: opts.parquet?.compression,
        rowGroupRows: opts.parquet?.rowGroupRows,
      })
      for (const x of result.unfit) opts.onUnfit?.(x.column, x.count)
      return result.records
    }
    case 'xlsx': {
      const {writeXlsx} = await import('../io/xlsx-writer.js')
      const result = await writeXlsx(target, parts(), {columns: opts.columns, ...opts.xlsx})
      for (const x of result.asText) opts.onUnfit?.(x.column, x.count)
      for (const x of result.cut) opts.onCut?.(x.column, x.count)
      return result.rows
    }
    default:
      return unknownFormat(format)
  }
}

/**
 * Spooled pages as one file (a county's under `--out-dir`; every county's for `--out`), framed in
 * `format` on `target`, committed by `commit` (the run's, so a failure stops the run), aborted on any
 * error so the target is never half written. Returns the records written. An empty county gives an empty
 * frame (a CSV header, `[]`, an empty NDJSON file, a Parquet file with the run's columns and no rows),
 * so every manifest entry names a file that exists.
 */
export async function writeFile(
  partsDir: string,
  pages: readonly PagePart[],
  target: OutputTarget,
  format: ExportFormat,
  opts: FileOptions,
): Promise<number> {
  try {
    const n = await writeFrame(partsDir, pages, target, format, opts)
    await opts.commit()
    return n
  } catch (error) {
    await target.abort()
    throw error
  }
}
