import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {ROOT} from '../helpers/sandbox.js'

describe('the demo properties docs/sandbox.md names', () => {
  it('each demo property id names the address and the facts the sandbox serves for it', () => {
    const readme = readFileSync(join(ROOT, 'docs', 'sandbox.md'), 'utf8').replace(/\s+/g, ' ')
    const list = /Demo properties in 06067: (.*?)\. - \*\*/.exec(readme)?.[1]
    expect(list, 'the "Demo properties in 06067" sentence').toBeDefined()
    const demos = [...list!.matchAll(/`(\d{11})` \(([^)]*)\)/g)].map((m) => [Number(m[1]), m[2]!] as const)
    expect(demos.map(([id]) => id)).toEqual([30000000006, 30000000007, 30000000008, 30000000009])
    const sac = countyByFips('06067')!
    const ds = new Dataset(1, 10)
    for (const [id, said] of demos) {
      const loc = ds.byId(String(id))!
      const r = ds.record(loc.county, loc.index, {assumable: true, condo: true})
      expect(loc.county).toBe(sac)
      expect(said.startsWith(`${r['StandardizeStreetAddress'] as string},`), `${id}: ${said}`).toBe(true)
      const condo = r['FHACondoEligibility'] as {
        ApprovalStatus: string
        OwnerOccupancyPercentage: number
      } | null
      if (condo) expect(said, String(id)).toContain(`a ${condo.ApprovalStatus} condo`)
      else expect(said, String(id)).not.toContain('condo')
      const loan = r['AssumableMortgage'] as {LoanType: string} | null
      if (loan) expect(said, String(id)).toMatch(new RegExp(`an? ${loan.LoanType} loan`))
      if (r['Assumable'] === null) expect(said, String(id)).toContain('no mortgage data')
    }
  })
})
