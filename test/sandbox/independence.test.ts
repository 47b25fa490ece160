import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {get, ROOT, withSandbox} from '../helpers/sandbox.js'

describe('the sandbox is an independent reading of the spec', () => {
  it('imports nothing from the client (src/api, src/pipeline, src/json or any other folder outside src/sandbox)', () => {
    const dir = join(ROOT, 'src', 'sandbox')
    for (const f of readdirSync(dir)) {
      const text = readFileSync(join(dir, f), 'utf8')
      expect(text, f).not.toMatch(/from '\.\.\//)
    }
  })
})

describe('sandbox --match strict: only the standardised form matches', () => {
  it.each([
    ['5201 LAGUNA OAKS DR UNIT 140', 200],
    ['5201 LAGUNA OAKS DR UNIT 140, ELK GROVE', 200],
    ['5201 LAGUNA OAKS DR UNIT 140, ELK GROVE, CA 95758', 200],
    ['5201 Laguna Oaks Dr #140', 404],
    ['5201 Laguna Oaks Drive Unit 140', 404],
    ['5201 laguna oaks dr., unit 140,, elk grove', 404],
    ['5201 LAGUNA OAKS DR UNIT 140, SACRAMENTO', 404],
    ['5201 LAGUNA OAKS DR', 404],
  ])('%j → %i', async (address, status) => {
    await withSandbox({match: 'strict'}, async (s) => {
      const r = await get(s.baseUrl, `fips=06067&address=${encodeURIComponent(address)}`, 'sandbox-full')
      expect(r.status).toBe(status)
    })
  })

  it('lenient mode (the default) forgives the spellings', async () => {
    await withSandbox({}, async (s) => {
      const r = await get(
        s.baseUrl,
        `fips=06067&address=${encodeURIComponent('5201 Laguna Oaks Drive Unit 140')}`,
        'sandbox-full',
      )
      expect(r.status).toBe(200)
      expect(r.body.data.StandardizeStreetAddress).toBe('5201 LAGUNA OAKS DR UNIT 140')
    })
  })
})

describe('sandbox nullFlatFields', () => {
  const flat = [
    'FHAOwnerOccupancyViolation',
    'FHAOwnerOccupancyPercentage',
    'FHAConcentration',
    'FHAConcentrationViolation',
    'FHAExpirationDate',
  ]
  it('non-condo records carry the flat FHA project fields as null; condos keep their values', async () => {
    await withSandbox({nullFlatFields: true}, async (s) => {
      const house = await get(s.baseUrl, 'fips=06067&apn=078-0123-045', 'sandbox-full')
      for (const f of flat) expect(house.body.data[f], f).toBeNull()
      const condo = await get(
        s.baseUrl,
        `fips=06067&address=${encodeURIComponent('5201 LAGUNA OAKS DR UNIT 140')}`,
        'sandbox-full',
      )
      expect(condo.body.data['FHAOwnerOccupancyPercentage']).toBe('48.2')
    })
  })
  it('without the flag they are left out of non-condo records', async () => {
    await withSandbox({}, async (s) => {
      const house = await get(s.baseUrl, 'fips=06067&apn=078-0123-045', 'sandbox-full')
      for (const f of flat) expect(f in house.body.data, f).toBe(false)
    })
  })
})
