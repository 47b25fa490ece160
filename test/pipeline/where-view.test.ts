import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {flattenRecord} from '../../src/io/export-reader.js'
import {keeps, parseWhere} from '../../src/model/where.js'
import {IdSet} from '../../src/pipeline/ids.js'
import {readBody, RecordStages} from '../../src/pipeline/stages.js'
import {envelope} from '../helpers/records.js'

async function* bodyOf(body: string): AsyncGenerator<Buffer> {
  yield Buffer.from(body)
}

/** The ServicePropertyIDs the stages hand to the sink with `--where filter`, and the outcome. */
async function kept(body: string, filter: string, ids?: IdSet) {
  const stages = new RecordStages({strict: false, apiKey: undefined, where: parseWhere(filter)})
  const out: number[] = []
  const outcome = await readBody(
    bodyOf(body),
    stages,
    {
      record(view) {
        out.push(stages.serviceId(view)!)
        return undefined
      },
    },
    ids,
  )
  return {ids: out, outcome, stages}
}

describe('--where in the record stages (values read from the bytes)', () => {
  it('keeps the records the filter is true for, counts the others, and still learns their columns', async () => {
    const body = envelope(
      JSON.stringify({ServicePropertyID: 1, FHAEligible: true, FinalValue: 400000}),
      JSON.stringify({ServicePropertyID: 2, FHAEligible: false, FinalValue: 100, Extra: 'x'}),
      JSON.stringify({ServicePropertyID: 3, FHAEligible: null, FinalValue: 1}),
      JSON.stringify({ServicePropertyID: 4, FinalValue: 2}),
    )
    const {ids, outcome, stages} = await kept(body, 'FHAEligible = true or FinalValue < 2')
    expect(ids).toEqual([1, 3])
    expect(outcome.records).toBe(2)
    expect(outcome.filtered).toBe(2)
    // the columns are those of the records fetched: the dropped record's unknown field is one
    expect(stages.schema.names()).toContain('Extra')
  })

  it('reads escaped text, pretty-printed bodies, option members and a null option as SQL does', async () => {
    const body = `{"status": "success", "data": [
      {"ServicePropertyID": 1, "City": "O\\u0027NEILL", "AssumableMortgage": {"LoanType": "VA"}},
      {"ServicePropertyID": 2, "City": "ELK GROVE", "AssumableMortgage": null},
      {"ServicePropertyID": 3, "City": "ELK\\tGROVE", "AssumableMortgage": {"LoanType": "FHA"}}
    ]}`
    expect((await kept(body, "City = 'O''NEILL'")).ids).toEqual([1])
    expect((await kept(body, "City like 'ELK%'")).ids).toEqual([2, 3])
    expect((await kept(body, "AssumableMortgage.LoanType != 'VA'")).ids).toEqual([3])
    expect((await kept(body, 'AssumableMortgage.LoanType is null')).ids).toEqual([2])
  })

  it('drops duplicates before filtering: a repeated id is neither kept nor counted as filtered', async () => {
    const body = envelope(
      JSON.stringify({ServicePropertyID: 7, FinalValue: 1}),
      JSON.stringify({ServicePropertyID: 7, FinalValue: 1}),
      JSON.stringify({ServicePropertyID: 8, FinalValue: 9}),
    )
    const {ids, outcome} = await kept(body, 'FinalValue < 5', new IdSet())
    expect(ids).toEqual([7])
    expect(outcome).toMatchObject({records: 1, duplicates: 1, filtered: 1})
  })

  it('keeps exactly the records `keeps` keeps over the same records parsed and flattened', async () => {
    const value = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer({min: -5, max: 5}),
      fc.double({min: -10, max: 10, noNaN: true, noDefaultInfinity: true}),
      fc.constantFrom('', 'ELK', 'A"B', 'é\\x', '5', 'true', '2026-01-01', '2026-01-01T10:00:00'),
    )
    const record = fc.record(
      {
        FHAEligible: value,
        FinalValue: value,
        City: value,
        ValuationDate: value,
        AssumableMortgage: fc.oneof(fc.constant(null), fc.record({LoanType: value}, {requiredKeys: []})),
      },
      {requiredKeys: []},
    )
    const filters = [
      'FHAEligible = true',
      'not FHAEligible = false',
      'FinalValue >= 0 and FinalValue < 5',
      "City in ('ELK', '5', 'true') or City is null",
      "City like '%\"%'",
      "City in ('A\"B', 'é\\x')",
      "ValuationDate > '2025-12-31'",
      "AssumableMortgage.LoanType not like 'E%'",
      'AssumableMortgage.LoanType is not null or FinalValue = 5',
    ]
    await fc.assert(
      fc.asyncProperty(fc.array(record, {maxLength: 20}), fc.boolean(), async (records, pretty) => {
        const full = records.map((r, i) => ({ServicePropertyID: i + 1, ...r}))
        const texts = full.map((r) => JSON.stringify(r, null, pretty ? 2 : undefined))
        for (const filter of filters) {
          const w = parseWhere(filter)
          const expected = full.flatMap((r) => {
            const flat = flattenRecord(r)
            return keeps(w, (c) => flat[c.header]) ? [r.ServicePropertyID] : []
          })
          const {ids, outcome} = await kept(envelope(...texts), filter)
          expect(ids, filter).toEqual(expected)
          expect(outcome.filtered).toBe(full.length - expected.length)
        }
      }),
      {numRuns: 200},
    )
  })
})
