import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {parse} from 'csv-parse/sync'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {startScenario, type Scenario} from '../helpers/scenario-server.js'

/**
 * One number text (issue 32): numbers are written as the service sent them, on every path that writes
 * them as text: county-export's CSV and NDJSON, lookup -o csv, and change files built from CSV or NDJSON
 * exports. A Parquet export holds doubles, not text: a change file built from Parquet writes JSON's
 * shortest form of each (docs/exports.md "Number text").
 */
const body = (recs: string[]) => `{"status":"success","data":[\n${recs.join(',\n')}\n]}`
const OCTOBER = body([
  '{"Fips":"06067","ServicePropertyID":1,"APN":"+1","FinalValue":688600.0,"HighValue":1e21,"FHAEligible":true}',
  '{"Fips":"06067","ServicePropertyID":2,"APN":"A-2","FinalValue":-12.50,"HighValue":3,"FHAEligible":false}',
])
const NOVEMBER = body([
  '{"Fips":"06067","ServicePropertyID":1,"APN":"+1","FinalValue":215700.0,"HighValue":1e21,"FHAEligible":true}',
  '{"Fips":"06067","ServicePropertyID":3,"APN":"A-3","FinalValue":148800.0,"HighValue":4,"FHAEligible":true}',
])

let oct: Scenario
let nov: Scenario
const dir = mkdtempSync(join(tmpdir(), 'sfl-number-text-'))
beforeAll(async () => {
  oct = await startScenario(() => ({status: 200, body: OCTOBER}))
  nov = await startScenario(() => ({status: 200, body: NOVEMBER}))
})
afterAll(async () => {
  await oct.close()
  await nov.close()
})

async function exportOf(server: Scenario, name: string, format: string): Promise<string> {
  const out = join(dir, `${name}.${format}`)
  const r = await sfl(['county-export', '--fips', '06067', '-o', format, '--out', out, '--quiet'], {
    env: {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'number-key-123'},
  })
  expect(r.code, r.stderr).toBe(0)
  return out
}

/** The change file's CSV rows by Change and id: {updated-1: {FinalValue, Previous.FinalValue, ...}}. */
async function changesCsv(format: string): Promise<Record<string, Record<string, string>>> {
  const prev = await exportOf(oct, `oct-${format}`, format)
  const cur = await exportOf(nov, `nov-${format}`, format)
  const r = await sfl(['changes', prev, cur])
  expect(r.code, r.stderr).toBe(0)
  const [header, ...rows] = parse(r.stdout) as string[][]
  return Object.fromEntries(
    rows.map((row) => {
      const rec = Object.fromEntries(header!.map((h, i) => [h, row[i]!]))
      return [`${rec['Change']}-${rec['ServicePropertyID']}`, rec]
    }),
  )
}

describe('numbers are written as the service sent them', () => {
  it('county-export CSV and NDJSON keep 688600.0, -12.50 and 1e21', async () => {
    expect(readFileSync(await exportOf(oct, 'e', 'csv'), 'utf8')).toContain(',688600.0,1e21,')
    expect(readFileSync(await exportOf(oct, 'e', 'ndjson'), 'utf8')).toContain('"FinalValue":-12.50,')
  })

  it('lookup -o csv writes them as the export does (not 688600)', async () => {
    const r = await sfl(['lookup', '--fips', '06067', '--property-id', '1', '-o', 'csv'], {
      env: {SFL_BASE_URL: oct.baseUrl, SFL_API_KEY: 'number-key-123'},
    })
    expect(r.code, r.stderr).toBe(0)
    const [header, ...rows] = parse(r.stdout) as string[][]
    const at = (name: string) => header!.indexOf(name)
    expect(rows.map((row) => [row[at('FinalValue')], row[at('HighValue')], row[at('APN')]])).toEqual([
      ['688600.0', '1e21', "'+1"],
      ['-12.50', '3', 'A-2'],
    ])
  })

  it('a change file from CSV exports and one from NDJSON exports write the same text: the text sent', async () => {
    const fromCsv = await changesCsv('csv')
    const fromNdjson = await changesCsv('ndjson')
    // the CSV export has every standard column (empty where not sent); the NDJSON one the fields sent
    expect(Object.keys(fromNdjson)).toEqual(Object.keys(fromCsv))
    for (const [k, row] of Object.entries(fromNdjson))
      expect(row).toEqual(Object.fromEntries(Object.keys(row).map((c) => [c, fromCsv[k]![c]])))
    expect(fromCsv['updated-1']).toMatchObject({
      ChangedFields: 'FinalValue',
      FinalValue: '215700.0',
      'Previous.FinalValue': '688600.0',
      HighValue: '1e21',
      APN: "'+1",
    })
    expect(fromCsv['added-3']).toMatchObject({FinalValue: '148800.0', HighValue: '4'})
    expect(fromCsv['deleted-2']).toMatchObject({FinalValue: '-12.50'})
  })

  it('a change file from Parquet exports writes the shortest form of each double (Parquet keeps no text)', async () => {
    const fromParquet = await changesCsv('parquet')
    expect(fromParquet['updated-1']).toMatchObject({
      FinalValue: '215700',
      'Previous.FinalValue': '688600',
      HighValue: '1e+21',
      APN: "'+1",
    })
    expect(fromParquet['added-3']).toMatchObject({FinalValue: '148800'})
    expect(fromParquet['deleted-2']).toMatchObject({FinalValue: '-12.5'})
  })

  it('an NDJSON change file from NDJSON exports writes the numbers sent, typed', async () => {
    const prev = await exportOf(oct, 'j-oct', 'ndjson')
    const cur = await exportOf(nov, 'j-nov', 'ndjson')
    const out = join(dir, 'changes.ndjson')
    const r = await sfl(['changes', prev, cur, '--out', out])
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(out, 'utf8').split('\n')[1]).toBe(
      '{"Change":"updated","ServicePropertyID":1,"Fips":"06067","ChangedFields":["FinalValue"],"APN":"+1","FinalValue":215700.0,"HighValue":1e21,"FHAEligible":true,"Previous":{"FinalValue":688600.0}}',
    )
  })
})
