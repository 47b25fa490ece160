import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import Lookup from '../../src/commands/lookup.js'
import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {runCommand} from '../helpers/run-command.js'
import {answerFrom, startScenario, type Scenario} from '../helpers/scenario-server.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * Issue 31, addresses typed without commas: the exact `fips` and `address` sfl sends, against a loopback
 * server that answers only the form a county's records hold (docs/lookup.md, "Addresses without commas").
 */
type Rec = Record<string, unknown>
let answers: Map<string, Rec>
let server: Scenario
beforeAll(async () => {
  server = await startScenario(answerFrom(() => answers, 'address'))
})
afterAll(() => server.close())
beforeEach(() => {
  answers = new Map()
  server.requests.length = 0
})

const ds = new Dataset(1, 10)
const record = (fips: string, state: string, street: string, city: string): Rec => ({
  ...ds.record(countyByFips('06067')!, 3, {assumable: false, condo: false}),
  Fips: fips,
  State: state,
  CompleteStreetAddress: street,
  StandardizeStreetAddress: street,
  City: city,
})
const sent = () => server.requests.map((r) => [r.fips, r.query.get('address')])
const lookup = (args: string[]) =>
  runCommand(Lookup, [...args, '-o', 'json'], {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'places-key-0123'})

describe('an address typed in one run is split where its city starts, and sent in one request', () => {
  it.each([
    ['06085', 'CA', '12 ocean view ave san jose ca', '12 OCEAN VIEW AVE, SAN JOSE, CA', 'SAN JOSE'],
    ['36061', 'NY', '100 broadway new york ny', '100 BROADWAY, NEW YORK, NY', 'NEW YORK'],
    [
      '53033',
      'WA',
      '5 lake forest park dr lake forest park wa',
      '5 LAKE FOREST PARK DR, LAKE FOREST PARK, WA',
      'LAKE FOREST PARK',
    ],
    [
      '06067',
      'CA',
      '5201 laguna oaks dr unit 140 elk grove',
      '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE',
      'ELK GROVE',
    ],
    ['06067', 'CA', '12 main st citrus heights', '12 MAIN ST, CITRUS HEIGHTS', 'CITRUS HEIGHTS'],
  ])('--fips %s (%s) --address %j: one request, %j', async (fips, state, typed, form, city) => {
    answers.set(`${fips}|${form}`, record(fips, state, form.split(',')[0]!, city))
    const r = await lookup(['--fips', fips, '--address', typed])
    expect(r.stderr).toBe('')
    expect(r.exitCode).toBe(0)
    expect(sent()).toEqual([[fips, form]])
    expect(JSON.parse(r.stdout).City).toBe(city)
  })

  it('a ZIP names the county, and the street without a suffix keeps its city apart', async () => {
    const form = '100 BROADWAY, NEW YORK, NY 10007'
    answers.set(`36061|${form}`, record('36061', 'NY', '100 BROADWAY', 'NEW YORK'))
    const r = await lookup(['--address', '100 broadway new york ny 10007'])
    expect(r.exitCode).toBe(0)
    expect(sent()).toEqual([['36061', form]])
  })

  it("an address without a state is split by the places of the county's state: one request", async () => {
    const form = '1 BROADWAY, SACRAMENTO'
    answers.set(`06067|${form}`, record('06067', 'CA', '1 BROADWAY', 'SACRAMENTO'))
    const r = await lookup(['--county', 'Sacramento, CA', '--address', '1 broadway sacramento'])
    expect(r.exitCode).toBe(0)
    expect(sent()).toEqual([['06067', form]])
  })

  it('the unit asked for is read from the same split: a record without it is not a clean match', async () => {
    const form = '12 MAIN ST APT 5, SACRAMENTO'
    answers.set(`06067|${form}`, record('06067', 'CA', '12 MAIN ST', 'SACRAMENTO'))
    const r = await lookup(['--fips', '06067', '--address', '12 main st apt 5 sacramento'])
    expect(r.exitCode).toBe(0)
    expect(sent()).toEqual([['06067', form]])
    expect(r.stderr).toMatch(/APT 5/)
    expect(r.stderr).toMatch(/12 MAIN ST/)
  })

  it("a batch row is split by its own county's state, as a single lookup is", async () => {
    answers.set('06067|1 BROADWAY, SACRAMENTO', record('06067', 'CA', '1 BROADWAY', 'SACRAMENTO'))
    answers.set('36061|100 BROADWAY, NEW YORK', record('36061', 'NY', '100 BROADWAY', 'NEW YORK'))
    const input = join(tempDir(), 'in.csv')
    writeFileSync(input, 'fips,address\n06067,1 broadway sacramento\n36061,100 broadway new york\n')
    const r = await runCommand(Lookup, ['--input', input, '-o', 'csv'], {
      SFL_BASE_URL: server.baseUrl,
      SFL_API_KEY: 'places-key-0123',
    })
    expect(r.exitCode).toBe(0)
    expect(sent().sort()).toEqual([
      ['06067', '1 BROADWAY, SACRAMENTO'],
      ['36061', '100 BROADWAY, NEW YORK'],
    ])
  })

  it('"100 oak ct" (a court, not Connecticut) is sent as typed, then the ladder goes on: nothing split', async () => {
    const r = await lookup(['--fips', '06067', '--address', '100 oak ct'])
    expect(r.exitCode).toBe(3)
    expect(sent()).toEqual([
      ['06067', '100 OAK CT'],
      ['06067', '100 oak ct'],
    ])
  })
})
