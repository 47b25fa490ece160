import {POOL_PER_BOUND, StatsAccumulator, type RecordFacts, type StatsReport} from './accumulator.js'
import {EXACT_BOUND, ExactPool} from './quantiles.js'

interface Group {
  acc: StatsAccumulator
  /** Its figures as they stood when its exact values were folded into sketches (while it was idle). */
  report?: StatsReport | undefined
}

/**
 * Statistics per county (by Fips) and for the whole, in memory bounded whatever the number of counties and
 * their order. The whole (`all`) has its own figures: exact up to `bound` values per metric. The counties
 * share one pool of exact values (POOL_PER_BOUND x bound: 3,000,000 values, 24 MB by default) rather than
 * each having its own, so 3,235 counties cost what one large county does:
 *
 * - the county being read draws on the pool (up to `bound` values per metric, as the whole);
 * - a county passed by keeps its exact values while the pool has room, so an input in no order (a batch) is
 *   still exact per county while its values fit;
 * - when the pool runs short, the counties idle longest give theirs back: each one's figures are taken then
 *   (exact) and its values folded into its sketches (a few KB). Exports hold each county's records together,
 *   so a county folded this way is done and its figures stand; one that comes back later (an input not
 *   grouped by county) goes on from its sketches, and its figures are marked approximate.
 */
export class GroupedStats {
  readonly all: StatsAccumulator
  private readonly pool: ExactPool
  private readonly groups = new Map<string, Group>()
  /** Counties passed by that may still hold exact values, the one idle longest first. */
  private readonly idle = new Map<string, Group>()
  private current: string | undefined

  constructor(
    private readonly bound = EXACT_BOUND,
    poolSize = POOL_PER_BOUND * bound,
  ) {
    this.all = new StatsAccumulator(bound)
    this.pool = new ExactPool(poolSize)
    this.pool.reclaim = (slots) => this.reclaim(slots)
  }

  add(key: string, facts: RecordFacts): void {
    this.all.add(facts)
    if (key !== this.current) this.switchTo(key)
    this.groups.get(key)!.acc.add(facts)
  }

  /** A group that may have no records (an empty county of an --out-dir export): reported with 0 records. */
  open(key: string): void {
    if (!this.groups.has(key)) this.groups.set(key, {acc: new StatsAccumulator(this.bound, this.pool)})
  }

  /** Exact-value slots the groups hold together (8 bytes each; never above the pool's size). */
  get held(): number {
    return this.pool.held
  }

  /** Each group's report, in the order the groups first appeared. */
  reports(): Array<{key: string; report: StatsReport}> {
    return [...this.groups].map(([key, g]) => ({key, report: g.report ?? g.acc.report()}))
  }

  /**
   * The whole's report, given the groups' (`reports()`): with one group that took every record, its
   * report is the whole's (the same facts added in the same order to an accumulator of the same bound and
   * pool size, and a lone group is never folded), so it is not computed twice: a one-county file's
   * quantiles were selected twice over the same values.
   */
  runReport(reports: ReadonlyArray<{report: StatsReport}>): StatsReport {
    const [only] = this.groups.values()
    if (this.groups.size === 1 && only!.report === undefined && only!.acc.records === this.all.records)
      return reports[0]!.report
    return this.all.report()
  }

  private switchTo(key: string): void {
    if (this.current !== undefined) this.idle.set(this.current, this.groups.get(this.current)!)
    this.idle.delete(key)
    this.open(key)
    // back after its values were folded: its figures are the accumulator's again (approximate)
    this.groups.get(key)!.report = undefined
    this.current = key
  }

  /** Free at least `slots` slots from idle groups, the one idle longest first (see the class comment). */
  private reclaim(slots: number): void {
    const target = this.pool.held - slots
    for (const [key, g] of this.idle) {
      if (this.pool.held <= target) return
      this.idle.delete(key)
      if (g.acc.held === 0) continue
      g.report = g.acc.report()
      g.acc.compact(0)
    }
  }
}
