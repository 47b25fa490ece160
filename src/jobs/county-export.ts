import {createReadStream} from 'node:fs'
import {join} from 'node:path'

import type {HttpClient, HttpResponse} from '../api/client.js'
import {BadResponseError, ServerError, type SflError} from '../api/errors.js'
import {nextLink} from '../api/link.js'
import {countyUrl} from '../api/query.js'
import {redact} from '../api/secrets.js'
import {writeFileAtomic} from '../io/atomic-file.js'
import {DataScanner, MAX_RECORD_BYTES, MAX_RECORD_DEPTH, type Rejected} from '../io/data-scanner.js'
import {CsvRows, columnOf} from '../io/csv-rows.js'
import {readCsv} from '../io/csv-reader.js'
import {readLines} from '../io/lines.js'
import {RecordWriter, type RecordFormat} from '../io/record-writer.js'
import {cell, columnsFor, selectColumns, ShapeTracker, type Column} from '../render/columns.js'
import type {Scheduler} from '../schedule/scheduler.js'
import {RunState, type JobDeps} from './run.js'
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
  /** The file listing them, beside --out. */
  rejectsFile?: string | undefined
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
}

export async function runCountyExport(deps: ExportDeps, req: ExportRequest): Promise<ExportSummary> {
  const units: Unit[] = req.fips.map((fips, index) => ({fips, index, pages: [], flushed: 0}))
  const byFips = new Map(units.map((u) => [u.fips, u]))
  /** CSV: the column layouts rows were spooled in (journaled once each, pages refer to them by index). */
  const layouts: Column[][] = []
  const layoutIds = new Map<string, number>()
  const run = await RunState.start(deps, {
    out: req.out,
    restart: req.restart,
    header: {
      // 3: CSV pages spool formatted rows by column layout
      v: 3,
      kind: 'county-export',
      params: {fips: req.fips, format: req.format, fields: req.fields ?? null, baseUrl: deps.baseUrl},
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
      else if (e['t'] === 'reset') Object.assign(u, {pages: [], next: undefined, outcome: undefined})
    },
  })
  try {
    const journal = run.journal
    // a part file that does not hold what the journal says (edited, cut short) is fetched again
    for (const u of units) {
      if (u.pages.length === 0 || (u.outcome && !isFinished(u.outcome.kind))) continue
      const bad = await verifyPages(journal.partsDir, u.pages)
      if (bad) {
        deps.notice(`sfl: ${bad}; county ${u.fips} will be fetched again`)
        Object.assign(u, {pages: [], next: undefined, outcome: undefined})
        journal.append({t: 'reset', u: u.fips})
      }
    }
    // CSV with --fields knows its header before any record: it can stream to stdout
    const fixedCols = req.format === 'csv' && req.fields?.length ? selectColumns([], req.fields) : undefined
    const resumedUnits = units.filter((u) => u.outcome && u.outcome.kind !== 'failed').length
    const shape = new ShapeTracker()
    const csvNeedsShape = req.format === 'csv' && !req.fields?.length
    const csv = req.format === 'csv' ? new CsvRows(req.escapeFormulas) : undefined
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
    const streaming = !req.out && format !== 'parquet' && (format !== 'csv' || fixedCols !== undefined)
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
    /** When the first unfinished unit ends, the next one's spooled pages go out and it streams from then on. */
    let advancing: Promise<void> = Promise.resolve()
    const step = async () => {
      while (live && head < units.length) {
        const u = units[head]!
        if (u.outcome && isFinished(u.outcome.kind)) await flushSpooled(u)
        if (!u.outcome || u.outcome.kind === 'failed') break
        head++
      }
      if (live && head < units.length) await flushSpooled(units[head]!)
    }
    // one copy at a time: two units ending together must not copy the same page twice
    const advance = () => (advancing = advancing.then(step))

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
          const page = await deps.scheduler.run(
            () => deps.client.get(pageUrl, run.signal),
            async (res) => {
              const total = Number(res.headers['x-total-count'])
              if (Number.isSafeInteger(total) && total > 0) u.expected = total
              // a page streamed straight to stdout needs no part file: nothing reads it again; CSV pages
              // spool their rows already formatted (one file per column layout), the others the records
              const part = direct || csv ? undefined : await PartFile.create(join(journal.partsDir, file))
              const segments: Array<Segment & {part: PartFile}> = []
              let seg: (Segment & {part: PartFile}) | undefined
              try {
                let skip = emitted // a retried page that already streamed some records: do not repeat them
                const {count, rejected} = await scanRecords(res, req.maxRecordBytes, async (bytes) => {
                  // CSV: one tokenizer pass proves the record and notes its columns; NDJSON and JSON pass
                  // the bytes through as sent (the scanner has checked their structure)
                  const grew = csv?.take(bytes, csvNeedsShape ? shape : undefined) ?? false
                  if (direct) {
                    if (skip > 0) skip--
                    else {
                      emitted++
                      const ok = fixedCols ? live!.csvText(csv!.line(fixedCols)) : live!.json(bytes)
                      if (!ok) await live!.target.drain()
                    }
                    return
                  }
                  if (csv) {
                    // the row is laid out before any await: the formatter's last record is shared by
                    // every county in flight
                    const layout = !seg || grew ? currentLayout() : seg.layout
                    const line = csv.line(layouts[layout]!)
                    if (!seg || grew) {
                      // a new column: the rows from here on go to a file of their own in the new layout
                      await seg?.part.close()
                      const f = `${u.fips}-${String(n).padStart(5, '0')}-${segments.length + 1}.csv`
                      const created = await PartFile.create(join(journal.partsDir, f))
                      seg = {file: f, layout, records: 0, part: created}
                      segments.push(seg)
                    }
                    seg!.part.writeText(line)
                    seg!.records++
                    if (seg!.part.needsDrain) await seg!.part.drain()
                    return
                  }
                  part!.write(bytes)
                  if (part!.needsDrain) await part!.drain()
                })
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
      } catch (error) {
        if (run.absorbStop(error)) return
        u.outcome = {...outcomeOf(error, run.message(error), true), records: 0}
      }
      journal.append({t: 'end', u: u.fips, outcome: u.outcome})
      progress()
      if (u.index === head) await advance()
    }

    await Promise.all(units.map((u) => exportUnit(u).catch(run.absorbOrThrow)))
    if (live) await advance().catch(run.absorbOrThrow)

    const finished = units.filter((u) => u.outcome && isFinished(u.outcome.kind))
    let wrote = false
    let written = 0
    let unfit: ExportSummary['unfit']
    if (live) {
      // the stream already carries every finished county; close its frame unless the reader left
      if (!run.outputClosed && (live.hasStarted || finished.length > 0)) {
        live.end()
        await run.commit(stdout!).catch(run.absorbOrThrow)
      }
      stdout!.release()
      wrote = live.hasStarted
      written = live.count
    } else if (finished.length > 0 && format === 'parquet') {
      // the NDJSON part files of every finished county, in the order asked, as one file (atomic)
      const target = await run.outputTarget(req.out)
      try {
        const {writeParquet} = await import('../io/parquet-writer.js')
        const files = finished.flatMap((u) => u.pages.map((p) => join(journal.partsDir, p.file)))
        const result = await writeParquet(target, files, {fields: req.fields})
        await run.commit(target)
        wrote = true
        written = result.records
        unfit = result.unfit
      } catch (error) {
        await target.abort()
        run.absorbOrThrow(error)
      }
    } else if (finished.length > 0 && format !== 'parquet') {
      // every finished county, whole, in the order asked; the target is replaced only when complete
      const cols = fixedCols ?? selectColumns(columnsFor(shape.shape), req.fields)
      const target = await run.outputTarget(req.out)
      const writer = new RecordWriter(target, format, {header: header(cols), bom: req.bom})
      try {
        for (const u of finished)
          for (const p of u.pages)
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
    if (rejected.length && req.out && wrote) {
      rejectsFile = `${req.out}.rejects.ndjson`
      await writeFileAtomic(rejectsFile, rejected.map((r) => `${JSON.stringify(r)}\n`).join(''), 0o644).catch(
        run.absorbOrThrow,
      )
    }
    const open = units.some((u) => !u.outcome || u.outcome.kind === 'failed')
    const checkpoint = await run.finish(open)
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
      ...(unfit?.length ? {unfit} : {}),
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
 * Read one response through the data scanner, handing each record's bytes (and its parsed value) to
 * `onRecord`. Every record is parsed once: it proves the bytes are JSON before they reach any output.
 */
async function scanRecords(
  res: HttpResponse,
  maxRecordBytes: number | undefined,
  onRecord: (bytes: Buffer) => Promise<void> | void,
): Promise<{count: number; rejected: Rejected[]}> {
  const scanner = new DataScanner({
    maxRecordBytes: maxRecordBytes ?? MAX_RECORD_BYTES,
    maxDepth: MAX_RECORD_DEPTH,
  })
  let count = 0
  for await (const chunk of res.body) {
    for (const raw of scanner.push(chunk)) {
      // NDJSON needs one line per record: re-serialise only when the service pretty-printed it
      const bytes = raw.includes(0x0a) || raw.includes(0x0d) ? compact(raw, count + 1) : raw
      count++
      await onRecord(bytes)
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
