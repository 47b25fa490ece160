import {describe, expect, it} from 'vitest'

import {ExportStats, type PageStats} from '../../src/jobs/export-stats.js'
import {RecordStages} from '../../src/pipeline/stages.js'
import {viewOf} from '../helpers/records.js'

const stages = new RecordStages({strict: false, apiKey: undefined})
const rec = (fips: string, value: number) =>
  JSON.stringify({Fips: fips, FinalValue: value, FHAEligible: true})
/** One record's facts, read where the walk found them (the export's path), added to a page's figures. */
const add = (page: PageStats, text: string) => page.add(stages.facts.read(viewOf(text, stages)))

describe('export statistics over pages and counties', () => {
  it('only whole pages count, only ended counties reach the run, counties listed in the order asked', () => {
    const st = new ExportStats(3)
    const p1 = st.page()
    add(p1, rec('06113', 10))
    add(p1, rec('06113', 30))
    st.pageDone('06113', p1)
    const abandoned = st.page() // a try of the next page that failed: never handed over
    add(abandoned, rec('06113', 1_000))
    const again = st.page()
    add(again, rec('06113', 20))
    st.pageDone('06113', again)
    const other = st.page()
    add(other, rec('06067', 5))
    st.pageDone('06067', other)
    st.countyEnded('06067')
    st.countyEnded('06113')
    const failed = st.page()
    add(failed, rec('06001', 7))
    st.pageDone('06001', failed)
    st.reset('06001') // failed: not written, not counted
    const r = st.result(['06113', '06001', '06067'])
    expect(r.counties.map((c) => [c.fips, c.report.records, c.report.FinalValue.median])).toEqual([
      ['06113', 3, 20],
      ['06067', 1, 5],
    ])
    expect(r.run.records).toBe(4)
    expect(r.run.FinalValue).toEqual({count: 4, p25: 8.75, median: 15, p75: 22.5, approximate: false})
  })

  it('a record without the fields the statistics read is counted with every field unknown', () => {
    const st = new ExportStats(1)
    const p = st.page()
    add(p, '{"Other":[1,2]}')
    add(p, rec('06067', 5))
    st.pageDone('06067', p)
    st.countyEnded('06067')
    const {run} = st.result(['06067'])
    expect(run.records).toBe(2)
    expect(run.flags.FHAEligible).toEqual({true: 1, false: 0, unknown: 1, percent: 100})
  })
})
