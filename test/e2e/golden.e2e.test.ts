import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {startScenario, type Scenario} from '../helpers/scenario-server.js'

/**
 * Golden files for every export format (the snapshots beside this file, reviewed when they change): option
 * objects and a null option, an unknown field, a field that first appears in the last record, formula
 * cells, quotes, commas and line breaks, non-ASCII and \u escapes, and numbers exactly as sent.
 */
const BODY = `{"status":"success","data":[
{"Fips":"06067","ServicePropertyID":1,"APN":"=HYPERLINK(\\"x\\")","FinalValue":688600.0,"Note":"a, \\"b\\"\\nc","City":"\\u00d1and\\u00fa \\ud83c\\udfe0","FHAEligible":true,"AssumableMortgage":{"LoanType":"FHA","EstimatedInterestRate":0.1,"Extra":[1,{"x":null}]}},
{"Fips":"06067","ServicePropertyID":2,"APN":"-5","FinalValue":1e21,"Note":"@home\\ttab","City":"Sacramento","FHAEligible":false,"AssumableMortgage":null,"Tract":-0.0},
{"Fips":"06067","ServicePropertyID":3,"APN":"+1","FinalValue":-12.50,"Note":null,"City":"Elk Grove","FHAEligible":null,"Late":"first seen here"}
]}`

let server: Scenario
beforeAll(async () => {
  server = await startScenario(() => ({status: 200, body: BODY}))
})
afterAll(async () => server.close())

async function exportAs(format: string, extra: string[] = []): Promise<string> {
  const out = join(mkdtempSync(join(tmpdir(), 'sfl-golden-')), `o.${format}`)
  const r = await sfl(['county-export', '--fips', '06067', '-o', format, '--out', out, ...extra], {
    env: {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'golden-key-123'},
  })
  expect(r.stderr).toMatch(/3 records written/)
  expect(r.code).toBe(0)
  return readFileSync(out, 'utf8')
}

describe('export golden files', () => {
  it('CSV', async () => {
    const csv = await exportAs('csv')
    // the facts the snapshot holds, spelled out
    expect(csv).toContain(`,"'=HYPERLINK(""x"")",`)
    expect(csv).toContain(',688600.0,')
    expect(csv).toContain(",'-5,") // a string that looks like a formula is guarded
    expect(csv).toContain('"a, ""b""\nc"')
    expect(csv).toContain('Ñandú 🏠')
    expect(csv).toContain(',1e21,')
    expect(csv).toContain(',-12.50,')
    expect(csv.split('\r\n')[0]).toMatch(/,Late(,|$)/)
    expect(csv).toMatchSnapshot()
  })

  it('CSV without the formula guard', async () => {
    expect(await exportAs('csv', ['--no-escape-formulas'])).toMatchSnapshot()
  })

  it('NDJSON carries every record byte for byte as sent', async () => {
    const nd = await exportAs('ndjson')
    expect(nd).toBe(
      `${BODY.split('\n')
        .slice(1, 4)
        .map((l) => l.replace(/,$/, ''))
        .join('\n')}\n`,
    )
  })

  it('JSON is one array of the records as sent', async () => {
    const json = await exportAs('json')
    expect(JSON.parse(json)).toEqual(JSON.parse(BODY).data)
    expect(json).toMatchSnapshot()
  })
})
