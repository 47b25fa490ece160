import {EXACT_BOUND} from './quantiles.js'
import {RELATIVE_ERROR, type Median, type StatsReport} from './accumulator.js'

/**
 * The statistics for people (a table on stderr, at most 80 columns) and for scripts (`--stats-json`,
 * `sfl stats --output json`). The JSON document's shape, version 1:
 *
 *   {version: 1, relativeError: 0.01, exactBound: 1000000,
 *    run: StatsReport,                          // every record reported on
 *    counties: [{fips: "06067", ...StatsReport}] // one per county, in order (export: the counties written)
 *   }
 *
 * StatsReport (src/stats/accumulator.ts): records; flags.{FHAEligible,VAEligible,USDAAreaEligible,
 * Assumable,FHACondoEligible} = {true, false, unknown, percent (of known values, 1 decimal, or null)};
 * CRAEligible = {levels: [{level, count, percent (of records)}], unknown}; FinalValue = {count, p25, median,
 * p75, approximate}; ConfidenceScore = {count, median, approximate}; assumableLoans = [{LoanType, count,
 * EstimatedInterestRate: {count, median, approximate}, EstimatedEquity: {...}}]. A figure with
 * approximate: true comes from the sketch and is within relativeError of the exact one: its metric had more
 * than exactBound values, or (per county) more than the exact values its county could keep
 * (src/stats/grouped.ts). ConfidenceScore is a histogram: exact at any size. Fields are only ever added.
 */
export const STATS_JSON_VERSION = 1

export interface StatsDocument {
  version: typeof STATS_JSON_VERSION
  relativeError: number
  exactBound: number
  run: StatsReport
  counties: Array<{fips: string} & StatsReport>
}

export function statsDocument(
  run: StatsReport,
  counties: Array<{fips: string; report: StatsReport}>,
): StatsDocument {
  return {
    version: STATS_JSON_VERSION,
    relativeError: RELATIVE_ERROR,
    exactBound: EXACT_BOUND,
    run,
    counties: counties.map((c) => ({fips: c.fips, ...c.report})),
  }
}

const LABEL = 20
/**
 * Past 10^15 a double no longer holds every whole number, and a figure of hundreds of digits (a FinalValue
 * of 1e300 is a double, if no house) does not fit a line: such a figure is written with an exponent.
 */
const HUGE = 1e15
const int = (x: number) => (Math.abs(x) < HUGE ? Math.round(x).toLocaleString('en-US') : x.toExponential(2))
const pct = (x: number | null) => (x === null ? '-' : `${x.toFixed(1)}%`)
const fit = (s: string, w: number) => (s.length > w ? `${s.slice(0, w - 1)}…` : s)

/** A figure, `≈` in front when it comes from the sketch. */
function fig(value: number | null, approximate: boolean, fmt: (x: number) => string): string {
  return value === null ? '-' : `${approximate ? '≈' : ''}${fmt(value)}`
}
const dollars = (x: number) => `$${int(x)}`
const rate = (x: number) => `${Math.abs(x) < HUGE ? x.toFixed(2) : x.toExponential(2)}%`
const med = (m: Median, fmt: (x: number) => string) => fig(m.median, m.approximate, fmt)

/**
 * The table for one set of records, as lines (no trailing newline).
 *
 * @example
 * renderStats('sfl stats 06067', report).join('\n')
 */
export function renderStats(title: string, r: StatsReport): string[] {
  const lines = [`${title}: ${int(r.records)} record${r.records === 1 ? '' : 's'}`]
  const row = (label: string, text: string) => lines.push(`  ${label.padEnd(LABEL)}${text}`.trimEnd())
  row('', `${'true'.padStart(11)} ${'of known'.padStart(9)}`)
  for (const [name, s] of Object.entries(r.flags)) {
    const unknown = s.unknown ? `   (${int(s.unknown)} unknown)` : ''
    row(name, `${int(s.true).padStart(11)} ${pct(s.percent).padStart(9)}${unknown}`)
  }
  const levels = [...r.CRAEligible.levels]
  if (r.CRAEligible.unknown)
    levels.push({
      level: '(unknown)',
      count: r.CRAEligible.unknown,
      percent: Math.round((r.CRAEligible.unknown / r.records) * 1000) / 10,
    })
  levels.forEach((l, i) =>
    row(
      i === 0 ? 'CRAEligible' : '',
      `${fit(l.level, 16).padEnd(16)}${int(l.count).padStart(11)} ${pct(l.percent).padStart(7)}`,
    ),
  )
  if (levels.length === 0) row('CRAEligible', '-')
  const fv = r.FinalValue
  row(
    'FinalValue',
    `p25 ${fig(fv.p25, fv.approximate, dollars)}   median ${fig(fv.median, fv.approximate, dollars)}   p75 ${fig(fv.p75, fv.approximate, dollars)}`,
  )
  row('ConfidenceScore', `median ${med(r.ConfidenceScore, (x) => String(Math.round(x * 10) / 10))}`)
  if (r.assumableLoans.length === 0) row('Assumable loans', 'none')
  else {
    row(
      'Assumable loans',
      `${'LoanType'.padEnd(12)}${'count'.padStart(11)}${'median rate'.padStart(13)}${'median equity'.padStart(15)}`,
    )
    for (const l of r.assumableLoans)
      row(
        '',
        `${fit(l.LoanType, 12).padEnd(12)}${int(l.count).padStart(11)}${med(l.EstimatedInterestRate, rate).padStart(13)}${med(l.EstimatedEquity, dollars).padStart(15)}`,
      )
  }
  const approximate =
    fv.approximate ||
    r.ConfidenceScore.approximate ||
    r.assumableLoans.some((l) => l.EstimatedInterestRate.approximate || l.EstimatedEquity.approximate)
  // not "more than N values": a county of a large run may reach its sketch sooner (src/stats/grouped.ts)
  if (approximate)
    lines.push(
      `  ≈ from a sketch, past the exact values kept: within ${RELATIVE_ERROR * 100}% of the exact figure`,
    )
  return lines
}
