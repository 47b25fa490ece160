import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {parse} from 'csv-parse/sync'
import {describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {readLog, withSandbox} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * A batch without a county column (issue 31, "the same in batches"): an address row that ends in a ZIP is
 * looked up in the ZIP's county (the largest share of its homes), and its note says so; a row that gives
 * neither is invalid with one reason and sends nothing; apn rows still need the county.
 */
describe('lookup --input without a county column', () => {
  it("each address row goes to its ZIP's county, noted; a row without a ZIP is invalid and sends nothing", async () => {
    const d = tempDir('sfl-batch-zip-')
    const input = join(d, 'in.csv')
    writeFileSync(
      input,
      'id,address\n1,"3526 High St, Sacramento, CA 95838"\n2,"1 Main St, Springfield"\n3,"100 Main St, Boston, MA 02134"\n',
    )
    const out = join(d, 'out.csv')
    const log = join(d, 'requests.ndjson')
    await withSandbox({log}, async (sb) => {
      const r = await sfl(['lookup', '--input', input, '--out', out, '--plan', 'lookups', '--quiet'], {
        env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
      })
      expect(r.code).toBe(7) // the invalid row
    })
    const sent = existsSync(log) ? readLog(log) : []
    expect(sent.map((e) => e.query['fips'])).toEqual(['06067', '25025'])
    const rows = parse(readFileSync(out, 'utf8'), {columns: true, bom: true}) as Array<Record<string, string>>
    expect(rows.map((x) => [x['id'], x['status'], x['note']])).toEqual([
      ['1', 'ok', 'county 06067 from ZIP 95838'],
      ['2', 'invalid', ''],
      ['3', 'not_found', 'county 25025 from ZIP 02134'],
    ])
    expect(rows[1]!['error']).toBe(
      'line 3: no county: no fips column and no --fips, and the address does not end in a ZIP code; give the county, or end the address with its ZIP',
    )
  })

  it('an apn column without a county column is still refused at its header, before any request', async () => {
    const d = tempDir('sfl-batch-zip-')
    const input = join(d, 'in.csv')
    writeFileSync(input, 'apn\n078-0123-045\n')
    const r = await sfl(['lookup', '--input', input, '--out', join(d, 'o.csv')], {
      env: {SFL_BASE_URL: 'http://127.0.0.1:9/v1', SFL_API_KEY: 'sandbox-full'},
    })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(
      /no fips column; add one, name yours with --map fips=COLUMN, or give a default county/,
    )
  })
})
