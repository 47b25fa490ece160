import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {DataScanner, MemberSpans} from '../../src/io/data-scanner.js'
import {flattenRecord, newFlatRow} from '../../src/io/row-format.js'
import type {RecordFacts} from '../../src/stats/accumulator.js'
import {
  factsOfSpans,
  statsTag,
  STATS_MEMBERS,
  TokenRowFacts,
  type RecordSpans,
} from '../../src/stats/facts.js'

/** Each record of `body` split at `sizes` (cycled): its bytes and the spans the scanner found. */
function scan(body: string, sizes: number[]): Array<{bytes: Buffer; spans: RecordSpans | undefined}> {
  const spans = new MemberSpans(STATS_MEMBERS)
  const s = new DataScanner(undefined, spans)
  const buf = Buffer.from(body)
  const out: Array<{bytes: Buffer; spans: RecordSpans | undefined}> = []
  for (let i = 0, k = 0; i < buf.length; k++) {
    const size = sizes[k % sizes.length]!
    const recs = s.push(buf.subarray(i, i + size))
    recs.forEach((bytes, j) => {
      // a copy: the table is the next push's
      const at = spans.at(j)
      out.push({
        bytes,
        spans: at === -1 ? undefined : {table: spans.table.slice(at, at + spans.width), at: 0},
      })
    })
    i += size
  }
  s.end()
  return out
}

/** The facts the tokenised row gives (the CSV path and the fallback): what the spans must agree with. */
function tokenised(bytes: Buffer): RecordFacts {
  const row = newFlatRow(statsTag, {onlyTagged: true})
  flattenRecord(bytes, row, {escapeFormulas: false})
  return structuredClone(new TokenRowFacts(false).read(row))
}

const spanned = (bytes: Buffer, spans: RecordSpans | undefined) =>
  spans && structuredClone(factsOfSpans(bytes, spans))

describe('the statistics read from member spans found by the scanner', () => {
  it('read a service record as its tokenised row does, with the loan object parsed', () => {
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
      FHACondoEligibility: {FHACondoEligible: true},
    }
    const body = `{"status":"success","data":[${JSON.stringify(record)}, {"FinalValue" : 1e3 , "AssumableMortgage" : null}]}`
    const [a, b] = scan(body, [64 * 1024])
    expect(a!.spans).toBeDefined()
    expect(spanned(a!.bytes, a!.spans)).toEqual({
      flags: [true, false, null, true, null],
      cra: 'Moderate',
      finalValue: 688600,
      confidence: 71,
      loan: true,
      loanType: 'FHA',
      rate: 5.618,
      equity: 67582,
    })
    expect(spanned(b!.bytes, b!.spans)).toEqual(tokenised(b!.bytes))
  })

  it('leave to the tokenizer a record they cannot read the same way: escapes, arrays, a key named twice', () => {
    for (const rec of [
      '{"CRAEligible":"Mod\\u0065rate"}',
      '{"FHAEligible":"tru\\u0065"}',
      '{"FinalValue":[1]}',
      '{"AssumableMortgage":{"LoanType":7}}',
    ]) {
      const [r] = scan(`{"data":[${rec}]}`, [1000])
      expect(r!.spans, rec).toBeDefined()
      expect(factsOfSpans(r!.bytes, r!.spans!), rec).toBeUndefined()
    }
    // which of two same-named members counts is the tokenizer's rule: the scanner gives no spans
    expect(scan('{"data":[{"FinalValue":1,"FinalValue":2}]}', [1000])[0]!.spans).toBeUndefined()
    // nor for a key spelt with an escape (the tokenizer decodes it to the name it compares)
    const [spelt] = scan('{"data":[{"FHA\\u0045ligible":true}]}', [1000])
    expect(tokenised(spelt!.bytes).flags[0]).toBe(true)
    expect(spelt!.spans).toBeUndefined()
    // a wanted key cut by a chunk's edge: no spans for that record, the next one has them
    const [cut, whole] = scan('{"data":[{"FinalValue":1},{"FinalValue":2}]}', [14, 1000])
    expect(cut!.spans).toBeUndefined()
    expect(spanned(whole!.bytes, whole!.spans)?.finalValue).toBe(2)
  })

  it('agree with the tokenised row for any values of the wanted members, split into chunks anywhere', () => {
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
    const record = fc
      .record({
        wanted: fc.dictionary(fc.constantFrom(...STATS_MEMBERS.slice(0, -1)), value, {maxKeys: 8}),
        loan: fc.option(loan, {nil: undefined}),
        other: fc.dictionary(fc.constantFrom('Fips', 'City', 'FHAEligibleX', 'Note'), value, {maxKeys: 3}),
        spaced: fc.boolean(),
        spelt: fc.boolean(),
      })
      .map(({wanted, loan, other, spaced, spelt}) => {
        const members = {...other, ...wanted, ...(loan === undefined ? {} : {AssumableMortgage: loan})}
        let text = JSON.stringify(members)
        // a wanted key spelt with an escape, as a JSON writer may
        if (spelt) text = text.replace('"FinalValue":', '"Final\\u0056alue":')
        // blanks around the colons and commas of the top level, as a pretty-printer leaves within a line
        return spaced ? text.replaceAll('":', '" : ').replaceAll(',"', ' , "') : text
      })
    let read = 0
    fc.assert(
      fc.property(
        fc.array(record, {minLength: 1, maxLength: 5}),
        fc.array(fc.oneof(fc.integer({min: 1, max: 64}), fc.integer({min: 64, max: 4096})), {
          minLength: 1,
          maxLength: 4,
        }),
        (recs, sizes) => {
          for (const {bytes, spans} of scan(`{"status":"success","data":[${recs.join(',')}]}`, sizes)) {
            const fast = spanned(bytes, spans)
            if (fast === undefined) continue
            read++
            expect(fast).toEqual(tokenised(bytes))
          }
        },
      ),
      {numRuns: 500},
    )
    // most records were read from their spans (the property is not met by leaving them all to the tokenizer)
    expect(read).toBeGreaterThan(500)
  })
})
