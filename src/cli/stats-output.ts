import {ExitCode, UsageError} from '../errors.js'
import {redact} from '../api/secrets.js'
import {writeOutputFile} from '../io/output.js'
import {assertWritableTarget} from '../io/target-kind.js'
import type {StatsReport} from '../stats/accumulator.js'
import {renderStats, statsDocument} from '../stats/render.js'

/** What a run asks of its statistics (the flags `--no-stats`, `--stats-by-county`, `--stats-json`). */
export interface StatsOptions {
  byCounty: boolean
  json?: string | undefined
}

export interface RunStats {
  run: StatsReport
  counties: Array<{fips: string; report: StatsReport}>
}

/** The stats tables for the end of a run: the run's, then one per county with --stats-by-county. */
export function statsLines(stats: RunStats, opts: StatsOptions & {title: string}): string[] {
  const lines = renderStats(`${opts.title}: statistics`, stats.run)
  if (opts.byCounty) for (const c of stats.counties) lines.push(...renderStats(`county ${c.fips}`, c.report))
  return lines
}

/**
 * --stats-json: the JSON document (src/stats/render.ts), through the output gate (src/io/output.ts): a
 * file written atomically, a FIFO or device written into, never replaced. CRA levels and loan types are
 * the service's text: a server echoing the key into them must not get it written (as on the terminal).
 */
export async function writeStatsJson(path: string, stats: RunStats): Promise<void> {
  const text = JSON.stringify(statsDocument(stats.run, stats.counties), null, 2)
  await writeOutputFile(path, `${redact(text)}\n`, '--stats-json')
}

/**
 * Whether a run's statistics are shown: not when its output went wrong (the reader of stdout left, exit
 * 141; the disk refused a write, exit 8): the figures would describe records nobody received.
 */
export function statsShown(stopped: {exitCode: number} | undefined): boolean {
  return stopped?.exitCode !== ExitCode.outputClosed && stopped?.exitCode !== ExitCode.localIo
}

/** The statistics flags, checked before anything is sent; undefined with --no-stats. */
export async function statsOptions(f: {
  'no-stats'?: boolean
  'stats-by-county'?: boolean
  'stats-json'?: string | undefined
  out?: string | undefined
}): Promise<StatsOptions | undefined> {
  const json = f['stats-json']
  if (f['no-stats']) {
    if (json !== undefined || f['stats-by-county'])
      throw new UsageError(
        `--no-stats contradicts --${json !== undefined ? 'stats-json' : 'stats-by-county'}; pick one`,
      )
    return undefined
  }
  if (json !== undefined) {
    if (json === f.out) throw new UsageError('--stats-json must name another file than --out')
    await assertWritableTarget(json, '--stats-json')
  }
  return {byCounty: Boolean(f['stats-by-county']), json}
}
