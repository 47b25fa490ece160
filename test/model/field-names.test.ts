import {describe, expect, it} from 'vitest'

import {canonicalField} from '../../src/model/field-names.js'

describe('canonicalField', () => {
  it.each([
    ['apn', 'APN'],
    ['APN', 'APN'],
    [' finalvalue ', 'FinalValue'],
    ['assumablemortgage.loantype', 'AssumableMortgage.LoanType'],
    ['nope', undefined],
  ])('%j → %j', (input, out) => {
    expect(canonicalField(input)).toBe(out)
  })
})
