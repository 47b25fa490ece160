import type {BaseCommand} from '../base-command.js'
import {exportExitCode, runCountyExport, type ExportRequest} from './county-export.js'
import {printSummary, withRunSession} from './run-session.js'

type Cmd = BaseCommand<typeof import('../commands/county-export.js').default>

/** Wiring for `county-export`: scheduler options, progress, Ctrl-C, summary and exit code. */
export async function runExportCommand(
  cmd: Cmd,
  req: ExportRequest & {concurrency: number; reserve: number; maxRequests?: number | undefined},
): Promise<void> {
  const ctx = await cmd.context({
    concurrency: req.concurrency,
    reserve: req.reserve,
    maxRequests: req.maxRequests,
  })
  await withRunSession(ctx.scheduler, cmd.flags.quiet, async ({progress, signal}) => {
    const s = await runCountyExport(
      {...ctx, signal, onProgress: (p) => progress.update(p.countiesDone, p.counties, p.records)},
      req,
    )
    progress.clear()
    const parts = [
      `${s.written.toLocaleString('en-US')} records written`,
      `${s.countiesDone}/${s.counties} counties`,
      `${ctx.scheduler.stats.requests} requests`,
    ]
    if (s.resumedUnits) parts.push(`${s.resumedUnits} counties taken from the checkpoint`)
    printSummary('sfl county-export', parts, ctx.scheduler, progress, {
      ...s,
      failures: s.failed.map((f) => `  failed ${f.fips}: ${f.error}`),
    })
    process.exitCode = exportExitCode(s)
  })
}
