import {describe, expect, it} from 'vitest'

import {
  cell,
  columnsFor,
  emptyShape,
  flattenRow,
  observeShape,
  selectColumns,
  ShapeTracker,
} from '../../src/model/columns.js'
import {EXTRA_FIELDS} from '../../src/api/spec.js'

const base = {Fips: '06067', ServicePropertyID: 1, APN: 'A'}

describe('column order (spec 2.1, extras, unknown, then options in spec order)', () => {
  it('puts core fields first, 2.1 extras next, unknown fields in first-seen order, then options flattened', () => {
    const shape = emptyShape()
    observeShape(shape, {
      Zeta: 1,
      ...base,
      MSACode: '40900',
      Tract: '000100',
      FHACondoEligibility: null,
      AssumableMortgage: {LoanType: 'FHA', Surprise: 1},
      Alpha: 2,
    })
    const headers = columnsFor(shape).map((c) => c.header)
    expect(headers.slice(0, 3)).toEqual(['Fips', 'ServicePropertyID', 'APN'])
    expect(headers.indexOf('TractMinorityPopulationPercent')).toBe(22) // the 23 core fields
    // all 32 fields of spec 2.1 are columns in every file, sent or not, so one run has one schema
    expect(headers.slice(23, 32)).toEqual([...EXTRA_FIELDS])
    expect(headers.slice(32, 34)).toEqual(['Zeta', 'Alpha'])
    expect(headers[34]).toBe('AssumableMortgage.LoanType')
    expect(headers[34 + 15]).toBe('AssumableMortgage.SecondMortgageInterestRate')
    expect(headers[34 + 16]).toBe('AssumableMortgage.Surprise') // unknown sub-field after the spec's
    expect(headers[34 + 17]).toBe('FHACondoEligibility.ApprovalStatus') // null still means "included"
    expect(headers).toHaveLength(34 + 17 + 11)
  })

  it('has no option columns when the key lacks the options (fields omitted)', () => {
    const shape = emptyShape()
    observeShape(shape, base)
    expect(columnsFor(shape).some((c) => c.header.includes('.'))).toBe(false)
  })

  it('tracks option members across records in first-seen order; any other object stays one column', () => {
    const a = new ShapeTracker()
    a.observe({x: 1, o: {p: 1}, AssumableMortgage: {LoanType: 'VA', Later: 1}})
    a.observe({y: 1, o: {q: 1}, AssumableMortgage: {Extra: 2, LoanType: 'FHA'}})
    expect(a.shape.top).toEqual(['x', 'o', 'AssumableMortgage', 'y'])
    expect(a.shape.nested.get('AssumableMortgage')).toEqual(['LoanType', 'Later', 'Extra'])
    expect(a.shape.nested.has('o')).toBe(false)
    expect(columnsFor(a.shape).filter((c) => c.key === 'o')).toEqual([{header: 'o', key: 'o'}])
  })

  it('selects --fields in the given order', () => {
    const shape = emptyShape()
    observeShape(shape, {...base, AssumableMortgage: {LoanType: 'VA'}})
    const cols = selectColumns(columnsFor(shape), ['AssumableMortgage.LoanType', 'APN'])
    expect(flattenRow({...base, AssumableMortgage: {LoanType: 'VA'}}, cols, true)).toEqual(['VA', 'A'])
  })
})

describe('cells', () => {
  it.each([
    [null, ''],
    [undefined, ''],
    [true, 'true'],
    [false, 'false'],
    [0, '0'],
    [1249125, '1249125'],
    [-3.5, '-3.5'], // numbers are data, not formulas
    ['2026-09-22T00:00:00', '2026-09-22T00:00:00'],
    ['=HYPERLINK("http://x")', `'=HYPERLINK("http://x")`],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    [{a: 1}, '{"a":1}'],
  ])('%j → %j', (value, expected) => {
    expect(cell(value, true)).toBe(expected)
  })

  it('leaves formulas alone with --no-escape-formulas', () => {
    expect(cell('=1+1', false)).toBe('=1+1')
    expect(cell('plain', true)).toBe('plain')
  })

  it('flattens a null option object to empty cells', () => {
    const shape = emptyShape()
    observeShape(shape, {...base, AssumableMortgage: {LoanType: 'FHA'}})
    const cols = columnsFor(shape)
    const row = flattenRow({...base, AssumableMortgage: null}, cols, true)
    expect(row[cols.findIndex((c) => c.header === 'AssumableMortgage.LoanType')]).toBe('')
  })
})
