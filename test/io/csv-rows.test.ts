import {describe, expect, it} from 'vitest'

import {CsvRows, columnOf} from '../../src/io/csv-rows.js'
import {ShapeTracker} from '../../src/model/columns.js'

const cols = (...names: string[]) => names.map(columnOf)
const take = (rows: CsvRows, rec: unknown, shape?: ShapeTracker) =>
  rows.take(Buffer.from(JSON.stringify(rec)), shape)

describe('CSV rows of an export', () => {
  it('lays every record out in the output order whatever its member order, shape after shape', () => {
    const rows = new CsvRows(true)
    const shape = new ShapeTracker()
    const out = cols('Fips', 'APN', 'AssumableMortgage.LoanType', 'Late')
    const lines: string[] = []
    const grew: boolean[] = []
    for (const rec of [
      {Fips: '06067', APN: '1', AssumableMortgage: {LoanType: 'FHA'}},
      {Fips: '06067', APN: '2', AssumableMortgage: {LoanType: 'VA'}}, // the same shape again
      {APN: '3', Fips: '06067', AssumableMortgage: null}, // other order, a null option
      {Fips: '06067', APN: '4', AssumableMortgage: {LoanType: 'USDA'}, Late: '=1'}, // a new column
      {Fips: '06067', APN: '5', AssumableMortgage: {LoanType: 'FHA'}}, // back to the first shape
    ]) {
      grew.push(take(rows, rec, shape))
      lines.push(rows.line(out))
    }
    // a null option is itself news (spec 2.2: the key includes the option), and so is a late column
    expect(grew).toEqual([true, false, true, true, false])
    expect(lines).toEqual([
      '06067,1,FHA,\r\n',
      '06067,2,VA,\r\n',
      '06067,3,,\r\n',
      "06067,4,USDA,'=1\r\n",
      '06067,5,FHA,\r\n',
    ])
    expect(shape.shape.top).toEqual(['Fips', 'APN', 'AssumableMortgage', 'Late'])
  })

  it('follows a change of output columns for the same record shape', () => {
    const rows = new CsvRows(false)
    take(rows, {Fips: '06067', APN: '1', City: 'Elk Grove'})
    expect(rows.line(cols('APN', 'Fips'))).toBe('1,06067\r\n')
    expect(rows.line(cols('City', 'Missing', 'APN'))).toBe('Elk Grove,,1\r\n')
    take(rows, {Fips: '06067', APN: '2', City: 'Galt'})
    expect(rows.line(cols('City', 'Missing', 'APN'))).toBe('Galt,,2\r\n')
  })

  it('still notes the columns of a shape first taken without a shape tracker', () => {
    const rows = new CsvRows(false)
    const shape = new ShapeTracker()
    take(rows, {Fips: '06067', APN: '1'})
    expect(take(rows, {Fips: '06067', APN: '2'}, shape)).toBe(true)
    expect(shape.shape.top).toEqual(['Fips', 'APN'])
  })
})
