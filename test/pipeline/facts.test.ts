import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {flattenRecord} from '../../src/io/export-reader.js'
import {FLAG_FIELDS} from '../../src/stats/accumulator.js'
import {factsOfFlat} from '../../src/stats/facts.js'
import {RecordStages} from '../../src/pipeline/stages.js'
import {hasLoneSurrogate} from '../helpers/json-arbitraries.js'
import {viewOf} from '../helpers/records.js'

/** The facts the export reads from a record's spans (a copy: the object is reused). */
function spanned(text: string, stages = new RecordStages({strict: false, apiKey: undefined})) {
  return structuredClone(stages.facts.read(viewOf(text, stages)))
}

/** The facts `sfl stats` reads from the same record in an NDJSON file: what the export must agree with. */
const flat = (text: string) =>
  structuredClone(factsOfFlat(flattenRecord(JSON.parse(text) as Record<string, unknown>)))

describe('the statistics’ facts read where the walk found the values', () => {
  it('read a service record: flags, CRA level, value, score, and the loan object', () => {
    const record = {
      Fips: '48201',
      FinalValue: 688600.0,
      ConfidenceScore: '71',
      CRAEligible: 'Moderate',
      FHAEligible: true,
      VAEligible: 'false',
      USDAAreaEligible: null,
      Assumable: true,
      AssumableMortgage: {
        LoanType: 'FHA',
        EstimatedInterestRate: 5.618,
        EstimatedEquity: '67582',
        Lender: 'x',
      },
      FHACondoEligibility: {ApprovalStatus: 'Approved'},
    }
    const text = JSON.stringify(record).replace('688600', '688600.0')
    const flags = {
      FHAEligible: true,
      VAEligible: false,
      USDAAreaEligible: null,
      FHACondoEligible: null,
      Assumable: true,
    }
    expect(spanned(text)).toEqual({
      flags: FLAG_FIELDS.map((f) => flags[f]),
      cra: 'Moderate',
      finalValue: 688600,
      confidence: 71,
      loan: true,
      loanType: 'FHA',
      rate: 5.618,
      equity: 67582,
    })
    expect(spanned(text)).toEqual(flat(text))
  })

  it('leave out a number no double holds (1e400, a 400-digit rate), as the flat reader leaves out infinity', () => {
    const text = `{"FinalValue":1e400,"ConfidenceScore":-1e999,"AssumableMortgage":{"LoanType":"VA","EstimatedInterestRate":${'9'.repeat(400)},"EstimatedEquity":2.5e5}}`
    const facts = spanned(text)
    expect([facts.finalValue, facts.confidence, facts.rate, facts.equity]).toEqual([
      undefined,
      undefined,
      undefined,
      250000,
    ])
    expect(facts).toEqual(flat(text))
  })

  it('read escapes, a key spelt with an escape, a key named twice (the last, as JSON.parse) like the flat reader', () => {
    for (const text of [
      '{"CRAEligible":"Mod\\u0065rate"}',
      '{"FHAEligible":"tru\\u0065"}',
      '{"FHA\\u0045ligible":true}',
      '{"FinalValue":[1]}',
      '{"FinalValue":1,"FinalValue":2}',
      '{"FinalValue":" 3.5 "}',
      '{"FinalValue":""}',
      '{"FinalValue":"1e400"}',
      '{"ConfidenceScore":1e2}',
      '{"AssumableMortgage":{"LoanType":7}}',
      '{"AssumableMortgage":{"LoanType":null,"EstimatedEquity":""}}',
      '{"AssumableMortgage":{"LoanType":null,"EstimatedEquity":5}}',
      '{"AssumableMortgage":{}}',
      '{"AssumableMortgage":"FHA"}',
    ])
      expect(spanned(text), text).toEqual(flat(text))
  })

  it('an object where a text is expected reads as its compact JSON text, pretty-printed or not', () => {
    const text = '{"CRAEligible": {"level": "Low", "n": [1, 2]}}'
    expect(spanned(text).cra).toBe('{"level":"Low","n":[1,2]}')
    expect(spanned(text)).toEqual(flat(text))
  })

  it('agree with the flat reader for any values of the members they read, compact or pretty-printed, on one run’s stages', () => {
    const text = fc.oneof(
      fc.constantFrom(
        'true',
        'false',
        'True',
        '',
        ' ',
        'Low',
        'Not Available',
        '12',
        ' 3.5 ',
        '1e400',
        'a,b',
        'a"b',
        'x\\y',
        'é',
      ),
      fc.string({unit: 'binary', maxLength: 6}),
    )
    const scalar = fc.oneof(
      text,
      fc.boolean(),
      fc.constant(null),
      fc.integer(),
      fc.double({noNaN: true, noDefaultInfinity: true}),
    )
    const value = fc.oneof(
      {weight: 6, arbitrary: scalar},
      {weight: 1, arbitrary: fc.array(scalar, {maxLength: 2})},
      {weight: 1, arbitrary: fc.dictionary(fc.constantFrom('a', 'b'), scalar, {maxKeys: 2})},
    )
    const loan = fc.oneof(
      value,
      fc.dictionary(
        fc.constantFrom('LoanType', 'EstimatedInterestRate', 'EstimatedEquity', 'Lender'),
        fc.oneof(
          {weight: 4, arbitrary: scalar},
          {weight: 2, arbitrary: fc.constantFrom('12', ' 3.5 ', '-0', '1e400', '', 'FHA', 'V"A', '4\\2')},
          {weight: 1, arbitrary: value},
        ),
        {maxKeys: 4},
      ),
    )
    const wanted = [...FLAG_FIELDS, 'CRAEligible', 'FinalValue', 'ConfidenceScore']
    const record = fc
      .record({
        wanted: fc.dictionary(fc.constantFrom(...wanted), value, {maxKeys: 8}),
        loan: fc.option(loan, {nil: undefined}),
        other: fc.dictionary(fc.constantFrom('Fips', 'City', 'FHAEligibleX', 'Note'), value, {maxKeys: 3}),
        pretty: fc.boolean(),
        spelt: fc.boolean(),
      })
      .map(({wanted, loan, other, pretty, spelt}) => {
        const members = {...other, ...wanted, ...(loan === undefined ? {} : {AssumableMortgage: loan})}
        let t = JSON.stringify(members, null, pretty ? 1 : undefined)
        // a wanted key spelt with an escape, as a JSON writer may
        if (spelt) t = t.replace('"FinalValue":', '"Final\\u0056alue":')
        return t
      })
    const stages = new RecordStages({strict: false, apiKey: undefined})
    fc.assert(
      fc.property(record, (t) => {
        if (hasLoneSurrogate(t)) return
        expect(spanned(t, stages)).toEqual(flat(t))
      }),
      {numRuns: 1500},
    )
  })
})
