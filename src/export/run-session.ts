import type {SflError} from '../api/errors.js'
import {redact} from '../api/secrets.js'
import type {Scheduler} from '../schedule/scheduler.js'
import {fmtSecs, Progress} from './progress.js'

/**
 * What every long run (county export, batch lookup) shares: progress on stderr, Ctrl-C and SIGTERM
 * turned into an abort signal (so the checkpoint is saved, not torn), and the lines that end the summary.
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
  const stop = () => abort.abort()
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  try {
    return await run({progress, signal: abort.signal})
  } finally {
    progress.clear()
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}

/** The summary line, then why the run stopped and where its checkpoint is, if it did. */
export function printSummary(
  command: string,
  parts: string[],
  scheduler: Scheduler,
  progress: Progress,
  end: {
    stopped?: SflError | undefined
    interrupted: boolean
    checkpoint?: string | undefined
    failures?: string[]
  },
): void {
  const st = scheduler.stats
  const all = [
    ...parts,
    `${st.rateLimited} 429s`,
    `${st.retries} retries`,
    `${fmtSecs(progress.elapsedMs() / 1000)} elapsed`,
  ]
  const lines = [`${command}: ${all.join(', ')}`, ...(end.failures ?? [])]
  if (end.stopped) lines.push(`Error: ${end.stopped.message}`)
  if (end.interrupted) lines.push('Interrupted.')
  if (end.checkpoint) lines.push(`  checkpoint kept at ${end.checkpoint}; rerun with --resume to finish`)
  process.stderr.write(redact(`${lines.join('\n')}\n`))
}
