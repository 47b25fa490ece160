import {UsageError} from '../api/errors.js'
import {assertWritableTarget, writeFileAtomic} from '../io/atomic-file.js'
import type {StatsReport} from '../stats/accumulator.js'
import {renderStats, statsDocument} from '../stats/render.js'
import {forTerminal} from '../render/terminal.js'

/** What a run asks of its statistics (the flags `--no-stats`, `--stats-by-county`, `--stats-json`). */
export interface StatsOptions {
  byCounty: boolean
  json?: string | undefined
}

export interface RunStats {
  run: StatsReport
  counties: Array<{fips: string; report: StatsReport}>
}

/**
 * The statistics at the end of a run: the table on stderr (not with --quiet), one more per county with
 * --stats-by-county, and with --stats-json the JSON document (src/stats/render.ts), written atomically.
 * Values from the service are made safe for the terminal (CRA levels, loan types are its text).
 */
export async function reportStats(
  stats: RunStats,
  opts: StatsOptions & {quiet: boolean; title: string},
): Promise<void> {
  if (!opts.quiet) {
    const lines = renderStats(`${opts.title}: statistics`, stats.run)
    if (opts.byCounty)
      for (const c of stats.counties) lines.push(...renderStats(`county ${c.fips}`, c.report))
    process.stderr.write(`${lines.map((l) => forTerminal(l)).join('\n')}\n`)
  }
  if (opts.json !== undefined)
    await writeFileAtomic(
      opts.json,
      `${JSON.stringify(statsDocument(stats.run, stats.counties), null, 2)}\n`,
      0o644,
    )
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
    await assertWritableTarget(json)
  }
  return {byCounty: Boolean(f['stats-by-county']), json}
}
