import type {ExportRequest, ExportSummary} from '../jobs/county-export.js'
import type {BatchRequest, BatchSummary} from '../jobs/batch-lookup.js'
import type {Context} from './base-command.js'
import {printSummary, withRunSession} from './session.js'

/** What a long run needs from its command: whether to be quiet, and how to print a notice. */
export interface CommandIo {
  quiet: boolean
  notice: (line: string) => void
}

const n = (x: number) => x.toLocaleString('en-US')

/** `county-export` at the terminal: progress, Ctrl-C, the job, the summary and the exit code. */
export async function runExportJob(io: CommandIo, ctx: Context, req: ExportRequest): Promise<ExportSummary> {
  const {runCountyExport} = await import('../jobs/county-export.js')
  return withRunSession(ctx.scheduler, io.quiet, async ({progress, signal}) => {
    const s = await runCountyExport(
      {
        ...ctx,
        signal,
        notice: io.notice,
        onProgress: (p) => progress.update(p.countiesDone, p.counties, p.records, 'counties', p.expected),
      },
      req,
    )
    progress.stop()
    const ended = s.counties.filter((c) => c.outcome && c.outcome.kind !== 'failed')
    const empty = s.counties.filter((c) => c.outcome?.kind === 'empty').map((c) => c.fips)
    const parts = [
      `${n(s.written)} records written${s.wrote ? '' : ' (output left untouched: no county finished)'}`,
      `${ended.length}/${s.counties.length} counties ended`,
    ]
    if (empty.length) parts.push(`${empty.length} empty (${empty.join(', ')})`)
    if (s.resumedUnits) parts.push(`${s.resumedUnits} taken from the checkpoint`)
    const problems = s.counties.flatMap((c) =>
      c.outcome && c.outcome.kind !== 'done' && c.outcome.kind !== 'empty'
        ? [`  ${c.outcome.kind} ${c.fips}: ${c.outcome.error ?? ''}`]
        : !c.outcome && s.stopped && s.stopped.exitCode !== 141
          ? [`  not finished ${c.fips}: ${n(c.records)} records in ${c.pages} pages so far`]
          : [],
    )
    for (const r of s.rejected.slice(0, 5))
      problems.push(`  skipped ${r.fips} page ${r.page} record ${r.record}: ${r.reason}`)
    if (s.rejected.length > 5) problems.push(`  … and ${s.rejected.length - 5} more poison records`)
    // Parquet columns carry the spec's types: a value of another type is written as null, never altered
    for (const u of s.unfit ?? [])
      problems.push(
        `  ${n(u.count)} ${u.column} value${u.count === 1 ? '' : 's'} not of the spec's type, written as null`,
      )
    if (s.rejectsFile) problems.push(`  the skipped records are listed in ${s.rejectsFile}`)
    printSummary('sfl county-export', parts, ctx.scheduler, progress, {
      stopped: s.stopped,
      checkpoint: s.checkpoint,
      problems,
      quiet: io.quiet,
    })
    process.exitCode = s.exitCode
    return s
  })
}

/** `lookup --input` at the terminal. */
export async function runBatchJob(io: CommandIo, ctx: Context, req: BatchRequest): Promise<BatchSummary> {
  const {runBatchLookup} = await import('../jobs/batch-lookup.js')
  return withRunSession(ctx.scheduler, io.quiet, async ({progress, signal}) => {
    const s = await runBatchLookup(
      {
        ...ctx,
        signal,
        notice: io.notice,
        onProgress: (done, total) => progress.update(done, total, done, 'lookups'),
      },
      req,
    )
    progress.stop()
    const counts = Object.entries(s.counts)
      .filter(([, c]) => c > 0)
      .map(([k, c]) => `${n(c)} ${k}`)
    const parts = [
      `${n(s.rows)} rows${counts.length ? ` (${counts.join(', ')})` : ''}`,
      `${n(s.saved)} lookups saved by duplicate rows`,
    ]
    if (s.fromCheckpoint) parts.push(`${n(s.fromCheckpoint)} answers from the checkpoint`)
    printSummary('sfl lookup --input', parts, ctx.scheduler, progress, {
      stopped: s.stopped,
      checkpoint: s.checkpoint,
      quiet: io.quiet,
    })
    process.exitCode = s.exitCode
    return s
  })
}
