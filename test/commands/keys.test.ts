import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Readable} from 'node:stream'

import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'

import KeysCheck from '../../src/commands/keys/check.js'
import KeysList from '../../src/commands/keys/list.js'
import KeysRemove from '../../src/commands/keys/remove.js'
import KeysSet from '../../src/commands/keys/set.js'
import {relative} from '../../src/keys/check.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {runCommand} from '../helpers/run-command.js'

let sb: Sandbox
beforeAll(async () => {
  sb = await startSandbox({})
})
afterAll(async () => sb.close())

function stdinWith(text: string) {
  const s = Readable.from([Buffer.from(text)]) as unknown as NodeJS.ReadStream
  return vi.spyOn(process, 'stdin', 'get').mockReturnValue(s as NodeJS.ReadStream & {fd: 0})
}

describe('keys commands (in-process through oclif)', () => {
  it('set, list, check through the profile, remove', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-cmd-keys-'))
    const spy = stdinWith('sandbox-assumable\n')
    const set = await runCommand(KeysSet, ['--base-url', sb.baseUrl], {SFL_CONFIG_DIR: dir})
    spy.mockRestore()
    expect(set.exitCode).toBe(0)
    expect(set.stderr).toMatch(/Saved profile "default" \(key sand…able/)
    const list = await runCommand(KeysList, ['-o', 'table'], {SFL_CONFIG_DIR: dir})
    expect(list.stdout).toMatch(/\* default\s+sand…able\s+http:\/\/127\.0\.0\.1/)
    const check = await runCommand(KeysCheck, ['--fips', '06067', '-o', 'table'], {SFL_CONFIG_DIR: dir})
    expect(check.exitCode).toBe(0)
    expect(check.stdout).toMatch(/Options\s+AssumableMortgage included, FHACondoEligibility not included/)
    const rm = await runCommand(KeysRemove, ['--profile', 'default'], {SFL_CONFIG_DIR: dir})
    expect(rm.exitCode).toBe(0)
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toEqual({profiles: {}})
    const none = await runCommand(KeysList, ['-o', 'table'], {SFL_CONFIG_DIR: dir})
    expect(none.stdout).toMatch(/No profiles in/)
  })

  it('check with no key configured: exit 4 with how to set one, no request', async () => {
    const r = await runCommand(KeysCheck, [], {SFL_BASE_URL: sb.baseUrl})
    expect(r.exitCode).toBe(4)
    expect(r.stderr).toMatch(/no API key: set SFL_API_KEY, run `sfl keys set`/)
  })

  it('check --json with an invalid key: exit 4, the JSON on stdout, one line on stderr for the CI log, no invented profile', async () => {
    const r = await runCommand(KeysCheck, ['--fips', '06067', '--json'], {
      SFL_BASE_URL: sb.baseUrl,
      SFL_API_KEY: 'not-a-sandbox-key-0123456789',
    })
    expect(r.exitCode).toBe(4)
    const doc = JSON.parse(r.stdout) as {valid: boolean; profile: unknown; keySource: string}
    expect(doc).toMatchObject({valid: false, profile: null, keySource: 'env'})
    expect(r.stderr).toBe(
      'Error: the API key is invalid or missing (HTTP 401); the key came from SFL_API_KEY\n',
    )
  })

  it('check --json with a valid key from the environment: nothing on stderr, profile null', async () => {
    const r = await runCommand(KeysCheck, ['--fips', '06067', '--json'], {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}) // prettier-ignore
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({valid: true, profile: null, keySource: 'env'})
    expect(r.stderr).toBe('')
  })

  it('keys list --json prints the rows, keys masked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-cmd-keys-'))
    const spy = stdinWith('sandbox-assumable\n')
    await runCommand(KeysSet, ['--base-url', sb.baseUrl], {SFL_CONFIG_DIR: dir})
    spy.mockRestore()
    const list = await runCommand(KeysList, ['--json'], {SFL_CONFIG_DIR: dir})
    expect(list.exitCode).toBe(0)
    expect(JSON.parse(list.stdout)).toEqual([
      {profile: 'default', selected: true, baseUrl: sb.baseUrl, key: 'sand…able'},
    ])
    expect(list.stdout).not.toContain('sandbox-assumable')
  })

  it('an unknown --profile is a usage error naming the known ones', async () => {
    const r = await runCommand(KeysCheck, ['--profile', 'ghost'], {
      SFL_BASE_URL: sb.baseUrl,
      SFL_API_KEY: 'sandbox-full',
    })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/no profile named "ghost"/)
  })

  it('formats the reset as a relative time', () => {
    const now = 1_800_000_000_000
    expect(relative(now / 1000, now)).toBe('now')
    expect(relative(now / 1000 + 42, now)).toBe('in 42 s')
    expect(relative(now / 1000 + 23 * 60, now)).toBe('in 23 min')
    expect(relative(now / 1000 + 125 * 60, now)).toBe('in 2 h 05 min')
  })
})
