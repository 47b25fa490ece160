import {describe, expect, it} from 'vitest'

import Counties from '../../src/commands/counties.js'
import Lookup from '../../src/commands/lookup.js'
import {runCommand} from '../helpers/run-command.js'

describe('sfl counties', () => {
  it('finds a county by name', async () => {
    const r = await runCommand(Counties, ['Sacramento, CA', '-o', 'table'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe('06067  Sacramento County, CA\n')
  })
  it('suggests near misses and exits 3 when nothing contains the text', async () => {
    const r = await runCommand(Counties, ['Sacremento', '-o', 'table'])
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toBe('Did you mean:\n  Sacramento County, CA (06067)\n')
  })
  it('json for a script', async () => {
    const r = await runCommand(Counties, ['06067', '--json'])
    expect(JSON.parse(r.stdout).matches).toEqual([{fips: '06067', state: 'CA', name: 'Sacramento County'}])
  })
})

describe('lookup checks the county before sending', () => {
  const env = {SFL_BASE_URL: 'http://127.0.0.1:9/v1', SFL_API_KEY: 'k-123456'}
  it('--fips that no county has: exit 2, did-you-mean, and no request (the base URL is a closed port)', async () => {
    const r = await runCommand(Lookup, ['--fips', '06999', '--apn', '1'], env)
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(
      /^Error: --fips "06999": no US county has the FIPS code 06999 \(FHFA county list\); did you mean .*\(06115\)/,
    )
  })
  it('--county resolves a name; a near miss is a usage error with did-you-mean', async () => {
    const r = await runCommand(Lookup, ['--county', 'Sacremento, CA', '--apn', '1'], env)
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('did you mean Sacramento County, CA (06067)?')
    const ok = await runCommand(Lookup, [
      '--sandbox',
      '--county',
      'Sacramento, CA',
      '--apn',
      '078-0123-045',
      '-o',
      'json',
    ])
    expect(ok.exitCode).toBe(0)
    expect(JSON.parse(ok.stdout).Fips).toBe('06067')
  })
  it('--fips and --county together are refused', async () => {
    const r = await runCommand(Lookup, ['--fips', '06067', '--county', 'Sacramento, CA', '--apn', '1'], env)
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('give --fips or --county, not both')
  })
})
