import {describe, expect, it} from 'vitest'

import {CORE_FIELDS, EXTRA_FIELDS, OPTIONS, OPTION_NAMES} from '../../src/api/spec.js'
import {parquetType, toParquetValue, UNFIT, type ParquetType} from '../../src/io/parquet-types.js'

const col = (header: string) => {
  const [key, ...rest] = header.split('.')
  return rest.length ? {key: key!, sub: rest.join('.')} : {key: key!}
}

describe('parquetType: spec section 2 types as Parquet types', () => {
  it.each<[string, ParquetType]>([
    ['Fips', 'STRING'],
    ['ServicePropertyID', 'INT64'],
    ['ConfidenceScore', 'INT32'],
    ['FinalValue', 'DOUBLE'],
    ['FHAEligible', 'BOOLEAN'],
    ['FHACondoEligible', 'BOOLEAN'],
    ['ValuationDate', 'TIMESTAMP'],
    ['FHAExpirationDate', 'TIMESTAMP'],
    ['FHAConcentration', 'STRING'], // varchar at the top (2.1) ...
    ['FHACondoEligibility.FHAConcentration', 'DOUBLE'], // ... float in the condo option (2.3)
    ['AssumableMortgage.LoanType', 'STRING'],
    ['AssumableMortgage.TermMonths', 'INT32'],
    ['AssumableMortgage.RecordingDate', 'DATE'],
    ['AssumableMortgage.IsRefinance', 'BOOLEAN'],
    ['AssumableMortgage.SecondMortgageBalance', 'DOUBLE'],
    ['FHACondoEligibility.LastUpdated', 'DATE'],
    ['FHACondoEligibility.TotalUnits', 'INT32'],
    // fields the spec does not name are text
    ['Note', 'STRING'],
    ['AssumableMortgage.Extra', 'STRING'],
    ['Unknown.TermMonths', 'STRING'],
    ['toString', 'STRING'],
    ['AssumableMortgage.constructor', 'STRING'],
  ])('%s is %s', (header, type) => {
    expect(parquetType(col(header))).toBe(type)
  })

  it('every field the spec lists has a type of its own', () => {
    const headers = [
      ...CORE_FIELDS,
      ...EXTRA_FIELDS,
      ...OPTION_NAMES.flatMap((o) => OPTIONS[o].map((f) => `${o}.${f}`)),
    ]
    const types = headers.map((h) => parquetType(col(h)))
    expect(types.filter((t) => t !== 'STRING')).toHaveLength(15 + 13 + 7) // 2.1, 2.2, 2.3: every field but the varchars
    expect(headers).toHaveLength(59)
  })
})

describe('toParquetValue', () => {
  it.each<[ParquetType, unknown, unknown]>([
    ['STRING', 'Ñandú 🏠', 'Ñandú 🏠'],
    ['STRING', 5, '5'],
    ['STRING', [1, {x: null}], '[1,{"x":null}]'],
    ['STRING', false, 'false'],
    ['DOUBLE', 0.1, 0.1],
    ['DOUBLE', 688600, 688600],
    ['DOUBLE', -12.5, -12.5],
    ['INT32', 48, 48],
    ['INT32', -(2 ** 31), -(2 ** 31)],
    ['INT64', 30000000000, 30000000000n],
    ['BOOLEAN', true, true],
    ['BOOLEAN', false, false],
    ['DATE', '1970-01-02', 1],
    ['DATE', '2028-07-12', 21377],
    ['DATE', '1969-12-31', -1],
    ['TIMESTAMP', '2026-09-22T00:00:00', 1790035200000n],
    ['TIMESTAMP', '2026-09-22T13:45:07.25', 1790084707250n],
    ['TIMESTAMP', '2026-09-22', 1790035200000n],
  ])('%s takes %j as %s', (type, v, want) => {
    expect(toParquetValue(type, v)).toEqual(want)
  })

  it.each<ParquetType>(['STRING', 'DOUBLE', 'INT32', 'INT64', 'BOOLEAN', 'DATE', 'TIMESTAMP'])(
    '%s keeps null and absent as null',
    (type) => {
      expect(toParquetValue(type, null)).toBeNull()
      expect(toParquetValue(type, undefined)).toBeNull()
    },
  )

  it.each<[ParquetType, unknown]>([
    ['DOUBLE', 'abc'],
    ['DOUBLE', '688600'],
    ['DOUBLE', true],
    ['INT32', 12.5],
    ['INT32', 2 ** 31],
    ['INT32', '48'],
    ['INT64', 2 ** 53],
    ['INT64', 1.5],
    ['BOOLEAN', 'true'],
    ['BOOLEAN', 1],
    ['DATE', '2024-02-30'],
    ['DATE', '2024-02-03T00:00:00'],
    ['DATE', 20240203],
    ['TIMESTAMP', '2026-09-22T24:00:00'],
    ['TIMESTAMP', '2026-09-22T10:00:00Z'],
    ['TIMESTAMP', '2026-09-22 10:00:00'],
    ['TIMESTAMP', 'yesterday'],
    ['DOUBLE', {a: 1}],
  ])('%s refuses %j as not of its type', (type, v) => {
    expect(toParquetValue(type, v)).toBe(UNFIT)
  })
})
