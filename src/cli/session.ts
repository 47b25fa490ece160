import type {SflError} from '../errors.js'
import {forTerminal} from '../render/terminal.js'
import {removeTempFilesSync} from '../io/atomic-file.js'
import type {Scheduler} from '../schedule/scheduler.js'
import {cliMessage} from './error-words.js'
import {fmtSecs, Progress} from './progress.js'
import {beforeStdStreamExit} from './std-streams.js'

/**
 * What every long run (county export, batch lookup) shares at the terminal: progress on stderr, and
 * Ctrl-C / SIGTERM turned into the run's abort signal, so the run stops sending, writes what it has and
 * keeps its checkpoint. A second Ctrl-C exits at once, after removing temp files and the lock.
 */
export async function withRunSession<T>(
  scheduler: Scheduler,
  quiet: boolean,
  run: (session: {progress: Progress; signal: AbortSignal}) => Promise<T>,
): Promise<T> {
  const progress = new Progress(process.stderr, Boolean(process.stderr.isTTY) && !quiet, scheduler, quiet)
  scheduler.options.onEvent = progress.onEvent
  const abort = new AbortController()
  scheduler.options.signal = abort.signal
  const stop = () => {
    if (abort.signal.aborted) {
      // the second Ctrl-C: leave now, but leave nothing half written behind
      removeTempFilesSync()
      process.exit(130)
    }
    abort.abort()
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  // a stderr that fails mid-run (2> /dev/full) ends the process at once: leave no temp file behind
  const offStreamExit = beforeStdStreamExit(removeTempFilesSync)
  try {
    return await run({progress, signal: abort.signal})
  } finally {
    progress.stop()
    offStreamExit()
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}

/**
 * The end-of-run report on stderr: the summary line (not with --quiet), then every unit that did not
 * finish, why the run stopped, and whether a rerun continues it (always, even with --quiet).
 */
export function printSummary(
  command: string,
  parts: string[],
  scheduler: Scheduler,
  progress: Progress,
  end: {
    stopped?: SflError | undefined
    checkpoint?: string | undefined
    problems?: string[]
    /** Lines right after the summary line (the run statistics), not with --quiet. */
    details?: string[] | undefined
    quiet: boolean
  },
): void {
  // the reader of stdout went away (`| head`): that is how such a pipeline ends, not worth a word
  if (end.stopped?.exitCode === 141) return
  const st = scheduler.stats
  const lines: string[] = []
  if (!end.quiet) {
    const all = [
      ...parts,
      `${st.requests} requests`,
      `${st.rateLimited} 429s`,
      `${st.retries} retries`,
      `${fmtSecs(progress.elapsedMs() / 1000)} elapsed`,
    ]
    lines.push(`${command}: ${all.join(', ')}`, ...(end.details ?? []))
  }
  lines.push(...(end.problems ?? []))
  if (end.stopped) lines.push(`Error: ${cliMessage(end.stopped)}`)
  if (end.checkpoint) lines.push(`  checkpoint kept at ${end.checkpoint}; rerun the same command to continue`)
  if (lines.length) process.stderr.write(`${lines.map((l) => forTerminal(l)).join('\n')}\n`)
}

/**
 * A local run with nothing to keep on Ctrl-C (`sfl changes`, the comparison after an export): the first
 * Ctrl-C or SIGTERM removes its temp files and scratch folder, then exits 130. Without it Node would exit
 * at once and leave them behind.
 */
export async function withCleanInterrupt<T>(run: () => Promise<T>): Promise<T> {
  const stop = () => {
    removeTempFilesSync()
    process.exit(130)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  const offStreamExit = beforeStdStreamExit(removeTempFilesSync)
  try {
    return await run()
  } finally {
    offStreamExit()
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}
