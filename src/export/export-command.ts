import type {BaseCommand} from '../base-command.js'
import {redact} from '../api/secrets.js'
import {Progress, fmtSecs} from './progress.js'
import {exportExitCode, runCountyExport, type ExportRequest} from './county-export.js'

type Cmd = BaseCommand<typeof import('../commands/county-export.js').default>

/**
 * Wiring for `county-export`: scheduler options, progress, Ctrl-C, summary and exit code. Kept out of
 * the command so the command reads as flags → request → run.
 */
export async function runExportCommand(
  cmd: Cmd,
  req: ExportRequest & {concurrency: number; reserve: number; maxRequests?: number | undefined},
): Promise<void> {
  const ctx = await cmd.context({
    concurrency: req.concurrency,
    reserve: req.reserve,
    maxRequests: req.maxRequests,
  })
  const quiet = cmd.flags.quiet
  const progress = new Progress(process.stderr, Boolean(process.stderr.isTTY) && !quiet, ctx.scheduler, quiet)
  ctx.scheduler.options.onEvent = progress.onEvent
  const abort = new AbortController()
  const onSigint = () => abort.abort()
  process.once('SIGINT', onSigint)
  process.once('SIGTERM', onSigint)
  try {
    const s = await runCountyExport(
      {
        ...ctx,
        signal: abort.signal,
        onProgress: (p) => progress.update(p.countiesDone, p.counties, p.records),
      },
      req,
    )
    progress.clear()
    const st = ctx.scheduler.stats
    const parts = [
      `${s.written.toLocaleString('en-US')} records written`,
      `${s.countiesDone}/${s.counties} counties`,
      `${st.requests} requests`,
      `${st.rateLimited} 429s`,
      `${st.retries} retries`,
      `${fmtSecs(progress.elapsedMs() / 1000)} elapsed`,
    ]
    if (s.resumedUnits) parts.push(`${s.resumedUnits} counties taken from the checkpoint`)
    process.stderr.write(redact(`sfl county-export: ${parts.join(', ')}\n`))
    for (const fl of s.failed) process.stderr.write(`  failed ${fl.fips}: ${redact(fl.error)}\n`)
    if (s.stopped) process.stderr.write(`Error: ${redact(s.stopped.message)}\n`)
    if (s.interrupted) process.stderr.write('Interrupted.\n')
    if (s.checkpoint)
      process.stderr.write(redact(`  checkpoint kept at ${s.checkpoint}; rerun with --resume to finish\n`))
    process.exitCode = exportExitCode(s)
  } finally {
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigint)
  }
}
