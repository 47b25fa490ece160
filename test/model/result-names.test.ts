import {describe, expect, it} from 'vitest'

import {resultNames} from '../../src/model/result-names.js'

describe('result column names beside the input columns', () => {
  it.each([
    [
      ['fips', 'address'],
      ['status', 'error', 'City'],
      ['status', 'error', 'City'],
    ],
    [
      ['FIPS', 'Address', 'City'],
      ['status', 'error', 'note', 'City', 'Zip'],
      ['status', 'error', 'note', 'sfl_City', 'Zip'],
    ],
    [
      ['Status', 'CITY'],
      ['status', 'City'],
      ['sfl_status', 'sfl_City'],
    ],
    [['City', 'sfl_City', 'SFL_SFL_CITY'], ['City'], ['sfl_sfl_sfl_City']],
    [['x'], ['Data', 'data'], ['Data', 'sfl_data']],
  ])('input %j, ours %j: %j', (input, ours, names) => {
    const got = resultNames(input, ours)
    expect(got).toEqual(names)
    const all = [...input, ...got].map((n) => n.toLowerCase())
    expect(new Set(all).size).toBe(all.length)
  })
})
