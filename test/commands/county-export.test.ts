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
  it('a run stopped by --max-requests keeps a checkpoint (exit 7); the same command finishes with every row once', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sfl-cmd-export-')), 'o.csv')
    const args = ['--fips', '06067', '--fips', '12086', '--out', out]
    const first = await runCommand(CountyExport, [...args, '--max-requests', '4'], env())
    expect(first.exitCode).toBe(7)
    expect(first.stderr).toMatch(/Error: reached --max-requests 4/)
    expect(first.stderr).toMatch(
      /checkpoint kept at .*o\.csv\.sfl-checkpoint; rerun the same command to continue/,
    )
    expect(existsSync(out)).toBe(false) // no county finished: nothing written
    const again = await runCommand(CountyExport, args, env())
    expect(again.exitCode).toBe(0)
    expect(again.stderr).toMatch(/4,000 records written, 2\/2 counties ended, 6 requests/)
    const lines = readFileSync(out, 'utf8').trimEnd().split('\r\n')
    expect(lines).toHaveLength(4001)
    expect(new Set(lines.slice(1).map((l) => l.split(',')[1])).size).toBe(4000)
    expect(existsSync(`${out}.sfl-checkpoint`)).toBe(false)
  })

  it('a forbidden county is final: the rest is written, exit 7, and a rerun does the same instead of being trapped', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sfl-cmd-export-')), 'o.ndjson')
    const args = ['--fips', '06067', '--fips', '48201', '--output', 'ndjson', '--out', out]
    for (let night = 0; night < 2; night++) {
      const r = await runCommand(CountyExport, args, env('sandbox-restricted'))
      expect(r.exitCode).toBe(7)
      expect(r.stderr).toMatch(/forbidden 48201: the API key is not permitted/)
      expect(r.stderr).not.toMatch(/checkpoint kept/)
      expect(readFileSync(out, 'utf8').trimEnd().split('\n')).toHaveLength(2000)
      expect(existsSync(`${out}.sfl-checkpoint`)).toBe(false)
    }
  })

  it('nothing could be done: the exit code of the failure (4 for 403); a 404 county is empty (exit 0)', async () => {
    const forbidden = await runCommand(
      CountyExport,
      ['--fips', '48201', '--output', 'json'],
      env('sandbox-restricted'),
    )
    expect(forbidden.exitCode).toBe(4)
    expect(forbidden.stdout).toBe('')
    const missing = await runCommand(CountyExport, ['--fips', '01001', '--output', 'json'], env())
    expect(missing.exitCode).toBe(0)
    expect(missing.stderr).toMatch(/0 records written, 1\/1 counties ended, 1 empty \(01001\)/)
    expect(JSON.parse(missing.stdout)).toEqual([])
  })

  it('an invalid key stops the whole run with exit 4', async () => {
    const r = await runCommand(CountyExport, ['--fips', '06067', '--fips', '12086'], env('nope-nope'))
    expect(r.exitCode).toBe(4)
    expect(r.stderr).toMatch(/invalid or missing/)
  })

  it('json to stdout is one valid array', async () => {
    const r = await runCommand(
      CountyExport,
      ['--fips', '12086', '--output', 'json', '--fields', 'APN'],
      env(),
    )
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout)).toHaveLength(2000)
  })

  it('csv to stdout with --fields streams the chosen columns', async () => {
    const r = await runCommand(CountyExport, ['--fips', '12086', '--fields', 'APN,Fips'], env())
    expect(r.exitCode).toBe(0)
    const lines = r.stdout.trimEnd().split('\r\n')
    expect(lines[0]).toBe('APN,Fips')
    expect(lines).toHaveLength(2001)
    expect(lines[1]).toMatch(/^[^,]+,12086$/)
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

  it('--county names a county; a code no county has is refused before any request', async () => {
    const byName = await runCommand(CountyExport, ['--county', 'Miami-Dade, FL', '--output', 'ndjson'], env())
    expect(byName.exitCode).toBe(0)
    expect(byName.stdout.trimEnd().split('\n')).toHaveLength(2000)
    // a base URL where nothing listens: a request would end in exit 6, not 2
    const bad = await runCommand(CountyExport, ['--fips', '06999'], {
      SFL_BASE_URL: 'http://127.0.0.1:9/v1',
      SFL_API_KEY: 'sandbox-full',
    })
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toMatch(/--fips 06999: .*did you mean/i)
  })
})
