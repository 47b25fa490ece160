import {mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {sfl} from '../helpers/cli.js'
import {readLog} from '../helpers/sandbox.js'

let sb: Sandbox
beforeAll(async () => {
  sb = await startSandbox({pageSize: 100})
})
afterAll(async () => sb.close())

describe('sfl keys check', () => {
  const env = (key: string) => ({SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: key})

  it('reports a full key as the stable JSON object, spending one request per county', async () => {
    const r = await sfl(['keys', 'check', '--fips', '06067', '--json'], {env: env('sandbox-full')})
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout)
    expect(report).toEqual({
      valid: true,
      // the key came from SFL_API_KEY: no profile is named for it (issue 31)
      profile: null,
      keySource: 'env',
      rateLimit: {limit: 1000, remaining: expect.any(Number), reset: expect.any(Number)},
      windowSpent: false,
      probed: {fips: '06067', name: 'Sacramento County, CA', why: 'asked'},
      counties: {'06067': 'permitted'},
      options: {AssumableMortgage: 'included', FHACondoEligibility: 'included'},
      requestsUsed: 1,
    })
    expect(report.rateLimit.reset).toBeGreaterThan(Date.now() / 1000)
  })

  it.each([
    ['sandbox-basic', 'not included', 'not included'],
    ['sandbox-assumable', 'included', 'not included'],
    ['sandbox-condo', 'not included', 'included'],
  ])('tells which options %s includes', async (key, am, condo) => {
    const r = await sfl(['keys', 'check', '--fips', '06067', '--json'], {env: env(key)})
    expect(JSON.parse(r.stdout).options).toEqual({AssumableMortgage: am, FHACondoEligibility: condo})
  })

  it('exit 4 when a county is not permitted, with the others still reported', async () => {
    const r = await sfl(['keys', 'check', '--fips', '06067', '--fips', '48201', '-o', 'table'], {
      env: env('sandbox-restricted'),
    })
    expect(r.code).toBe(4)
    expect(r.stdout).toMatch(/Counties\s+06067 permitted, 48201 not permitted/)
    expect(r.stdout).toMatch(
      /Rate limit\s+\d+ of 1000 left this window, resets .* \(in (\d+ h )?\d+ (min|s)\)/,
    )
    expect(r.stdout).toMatch(/Requests\s+2 used by this check/)
  })

  it('an invalid key: valid false, exit 4, and how to set a key', async () => {
    const r = await sfl(['keys', 'check', '--fips', '06067', '-o', 'table'], {
      env: env('sk_live_REVOKED_0000000000'),
    })
    expect(r.code).toBe(4)
    expect(r.stdout).toMatch(/Key\s+INVALID or missing/)
    expect(r.stdout).toMatch(/SFL_API_KEY or `sfl keys set`/)
    expect(r.stdout + r.stderr).not.toContain('sk_live_REVOKED_0000000000')
    const j = await sfl(['keys', 'check', '--fips', '06067', '--json'], {
      env: env('sk_live_REVOKED_0000000000'),
    })
    expect(JSON.parse(j.stdout)).toMatchObject({valid: false, requestsUsed: 1})
  })

  it('learns the options from a probe property', async () => {
    const r = await sfl(
      ['keys', 'check', '--fips', '06067', '--probe-property-id', '30000000006', '--json'],
      {env: env('sandbox-assumable')},
    )
    expect(JSON.parse(r.stdout)).toMatchObject({
      options: {AssumableMortgage: 'included', FHACondoEligibility: 'not included'},
      requestsUsed: 1,
    })
  })

  it('bad flags: exit 2 with the rule, and no request sent', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'sfl-keys-log-')), 'log.ndjson')
    writeFileSync(log, '')
    const logged = await startSandbox({log})
    try {
      const e = {SFL_BASE_URL: logged.baseUrl, SFL_API_KEY: 'sandbox-full'}
      const f = await sfl(['keys', 'check', '--fips', '6067'], {env: e})
      expect(f.code).toBe(2)
      expect(f.stderr).toMatch(/--fips "6067" must be exactly 5 digits/)
      const p = await sfl(['keys', 'check', '--probe-apn', '1'], {env: e})
      expect(p.code).toBe(2)
      expect(p.stderr).toMatch(/a --probe-\* flag needs --fips/)
      const q = await sfl(['keys', 'check', '--fips', '06067', '--probe-property-id', 'abc'], {env: e})
      expect(q.code).toBe(2)
      expect(q.stderr).toMatch(/--probe-property-id must be a positive whole number/)
      expect(readLog(log)).toHaveLength(0)
    } finally {
      await logged.close()
    }
  })
})

describe('sfl keys set / list / remove', () => {
  it('stores a key read from stdin in a 0600 file, lists it masked, selects it, and removes it', async () => {
    const configDir = mkdtempSync(join(tmpdir(), 'sfl-keys-'))
    const set = await sfl(['keys', 'set', '--profile', 'prod', '--base-url', sb.baseUrl], {
      configDir,
      input: 'sandbox-condo\n',
    })
    expect(set.code).toBe(0)
    expect(set.stderr).toMatch(
      /Saved profile "prod" \(key sand…ondo, base URL http:\/\/127\.0\.0\.1:\d+\/v1\)/,
    )
    const file = join(configDir, 'config.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.prod.apiKey).toBe('sandbox-condo')

    const list = await sfl(['keys', 'list', '-o', 'json', '--profile', 'prod'], {configDir})
    expect(JSON.parse(list.stdout)).toEqual([
      {profile: 'prod', selected: true, baseUrl: sb.baseUrl, key: 'sand…ondo'},
    ])
    expect(list.stdout).not.toContain('sandbox-condo')

    // the profile supplies base URL and key; SFL_API_KEY overrides the key; --api-key overrides both
    const viaProfile = await sfl(['keys', 'check', '--fips', '06067', '--json'], {
      configDir,
      env: {SFL_PROFILE: 'prod'},
    })
    expect(JSON.parse(viaProfile.stdout)).toMatchObject({
      profile: 'prod',
      keySource: 'profile',
      options: {FHACondoEligibility: 'included', AssumableMortgage: 'not included'},
    })
    const viaEnv = await sfl(['keys', 'check', '--fips', '06067', '--json', '--profile', 'prod'], {
      configDir,
      env: {SFL_API_KEY: 'sandbox-assumable'},
    })
    expect(JSON.parse(viaEnv.stdout).options.AssumableMortgage).toBe('included')
    expect(JSON.parse(viaEnv.stdout).keySource).toBe('env')
    const viaFlag = await sfl(
      ['keys', 'check', '--fips', '06067', '--json', '--profile', 'prod', '--api-key', 'sandbox-basic'],
      {
        configDir,
        env: {SFL_API_KEY: 'sandbox-assumable'},
      },
    )
    expect(JSON.parse(viaFlag.stdout).keySource).toBe('flag')
    expect(JSON.parse(viaFlag.stdout).options).toEqual({
      AssumableMortgage: 'not included',
      FHACondoEligibility: 'not included',
    })

    const rm = await sfl(['keys', 'remove', '--profile', 'prod'], {configDir})
    expect(rm.code).toBe(0)
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles).toEqual({})
    expect((await sfl(['keys', 'remove', '--profile', 'prod'], {configDir})).code).toBe(2)
  })

  it('refuses a key given as --api-key and an empty stdin, saving nothing', async () => {
    const configDir = mkdtempSync(join(tmpdir(), 'sfl-keys-'))
    const a = await sfl(['keys', 'set', '--api-key', 'sandbox-full'], {configDir})
    expect(a.code).toBe(2)
    const b = await sfl(['keys', 'set'], {configDir, input: ''})
    expect(b.code).toBe(2)
    expect(b.stderr).toMatch(/no key given/)
    expect(readdirSync(configDir)).toEqual([])
  })

  it('a malformed config file is a clear error naming it (exit 2), never a reset', async () => {
    const configDir = mkdtempSync(join(tmpdir(), 'sfl-keys-'))
    writeFileSync(join(configDir, 'config.json'), '{"profiles": ', {mode: 0o600})
    const r = await sfl(['keys', 'list'], {configDir})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`the config file ${join(configDir, 'config.json')} is not valid JSON`)
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).toBe('{"profiles": ')
  })

  it('warns about a config file readable by others', async () => {
    const configDir = mkdtempSync(join(tmpdir(), 'sfl-keys-'))
    writeFileSync(join(configDir, 'config.json'), '{"profiles": {}}', {mode: 0o644})
    const r = await sfl(['keys', 'list'], {configDir})
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/readable by others \(mode 644\); run: chmod 600/)
  })
})

describe('sfl keys check: source, county, spent window (issue 15)', () => {
  it('says where the key came from and which county it probed, in the table', async () => {
    const r = await sfl(['keys', 'check', '--fips', '06067', '-o', 'table'], {
      env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
    })
    expect(r.stdout).toMatch(/^Key\s+valid \(from SFL_API_KEY, key sand…\)$/m)
    expect(r.stdout).toMatch(/^Probed\s+06067 Sacramento County, CA$/m)
  })

  it('without --fips against a real service it asks for one instead of guessing (exit 2, no request)', async () => {
    const r = await sfl(['keys', 'check'], {env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('keys check needs a county to probe: pass --fips CODE')
  })

  it("uses the profile's default county, and says so", async () => {
    const configDir = mkdtempSync(join(tmpdir(), 'sfl-keys-'))
    const set = await sfl(['keys', 'set', '--base-url', sb.baseUrl, '--fips', '48201'], {
      configDir,
      input: 'sandbox-full\n',
    })
    expect(set.code).toBe(0)
    const r = await sfl(['keys', 'check', '--json'], {configDir})
    expect(JSON.parse(r.stdout)).toMatchObject({
      keySource: 'profile',
      probed: {fips: '48201', name: 'Harris County, TX', why: 'profile default'},
      counties: {'48201': 'permitted'},
    })
  })

  it('--sandbox without --fips probes the demo county 06067 and says so', async () => {
    const r = await sfl(['keys', 'check', '--sandbox', '--json'])
    expect(JSON.parse(r.stdout)).toMatchObject({
      keySource: 'sandbox',
      probed: {fips: '06067', why: 'sandbox demo county'},
    })
  })

  it('sends fips only: no page or page_size, which the spec does not define', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'sfl-keys-log-')), 'log.ndjson')
    writeFileSync(log, '')
    const logged = await startSandbox({log})
    try {
      await sfl(['keys', 'check', '--fips', '06067'], {
        env: {SFL_BASE_URL: logged.baseUrl, SFL_API_KEY: 'sandbox-full'},
      })
      expect(readLog(log).map((l) => l.query)).toEqual([{fips: '06067'}])
    } finally {
      await logged.close()
    }
  })

  it('a spent window still prints the report (limit, reset) and exits 5', async () => {
    const tight = await startSandbox({limit: 1, windowOrigin: Date.now()})
    try {
      const e = {SFL_BASE_URL: tight.baseUrl, SFL_API_KEY: 'sandbox-full'}
      expect((await sfl(['keys', 'check', '--fips', '06067', '--json'], {env: e})).code).toBe(0)
      const r = await sfl(['keys', 'check', '--fips', '06067', '-o', 'table'], {env: e})
      expect(r.code).toBe(5)
      expect(r.stdout).toMatch(
        /^Rate limit\s+0 of 1 left this window, resets .*\(in (\d+ h )?\d+ (min|s)\)$/m,
      )
      expect(r.stdout).toContain('SPENT: this window has no requests left (HTTP 429)')
      const j = await sfl(['keys', 'check', '--fips', '06067', '--json'], {env: e})
      expect(j.code).toBe(5)
      expect(JSON.parse(j.stdout)).toMatchObject({
        valid: true,
        windowSpent: true,
        rateLimit: {limit: 1, remaining: 0},
      })
    } finally {
      await tight.close()
    }
  })
})
