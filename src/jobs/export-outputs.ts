import {join} from 'node:path'

import {countyByFips} from '../address/counties.js'
import {readCsv} from '../io/csv-reader.js'
import type {ExportDir} from '../io/export-dir.js'
import {fileColumns, headerName} from '../io/file-columns.js'
import {writeOutputFile, type OutputTarget} from '../io/output.js'
import {removeFile} from '../io/private-files.js'
import {RecordWriter} from '../io/record-writer.js'
import {DEFAULT_PARQUET} from '../io/parquet-codecs.js'
import {parquetType} from '../io/parquet-types.js'
import {columnOf} from '../model/columns.js'
import {FORMATS, isTextFormat, unknownFormat} from '../model/formats.js'
import {copyPage, headerCells, writeFile, type FileOptions} from '../pipeline/sinks.js'
import type {RecordStages} from '../pipeline/stages.js'
import type {ExportStats} from './export-stats.js'
import {countyFilePath, schemaKey, type ManifestEntry, type ManifestFile} from '../io/manifest.js'
import {REJECTS} from '../io/out-dir-layout.js'
import {isFinished} from './outcome.js'
import type {RunState} from './run.js'
import type {ExportRequest, Unit} from './export-types.js'

/** What the outputs need of the run. */
interface RunView {
  req: ExportRequest
  run: RunState
  stages: RecordStages
  layouts: string[][]
  stats: ExportStats | undefined
  stream: {writer: RecordWriter} | undefined
}

/**
 * The outputs of a county export, all with the run's one schema (src/pipeline/schema.ts): an `--out-dir`
 * county's file the moment it finishes (then its manifest entry, then its part files go), the one
 * `--out` file when the run ends (every finished county, whole, in the order asked), or the end of a
 * streamed stdout. Files written before a column appeared are rewritten at the end with the final
 * columns, so a plain glob over the folder reads one schema; a file is never narrowed (settleFolder).
 */
export class ExportOutputs {
  filesWritten = 0
  /** --out-dir: county files rewritten at the end with the run's final columns (only ever widened). */
  filesRewritten = 0
  private recordsToFiles = 0
  /** Parquet: values of another type than the spec's, written as null, by column (every file). */
  readonly unfit = new Map<string, number>()
  /** xlsx: texts longer than Excel's 32,767 characters a cell, cut to it, by column. */
  readonly cut = new Map<string, number>()
  checkpoint: string | undefined
  rejectsFile: string | undefined

  constructor(
    private readonly x: RunView,
    private readonly manifest: ManifestFile | undefined,
    private readonly now: () => number,
  ) {}

  /** A county's file, relative to the --out-dir (src/io/manifest.ts countyFilePath). */
  static countyPath(req: ExportRequest, fips: string): string {
    return countyFilePath(countyByFips(fips)?.state ?? 'unknown', fips, req.format)
  }

  /** The --out-dir: a local folder or an s3:// prefix (src/io/export-dir.ts), where the manifest is. */
  private get dir(): ExportDir {
    return this.manifest!.dir
  }

  private fileOptions(target: OutputTarget, columns: readonly string[]): FileOptions {
    const req = this.x.req
    return {
      columns,
      layouts: this.x.layouts,
      escapeFormulas: req.escapeFormulas,
      bom: req.bom,
      commit: () => target.commit(),
      onUnfit: (column, n) => this.unfit.set(column, (this.unfit.get(column) ?? 0) + n),
      onCut: (column, n) => this.cut.set(column, (this.cut.get(column) ?? 0) + n),
      parquet: req.parquet,
    }
  }

  /**
   * --out-dir: a finished county goes to its own file at once (atomically), then into the manifest; only
   * then is it journaled as written and its part files removed, so a stop at any point loses nothing.
   */
  async writeCounty(u: Unit): Promise<void> {
    const req = this.x.req
    const county = countyByFips(u.fips)
    const state = county?.state ?? 'unknown'
    const rel = countyFilePath(state, u.fips, req.format)
    // local: its partition folders entered on the folder rule and a killed run's temp removed
    await this.dir.prepare(rel)
    const columns = this.x.stages.schema.names()
    // a file renamed into place, or an object completed: whole or not at all (src/io/output.ts)
    const target = await this.x.run.outputTarget(this.dir.at(rel), '--out-dir')
    const count = await writeFile(
      this.x.run.journal.partsDir,
      u.pages,
      target,
      req.format,
      this.fileOptions(target, columns),
    )
    this.filesWritten++
    this.recordsToFiles += count
    const schema = schemaKey(columns)
    await this.manifest!.record({
      fips: u.fips,
      state,
      name: county?.name ?? '',
      path: rel,
      records: count,
      pages: u.pages.length,
      finishedAt: new Date(this.now()).toISOString(),
      schema,
      ...(req.where !== undefined ? {where: req.where} : {}),
      ...this.parquetEntry(),
    })
    u.written = schema
    this.x.run.journal.append({t: 'written', u: u.fips, schema})
    for (const p of u.pages)
      for (const f of [p.file, ...(p.segments ?? []).map((sg) => sg.file)])
        await removeFile(join(this.x.run.journal.partsDir, f))
  }

  /** A Parquet file's manifest record of how this run writes it (src/io/manifest.ts ManifestEntry). */
  private parquetEntry(): Pick<ManifestEntry, 'parquet'> {
    const req = this.x.req
    return req.format === 'parquet' ? {parquet: {...(req.parquet ?? DEFAULT_PARQUET)}} : {}
  }

  /** The run ends: every output closed or written, the rejects listed, the checkpoint kept or removed. */
  async finish(units: Unit[]): Promise<{wrote: boolean; written: number}> {
    const {req, run} = this.x
    const finished = units.filter((u) => u.outcome && isFinished(u.outcome.kind))
    const open = units.some((u) => !u.outcome || u.outcome.kind === 'failed')
    let result = {wrote: false, written: 0}
    if (this.x.stream) result = await this.endStream(finished)
    else if (req.outDir) {
      await this.settleFolder(units).catch(run.absorbOrThrow)
      result = {wrote: this.filesWritten > 0, written: this.recordsToFiles}
    } else if (finished.length > 0) result = await this.writeOne(finished, open)
    await this.writeRejects(units, result.wrote)
    this.rememberWindow()
    // a run whose output could not be written (disk full) keeps its checkpoint: the rerun only assembles
    const unwritten = req.outDir
      ? finished.some((u) => u.written === undefined)
      : finished.length > 0 && !result.wrote
    this.checkpoint = await run.finish(open || unwritten)
    return result
  }

  private async endStream(finished: Unit[]): Promise<{wrote: boolean; written: number}> {
    const run = this.x.run
    const writer = this.x.stream!.writer
    // the stream already carries every finished county; close its frame unless the reader left
    if (!run.outputClosed && (writer.hasStarted || finished.length > 0)) {
      writer.end()
      await writer.target.commit().catch(run.absorbOrThrow)
    }
    ;(writer.target as {release?: () => void}).release?.()
    return {wrote: writer.hasStarted, written: writer.count}
  }

  /** `--out`: every finished county, whole, in the order asked; the target is replaced only when complete. */
  private async writeOne(finished: Unit[], open: boolean): Promise<{wrote: boolean; written: number}> {
    const {req, run} = this.x
    const columns = this.x.stages.schema.names()
    const pages = finished.flatMap((u) => u.pages)
    const dir = run.journal.partsDir
    // NDJSON whose every county ended: the first part file already holds the output's first records, so it
    // becomes the output and the rest is appended (one copy of the body fewer; npm run bench). Not while a
    // county is open (the checkpoint still needs its part files), nor into a FIFO or a device.
    const first = pages[0]
    const format = req.format
    // only an NDJSON part is the output's own bytes (a CSV part has no header, the others are framed)
    const adopt = format === 'ndjson' && !open && first !== undefined && (await run.canAdopt(req.out!))
    const target = adopt ? run.adoptOutput(join(dir, first.file), req.out!) : await run.outputTarget(req.out)
    try {
      // Parquet and xlsx take every record first: one writer over the part files
      if (!isTextFormat(format)) {
        const n = await writeFile(dir, pages, target, format, this.fileOptions(target, columns))
        return {wrote: true, written: n}
      }
      const writer = new RecordWriter(target, format, {
        header: headerCells(columns, req.escapeFormulas),
        bom: req.bom,
      })
      if (adopt) writer.ndjsonChunks(first.records)
      const spooled = FORMATS[format].spool === 'csv' ? columns : undefined
      for (const p of pages)
        if (!adopt || p !== first) await copyPage(dir, p, writer, spooled, this.x.layouts)
      writer.end()
      await target.commit()
      return {wrote: true, written: writer.count}
    } catch (error) {
      await target.abort()
      run.absorbOrThrow(error)
      return {wrote: false, written: 0}
    }
  }

  /**
   * --out-dir at the end: one schema for the folder, and no column ever dropped from a file (issue 29).
   * The run's columns already hold the manifest's (src/jobs/county-export.ts knows them at the start); the
   * columns of every file not written with them (an earlier run's, a manifest without a schema) are read
   * from the file and known too. Then each file whose columns are not the final ones is rewritten with
   * them, only when that keeps all of its own: a file with a column the run's fixed columns lack
   * (`--fields`) keeps its file as it is, and its manifest entry its schema key. A county this run did
   * not fetch (`--max-age`) is rewritten only to widen it. The manifest then records the run's schema.
   */
  private async settleFolder(units: Unit[]): Promise<void> {
    const {req} = this.x
    const schema = this.x.stages.schema
    const entries = this.manifest!.current.counties
    const format = req.format
    switch (format) {
      case 'csv':
      case 'parquet':
        await this.widen(units, format)
        break
      case 'ndjson':
      case 'json': // each record names its own fields: a file has no columns to widen
      case 'xlsx': // not written under --out-dir (src/model/formats.ts)
        break
      default:
        unknownFormat(format)
    }
    const columns = schema.names()
    this.manifest!.setSchema({
      key: schemaKey(columns),
      columns: columns.map((name) => ({name, type: parquetType(columnOf(name))})),
      options: schema.options,
    })
    if (entries.length > 0 || this.filesWritten > 0) await this.manifest!.save()
  }

  /** The files of a format with a column list (a CSV header, a Parquet schema) widened to the run's columns. */
  private async widen(units: Unit[], format: 'csv' | 'parquet'): Promise<void> {
    const schema = this.x.stages.schema
    const entries = this.manifest!.current.counties
    const before = schema.names()
    const own = await this.fileColumnsOf(entries, schemaKey(before), format)
    const columns = schema.names()
    const key = schemaKey(columns)
    const keeps = new Set(columns)
    for (const e of entries) {
      if (e.schema === key) continue
      const has = own.get(e.fips) ?? (e.schema === schemaKey(before) ? before : undefined)
      // gone or unreadable (nothing to keep), or a column the run lacks (never narrowed): left alone
      if (!has || !has.every((c) => keeps.has(c))) continue
      const rewrite = has.join('\u0000') !== columns.join('\u0000')
      if (rewrite) await this.rewrite(e.path, columns, format)
      await this.manifest!.record({...e, schema: key, ...(rewrite ? this.parquetEntry() : {})})
      const u = units.find((x) => x.fips === e.fips)
      if (u) u.written = key
    }
  }

  /**
   * The columns of each county file not written with the columns of `key` (read from the file), made
   * known to the run's schema so that its final columns hold them (none with `--fields`: fixed columns).
   */
  private async fileColumnsOf(
    entries: readonly ManifestEntry[],
    key: string,
    format: 'csv' | 'parquet',
  ): Promise<Map<string, string[]>> {
    const own = new Map<string, string[]>()
    for (const e of entries) {
      if (e.schema === key) continue
      // an object is read from a private copy (the run's parts folder), removed after
      const file = await this.dir.local(e.path, this.x.run.journal.partsDir)
      if (!file) continue
      const cols = await fileColumns(file.path, format).finally(() => file.release())
      if (!cols) continue
      own.set(e.fips, cols)
      this.x.stages.schema.know(cols)
    }
    return own
  }

  /** One county file again with `columns`: its rows read back and laid out by name (absent columns empty). */
  private async rewrite(rel: string, columns: readonly string[], format: 'csv' | 'parquet'): Promise<void> {
    const {req, run} = this.x
    // read from the file itself (replaced only by the commit) or from a private copy of the object
    const file = await this.dir.local(rel, run.journal.partsDir)
    if (!file) return
    const path = file.path
    const target = await run.outputTarget(this.dir.at(rel), '--out-dir')
    try {
      if (format === 'parquet') {
        const {readParquetRecords} = await import('../io/parquet-reader.js')
        const {writeParquet} = await import('../io/parquet-writer.js')
        // with this run's compression and row groups: the manifest entry says so (settleFolder)
        await writeParquet(
          target,
          {flat: readParquetRecords(path)},
          {columns, compression: req.parquet?.compression, rowGroupRows: req.parquet?.rowGroupRows},
        )
      } else {
        const writer = new RecordWriter(target, 'csv', {
          header: headerCells(columns, req.escapeFormulas),
          bom: req.bom,
        })
        let at: Map<string, number> | undefined
        for await (const {fields} of readCsv(path)) {
          if (!at) {
            at = new Map(fields.map((h, i) => [headerName(h), i]))
            continue
          }
          const row = columns.map((c) => {
            const i = at!.get(c)
            return i === undefined ? '' : fields[i]!
          })
          if (!writer.csv(row)) await target.drain()
        }
        writer.end()
      }
      await target.commit()
      this.filesRewritten++
    } catch (error) {
      await target.abort()
      throw error
    } finally {
      await file.release()
    }
  }

  /** Skipped records: where they were and why, beside --out (or in --out-dir); the rest of their county was written. */
  private async writeRejects(units: Unit[], wrote: boolean): Promise<void> {
    const {req, run} = this.x
    const lines = units.flatMap((u) =>
      u.pages.flatMap((p) =>
        (p.rejected ?? []).map(
          (r) => `${JSON.stringify({fips: u.fips, page: p.n, record: r.index, reason: r.reason})}\n`,
        ),
      ),
    )
    if (lines.length === 0 || !(req.out || req.outDir) || !wrote) return
    this.rejectsFile = req.outDir ? this.dir.at(REJECTS) : `${req.out}.rejects.ndjson`
    const flag = req.outDir ? '--out-dir' : '--out'
    if (req.outDir) await this.dir.prepare(REJECTS).catch(run.absorbOrThrow)
    await writeOutputFile(this.rejectsFile, lines.join(''), flag).catch(run.absorbOrThrow)
  }

  /** A window the run spent, with its reset still ahead: the checkpoint remembers it (a rerun waits, no 429). */
  private rememberWindow(): void {
    const b = this.x.run.budget()
    if (b.remaining === 0 && b.resetAtMs !== undefined && b.resetAtMs > Date.now())
      this.x.run.journal.append({
        t: 'window',
        resetAt: b.resetAtMs,
        ...(b.limit !== undefined ? {limit: b.limit} : {}),
      })
  }
}
