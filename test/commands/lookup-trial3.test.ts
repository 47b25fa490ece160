import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import Lookup from '../../src/commands/lookup.js'
import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {runCommand} from '../helpers/run-command.js'
import {answerFrom, startScenario, type Scenario} from '../helpers/scenario-server.js'

/**
 * Issue 31, the loan officer's third trial, against a loopback server of our own that answers by the exact
 * `fips` and `address` it is sent (no sandbox): honest matches (the unit asked for compared with the
 * record, whichever step found it) and "a ZIP is enough" (the county from the address's ZIP).
 */
type Rec = Record<string, unknown>
const KEY = 'trial3-key-0123456789'

// a cache folder of this file's own: the APN shapes the answers below remember (src/cli/apn-shapes.ts)
// stay out of the user's cache, and are cleared where a test needs none
const cache = mkdtempSync(join(tmpdir(), 'sfl-trial3-cache-'))
const forgetShapes = () => rmSync(join(cache, 'apn-shapes.json'), {force: true})

/** The record the server holds at each (fips, address) it is asked for; anything else is a 404. */
let answers: Map<string, Rec>
let server: Scenario
beforeAll(async () => {
  server = await startScenario(answerFrom(() => answers, 'address'))
})
afterAll(() => {
  server.close()
  rmSync(cache, {recursive: true, force: true})
})
beforeEach(() => {
  answers = new Map()
  server.requests.length = 0
})

const ds = new Dataset(1, 10)
/** A whole record (the sandbox's, so it passes the spec's checks) at the address given. */
const record = (fips: string, street: string, city = 'SACRAMENTO', zip = '95838'): Rec => ({
  ...ds.record(countyByFips('06067')!, 3, {assumable: false, condo: false}),
  Fips: fips,
  State: fips.startsWith('13') ? 'GA' : 'CA',
  CompleteStreetAddress: street,
  StandardizeStreetAddress: street,
  City: city,
  Zip: zip,
})
const sent = () => server.requests.map((r) => [r.fips, r.query.get('address')])
const lookup = (args: string[]) =>
  runCommand(Lookup, args, {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: KEY, SFL_CACHE_DIR: cache})
const flat = (s: string) => s.replace(/\s+/g, ' ')

describe('honest matches: the unit asked for is compared with the record, whichever form found it', () => {
  const HIGH_ST_APT_9 = ['--fips', '06067', '--address', '3526 High St., Apt. 9']

  it('the text as typed matched to the building (no unit): the table says so in its Address group, stderr in words', async () => {
    answers.set('06067|3526 High St., Apt. 9', record('06067', '3526 HIGH ST'))
    const r = await lookup([...HIGH_ST_APT_9, '-o', 'table'])
    expect(r.exitCode).toBe(0)
    // the standardised form got a 404, the text as typed found the building's record
    expect(sent()).toEqual([
      ['06067', '3526 HIGH ST APT 9'],
      ['06067', '3526 High St., Apt. 9'],
    ])
    expect(flat(r.stdout)).toContain(
      'ADDRESS Matched Without the unit: APT 9 was asked for; this record ("3526 HIGH ST") has no unit Street 3526 HIGH ST',
    )
    expect(r.stderr).toBe(
      'Warning: Without the unit: APT 9 was asked for; this record ("3526 HIGH ST") has no unit\n',
    )
  })

  it('json says matched_without_unit beside the record, with the unit asked for and the address found', async () => {
    answers.set('06067|3526 High St., Apt. 9', record('06067', '3526 HIGH ST'))
    const r = await lookup([...HIGH_ST_APT_9, '-o', 'json'])
    const out = JSON.parse(r.stdout) as {data: Rec; match: unknown}
    expect(out.match).toEqual({
      status: 'matched_without_unit',
      tried: [
        {address: '3526 HIGH ST APT 9', form: 'standardised'},
        {address: '3526 High St., Apt. 9', form: 'as typed'},
      ],
      unit: {asked: 'APT 9', address: '3526 HIGH ST'},
    })
    expect(r.stderr).not.toContain('matched_without_unit') // no internal code in human text
  })

  it('csv gets the match column when the first form matched another unit', async () => {
    answers.set('06067|3526 HIGH ST APT 9', record('06067', '3526 HIGH ST APT 12'))
    const r = await lookup([...HIGH_ST_APT_9, '-o', 'csv'])
    expect(sent()).toEqual([['06067', '3526 HIGH ST APT 9']])
    expect(r.stdout.split('\r\n')[0]).toMatch(/,match$/)
    expect(r.stdout.split('\r\n')[1]).toMatch(/,matched_without_unit$/)
    expect(r.stderr).toBe(
      'Warning: Another unit: APT 9 was asked for; this record is APT 12 ("3526 HIGH ST APT 12")\n',
    )
  })

  it('the same unit under another designator is a clean match: the record alone, nothing on stderr', async () => {
    answers.set('06067|3526 HIGH ST APT 9', record('06067', '3526 HIGH ST UNIT 0009'))
    const r = await lookup([...HIGH_ST_APT_9, '-o', 'json'])
    expect(JSON.parse(r.stdout)).toMatchObject({
      Fips: '06067',
      StandardizeStreetAddress: '3526 HIGH ST UNIT 0009',
    })
    expect(r.stderr).toBe('')
  })
})

describe('a ZIP is enough: no --county or --fips, the county comes from the address’s ZIP', () => {
  it('a ZIP in one county: the request goes to that county, and the answer says which and why', async () => {
    answers.set('06067|3526 HIGH ST, SACRAMENTO, CA 95838', record('06067', '3526 HIGH ST'))
    const r = await lookup(['--address', '3526 High St, Sacramento, CA 95838', '-o', 'table'])
    expect(r.exitCode).toBe(0)
    expect(sent()).toEqual([['06067', '3526 HIGH ST, SACRAMENTO, CA 95838']])
    expect(r.stdout).toMatch(/\n {2}County {20}Sacramento County, CA \(06067\), from ZIP 95838\n/)
    expect(r.stderr).toBe('county Sacramento County, CA (06067), from ZIP 95838\n')
  })

  it('a ZIP that spans counties is tried in order of their share of its addresses until one answers', async () => {
    // 30517 (Braselton, GA): Jackson 41.6% of its housing units, Gwinnett 25.2%, Hall 24.3% (Barrow's
    // 8.9% is under the table's 10%)
    answers.set('13135|1 MAIN ST, BRASELTON, GA 30517', record('13135', '1 MAIN ST', 'BRASELTON', '30517'))
    const r = await lookup(['--address', '1 Main St, Braselton, GA 30517', '-o', 'json', '--no-fallback'])
    expect(r.exitCode).toBe(0)
    expect(sent()).toEqual([
      ['13157', '1 MAIN ST, BRASELTON, GA 30517'],
      ['13135', '1 MAIN ST, BRASELTON, GA 30517'],
    ])
    expect(JSON.parse(r.stdout)).toMatchObject({Fips: '13135'})
    expect(r.stderr).toBe(
      'county Gwinnett County, GA (13135), from ZIP 30517 (3 counties share it; this one is its second by share of addresses)\n',
    )
  })

  it('a 404 in every county tried names them and how to name another', async () => {
    const r = await lookup(['--address', '1 Main St, Braselton, GA 30517', '--no-fallback'])
    expect(r.exitCode).toBe(3)
    expect(sent().map(([fips]) => fips)).toEqual(['13157', '13135', '13139'])
    expect(flat(r.stderr)).toContain(
      'ZIP 30517 spans 3 counties; tried Jackson County, GA (13157), Gwinnett County, GA (13135), Hall County, GA (13139): name the county with --county if it is another',
    )
  })

  it('a ZIP the table does not hold is exit 2 naming the fix, and nothing is sent', async () => {
    const r = await lookup(['--address', '1 Main St, Hartford, CT 06103'])
    expect(r.exitCode).toBe(2)
    expect(server.requests).toHaveLength(0)
    expect(flat(r.stderr)).toContain(`ZIP 06103 is not in sfl's ZIP-to-county table`)
    expect(flat(r.stderr)).toContain('give the county with --county ("Name, ST") or --fips')
  })

  it('an address without a ZIP still needs the county: exit 2, nothing sent', async () => {
    const r = await lookup(['--address', '3526 High St, Sacramento'])
    expect(r.exitCode).toBe(2)
    expect(server.requests).toHaveLength(0)
    expect(flat(r.stderr)).toContain('unless the address ends in a ZIP code')
  })

  it('a 404 in a county whose ZIP lies elsewhere names the ZIP’s county', async () => {
    const r = await lookup([
      '--fips',
      '06113',
      '--address',
      '3526 High St, Sacramento, CA 95838',
      '--no-fallback',
    ])
    expect(r.exitCode).toBe(3)
    expect(sent()).toEqual([['06113', '3526 HIGH ST, SACRAMENTO, CA 95838']])
    expect(flat(r.stderr)).toContain(
      'ZIP 95838 is in Sacramento County, CA (06067), not Yolo County, CA (06113): try --fips 06067, or leave the county out and sfl finds it from the ZIP',
    )
  })
})

describe('hints that would save a call (issue 31)', () => {
  it('a PO box gets a 404 that says the service looks parcels up by street address', async () => {
    const r = await lookup([
      '--fips',
      '06067',
      '--address',
      'P.O. Box 1234, Sacramento, CA 95838',
      '--no-fallback',
    ])
    expect(r.exitCode).toBe(3)
    expect(sent()).toEqual([['06067', 'PO BOX 1234, SACRAMENTO, CA 95838']])
    expect(flat(r.stderr)).toContain(
      'A PO box or a rural route box is a mailing address, not a parcel: the service looks properties up by their street address, so give the street address (or the parcel number, --apn)',
    )
  })

  it('an APN typed without its dashes or with spaces gets a word on how counties write them', async () => {
    forgetShapes() // no county's APNs seen yet: the words that need none
    const bare = await lookup(['--fips', '06067', '--apn', '07801230045'])
    expect(bare.exitCode).toBe(3)
    expect(flat(bare.stderr)).toContain('APNs are matched as the county writes them, usually with dashes')
    const spaced = await lookup(['--fips', '06067', '--apn', '078 0123 045'])
    expect(flat(spaced.stderr)).toContain('try it without the spaces (078-0123-045 or 0780123045)')
  })

  it("another county's APN miss never cites Sacramento County's format as its own", async () => {
    forgetShapes()
    const r = await lookup(['--fips', '06085', '--apn', '12345678'])
    expect(r.exitCode).toBe(3)
    expect(flat(r.stderr)).toContain(
      "APNs are matched as the county writes them, usually in groups with dashes: try it as printed on the county's tax bill",
    )
    expect(r.stderr).not.toContain('Sacramento')
  })

  it('a tract income level that differs from the CRA level says which is which', async () => {
    answers.set('06067|3526 HIGH ST, SACRAMENTO', {...record('06067', '3526 HIGH ST'), CRAEligible: 'Upper', TractIncomeLevel: 'Moderate'}) // prettier-ignore
    const r = await lookup(['--fips', '06067', '--address', '3526 High St, Sacramento', '-o', 'table'])
    expect(flat(r.stdout)).toContain(
      'CRA No: an upper-income tract, not low or moderate income (tract minority population',
    )
    expect(flat(r.stdout)).toContain(
      "Tract income level Moderate: the Census tract's income classification; the CRA line reads the service's CRA level (Upper), a separate field the spec does not derive from this one (spec 2.1)",
    )
  })
})
