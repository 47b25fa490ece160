import {join} from 'node:path'

import {readCsv} from '../io/csv-reader.js'
import {unguardCell} from '../text/csv-cell.js'
import {flattenRecord, readExport} from '../io/export-reader.js'
import {readLines} from '../io/lines.js'
import type {PagePart} from '../pipeline/spool.js'
import {emptyFacts, StatsAccumulator, type RecordFacts, type StatsReport} from '../stats/accumulator.js'
import {factsOfFlat, type FlatValue} from '../stats/facts.js'
import {EXACT_BOUND} from '../stats/quantiles.js'

/**
 * The statistics of a county export, fed by the record stages with each record's facts as it passes
 * (src/pipeline/facts.ts reads them where the walk found the values). Each page gathers its own figures
 * and hands them to its county only once whole, so a page fetched again after a retry is not counted
 * twice; a county's figures join the run's when it ends (done or empty): the run reports the counties
 * written.
 *
 * A resumed run recounts the pages fetched by the earlier process from their part files (the rare path),
 * rather than journaling each page's figures.
 */
export interface CountyStats {
  fips: string
  report: StatsReport
}

export interface ExportStatsResult {
  run: StatsReport
  /** The counties that ended, in the order asked. */
  counties: CountyStats[]
}

/** Exact values per metric shared by the counties of one run (each county keeps at least 1,000). */
const COUNTY_BUDGET = 4_000_000

export class ExportStats {
  private run = new StatsAccumulator()
  private readonly open = new Map<string, StatsAccumulator>()
  private readonly ended = new Map<string, StatsReport>()
  /** Per county: exact up to EXACT_BOUND values for a run of few counties, fewer (then a sketch) beyond. */
  private readonly bound: number

  constructor(counties: number) {
    this.bound = Math.max(1_000, Math.min(EXACT_BOUND, Math.floor(COUNTY_BUDGET / Math.max(1, counties))))
  }

  /** A page's own figures; `pageDone` hands them to the county. */
  page(): PageStats {
    return new PageStats(this.bound)
  }

  pageDone(fips: string, page: PageStats): void {
    // a county's first page (a county sent as one array: its only one) becomes its figures: no copy
    const acc = this.open.get(fips)
    if (acc) acc.merge(page.acc)
    else this.open.set(fips, page.acc)
  }

  /** The county ended (done or empty): its figures are final, and join the run's. */
  countyEnded(fips: string): void {
    const acc = this.county(fips)
    this.ended.set(fips, acc.report())
    // the first county to end becomes the run's figures when it keeps as many exact values (no copy)
    if (this.run.records === 0 && this.bound === EXACT_BOUND) this.run = acc
    else this.run.merge(acc)
    this.open.delete(fips)
  }

  /** The county starts over (its part files were found damaged), or failed: its figures are not the run's. */
  reset(fips: string): void {
    this.open.delete(fips)
  }

  /** Recount a county's pages from an earlier process from their part files (a resumed run). */
  async recount(
    fips: string,
    dir: string,
    pages: readonly PagePart[],
    layouts: ReadonlyArray<readonly string[]>,
  ): Promise<void> {
    const acc = this.county(fips)
    const facts = emptyFacts()
    for (const p of pages) {
      if (p.segments) {
        for (const seg of p.segments) {
          const names = layouts[seg.layout]!
          for await (const {fields} of readCsv(join(dir, seg.file))) {
            const rec: Record<string, FlatValue> = {}
            names.forEach((n, i) => (rec[n] = fields[i] ? unguardCell(fields[i]) : null))
            acc.add(factsOfFlat(rec, facts))
          }
        }
        continue
      }
      for await (const l of readLines(join(dir, p.file)))
        acc.add(
          factsOfFlat(flattenRecord(JSON.parse(l.bytes.toString('utf8')) as Record<string, unknown>), facts),
        )
    }
  }

  /** Recount a county an earlier process already wrote to its own file (--out-dir: its parts are gone). */
  async recountFile(fips: string, path: string): Promise<void> {
    const acc = this.county(fips)
    const facts = emptyFacts()
    for await (const rec of readExport(path)) acc.add(factsOfFlat(rec, facts))
  }

  result(order: readonly string[]): ExportStatsResult {
    return {
      run: this.run.report(),
      counties: order.flatMap((fips) => {
        const report = this.ended.get(fips)
        return report ? [{fips, report}] : []
      }),
    }
  }

  private county(fips: string): StatsAccumulator {
    let acc = this.open.get(fips)
    if (!acc) this.open.set(fips, (acc = new StatsAccumulator(this.bound)))
    return acc
  }
}

/** One page's figures while it is read. */
export class PageStats {
  readonly acc: StatsAccumulator

  constructor(bound: number) {
    this.acc = new StatsAccumulator(bound)
  }

  add(facts: RecordFacts): void {
    this.acc.add(facts)
  }
}
