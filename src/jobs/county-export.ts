import {createReadStream} from 'node:fs'
import {mkdir, rm} from 'node:fs/promises'
import {dirname, join} from 'node:path'

import type {HttpClient, HttpResponse} from '../api/client.js'
import {BadResponseError, ServerError, type SflError} from '../errors.js'
import {nextLink} from '../api/link.js'
import {countyUrl} from '../api/query.js'
import {redact} from '../api/secrets.js'
import {countyByFips} from '../address/counties.js'
import {removeStaleTemps, writeFileAtomic} from '../io/atomic-file.js'
import {
  DataScanner,
  MAX_RECORD_BYTES,
  MAX_RECORD_DEPTH,
  MemberSpans,
  type Rejected,
} from '../io/data-scanner.js'
import {CsvRows, columnOf} from '../io/csv-rows.js'
import {readCsv} from '../io/csv-reader.js'
import {readLines} from '../io/lines.js'
import {localIoError} from '../io/fs-errors.js'
import type {OutputTarget} from '../io/output.js'
import {RecordWriter, type RecordFormat} from '../io/record-writer.js'
import {cell, columnsFor, selectColumns, ShapeTracker, type Column} from '../model/columns.js'
import type {Scheduler} from '../schedule/scheduler.js'
import {RunState, type JobDeps} from './run.js'
import {countyFilePath, freshCounties, MANIFEST_FILE, ManifestFile} from './manifest.js'
import {ExportStats, type ExportStatsResult, type PageStats} from './export-stats.js'
import {statsTag, STATS_MEMBERS, type RecordSpans} from '../stats/facts.js'
import {isFinished, outcomeOf, type Outcome} from './outcome.js'
import {PartFile, verifyPages, type PagePart, type Segment} from './spool.js'

/**
 * `county-export` on the job engine. Each county is one unit: its pages (RFC 8288 rel="next") are fetched
 * in order, each read through the data scanner into a part file and journaled once whole; counties run
 * concurrently under the scheduler. The output holds exactly the counties that finished, whole, in the
 * order asked, written atomically; on stdout, NDJSON and JSON (and CSV with --fields) stream as records
 * arrive from the first unfinished county, the others wait in their part files.
 */
/** Parquet needs a file (--out): its footer is written last and readers seek to it. */
export type ExportFormat = RecordFormat | 'parquet'

export interface ExportRequest {
  fips: string[]
  out?: string | undefined
  format: ExportFormat
  fields?: string[] | undefined
  restart: boolean
  bom: boolean
  escapeFormulas: boolean
  /** Poison-record cap: a record larger than this is skipped into the rejects list. */
  maxRecordBytes?: number | undefined
  /**
   * `--out-dir`: each county to its own file (`state=CA/fips=06067/data.csv`), written atomically when it
   * finishes, and recorded in DIR/manifest.json; the checkpoint and lock live in DIR.
   */
  outDir?: string | undefined
  /** `--max-age` (with outDir): counties whose manifest entry is younger are skipped as fresh. */
  maxAgeMs?: number | undefined
  /** The clock of manifest times (tests). */
  now?: (() => number) | undefined
  /** Gather the run statistics (issue 14; default true). */
  stats?: boolean | undefined
}

export interface ExportDeps extends JobDeps {
  client: HttpClient
  scheduler: Scheduler
  baseUrl: string
  onProgress?: (p: {
    countiesDone: number
    counties: number
    records: number
    expected?: number | undefined
  }) => void
}

export interface CountyReport {
  fips: string
  /** Undefined when the run stopped before the county ended. */
  outcome?: Outcome
  records: number
  pages: number
}

export interface ExportSummary {
  counties: CountyReport[]
  written: number
  resumedUnits: number
  stopped?: SflError | undefined
  /** The checkpoint kept for a rerun, when some county is not final. */
  checkpoint?: string | undefined
  /** Whether the output (file or stdout) received the finished counties. */
  wrote: boolean
  /** Records skipped as poison (too large, too deep), with where they were. */
  rejected: Array<{fips: string; page: number; record: number; reason: string}>
  /** The file listing them, beside --out (in --out-dir). */
  rejectsFile?: string | undefined
  /** --out-dir: the asked counties skipped as fresh (--max-age), in the order asked. */
  fresh: string[]
  /** --out-dir: county files written by this run. */
  filesWritten: number
  /** The statistics of the counties that ended (absent with stats off). */
  stats?: ExportStatsResult | undefined
  /** Parquet: values of another type than the spec's, written as null, by column. */
  unfit?: Array<{column: string; count: number}> | undefined
  exitCode: number
}

/** A county answer over this many pages is taken as a pagination loop (README "Pagination"). */
export const MAX_PAGES = 100_000

interface Unit {
  fips: string
  index: number
  pages: PagePart[]
  next?: string | undefined
  outcome?: Outcome | undefined
  /** Pages already copied to a streaming stdout. */
  flushed: number
  /** Records the service said the county holds (X-Total-Count), for the ETA. */
  expected?: number | undefined
  /** --out-dir: the county's file and manifest entry are written (its part files are gone). */
  written?: boolean
}

export async function runCountyExport(deps: ExportDeps, req: ExportRequest): Promise<ExportSummary> {
  const asked: Unit[] = req.fips.map((fips, index) => ({fips, index, pages: [], flushed: 0}))
  const byFips = new Map(asked.map((u) => [u.fips, u]))
  const outDir = req.outDir
  /** CSV: the column layouts rows were spooled in (journaled once each, pages refer to them by index). */
  const layouts: Column[][] = []
  const layoutIds = new Map<string, number>()
  const run = await RunState.start(deps, {
    out: req.out,
    dir: outDir,
    restart: req.restart,
    header: {
      // 3: CSV pages spool formatted rows by column layout
      v: 3,
      kind: 'county-export',
      // --out-dir: the counties asked, fresh or not, so a rerun with --max-age continues the same run
      params: {
        fips: req.fips,
        format: req.format,
        fields: req.fields ?? null,
        baseUrl: deps.baseUrl,
        ...(outDir ? {layout: 'out-dir'} : {}),
      },
    },
    replay: (e) => {
      if (e['t'] === 'layout') return void (layouts[Number(e['id'])] = (e['cols'] as string[]).map(columnOf))
      const u = byFips.get(String(e['u']))
      if (!u) return
      if (e['t'] === 'page') {
        u.pages.push({
          n: Number(e['n']),
          records: Number(e['records']),
          file: String(e['file']),
          ...(Array.isArray(e['segs']) ? {segments: e['segs'] as Segment[]} : {}),
          ...(Array.isArray(e['rejected']) ? {rejected: e['rejected'] as Rejected[]} : {}),
        })
        u.next = typeof e['next'] === 'string' ? e['next'] : undefined
      } else if (e['t'] === 'end') u.outcome = e['outcome'] as Outcome
      else if (e['t'] === 'written') u.written = true
      else if (e['t'] === 'reset') Object.assign(u, {pages: [], next: undefined, outcome: undefined})
    },
  })
  try {
    const journal = run.journal
    const now = req.now ?? Date.now
    const manifest = outDir ? await ManifestFile.open(outDir, req.format) : undefined
    // the lock is ours: a manifest temp file left by a killed run is stale
    if (outDir) await removeStaleTemps(join(outDir, MANIFEST_FILE))
    // --max-age: a county whose file of an earlier run is young enough is not asked for again
    const fresh =
      manifest && req.maxAgeMs !== undefined
        ? freshCounties(manifest.current, req.fips, req.maxAgeMs, now(), manifest.exists)
        : new Set<string>()
    const units = asked.filter((u) => !fresh.has(u.fips))
    units.forEach((u, i) => (u.index = i))
    // a part file that does not hold what the journal says (edited, cut short) is fetched again
    for (const u of units) {
      if (u.written || u.pages.length === 0 || (u.outcome && !isFinished(u.outcome.kind))) continue
      const bad = await verifyPages(journal.partsDir, u.pages)
      if (bad) {
        deps.notice(`sfl: ${bad}; county ${u.fips} will be fetched again`)
        Object.assign(u, {pages: [], next: undefined, outcome: undefined})
        journal.append({t: 'reset', u: u.fips})
      }
    }
    // the pages an earlier process fetched are counted from their part files (src/jobs/export-stats.ts)
    const stats = req.stats === false ? undefined : new ExportStats(units.length)
    if (stats)
      for (const u of units) {
        if (u.pages.length === 0) continue
        if (u.written && outDir) {
          const state = countyByFips(u.fips)?.state ?? 'unknown'
          await stats.recountFile(u.fips, join(outDir, countyFilePath(state, u.fips, req.format)))
        } else await stats.recount(u.fips, journal.partsDir, u.pages, layouts)
        if (u.outcome && isFinished(u.outcome.kind)) stats.countyEnded(u.fips)
      }
    // CSV with --fields knows its header before any record: it can stream to stdout
    const fixedCols = req.format === 'csv' && req.fields?.length ? selectColumns([], req.fields) : undefined
    const resumedUnits = units.filter((u) => u.outcome && u.outcome.kind !== 'failed').length
    const shape = new ShapeTracker()
    const csvNeedsShape = req.format === 'csv' && !req.fields?.length
    // with stats, the tokenizer tags the ~12 columns they read (src/stats/facts.ts statsTag)
    const csv = req.format === 'csv' ? new CsvRows(req.escapeFormulas, stats && statsTag) : undefined
    layouts.forEach((cols, id) => layoutIds.set(layoutKey(cols), id))
    // a resumed run knows its columns from the layouts its rows were spooled in
    if (csvNeedsShape)
      for (const u of units)
        for (const p of u.pages)
          for (const seg of p.segments ?? [])
            csv!.know(
              shape,
              layouts[seg.layout]!.map((c) => c.header),
            )
    /** The layout rows are spooled in now: the columns known so far, in output order. */
    const currentLayout = (): number => {
      const cols = fixedCols ?? columnsFor(shape.shape)
      const key = layoutKey(cols)
      let id = layoutIds.get(key)
      if (id === undefined) {
        id = layouts.length
        layouts.push(cols)
        layoutIds.set(key, id)
        journal.append({t: 'layout', id, cols: cols.map((c) => c.header)})
      }
      return id
    }

    const header = (cols: Column[]) => cols.map((c) => cell(c.header, req.escapeFormulas))

    // stdout streams when the frame is known up front; otherwise everything is assembled at the end
    const format = req.format
    const streaming =
      !req.out && !outDir && format !== 'parquet' && (format !== 'csv' || fixedCols !== undefined)
    const stdout = streaming ? run.stdoutTarget() : undefined
    const live =
      stdout && format !== 'parquet'
        ? new RecordWriter(stdout, format, {header: fixedCols && header(fixedCols), bom: req.bom})
        : undefined

    let records = units.reduce((n, u) => n + u.pages.reduce((m, p) => m + p.records, 0), 0)
    const progress = () =>
      deps.onProgress?.({
        countiesDone: units.filter((u) => u.outcome && u.outcome.kind !== 'failed').length,
        counties: units.length,
        records,
        // an ETA for one county from what the service said it holds (none when it did not say)
        expected: units.length === 1 ? units[0]!.expected : undefined,
      })
    progress()

    /** Copy a unit's finished, spooled pages to the live stdout writer. */
    const flushSpooled = async (u: Unit) => {
      for (; u.flushed < u.pages.length; u.flushed++)
        await copyPage(journal.partsDir, u.pages[u.flushed]!, live!, fixedCols, layouts)
    }
    let head = 0
    /**
     * When the first unfinished unit ends, the next one's spooled pages go out and it streams from then on.
     * A failed unit is passed over: on stdout there is no checkpoint to continue it from, so it is as final
     * as a finished one and must not hold back the counties after it.
     */
    let advancing: Promise<void> = Promise.resolve()
    const step = async () => {
      while (live && head < units.length) {
        const u = units[head]!
        if (u.outcome && isFinished(u.outcome.kind)) await flushSpooled(u)
        if (!u.outcome) break
        head++
      }
      if (live && head < units.length) await flushSpooled(units[head]!)
    }
    // one copy at a time: two units ending together must not copy the same page twice
    const advance = () => (advancing = advancing.then(step))

    /** --out-dir, CSV: a county's columns are those its rows were spooled in (or the run's, if it has none). */
    const unitColumns = (u: Unit): Column[] => {
      if (fixedCols) return fixedCols
      const ids = [...new Set(u.pages.flatMap((p) => (p.segments ?? []).map((sg) => sg.layout)))]
      if (ids.length === 1) return layouts[ids[0]!]!
      if (ids.length === 0) return columnsFor(shape.shape)
      const own = new ShapeTracker()
      for (const id of ids)
        for (const c of layouts[id]!) own.observe({[c.key]: c.sub === undefined ? 0 : {[c.sub]: 0}})
      return columnsFor(own.shape)
    }
    /** Parquet: values of another type than the spec's, written as null, by column (every file). */
    const unfit = new Map<string, number>()
    /** How every file of this run is written: one county's under --out-dir, or the Parquet --out. */
    const fileOptions = (target: OutputTarget, columns?: Column[]) => ({
      columns,
      layouts,
      escapeFormulas: req.escapeFormulas,
      bom: req.bom,
      commit: () => run.commit(target),
      fields: req.fields,
      onUnfit: (column: string, n: number) => unfit.set(column, (unfit.get(column) ?? 0) + n),
    })
    let filesWritten = 0
    let recordsToFiles = 0
    /**
     * --out-dir: a finished county goes to its own file at once (atomically), then into the manifest; only
     * then is it journaled as written and its part files removed, so a stop at any point loses nothing.
     */
    const writeUnit = async (u: Unit): Promise<void> => {
      const county = countyByFips(u.fips)
      const state = county?.state ?? 'unknown'
      const rel = countyFilePath(state, u.fips, req.format)
      const path = join(outDir!, rel)
      try {
        await mkdir(dirname(path), {recursive: true})
      } catch (error) {
        throw localIoError(error, 'creating', dirname(path))
      }
      await removeStaleTemps(path) // a run killed while writing this county's file left its temp
      const target = await run.outputTarget(path)
      const count = await writeCountyFile(
        journal.partsDir,
        u.pages,
        target,
        req.format,
        fileOptions(target, req.format === 'csv' ? unitColumns(u) : undefined),
      )
      filesWritten++
      recordsToFiles += count
      await manifest!.record({
        fips: u.fips,
        state,
        name: county?.name ?? '',
        path: rel,
        records: count,
        pages: u.pages.length,
        finishedAt: new Date(now()).toISOString(),
      })
      u.written = true
      journal.append({t: 'written', u: u.fips})
      for (const p of u.pages)
        for (const f of [p.file, ...(p.segments ?? []).map((sg) => sg.file)])
          await rm(join(journal.partsDir, f), {force: true})
    }
    // a county that finished before a stop but was not yet written (a crash in between) is written now
    if (outDir)
      for (const u of units)
        if (u.outcome && isFinished(u.outcome.kind) && !u.written) await writeUnit(u).catch(run.absorbOrThrow)

    const exportUnit = async (u: Unit): Promise<void> => {
      if (u.outcome && u.outcome.kind !== 'failed') return
      u.outcome = undefined
      let url: string | undefined =
        u.next ?? (u.pages.length === 0 ? countyUrl(deps.baseUrl, u.fips) : undefined)
      const seen = new Set<string>()
      const origin = new URL(deps.baseUrl).origin
      try {
        while (url !== undefined) {
          run.throwIfStopped()
          // never follow a next link off the service's origin: the key would go with it
          if (new URL(url).origin !== origin)
            throw new BadResponseError(
              `the next-page link leads to another origin (${new URL(url).origin}); not followed`,
            )
          if (seen.has(url))
            throw new BadResponseError(
              `the next-page link points back to a page already fetched (page ${u.pages.length + 1}); the service's pagination loops`,
            )
          if (u.pages.length >= MAX_PAGES)
            throw new BadResponseError(
              `more than ${MAX_PAGES.toLocaleString('en-US')} pages; taken as a pagination loop`,
            )
          seen.add(url)
          const n = u.pages.length + 1
          const file = `${u.fips}-${String(n).padStart(5, '0')}.ndjson`
          const direct = live !== undefined && u.index === head && u.flushed === u.pages.length
          const pageUrl: string = url
          let emitted = 0
          let pageStats: PageStats | undefined
          const page = await deps.scheduler.run(
            () => deps.client.get(pageUrl, run.signal),
            async (res) => {
              const total = Number(res.headers['x-total-count'])
              if (Number.isSafeInteger(total) && total > 0) u.expected = total
              // a page streamed straight to stdout needs no part file: nothing reads it again; CSV pages
              // spool their rows already formatted (one file per column layout), the others the records
              // an NDJSON part may become the output itself: its write-back starts as it is written
              const part =
                direct || csv
                  ? undefined
                  : await PartFile.create(join(journal.partsDir, file), {syncEvery: SYNC_EVERY})
              // a fresh count for each try: a page fetched again must not count its records twice
              pageStats = stats?.page()
              const segments: Array<Segment & {part: PartFile}> = []
              let seg: (Segment & {part: PartFile}) | undefined
              try {
                let skip = emitted // a retried page that already streamed some records: do not repeat them
                /** A new column: the rows from here on go to a file of their own in the new layout. */
                const newSegment = async (layout: number, line: string): Promise<void> => {
                  await seg?.part.close()
                  const f = `${u.fips}-${String(n).padStart(5, '0')}-${segments.length + 1}.csv`
                  const created = await PartFile.create(join(journal.partsDir, f))
                  seg = {file: f, layout, records: 0, part: created}
                  segments.push(seg)
                  seg.part.writeText(line)
                  seg.records++
                }
                // not async: a record that needs no wait returns nothing, so the scanner does not await a
                // promise per record (one per record was about 5% of a CSV export's CPU)
                const onRecord = (bytes: Buffer, spans?: RecordSpans): Promise<void> | undefined => {
                  // CSV: one tokenizer pass proves the record and notes its columns; NDJSON and JSON pass
                  // the bytes through as sent (the scanner has checked their structure)
                  const grew = csv?.take(bytes, csvNeedsShape ? shape : undefined) ?? false
                  if (pageStats) {
                    if (csv) pageStats.tokens(csv.row, req.escapeFormulas)
                    else pageStats.json(bytes, spans)
                  }
                  if (direct) {
                    if (skip > 0) skip--
                    else {
                      emitted++
                      const ok = fixedCols ? live!.csvText(csv!.line(fixedCols)) : live!.json(bytes)
                      if (!ok) return live!.target.drain()
                    }
                    return undefined
                  }
                  if (csv) {
                    // the row is laid out before any await: the formatter's last record is shared by
                    // every county in flight
                    const layout = !seg || grew ? currentLayout() : seg.layout
                    const line = csv.line(layouts[layout]!)
                    if (!seg || grew) return newSegment(layout, line)
                    seg.part.writeText(line)
                    seg.records++
                    return seg.part.needsDrain ? seg.part.drain() : undefined
                  }
                  part!.write(bytes)
                  return part!.needsDrain ? part!.drain() : undefined
                }
                // NDJSON/JSON statistics: the scanner notes where their members lie as it passes the bytes
                const spans = pageStats && !csv ? new MemberSpans(STATS_MEMBERS) : undefined
                const {count, rejected} = await scanRecords(res, req.maxRecordBytes, onRecord, spans)
                await seg?.part.close()
                await part?.close()
                return {
                  records: count,
                  rejected,
                  segments: segments.map(({file: f, layout, records: r}) => ({file: f, layout, records: r})),
                  next: nextLink(res.headers['link'], res.url),
                }
              } catch (error) {
                await part?.discard()
                for (const sg of segments) await sg.part.discard()
                throw error
              }
            },
          )
          if (page.next !== undefined && redact(page.next) !== page.next)
            throw new BadResponseError(
              'the next-page link carries the API key; not stored or followed (spec 5.1 sends the key in X-Api-Key only)',
            )
          u.pages.push({
            n,
            records: page.records,
            file,
            ...(csv && !direct ? {segments: page.segments} : {}),
            ...(page.rejected.length ? {rejected: page.rejected} : {}),
          })
          u.next = page.next
          if (pageStats) stats!.pageDone(u.fips, pageStats)
          if (direct) u.flushed = u.pages.length
          else if (live && u.index === head) await advance() // the head's spooled page goes out now
          journal.append({
            t: 'page',
            u: u.fips,
            n,
            records: page.records,
            file,
            ...(csv && !direct ? {segs: page.segments} : {}),
            next: page.next ?? null,
            ...(page.rejected.length ? {rejected: page.rejected} : {}),
          })
          records += page.records
          progress()
          url = page.next
        }
        const skipped = u.pages.reduce((m, p) => m + (p.rejected?.length ?? 0), 0)
        u.outcome = {
          kind: u.pages.length === 0 ? 'empty' : 'done',
          records: u.pages.reduce((m, p) => m + p.records, 0),
          exitCode: 0,
          ...(skipped ? {skipped, error: `${skipped} poison record${skipped === 1 ? '' : 's'} skipped`} : {}),
        }
        stats?.countyEnded(u.fips)
      } catch (error) {
        stats?.reset(u.fips) // not written: its figures are not the run's
        if (run.absorbStop(error)) return
        u.outcome = {...outcomeOf(error, run.message(error), true), records: 0}
      }
      journal.append({t: 'end', u: u.fips, outcome: u.outcome})
      if (outDir && isFinished(u.outcome.kind)) await writeUnit(u)
      progress()
      if (u.index === head) await advance()
    }

    await Promise.all(units.map((u) => exportUnit(u).catch(run.absorbOrThrow)))
    if (live) await advance().catch(run.absorbOrThrow)

    const finished = units.filter((u) => u.outcome && isFinished(u.outcome.kind))
    const openUnits = units.some((u) => !u.outcome || u.outcome.kind === 'failed')
    let wrote = false
    let written = 0
    if (live) {
      // the stream already carries every finished county; close its frame unless the reader left
      if (!run.outputClosed && (live.hasStarted || finished.length > 0)) {
        live.end()
        await run.commit(stdout!).catch(run.absorbOrThrow)
      }
      stdout!.release()
      wrote = live.hasStarted
      written = live.count
    } else if (outDir) {
      wrote = filesWritten > 0
      written = recordsToFiles
    } else if (finished.length > 0 && format === 'parquet') {
      // the NDJSON part files of every finished county, in the order asked, as one file (atomic)
      const target = await run.outputTarget(req.out)
      try {
        // the same writer as one county's file under --out-dir, over every finished county's pages
        written = await writeCountyFile(
          journal.partsDir,
          finished.flatMap((u) => u.pages),
          target,
          format,
          fileOptions(target),
        )
        wrote = true
      } catch (error) {
        run.absorbOrThrow(error) // writeCountyFile has removed the temp file
      }
    } else if (finished.length > 0 && format !== 'parquet') {
      // every finished county, whole, in the order asked; the target is replaced only when complete
      const cols = fixedCols ?? selectColumns(columnsFor(shape.shape), req.fields)
      // NDJSON whose every county ended: the first part file already holds the output's first records, so
      // it becomes the output and the rest is appended (one copy of the body fewer; npm run bench). Not
      // while a county is open: the checkpoint still needs its part files.
      const first = finished[0]!.pages[0]
      const adopt = format === 'ndjson' && req.out !== undefined && !openUnits && first !== undefined
      const target = adopt
        ? run.adoptOutput(join(journal.partsDir, first.file), req.out!)
        : await run.outputTarget(req.out)
      const writer = new RecordWriter(target, format, {header: header(cols), bom: req.bom})
      try {
        if (adopt) writer.ndjsonChunks(first.records)
        for (const u of finished)
          for (const p of u.pages)
            if (!adopt || p !== first)
              await copyPage(journal.partsDir, p, writer, req.format === 'csv' ? cols : undefined, layouts)
        writer.end()
        await run.commit(target)
        wrote = true
        written = writer.count
      } catch (error) {
        await target.abort()
        run.absorbOrThrow(error)
      }
    }
    // poison records: where they were and why, beside --out (the rest of their county was written)
    const rejected = units.flatMap((u) =>
      u.pages.flatMap((p) =>
        (p.rejected ?? []).map((r) => ({fips: u.fips, page: p.n, record: r.index, reason: r.reason})),
      ),
    )
    let rejectsFile: string | undefined
    if (rejected.length && (req.out || outDir) && wrote) {
      rejectsFile = outDir ? join(outDir, 'rejects.ndjson') : `${req.out}.rejects.ndjson`
      await writeFileAtomic(rejectsFile, rejected.map((r) => `${JSON.stringify(r)}\n`).join(''), 0o644).catch(
        run.absorbOrThrow,
      )
    }
    // a run whose output could not be written (disk full) keeps its checkpoint: the rerun only assembles
    const unwritten = outDir ? finished.some((u) => !u.written) : finished.length > 0 && !wrote
    const checkpoint = await run.finish(openUnits || unwritten)
    return {
      counties: units.map((u) => ({
        fips: u.fips,
        ...(u.outcome ? {outcome: u.outcome} : {}),
        records: u.pages.reduce((m, p) => m + p.records, 0),
        pages: u.pages.length,
      })),
      written,
      resumedUnits,
      stopped: run.stopped,
      checkpoint,
      wrote,
      rejected,
      rejectsFile,
      fresh: req.fips.filter((f) => fresh.has(f)),
      filesWritten,
      ...(stats && wrote ? {stats: stats.result(req.fips)} : {}),
      ...(unfit.size ? {unfit: [...unfit].map(([column, count]) => ({column, count}))} : {}),
      exitCode: run.exitCode(
        units.flatMap((u) => (u.outcome ? [u.outcome] : [])),
        finished.length > 0,
      ),
    }
  } finally {
    await run.close()
  }
}

/**
 * Spooled pages as one file (a county's under `--out-dir`; every county's for `--out` Parquet): framed
 * in `format` on `target`, committed by `commit` (the run's, so a failure stops the run), aborted on any
 * error so the target is never half written. Returns the records written. An empty county gives an empty frame (a CSV header, `[]`, or an
 * empty NDJSON file), so every manifest entry names a file that exists.
 */
export async function writeCountyFile(
  partsDir: string,
  pages: readonly PagePart[],
  target: OutputTarget,
  format: ExportFormat,
  opts: {
    /** CSV: the file's columns. */
    columns?: Column[] | undefined
    layouts: Column[][]
    escapeFormulas: boolean
    bom: boolean
    commit: () => Promise<void>
    /** Parquet: `--fields`, and where values of another type than the spec's are counted. */
    fields?: readonly string[] | undefined
    onUnfit?: ((column: string, count: number) => void) | undefined
  },
): Promise<number> {
  if (format === 'parquet') {
    try {
      const {writeParquet} = await import('../io/parquet-writer.js')
      const files = pages.map((p) => join(partsDir, p.file))
      const result = await writeParquet(target, files, {fields: opts.fields})
      await opts.commit()
      for (const x of result.unfit) opts.onUnfit?.(x.column, x.count)
      return result.records
    } catch (error) {
      await target.abort()
      throw error
    }
  }
  const header = opts.columns?.map((c) => cell(c.header, opts.escapeFormulas))
  const writer = new RecordWriter(target, format, {header, bom: opts.bom})
  try {
    for (const p of pages) await copyPage(partsDir, p, writer, opts.columns, opts.layouts)
    writer.end()
    await opts.commit()
  } catch (error) {
    await target.abort()
    throw error
  }
  return writer.count
}

/** Bytes between write-back starts of an NDJSON part file (src/jobs/spool.ts PartFile). */
const SYNC_EVERY = 16 * 1024 * 1024

/**
 * Read one response through the data scanner, handing each record's bytes to `onRecord`, with where the
 * members `spans` asks for lie in them (when given; none for a record re-serialised here).
 */
async function scanRecords(
  res: HttpResponse,
  maxRecordBytes: number | undefined,
  onRecord: (bytes: Buffer, spans?: RecordSpans) => Promise<void> | undefined,
  spans?: MemberSpans,
): Promise<{count: number; rejected: Rejected[]}> {
  const scanner = new DataScanner(
    {
      maxRecordBytes: maxRecordBytes ?? MAX_RECORD_BYTES,
      maxDepth: MAX_RECORD_DEPTH,
    },
    spans,
  )
  let count = 0
  // a line break can only be in a record once the body has had one: compact bodies (the usual) are
  // looked at once per chunk, not once per record
  let lineBreaks = false
  for await (const chunk of res.body) {
    lineBreaks ||= chunk.includes(0x0a) || chunk.includes(0x0d)
    const records = scanner.push(chunk)
    for (let k = 0; k < records.length; k++) {
      const raw = records[k]!
      // NDJSON needs one line per record: re-serialise only when the service pretty-printed it
      const pretty = lineBreaks && (raw.includes(0x0a) || raw.includes(0x0d))
      const bytes = pretty ? compact(raw, count + 1) : raw
      count++
      const at = pretty || !spans ? -1 : spans.at(k)
      const wait = onRecord(bytes, at === -1 ? undefined : {table: spans!.table, at})
      if (wait !== undefined) await wait
    }
  }
  scanner.end()
  return {count, rejected: scanner.takeRejected()}
}

function compact(raw: Buffer, n: number): Buffer {
  try {
    return Buffer.from(JSON.stringify(JSON.parse(raw.toString('utf8'))))
  } catch {
    throw new BadResponseError(`record ${n} of the page is not valid JSON`)
  }
}

/**
 * Copy one spooled page to a writer. NDJSON: the part file as whole chunks; JSON: a line at a time; CSV:
 * each segment as whole chunks when its layout is the output's columns (the usual case), otherwise its
 * rows read back and laid out in the output's columns (a column that appeared late, `--fields`).
 */
async function copyPage(
  dir: string,
  part: PagePart,
  writer: RecordWriter,
  cols: Column[] | undefined,
  layouts: Column[][],
): Promise<void> {
  const chunks = async (file: string) => {
    for await (const chunk of createReadStream(join(dir, file), {highWaterMark: 1 << 20}))
      if (!writer.target.write(chunk as Buffer)) await writer.target.drain()
  }
  if (cols) {
    const want = layoutKey(cols)
    for (const seg of part.segments ?? []) {
      const layout = layouts[seg.layout]!
      if (layoutKey(layout) === want) {
        writer.csvChunks(seg.records)
        await chunks(seg.file)
        continue
      }
      const at = new Map(layout.map((c, i) => [c.header, i]))
      for await (const {fields} of readCsv(join(dir, seg.file))) {
        const row = cols.map((c) => {
          const i = at.get(c.header)
          return i === undefined ? '' : fields[i]!
        })
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
    if (!l.complete) throw new ServerError(`the part file ${part.file} ends mid-record`)
    if (!writer.json(l.bytes)) await writer.target.drain()
  }
}

const layoutKey = (cols: readonly Column[]) => cols.map((c) => c.header).join('\u0000')
