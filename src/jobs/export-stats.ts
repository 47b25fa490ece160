import {join} from 'node:path'

import {readCsv} from '../io/csv-reader.js'
import {readExport, unguardCell} from '../io/export-reader.js'
import {readLines} from '../io/lines.js'
import {flattenRecord, newFlatRow, PoisonRecordError, type FlatRow} from '../io/row-format.js'
import type {Column} from '../model/columns.js'
import {emptyFacts, StatsAccumulator, type RecordFacts, type StatsReport} from '../stats/accumulator.js'
import {
  factsOfFlat,
  factsOfSpans,
  statsTag,
  TokenRowFacts,
  type FlatValue,
  type RecordSpans,
} from '../stats/facts.js'
import {EXACT_BOUND} from '../stats/quantiles.js'
import type {PagePart} from './spool.js'

/**
 * The statistics of a county export (issue 14), fed from the pass each record already gets: CSV rows are
 * read from the cells CsvRows has just made; NDJSON and JSON records from the spans of their few wanted
 * members the data scanner noted on its way (src/io/data-scanner.ts MemberSpans), or, for the rare record
 * those cannot read the same way, through the tokenizer (`--no-stats` saves both). Each page gathers its own figures and
 * hands them to its county only once whole, so a page fetched again after a retry is not counted twice; a
 * county's figures join the run's when it ends (done or empty): the run reports the counties written.
 *
 * A resumed run recounts the pages fetched by the earlier process from their part files (the rare path),
 * rather than journaling each page's figures: the journal stays as small as it is, its format unchanged,
 * and the parts are on disk anyway (read once more at assembly).
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
  /** Per county: exact up to 100,000 values for a run of up to 40 counties, fewer (then a sketch) beyond. */
  private readonly bound: number
  /** Shared by every page: each record is tokenised and read at once, with no await between. */
  private readonly readers: Readers = {
    // NDJSON/JSON records are tokenised for the stats alone: only their columns are cut
    row: newFlatRow(statsTag, {onlyTagged: true}),
    guarded: new TokenRowFacts(true),
    plain: new TokenRowFacts(false),
    spanFacts: emptyFacts(),
  }

  constructor(counties: number) {
    this.bound = Math.max(1_000, Math.min(EXACT_BOUND, Math.floor(COUNTY_BUDGET / Math.max(1, counties))))
  }

  /** A page's own figures; `pageDone` hands them to the county. */
  page(): PageStats {
    return new PageStats(this.bound, this.readers)
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

  /** The county starts over (its part files were found damaged). */
  reset(fips: string): void {
    this.open.delete(fips)
  }

  /** Recount a county's pages from an earlier process from their part files (a resumed run). */
  async recount(fips: string, dir: string, pages: readonly PagePart[], layouts: Column[][]): Promise<void> {
    const acc = this.county(fips)
    const facts = emptyFacts()
    for (const p of pages) {
      if (p.segments) {
        for (const seg of p.segments) {
          const names = layouts[seg.layout]!.map((c) => c.header)
          for await (const {fields} of readCsv(join(dir, seg.file))) {
            const rec: Record<string, FlatValue> = {}
            names.forEach((n, i) => (rec[n] = fields[i] ? unguardCell(fields[i]) : null))
            acc.add(factsOfFlat(rec, facts))
          }
        }
        continue
      }
      const page = this.page()
      for await (const l of readLines(join(dir, p.file))) page.json(l.bytes)
      acc.merge(page.acc)
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

interface Readers {
  row: FlatRow
  guarded: TokenRowFacts
  plain: TokenRowFacts
  spanFacts: RecordFacts
}

/** One page's figures while it is read. */
export class PageStats {
  readonly acc: StatsAccumulator

  constructor(
    bound: number,
    private readonly readers: Readers,
  ) {
    this.acc = new StatsAccumulator(bound)
  }

  /** A CSV record just tokenised (its cells quoted, formula-guarded when `guarded`). */
  tokens(row: FlatRow, guarded: boolean): void {
    this.acc.add((guarded ? this.readers.guarded : this.readers.plain).read(row))
  }

  /**
   * An NDJSON/JSON record's bytes: read from the spans of its members the scanner found (the usual way),
   * else tokenised here for its figures.
   */
  json(bytes: Buffer, spans?: RecordSpans): void {
    if (spans) {
      const facts = factsOfSpans(bytes, spans, this.readers.spanFacts)
      if (facts) {
        this.acc.add(facts)
        return
      }
    }
    const {row, plain} = this.readers
    try {
      flattenRecord(bytes, row, {escapeFormulas: false})
    } catch (error) {
      // a record passed through as sent but not an object: counted, its fields unknown
      if (!(error instanceof PoisonRecordError)) throw error
      this.acc.add(emptyFacts())
      return
    }
    this.acc.add(plain.read(row))
  }
}
