import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import CountyExport from '../../src/commands/county-export.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {runCommand} from '../helpers/run-command.js'

let sb: Sandbox
beforeAll(async () => {
  sb = await startSandbox({pageSize: 400, records: 3000})
})
afterAll(async () => sb.close())
const env = (key = 'sandbox-full') => ({SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: key})

describe('county-export command (in-process through oclif)', () => {
  it('a run stopped by --max-requests keeps a checkpoint (exit 7); --resume finishes with every row once', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sfl-cmd-export-')), 'o.csv')
    const first = await runCommand(
      CountyExport,
      ['--fips', '06067', '--fips', '12086', '--out', out, '--max-requests', '4'],
      env(),
    )
    expect(first.exitCode).toBe(7)
    expect(first.stderr).toMatch(/Error: reached --max-requests 4/)
    expect(first.stderr).toMatch(/checkpoint kept at .*o\.csv\.sfl-checkpoint\.json; rerun with --resume/)
    expect(existsSync(out)).toBe(false)
    const again = await runCommand(
      CountyExport,
      ['--fips', '06067', '--fips', '12086', '--out', out, '--resume'],
      env(),
    )
    expect(again.exitCode).toBe(0)
    expect(again.stderr).toMatch(/4,000 records written, 2\/2 counties, 6 requests/)
    const lines = readFileSync(out, 'utf8').trimEnd().split('\r\n')
    expect(lines).toHaveLength(4001)
    expect(new Set(lines.slice(1).map((l) => l.split(',')[1])).size).toBe(4000)
  })

  it('a county the key may not use fails alone: the rest is written, exit 7, resumable', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sfl-cmd-export-')), 'o.ndjson')
    const r = await runCommand(
      CountyExport,
      ['--fips', '06067', '--fips', '48201', '--format', 'ndjson', '--out', out],
      env('sandbox-restricted'),
    )
    expect(r.exitCode).toBe(7)
    expect(r.stderr).toMatch(/failed 48201: the API key is not permitted/)
    expect(readFileSync(out, 'utf8').trimEnd().split('\n')).toHaveLength(2000)
    expect(existsSync(`${out}.sfl-checkpoint.json`)).toBe(true)
  })

  it('nothing could be done: the exit code of the failure (4 for 403, 3 for 404)', async () => {
    const forbidden = await runCommand(
      CountyExport,
      ['--fips', '48201', '--format', 'json'],
      env('sandbox-restricted'),
    )
    expect(forbidden.exitCode).toBe(4)
    const missing = await runCommand(CountyExport, ['--fips', '01001', '--format', 'json'], env())
    expect(missing.exitCode).toBe(3)
    expect(missing.stderr).toMatch(/failed 01001: .*HTTP 404/)
  })

  it('an invalid key stops the whole run with exit 4', async () => {
    const r = await runCommand(CountyExport, ['--fips', '06067', '--fips', '12086'], env('nope-nope'))
    expect(r.exitCode).toBe(4)
    expect(r.stderr).toMatch(/invalid or missing/)
  })

  it('json to stdout is one valid array', async () => {
    const r = await runCommand(
      CountyExport,
      ['--fips', '12086', '--format', 'json', '--fields', 'APN'],
      env(),
    )
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout)).toHaveLength(2000)
  })
})

describe('--fields matches spec names case-insensitively (issue 15)', () => {
  it('--fields apn,finalvalue selects APN and FinalValue, written in the spec spelling', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sfl-cmd-fields-')), 'o.csv')
    const r = await runCommand(
      CountyExport,
      ['--fips', '06067', '--out', out, '--fields', 'apn', '--fields', 'finalvalue', '-q'],
      env(),
    )
    expect(r.exitCode).toBe(0)
    expect(readFileSync(out, 'utf8').split('\r\n')[0]).toBe('APN,FinalValue')
  })
})
