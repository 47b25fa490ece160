import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {CORE_FIELDS, EXTRA_FIELDS, OPTIONS} from '../../src/api/spec.js'
import {columnsFor, emptyShape, observeShape} from '../../src/model/columns.js'
import {MAX_UNKNOWN_FIELDS} from '../../src/pipeline/fields.js'
import {RecordStages} from '../../src/pipeline/stages.js'
import {hasLoneSurrogate, jsonValue, memberName} from '../helpers/json-arbitraries.js'
import {viewOf} from '../helpers/records.js'

const STANDARD = [...CORE_FIELDS, ...EXTRA_FIELDS]

/** Observe the records (JSON texts) on one run's stages: whether each made a column appear. */
function observe(stages: RecordStages, ...texts: string[]): boolean[] {
  return texts.map((t) => stages.schema.observe(viewOf(t, stages), stages.namer.fresh))
}

/** The names of the members of a record as the walk's entries name them (top-level, and option members). */
function named(stages: RecordStages, text: string): string[] {
  const view = viewOf(text, stages)
  const out: string[] = []
  for (let i = view.first; i < view.first + view.count; i++) {
    const id = view.id(i)
    if (id >= 0) out.push(stages.fields.list[id]!.name)
  }
  return out
}

describe('RunSchema: the run’s columns (the one column rule of src/model/columns.ts)', () => {
  it('spec 2.1’s fields first, unknown fields in first-seen order, then each option seen with its members', () => {
    const stages = new RecordStages({strict: false, apiKey: undefined})
    expect(observe(stages, '{"Zeta":1,"Fips":"1"}', '{"Alpha":2,"Zeta":3}', '{"Fips":"2"}')).toEqual([
      true,
      true,
      false,
    ])
    expect(stages.schema.names()).toEqual([...STANDARD, 'Zeta', 'Alpha'])
    expect(stages.schema.options).toEqual([])
    expect(
      observe(stages, '{"FHACondoEligibility":null}', '{"AssumableMortgage":{"New":1,"LoanType":"FHA"}}'),
    ).toEqual([true, true])
    expect(stages.schema.options).toEqual(['AssumableMortgage', 'FHACondoEligibility'])
    expect(stages.schema.names()).toEqual([
      ...STANDARD,
      'Zeta',
      'Alpha',
      ...OPTIONS.AssumableMortgage.map((m) => `AssumableMortgage.${m}`),
      'AssumableMortgage.New',
      ...OPTIONS.FHACondoEligibility.map((m) => `FHACondoEligibility.${m}`),
    ])
  })

  it('gives the same column array until a column appears; a known member alone is no new column', () => {
    const stages = new RecordStages({strict: false, apiKey: undefined})
    observe(stages, '{"AssumableMortgage":{"LoanType":"FHA"}}')
    const before = stages.schema.columns()
    expect(
      observe(stages, '{"AssumableMortgage":{"Lender":"x"}}', '{"Fips":"1","ServicePropertyID":2}'),
    ).toEqual([false, false])
    expect(stages.schema.columns()).toBe(before)
    expect(observe(stages, '{"AssumableMortgage":{"Other":"x"}}')).toEqual([true])
    expect(stages.schema.columns()).not.toBe(before)
  })

  it('--fields fixes the columns: exactly those, in that order, and none appears', () => {
    const stages = new RecordStages({
      strict: false,
      apiKey: undefined,
      fields: ['AssumableMortgage.LoanType', 'Fips', 'Note'],
    })
    expect(observe(stages, '{"Fips":"1","Note":"n","Late":1,"AssumableMortgage":{"LoanType":"VA"}}')).toEqual(
      [false],
    )
    expect(stages.schema.names()).toEqual(['AssumableMortgage.LoanType', 'Fips', 'Note'])
  })

  it('knows the columns of an earlier file’s header (a resumed run)', () => {
    const stages = new RecordStages({strict: false, apiKey: undefined})
    stages.schema.know(['Fips', 'Late', 'FHACondoEligibility.ApprovalStatus', 'FHACondoEligibility.Extra'])
    expect(stages.schema.names().slice(STANDARD.length)).toEqual([
      'Late',
      ...OPTIONS.FHACondoEligibility.map((m) => `FHACondoEligibility.${m}`),
      'FHACondoEligibility.Extra',
    ])
    expect(observe(stages, '{"Late":1,"FHACondoEligibility":{"Extra":2}}')).toEqual([false])
  })

  it('gives unknown fields columns up to a cap, so a stream of ever-new names costs bounded memory', () => {
    const stages = new RecordStages({strict: false, apiKey: undefined})
    for (let i = 0; i < MAX_UNKNOWN_FIELDS + 50; i += 50)
      observe(
        stages,
        JSON.stringify(Object.fromEntries(Array.from({length: 50}, (_, k) => [`f${i + k}`, k]))),
      )
    expect(stages.schema.names()).toHaveLength(STANDARD.length + MAX_UNKNOWN_FIELDS)
  })

  it('are the columns columnsFor gives the records as JSON.parse reads them, for any records', () => {
    const optionValue = (opt: keyof typeof OPTIONS) =>
      fc.oneof(
        fc.dictionary(fc.oneof(fc.constantFrom(...OPTIONS[opt]), memberName), jsonValue, {maxKeys: 4}),
        fc.constant(null),
      )
    const record = fc
      .record({
        top: fc.dictionary(
          fc.oneof(memberName, fc.constantFrom('Fips', 'Tract', 'MSACode', 'City')),
          jsonValue,
          {
            maxKeys: 5,
          },
        ),
        loan: fc.option(optionValue('AssumableMortgage'), {nil: undefined}),
        condo: fc.option(optionValue('FHACondoEligibility'), {nil: undefined}),
      })
      .map(({top, loan, condo}) => ({
        ...(condo === undefined ? {} : {FHACondoEligibility: condo}),
        ...top,
        ...(loan === undefined ? {} : {AssumableMortgage: loan}),
      }))
    fc.assert(
      fc.property(fc.array(record, {minLength: 1, maxLength: 5}), (recs) => {
        const texts = recs.map((r) => JSON.stringify(r))
        if (texts.some(hasLoneSurrogate)) return
        const stages = new RecordStages({strict: false, apiKey: undefined})
        observe(stages, ...texts)
        const shape = emptyShape()
        for (const r of recs) observeShape(shape, r)
        expect(stages.schema.names()).toEqual(columnsFor(shape).map((c) => c.header))
      }),
      {numRuns: 500},
    )
  })
})

describe('naming members (src/pipeline/fields.ts Namer) on one run’s stages', () => {
  it('names late fields right when records of different shapes come one after another', () => {
    const stages = new RecordStages({strict: false, apiKey: undefined})
    const plain = '{"Fips":"1","Zip":"95838","Assumable":null}'
    const condo =
      '{"Fips":"2","Late":"L","Zip":"95670","FHACondoEligibility":{"CondoName":1,"Late2":2},"Assumable":true}'
    const other =
      '{"Fips":"3","Zip":"95758","FHACondoEligibility":{"Late2":3,"CondoName":4},"Assumable":false,"End":0}'
    for (let round = 0; round < 3; round++) {
      expect(named(stages, plain)).toEqual(['Fips', 'Zip', 'Assumable'])
      expect(named(stages, condo)).toEqual([
        'Fips',
        'Late',
        'Zip',
        'FHACondoEligibility',
        'FHACondoEligibility.CondoName',
        'FHACondoEligibility.Late2',
        'Assumable',
      ])
      expect(named(stages, other)).toEqual([
        'Fips',
        'Zip',
        'FHACondoEligibility',
        'FHACondoEligibility.Late2',
        'FHACondoEligibility.CondoName',
        'Assumable',
        'End',
      ])
    }
  })

  it('tells names apart that share a prefix, differ in the last character, or in one byte of a word', () => {
    const stages = new RecordStages({strict: false, apiKey: undefined})
    expect(named(stages, '{"Fips":1,"FipsX":2}')).toEqual(['Fips', 'FipsX'])
    expect(named(stages, '{"FipsX":1,"Fips":2}')).toEqual(['FipsX', 'Fips'])
    expect(named(stages, '{"FipsY":1,"Fip":2}')).toEqual(['FipsY', 'Fip'])
    // names compared four bytes at a time: a change in the first word, a middle one, a whole-word name
    for (let round = 0; round < 2; round++) {
      expect(named(stages, '{"ServicePropertyID":1,"Abcd":2,"Abcdefgh":3}')).toEqual([
        'ServicePropertyID',
        'Abcd',
        'Abcdefgh',
      ])
      expect(named(stages, '{"XervicePropertyID":1,"Abce":2,"Abcdefgi":3}')).toEqual([
        'XervicePropertyID',
        'Abce',
        'Abcdefgi',
      ])
      expect(named(stages, '{"ServiceProXertyID":1,"abcd":2,"Abcdxfgh":3}')).toEqual([
        'ServiceProXertyID',
        'abcd',
        'Abcdxfgh',
      ])
    }
    const ascii = '{"ServicePropertyID":1,"Zip":"x","FHACondoEligibility":{"OwnerOccupancyPercentage":2}}'
    const other = '{"ServicePropertyID":1,"Zip":"é","FHACondoEligibility":{"OwnerOccupancyPercentage":2}}'
    const near = '{"ServicePropertyIE":1,"Zip":"x","FHACondoEligibility":{"OwnerOccupancyPercentagf":2}}'
    for (const text of [ascii, other, near, ascii, other, near, ascii])
      expect(named(stages, text)).toEqual(
        text === near
          ? [
              'ServicePropertyIE',
              'Zip',
              'FHACondoEligibility',
              'FHACondoEligibility.OwnerOccupancyPercentagf',
            ]
          : [
              'ServicePropertyID',
              'Zip',
              'FHACondoEligibility',
              'FHACondoEligibility.OwnerOccupancyPercentage',
            ],
      )
  })

  it('decodes escapes in names, as JSON.parse does', () => {
    const stages = new RecordStages({strict: false, apiKey: undefined})
    expect(named(stages, '{"A\\u0042":1,"FHACondoEligibility":{"\\"q\\"":2,"Condo\\u004eame":"n"}}')).toEqual(
      ['AB', 'FHACondoEligibility', 'FHACondoEligibility."q"', 'FHACondoEligibility.CondoName'],
    )
  })

  it('gives members of an object that is no option no names (the object is one column)', () => {
    const stages = new RecordStages({strict: false, apiKey: undefined})
    expect(named(stages, '{"o":{"a":1},"p":{"a":2}}')).toEqual(['o', 'p'])
  })
})
