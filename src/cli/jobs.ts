import {keyEchoWarning} from '../api/secrets.js'
import type {ExportRequest, ExportSummary} from '../jobs/county-export.js'
import {FORMATS} from '../model/formats.js'
import type {BatchRequest, BatchSummary} from '../jobs/batch-lookup.js'
import type {RecordFormat} from '../io/record-writer.js'
import type {Context} from './service-command.js'
import {cliMessage} from './error-words.js'
import {printSummary, withCleanInterrupt, withRunSession} from './session.js'
import type {StatsOptions} from './stats-output.js'
import {count} from '../text/count.js'

/** What a long run needs from its command: whether to be quiet, and how to print a notice. */
export interface CommandIo {
  quiet: boolean
  notice: (line: string) => void
  /** The user's cache folder: where a run writing s3:// keeps its checkpoint (src/jobs/run.ts). */
  cacheDir?: string | undefined
}

const n = count
/** Counties named one a line in a run's summary before the rest are only counted. */
const MAX_LISTED = 20

/** `county-export --changes-since`: what to compare the finished export with, and where the change file goes. */
export interface ChangesPlan {
  since: string
  out: string
  format: RecordFormat
  ignore: string[]
}

/** `county-export` at the terminal: progress, Ctrl-C, the job, the summary and the exit code. */
export async function runExportJob(
  io: CommandIo,
  ctx: Context,
  req: ExportRequest,
  stats: StatsOptions = {byCounty: false},
  changes?: ChangesPlan,
): Promise<ExportSummary> {
  const s = await runExport(io, ctx, req, stats)
  // the current side: the one file, or the --out-dir folder (read through its manifest)
  const current = req.out ?? req.outDir
  if (changes && current) await compareFinished(io, s, current, changes)
  return s
}

/**
 * --changes-since, once the export is written: only counties that finished are compared (a county the
 * previous export has but this run did not ask for, or did not finish, is not reported deleted). The
 * export's exit code stands; the comparison adds its own summary line.
 */
async function compareFinished(
  io: CommandIo,
  s: ExportSummary,
  out: string,
  plan: ChangesPlan,
): Promise<void> {
  const finished = s.counties
    .filter((c) => c.outcome?.kind === 'done' || c.outcome?.kind === 'empty')
    .map((c) => c.fips)
  // Ctrl-C (or a closed stdout) asked the run to stop: do not start a long comparison after it
  if (s.stopped?.exitCode === 130 || s.stopped?.exitCode === 141) {
    io.notice('sfl county-export --changes-since: the run was interrupted; no change file written')
    return
  }
  if (!s.wrote || finished.length === 0) {
    io.notice('sfl county-export --changes-since: no county finished; no change file written')
    return
  }
  const {compareExports, changeSummaryLine} = await import('../changes/compare.js')
  const {scanWorkerUrl} = await import('../changes/scan-run.js')
  // an s3:// side is read through a private local copy (src/io/export-source.ts)
  const {withLocalExports} = await import('../io/export-source.js')
  const c = await withLocalExports([plan.since, out], ([previous, current]) =>
    withCleanInterrupt(() =>
      compareExports({
        previous: previous!,
        current: current!,
        counties: finished,
        ignore: plan.ignore,
        out: plan.out,
        format: plan.format,
        worker: scanWorkerUrl(),
      }),
    ),
  )
  io.notice(changeSummaryLine(c, 'sfl county-export --changes-since'))
}

async function runExport(
  io: CommandIo,
  ctx: Context,
  req: ExportRequest,
  stats: StatsOptions,
): Promise<ExportSummary> {
  const {runCountyExport} = await import('../jobs/county-export.js')
  ctx.feedback?.stop() // the run draws its own progress line
  return withRunSession(ctx.scheduler, io.quiet, async ({progress, signal}) => {
    const s = await runCountyExport(
      {
        ...ctx,
        signal,
        notice: io.notice,
        words: cliMessage,
        stateRoot: io.cacheDir,
        onProgress: (p) => progress.update(p.countiesDone, p.counties, p.records, 'counties', p.expected),
      },
      req,
    )
    progress.stop()
    const ended = s.counties.filter((c) => c.outcome && c.outcome.kind !== 'failed')
    const empty = s.counties.filter((c) => c.outcome?.kind === 'empty').map((c) => c.fips)
    const parts = [
      req.outDir
        ? `${n(s.written)} records written to ${n(s.filesWritten)} county ${s.filesWritten === 1 ? 'file' : 'files'} in ${req.outDir}${s.filesRewritten ? ` (${n(s.filesRewritten)} earlier ${s.filesRewritten === 1 ? 'file' : 'files'} rewritten with the run's final columns)` : ''}`
        : `${n(s.written)} records written${s.wrote ? '' : ' (output left untouched: no county finished)'}`,
      `${ended.length}/${s.counties.length} counties ended`,
    ]
    // --where: the rows went out filtered, the requests fetched them all (docs/exports.md "Filters")
    if (req.where !== undefined) {
      const kept = s.counties.reduce((m, c) => m + c.records, 0)
      parts.push(`${n(kept + s.filtered)} records fetched, ${n(kept)} kept by --where`)
    }
    // "exactly once" when the service itself repeats: a ServicePropertyID is written once per county
    if (s.duplicates)
      parts.push(
        `${n(s.duplicates)} duplicate ${s.duplicates === 1 ? 'record' : 'records'} across pages dropped (the first kept)`,
      )
    // --max-age: skipped without a request; listed when short, counted otherwise
    if (s.fresh.length)
      parts.push(
        `${n(s.fresh.length)} fresh, not fetched${s.fresh.length <= 10 ? ` (${s.fresh.join(', ')})` : ''}`,
      )
    // a state or the whole country has hundreds of empty counties: listed only when short
    if (empty.length)
      parts.push(`${n(empty.length)} empty${empty.length <= 10 ? ` (${empty.join(', ')})` : ''}`)
    if (s.resumedUnits) parts.push(`${s.resumedUnits} taken from the checkpoint`)
    const listed = s.counties.flatMap((c) =>
      c.outcome && c.outcome.kind !== 'done' && c.outcome.kind !== 'empty'
        ? [{kind: c.outcome.kind, line: `  ${c.outcome.kind} ${c.fips}: ${c.outcome.error ?? ''}`}]
        : !c.outcome && s.stopped && s.stopped.exitCode !== 141
          ? [
              {
                kind: 'not finished',
                line: `  not finished ${c.fips}: ${n(c.records)} records in ${c.pages} pages so far`,
              },
            ]
          : [],
    )
    // a stopped nationwide run has thousands of unfinished counties: the first ones, then a count by kind
    const problems = listed.slice(0, MAX_LISTED).map((p) => p.line)
    if (listed.length > MAX_LISTED) {
      const rest = new Map<string, number>()
      for (const p of listed.slice(MAX_LISTED)) rest.set(p.kind, (rest.get(p.kind) ?? 0) + 1)
      problems.push(
        `  … and ${n(listed.length - MAX_LISTED)} more: ${[...rest].map(([k, c]) => `${n(c)} ${k}`).join(', ')}`,
      )
    }
    for (const r of s.rejected.slice(0, 5))
      problems.push(`  skipped ${r.fips} page ${r.page} record ${r.record}: ${r.reason}`)
    if (s.rejected.length > 5) problems.push(`  … and ${s.rejected.length - 5} more poison records`)
    if (s.rejectsFile) problems.push(`  the skipped records are listed in ${s.rejectsFile}`)
    problems.push(...recordNotes(s, req.strict === true, FORMATS[req.format].unfitAs))
    // said only of a run that ended by itself: a stopped one has other news, and a closed stdout none
    const lacking = s.stopped ? undefined : optionsNotice(s)
    if (lacking) io.notice(lacking)
    const out = s.stats ? await import('./stats-output.js') : undefined
    const shown = out && s.stats && out.statsShown(s.stopped) ? s.stats : undefined
    printSummary('sfl county-export', parts, ctx.scheduler, progress, {
      stopped: s.stopped,
      checkpoint: s.checkpoint,
      problems,
      details: shown && out!.statsLines(shown, {...stats, title: 'sfl county-export'}),
      quiet: io.quiet,
    })
    process.exitCode = s.exitCode
    if (shown && stats.json !== undefined) await out!.writeStatsJson(stats.json, shown)
    return s
  })
}

/**
 * What the checks stage found, in a few lines: records that break the spec's rules (by field), the key
 * echoed by the service (masked), and the option objects the key lacks (their columns are in no file).
 */
export function recordNotes(
  s: {
    violations: Array<{field: string; records: number}>
    keyEchoes: number
    cut?: Array<{column: string; count: number}> | undefined
    unfit?: Array<{column: string; count: number}> | undefined
  },
  strict: boolean,
  unfitAs: 'null' | 'text' | undefined,
): string[] {
  const out: string[] = []
  // Parquet and xlsx columns carry the spec's types: a value of another type is written as null (Parquet)
  // or as text (xlsx), never altered, and counted (src/model/formats.ts unfitAs)
  for (const u of s.unfit ?? [])
    out.push(
      `  ${n(u.count)} ${u.column} value${u.count === 1 ? '' : 's'} not of the spec's type, written as ${unfitAs ?? 'sent'}`,
    )
  // xlsx: a cell holds at most 32,767 characters (Excel's limit, src/io/xlsx-writer.ts XLSX_MAX_CELL, not
  // imported so the summary loads no workbook code); a longer text was cut, and is said here
  for (const c of s.cut ?? [])
    out.push(
      `  ${n(c.count)} ${c.column} ${c.count === 1 ? 'text' : 'texts'} longer than a workbook cell holds (32,767 characters), cut to it; a CSV or NDJSON output keeps ${c.count === 1 ? 'it' : 'them'} whole`,
    )
  if (s.violations.length > 0) {
    // two short lines (a summary is read at 80 columns): the rule, then the fields most broken
    out.push(
      `  records that break the spec's rules ${strict ? '(skipped: --strict)' : '(written as sent; --strict skips them)'}:`,
    )
    let fields = '   '
    for (const [i, v] of s.violations.entries()) {
      const item = ` ${v.field} ${n(v.records)}${i < s.violations.length - 1 ? ',' : ''}`
      if (fields.length + item.length > 70) {
        fields += ` … (${s.violations.length} fields)`
        break
      }
      fields += item
    }
    out.push(fields)
  }
  if (s.keyEchoes > 0) out.push(`  ${keyEchoWarning(s.keyEchoes)}`)
  return out
}

/** One notice a run: the option objects no record carried (the key lacks them): their columns are in no file. */
export function optionsNotice(s: {options: string[]; written: number}): string | undefined {
  const lacking = ['AssumableMortgage', 'FHACondoEligibility'].filter((o) => !s.options.includes(o))
  if (s.written === 0 || lacking.length === 0) return undefined
  return `sfl: no record carried ${lacking.join(' or ')} (spec 2.2 rule 2 / 2.3 rule 1: the key does not include ${lacking.length === 1 ? 'that option' : 'those options'}); ${lacking.length === 1 ? 'its' : 'their'} columns are in no file`
}

/** `lookup --input` at the terminal. */
export async function runBatchJob(
  io: CommandIo,
  ctx: Context,
  req: BatchRequest,
  stats: StatsOptions = {byCounty: false},
): Promise<BatchSummary> {
  const {runBatchLookup} = await import('../jobs/batch-lookup.js')
  const shapes = await import('./apn-shapes.js')
  // the APN shape of each county answered, remembered once at the end (src/cli/apn-shapes.ts, issue 31)
  const seen = shapes.shapeCollector()
  ctx.feedback?.stop() // the run draws its own progress line
  return withRunSession(ctx.scheduler, io.quiet, async ({progress, signal}) => {
    const s = await runBatchLookup(
      {
        ...ctx,
        signal,
        notice: io.notice,
        words: cliMessage,
        stateRoot: io.cacheDir,
        onProgress: (done, total) => progress.update(done, total, done, 'lookups'),
        onRecord: seen.add,
      },
      req,
    ).finally(() => shapes.rememberShapes(io.cacheDir, seen.seen))
    progress.stop()
    const counts = Object.entries(s.counts)
      .filter(([, c]) => c > 0)
      .map(([k, c]) => `${n(c)} ${k}`)
    const parts = [
      `${n(s.rows)} rows${counts.length ? ` (${counts.join(', ')})` : ''}`,
      `${n(s.saved)} lookups saved by duplicate rows`,
    ]
    // rows whose cells are all empty (Excel's `,,,,`): kept in their places between data rows, the run of
    // them after the last data row skipped; both said
    const blank = req.input.blankRows
    if (blank)
      parts.splice(1, 0, `${n(blank)} blank ${blank === 1 ? 'row' : 'rows'} after the last data row skipped`)
    if (s.fromCheckpoint) parts.push(`${n(s.fromCheckpoint)} answers from the checkpoint`)
    if (s.several)
      parts.push(
        `${n(s.several)} ${s.several === 1 ? 'row' : 'rows'} answered by several records (${req.several === 'rows' ? 'a row each' : "the first on the row, the others' ids in other_ids"}, noted several_records)`,
      )
    parts.push(...planParts(s))
    const notes = recordNotes(s, req.strict === true, FORMATS[req.format].unfitAs)
    const out = s.stats ? await import('./stats-output.js') : undefined
    const shown = out && s.stats && out.statsShown(s.stopped) ? s.stats : undefined
    printSummary('sfl lookup --input', parts, ctx.scheduler, progress, {
      stopped: s.stopped,
      checkpoint: s.checkpoint,
      problems: [...batchProblems(s.counts, req.out), ...notes],
      details: shown && out!.statsLines(shown, {...stats, title: 'sfl lookup --input'}),
      quiet: io.quiet,
    })
    process.exitCode = s.exitCode
    if (shown && stats.json !== undefined) await out!.writeStatsJson(stats.json, shown)
    return s
  })
}

/**
 * What the plan did, for the summary: the rows answered without a request of their own, by the scans (and
 * the pages they took) and by the export on disk; a scan that ended early on an error is named.
 */
export function planParts(s: Pick<BatchSummary, 'plan' | 'sources'>): string[] {
  if (!s.plan) return []
  const out: string[] = []
  const scanned = s.plan.scans.filter((c) => c.pages > 0)
  if (scanned.length) {
    const pages = scanned.reduce((m, c) => m + c.pages, 0)
    const counties = scanned.length === 1 ? `county ${scanned[0]!.fips}` : `${n(scanned.length)} counties`
    out.push(
      `${n(s.sources.scan)} ${s.sources.scan === 1 ? 'row' : 'rows'} answered by scanning ${counties} (${n(pages)} ${pages === 1 ? 'page' : 'pages'})`,
    )
  }
  const from = s.plan.from
  if (from) {
    const used = from.counties.filter((c) => c.used)
    const stale = from.counties.length - used.length
    out.push(
      `${n(s.sources.export)} ${s.sources.export === 1 ? 'row' : 'rows'} answered from ${from.dir} (${n(used.length)} ${used.length === 1 ? 'county' : 'counties'}${stale ? `; ${n(stale)} older than --max-age not used` : ''})`,
    )
  }
  for (const c of s.plan.scans)
    if (c.error) out.push(`the scan of ${c.fips} ended early (${c.error}); its other rows were looked up`)
  return out
}

/**
 * The rows that make a batch exit 7, one line per status: printed with --quiet too (it silences progress
 * and notices, not the reason for the exit code). The rows themselves carry the detail in their `status`
 * and `error` columns.
 */
export function batchProblems(counts: BatchSummary['counts'], out: string | undefined): string[] {
  const rows = (c: number) => `${n(c)} ${c === 1 ? 'row' : 'rows'}`
  const where = `see the status and error columns of ${out ?? 'the output'}`
  const why: Array<[number, string]> = [
    [counts.invalid, 'invalid: a lookup rule is broken, so nothing was sent for them'],
    [counts.forbidden, 'forbidden (HTTP 403): the key may not look up their county'],
    [counts.malformed, 'with a malformed answer from the service'],
    [counts.error, 'not answered (network, server or a stop); rerun the same command to ask them again'],
  ]
  return why.filter(([c]) => c > 0).map(([c, text]) => `  ${rows(c)} ${text}; ${where}`)
}
