import {ExitCode} from '../errors.js'
import {type ExportDir, openExportDir} from '../io/export-dir.js'
import {RecordWriter} from '../io/record-writer.js'
import {FORMATS, isTextFormat} from '../model/formats.js'
import {CsvRowEncoder} from '../pipeline/cells.js'
import {cutOff, fetchCounty} from '../pipeline/county.js'
import {IdSet} from '../pipeline/ids.js'
import {headerCells, StreamSink} from '../pipeline/sinks.js'
import {verifyPages, type PagePart} from '../pipeline/spool.js'
import {RecordStages} from '../pipeline/stages.js'
import type {Rejected} from '../pipeline/records.js'
import {decodeEvent, exportEvent, exportHeader, type ExportEvent} from './events.js'
import {ExportOutputs} from './export-outputs.js'
import {ExportStats, type PageStats} from './export-stats.js'
import {journalPaths, outDirJournalPaths} from './journal.js'
import {freshCounties, ManifestFile} from '../io/manifest.js'
import {MANIFEST} from '../io/out-dir-layout.js'
import {isFinished, outcomeOf, type Outcome} from './outcome.js'
import {RunState} from './run.js'
import {parseWhere} from '../model/where.js'
import {copyUnitPages, rebuildIds} from './resume.js'

/**
 * `county-export` on the job engine, as stages: each county is one unit whose pages go through the record
 * pipeline (src/pipeline/: pages -> records -> checks -> spool, or straight to stdout at the head of a
 * streamed run); when counties end, src/jobs/export-outputs.ts writes them (one file, one file per county,
 * or stdout) with the run's one schema. This module holds the run's state: the checkpoint (typed events,
 * replayed on resume), the units, the stream's head, and the summary.
 */
import type {ExportDeps, ExportRequest, ExportSummary, Unit} from './export-types.js'

export type {
  ExportDeps,
  ExportFormat,
  ExportRequest,
  ExportSummary,
  CountyReport,
  Unit,
} from './export-types.js'

export async function runCountyExport(deps: ExportDeps, req: ExportRequest): Promise<ExportSummary> {
  const exp = new CountyExport(deps, req)
  const run = await RunState.start(deps, {
    out: req.out,
    dir: req.outDir,
    restart: req.restart,
    header: exportHeader(req, deps.baseUrl),
    replay: (e) => exp.replay(e),
  })
  try {
    return await exp.start(run)
  } finally {
    await run.close()
  }
}

class CountyExport {
  readonly stages: RecordStages
  readonly units: Unit[]
  private readonly byFips: Map<string, Unit>
  /** CSV layouts (the columns rows were spooled in), by id: names as journaled, and field ids. */
  readonly layouts: string[][] = []
  private readonly layoutIds = new Map<string, number>()
  private readonly layoutCols: Int32Array[] = []
  private window: {resetAt: number; limit?: number | undefined} | undefined
  private journalPath = ''
  run!: RunState
  stats: ExportStats | undefined
  outputs!: ExportOutputs
  private head = 0
  private advancing: Promise<void> = Promise.resolve()
  stream: StreamSink | undefined
  private records = 0

  constructor(
    readonly deps: ExportDeps,
    readonly req: ExportRequest,
  ) {
    this.stages = new RecordStages({
      strict: req.strict === true,
      apiKey: deps.apiKey,
      maxRecordBytes: req.maxRecordBytes,
      fields: req.fields,
      where: req.where === undefined ? undefined : parseWhere(req.where),
    })
    this.units = req.fips.map((fips, index) => ({fips, index, pages: [], flushed: 0, ids: new IdSet()}))
    this.journalPath = req.outDir
      ? outDirJournalPaths(req.outDir).journal
      : req.out
        ? journalPaths(req.out).journal
        : 'the checkpoint'
    this.byFips = new Map(this.units.map((u) => [u.fips, u]))
  }

  /** One checkpoint event of an earlier process, decoded (anything unknown is refused). */
  replay(raw: Record<string, unknown>): void {
    const e: ExportEvent = decodeEvent(exportEvent, raw, this.journalPath)
    if (e.t === 'layout') return void this.knowLayout(e.id, e.cols)
    if (e.t === 'window') return void (this.window = {resetAt: e.resetAt, limit: e.limit})
    const u = this.byFips.get(e.u)
    if (!u) return
    if (e.t === 'page') {
      u.pages.push({
        n: e.n,
        records: e.records,
        file: e.file,
        ...(e.segs ? {segments: e.segs} : {}),
        ...(e.rejected ? {rejected: e.rejected} : {}),
        ...(e.dups ? {duplicates: e.dups} : {}),
        ...(e.filtered ? {filtered: e.filtered} : {}),
        ...(e.dropped ? {filteredIds: e.dropped} : {}),
        ...(e.violations ? {violations: e.violations} : {}),
        ...(e.url ? {url: e.url} : {}),
      })
      u.next = e.next ?? undefined
    } else if (e.t === 'end') u.outcome = outcomeFrom(e.outcome)
    else if (e.t === 'written') u.written = e.schema ?? ''
    else Object.assign(u, {pages: [], next: undefined, outcome: undefined})
  }

  async start(run: RunState): Promise<ExportSummary> {
    this.run = run
    const req = this.req
    // a local folder or an s3:// prefix (src/io/export-dir.ts): the manifest read from where it is
    const dir = req.outDir ? await openExportDir(req.outDir) : undefined
    const manifest = dir ? await ManifestFile.open(dir, req.format) : undefined
    // _sfl/ made (and checked as a partition folder is); the lock is ours: a manifest temp file left by a
    // killed run is stale
    await dir?.prepare(MANIFEST)
    const now = req.now ?? Date.now
    // --max-age: a county whose file of an earlier run is young enough is not asked for again
    const fresh =
      manifest && req.maxAgeMs !== undefined
        ? freshCounties(manifest.current, req.fips, req.maxAgeMs, now(), await manifest.presence(), req.where)
        : new Set<string>()
    const units = this.units.filter((u) => !fresh.has(u.fips))
    units.forEach((u, i) => (u.index = i))
    if (manifest) for (const c of manifest.current.schema?.columns ?? []) this.stages.schema.know([c.name])
    await this.prepare(units, dir)
    this.outputs = new ExportOutputs(this, manifest, now)
    // a county that finished before a stop but was not yet written (a crash in between) is written now
    for (const u of units)
      if (u.outcome && isFinished(u.outcome.kind) && u.written === undefined && req.outDir)
        await this.outputs.writeCounty(u).catch(run.absorbOrThrow)
    const resumedUnits = units.filter((u) => u.outcome && u.outcome.kind !== 'failed').length
    this.openStream()
    this.records = units.reduce((n, u) => n + u.pages.reduce((m, p) => m + p.records, 0), 0)
    this.progress(units)
    if (this.window) this.deps.scheduler.assumeSpent(this.window.resetAt, this.window.limit)
    await Promise.all(units.map((u) => this.exportUnit(u, units).catch(run.absorbOrThrow)))
    if (this.stream) await this.advance(units).catch(run.absorbOrThrow)
    const written = await this.outputs.finish(units)
    return this.summary(units, written, resumedUnits, [...fresh])
  }

  /** A resumed run: part files checked against the journal, statistics recounted, ids rebuilt. */
  private async prepare(units: Unit[], outDir: ExportDir | undefined): Promise<void> {
    const dir = this.run.journal.partsDir
    for (const u of units) {
      if (u.written !== undefined || u.pages.length === 0 || (u.outcome && !isFinished(u.outcome.kind)))
        continue
      const bad = await verifyPages(dir, u.pages)
      if (bad) {
        this.deps.notice(`sfl: ${bad}; county ${u.fips} will be fetched again`)
        Object.assign(u, {pages: [], next: undefined, outcome: undefined})
        this.run.journal.append({t: 'reset', u: u.fips})
      }
    }
    this.stats = this.req.stats === false ? undefined : new ExportStats(units.length)
    for (const u of units) {
      if (u.pages.length === 0) continue
      if (this.stats)
        if (u.written !== undefined && outDir) await this.recountWritten(u, outDir)
        else await this.stats.recount(u.fips, dir, u.pages, this.layouts)
      if (u.outcome && isFinished(u.outcome.kind)) this.stats?.countyEnded(u.fips)
      // a county that goes on fetching must know the ids its earlier pages took
      else await rebuildIds(u, dir, this.layouts)
    }
  }

  /** A county an earlier process wrote to --out-dir: its statistics read back from its file (or object). */
  private async recountWritten(u: Unit, outDir: ExportDir): Promise<void> {
    const file = await outDir.local(ExportOutputs.countyPath(this.req, u.fips), this.run.journal.partsDir)
    if (!file) return
    try {
      await this.stats!.recountFile(u.fips, file.path)
    } finally {
      await file.release()
    }
  }

  private knowLayout(id: number, cols: string[]): void {
    this.layouts[id] = cols
    this.layoutIds.set(cols.join('\u0000'), id)
    this.stages.schema.know(cols)
  }

  /** The columns the last layout was looked up for (the schema hands back the same array until a column appears). */
  private lastCols: Int32Array | undefined
  private lastLayout = -1

  /** CSV: the layout rows are spooled in now (the run's columns); journaled the first time. Per record: one compare. */
  layout = (): number => {
    const cols = this.stages.schema.columns()
    if (cols === this.lastCols) return this.lastLayout
    const names = this.stages.schema.names(cols)
    const key = names.join('\u0000')
    let id = this.layoutIds.get(key)
    if (id === undefined) {
      id = this.layouts.length
      this.layouts.push(names)
      this.layoutIds.set(key, id)
      this.run.journal.append({t: 'layout', id, cols: names})
    }
    this.layoutCols[id] ??= cols
    this.lastCols = cols
    this.lastLayout = id
    return id
  }

  columnsOf = (layout: number): Int32Array => this.layoutCols[layout]!

  /** Stdout streams when the columns are known up front: NDJSON, JSON, and CSV with --fields. */
  private openStream(): void {
    const req = this.req
    const format = req.format
    if (req.out || req.outDir || !isTextFormat(format)) return
    // CSV rows are spooled in the run's columns, known up front only with --fields
    const fixed =
      FORMATS[format].spool === 'csv' && req.fields?.length ? this.stages.schema.columns() : undefined
    if (FORMATS[format].spool === 'csv' && !fixed) return
    const writer = new RecordWriter(this.run.stdoutTarget(), format, {
      header: fixed && headerCells(this.stages.schema.names(fixed), req.escapeFormulas),
      bom: req.bom,
    })
    this.stream = new StreamSink(writer, fixed && new CsvRowEncoder(req.escapeFormulas), fixed)
  }

  private progress(units: Unit[]): void {
    this.deps.onProgress?.({
      countiesDone: units.filter((u) => u.outcome && u.outcome.kind !== 'failed').length,
      counties: units.length,
      records: this.records,
      // an ETA for one county from what the service said it holds (none when it did not say)
      expected: units.length === 1 ? units[0]!.expected : undefined,
    })
  }

  private async exportUnit(u: Unit, units: Unit[]): Promise<void> {
    if (u.outcome && u.outcome.kind !== 'failed') return
    u.outcome = undefined
    const run = this.run
    try {
      await fetchCounty(
        u,
        {
          client: this.deps.client,
          scheduler: this.deps.scheduler,
          baseUrl: this.deps.baseUrl,
          stages: this.stages,
          signal: run.signal,
          throwIfStopped: () => run.throwIfStopped(),
          spool: {
            partsDir: run.journal.partsDir,
            format: this.req.format,
            encoder:
              FORMATS[this.req.format].spool === 'csv'
                ? new CsvRowEncoder(this.req.escapeFormulas)
                : undefined,
            layout: this.layout,
            columnsOf: this.columnsOf,
          },
        },
        {
          // a page streams when its county is the head and every earlier page of it is out
          stream: () =>
            this.stream && u.index === this.head && u.flushed === u.pages.length ? this.stream : undefined,
          pageStats: this.stats && (() => this.stats!.page()),
          onPage: (part, direct, stats) =>
            this.pageDone(u, units, part, direct, stats as PageStats | undefined),
        },
      )
      u.outcome = ended(u)
      this.stats?.countyEnded(u.fips)
    } catch (error) {
      this.stats?.reset(u.fips) // not written: its figures are not the run's
      if (run.absorbStop(error)) return
      u.outcome = {...outcomeOf(error, run.message(error), u.pages.length === 0), records: 0}
      // a later page refused: the service's fault (exit 6), and a rerun continues from that page
      const cut = u.pages.length > 0 ? cutOff(error) : undefined
      if (cut)
        u.outcome = {
          ...u.outcome,
          kind: 'failed',
          exitCode: ExitCode.server,
          error: `${cut}: ${u.outcome.error ?? ''}`,
        }
    }
    run.journal.append({t: 'end', u: u.fips, outcome: u.outcome})
    // a finished county fetches no more pages: its ids go (a failed one keeps them for its retry)
    if (isFinished(u.outcome.kind)) u.ids.release()
    if (this.req.outDir && isFinished(u.outcome.kind)) await this.outputs.writeCounty(u)
    this.progress(units)
    if (this.stream && u.index === this.head) await this.advance(units)
  }

  private async pageDone(
    u: Unit,
    units: Unit[],
    part: PagePart,
    direct: boolean,
    stats: PageStats | undefined,
  ): Promise<void> {
    if (stats) this.stats!.pageDone(u.fips, stats)
    if (direct) u.flushed = u.pages.length
    else if (this.stream && u.index === this.head) await this.advance(units) // the head's spooled page goes out now
    this.run.journal.append({
      t: 'page',
      u: u.fips,
      n: part.n,
      records: part.records,
      file: part.file,
      ...(part.segments && !direct ? {segs: part.segments} : {}),
      next: u.next ?? null,
      ...(part.rejected ? {rejected: part.rejected} : {}),
      ...(part.duplicates ? {dups: part.duplicates} : {}),
      ...(part.filtered ? {filtered: part.filtered} : {}),
      ...(part.filteredIds ? {dropped: part.filteredIds} : {}),
      ...(part.violations ? {violations: part.violations} : {}),
      ...(part.url ? {url: part.url} : {}),
    })
    // the ids live on in the checkpoint and in the county's IdSet: not held a second time per page
    delete part.filteredIds
    this.records += part.records
    this.progress(units)
  }

  /**
   * When the first unfinished unit ends, the next one's spooled pages go out and it streams from then on.
   * A failed unit is passed over: on stdout there is no checkpoint to continue it from, so it is as final
   * as a finished one and must not hold back the counties after it. One copy at a time: two units ending
   * together must not copy the same page twice.
   */
  private advance(units: Unit[]): Promise<void> {
    this.advancing = this.advancing.then(async () => {
      const writer = this.stream!.writer
      const flush = (u: Unit) =>
        copyUnitPages(u, this.run.journal.partsDir, writer, this.req, this.stages, this.layouts)
      while (this.head < units.length) {
        const u = units[this.head]!
        if (u.outcome && isFinished(u.outcome.kind)) await flush(u)
        if (!u.outcome) break
        this.head++
      }
      if (this.head < units.length) await flush(units[this.head]!)
    })
    return this.advancing
  }

  private summary(
    units: Unit[],
    written: {wrote: boolean; written: number},
    resumedUnits: number,
    fresh: string[],
  ): ExportSummary {
    const rejected = units.flatMap((u) =>
      u.pages.flatMap((p) =>
        (p.rejected ?? []).map((r: Rejected) => ({
          fips: u.fips,
          page: p.n,
          record: r.index,
          reason: r.reason,
        })),
      ),
    )
    const violations = new Map<string, number>()
    for (const u of units)
      for (const p of u.pages)
        for (const [f, c] of Object.entries(p.violations ?? {}))
          violations.set(f, (violations.get(f) ?? 0) + c)
    const run = this.run
    const finished = units.filter((u) => u.outcome && isFinished(u.outcome.kind))
    return {
      counties: units.map((u) => ({
        fips: u.fips,
        ...(u.outcome ? {outcome: u.outcome} : {}),
        records: u.pages.reduce((m, p) => m + p.records, 0),
        pages: u.pages.length,
      })),
      written: written.written,
      resumedUnits,
      stopped: run.stopped,
      checkpoint: this.outputs.checkpoint,
      wrote: written.wrote,
      rejected,
      rejectsFile: this.outputs.rejectsFile,
      duplicates: units.reduce((n, u) => n + u.pages.reduce((m, p) => m + (p.duplicates ?? 0), 0), 0),
      filtered: units.reduce((n, u) => n + u.pages.reduce((m, p) => m + (p.filtered ?? 0), 0), 0),
      violations: [...violations]
        .map(([field, records]) => ({field, records}))
        .sort((a, b) => b.records - a.records),
      keyEchoes: this.stages.keyEchoes,
      columns: this.stages.schema.names(),
      options: this.stages.schema.options,
      fresh: this.req.fips.filter((f) => fresh.includes(f)),
      filesWritten: this.outputs.filesWritten,
      filesRewritten: this.outputs.filesRewritten,
      ...(this.stats && written.wrote ? {stats: this.stats.result(this.req.fips)} : {}),
      ...(this.outputs.unfit.size
        ? {unfit: [...this.outputs.unfit].map(([column, count]) => ({column, count}))}
        : {}),
      ...(this.outputs.cut.size
        ? {cut: [...this.outputs.cut].map(([column, count]) => ({column, count}))}
        : {}),
      exitCode: run.exitCode(
        units.flatMap((u) => (u.outcome ? [u.outcome] : [])),
        finished.length > 0,
      ),
    }
  }
}

/** A county that ended whole: done, or empty when it had no page at all. */
function ended(u: Unit): Outcome {
  const skipped = u.pages.reduce((m, p) => m + (p.rejected?.length ?? 0), 0)
  return {
    kind: u.pages.length === 0 ? 'empty' : 'done',
    records: u.pages.reduce((m, p) => m + p.records, 0),
    exitCode: 0,
    ...(skipped ? {skipped, error: `${skipped} record${skipped === 1 ? '' : 's'} skipped`} : {}),
  }
}

/** An outcome as the journal holds it (optional members absent, not undefined). */
function outcomeFrom(o: {
  kind: Outcome['kind']
  records: number
  exitCode: number
  error?: string | undefined
  skipped?: number | undefined
}): Outcome {
  return {
    kind: o.kind,
    records: o.records,
    exitCode: o.exitCode,
    ...(o.error !== undefined ? {error: o.error} : {}),
    ...(o.skipped !== undefined ? {skipped: o.skipped} : {}),
  }
}
