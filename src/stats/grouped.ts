import {StatsAccumulator, type RecordFacts, type StatsReport} from './accumulator.js'

/** Exact values an accumulator keeps per metric once its county has been passed by (it may come back). */
const SET_ASIDE_KEEP = 1_000

/**
 * Statistics per county (by Fips) and for the whole, in memory bounded by the number of counties, whatever
 * their order. Exports hold each county's records together, so the usual path is: a county's records
 * arrive, then the next county starts; its figures are taken then (exact) and its accumulator shrinks to
 * sketches. Should the county come back later (a file not laid out by county), it goes on from the
 * sketches and its figures are marked approximate.
 */
export class GroupedStats {
  readonly all = new StatsAccumulator()
  private readonly groups = new Map<
    string,
    {acc: StatsAccumulator; report?: StatsReport | undefined; setAside?: boolean}
  >()
  private current: string | undefined

  add(key: string, facts: RecordFacts): void {
    this.all.add(facts)
    if (key !== this.current) this.switchTo(key)
    this.groups.get(key)!.acc.add(facts)
  }

  /** Each group's report, in the order the groups first appeared. */
  reports(): Array<{key: string; report: StatsReport}> {
    return [...this.groups].map(([key, g]) => ({key, report: g.report ?? g.acc.report()}))
  }

  private switchTo(key: string): void {
    const prev = this.current === undefined ? undefined : this.groups.get(this.current)
    // once only: a county that keeps coming back (a batch input in no order) is not reported again each time
    if (prev && !prev.setAside) {
      prev.report = prev.acc.report()
      prev.acc.compact(SET_ASIDE_KEEP)
      prev.setAside = true
    }
    const g = this.groups.get(key)
    if (g) g.report = undefined
    else this.groups.set(key, {acc: new StatsAccumulator()})
    this.current = key
  }
}
