import {describe, expect, it} from 'vitest'

import {checkRecord, schemaLine} from '../../src/api/schema.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {countyByFips} from '../../src/sandbox/counties.js'

const house = new Dataset(1, 10).record(countyByFips('06067')!, 6, {assumable: true, condo: true})
const FLAT = [
  'FHAOwnerOccupancyViolation',
  'FHAOwnerOccupancyPercentage',
  'FHAConcentration',
  'FHAConcentrationViolation',
  'FHAExpirationDate',
]

describe('schema: fields whose presence the spec leaves open (spec 2.1 "not shown")', () => {
  it('accepts the flat FHA project fields and Tract/StateFips/CountyFips/MSACode as null', () => {
    const r = {...house}
    for (const f of [...FLAT, 'Tract', 'StateFips', 'CountyFips', 'MSACode']) r[f] = null
    expect(checkRecord(r)).toEqual([])
  })

  it('accepts them absent', () => {
    const r = {...house}
    for (const f of [...FLAT, 'Tract', 'StateFips', 'CountyFips', 'MSACode']) delete r[f]
    expect(checkRecord(r)).toEqual([])
  })

  it('a real violation is one line per record naming the record and each field', () => {
    const line = schemaLine({...house, FHAConcentration: 12.5, ConfidenceScore: 101})
    expect(line).toBe(
      "record 30000000006 does not match the spec's schema: ConfidenceScore: Too big: expected number to be <=100; FHAConcentration: Invalid input: expected string, received number",
    )
    expect(line).not.toContain('\n')
    expect(schemaLine(house)).toBeUndefined()
  })
})
