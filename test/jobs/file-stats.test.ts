import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import fc from 'fast-check'
import {afterAll, describe, expect, it} from 'vitest'

import {ExportFileError} from '../../src/io/export-reader.js'
import {FileTarget} from '../../src/io/output.js'
import {writeParquet} from '../../src/io/parquet-writer.js'
import {statsOfFile} from '../../src/jobs/file-stats.js'
import {damageFirstPageHeader} from '../helpers/parquet-damage.js'

const dir = mkdtempSync(join(tmpdir(), 'sfl-file-stats-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
let n = 0

/** Records as the service sends them: flags, CRA levels, values, and loans of every shape (none, null, one field). */
const record = fc.record(
  {
    Fips: fc.constantFrom('06067', '48201'),
    ServicePropertyID: fc.integer({min: 1, max: 1e9}),
    FHAEligible: fc.oneof(fc.boolean(), fc.constant(null)),
    VAEligible: fc.oneof(fc.boolean(), fc.constant(null)),
    Assumable: fc.oneof(fc.boolean(), fc.constant(null)),
    CRAEligible: fc.constantFrom('Low', 'Moderate', 'Upper', 'Not Available', 'Odd'),
    FinalValue: fc.oneof(fc.integer({min: 1, max: 2e6}), fc.double({min: 1, max: 2e6, noNaN: true})),
    ConfidenceScore: fc.integer({min: 0, max: 100}),
    AssumableMortgage: fc.oneof(
      fc.constant(null),
      fc.record(
        {
          LoanType: fc.constantFrom('FHA', 'VA', 'USDA'),
          Lender: fc.constantFrom('', 'A Bank'),
          RecordingDate: fc.constant('2022-05-12'),
          EstimatedInterestRate: fc.double({min: 0, max: 9, noNaN: true}),
          EstimatedEquity: fc.integer({min: -1e5, max: 1e6}),
        },
        {requiredKeys: []},
      ),
    ),
  },
  {requiredKeys: ['Fips', 'ServicePropertyID']},
)

async function parquetOf(part: string): Promise<string> {
  const path = join(dir, `${n++}.parquet`)
  const target = await FileTarget.create(path, () => undefined)
  await writeParquet(target, [part])
  await target.commit()
  return path
}

describe('sfl stats of a Parquet export', () => {
  it('reads only the columns it needs and gives what the NDJSON of the same records gives, by county too', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(record, {minLength: 1, maxLength: 60}), async (recs) => {
        const ndjson = join(dir, `${n++}.ndjson`)
        writeFileSync(ndjson, recs.map((r) => `${JSON.stringify(r)}\n`).join(''))
        const parquet = await parquetOf(ndjson)
        expect(await statsOfFile(parquet, true)).toEqual(await statsOfFile(ndjson, true))
      }),
      {numRuns: 40},
    )
  })

  it('a loan object holding only an empty Lender is no loan; one holding only a date is one (as the NDJSON reads)', async () => {
    const ndjson = join(dir, `${n++}.ndjson`)
    writeFileSync(
      ndjson,
      [
        {Fips: '06067', ServicePropertyID: 1, AssumableMortgage: {Lender: ''}},
        {Fips: '06067', ServicePropertyID: 2, AssumableMortgage: {RecordingDate: '2022-05-12'}},
        {Fips: '06067', ServicePropertyID: 3, AssumableMortgage: null},
      ]
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    )
    const s = await statsOfFile(await parquetOf(ndjson), false)
    expect(s.run).toEqual((await statsOfFile(ndjson, false)).run)
    expect(s.run.records).toBe(3)
    expect(s.run.assumableLoans.map((l) => [l.LoanType, l.count])).toEqual([['(none)', 1]])
  })

  it('a page damaged after a footer that reads well: one line naming the file (exit 2), not an unexpected failure', async () => {
    const ndjson = join(dir, `${n++}.ndjson`)
    const levels = ['Low', 'Moderate', 'Middle', 'Upper']
    writeFileSync(
      ndjson,
      Array.from({length: 500}, (_, i) => ({
        Fips: '06067',
        ServicePropertyID: i + 1,
        CRAEligible: levels[i % 4],
      }))
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    )
    const path = await parquetOf(ndjson)
    // the CRAEligible column chunk's first page header overwritten: the footer still reads
    await damageFirstPageHeader(path, 'CRAEligible')
    const stats = statsOfFile(path, true)
    await expect(stats).rejects.toThrow(ExportFileError)
    await expect(stats).rejects.toThrow(`${path}: not a readable Parquet file (`)
  })
})
