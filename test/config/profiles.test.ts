import {chmodSync, mkdtempSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {
  ConfigFileError,
  loadConfig,
  parseConfig,
  resolveSettings,
  saveConfig,
} from '../../src/config/profiles.js'

const config = {
  profiles: {
    default: {baseUrl: 'https://p/v1', apiKey: 'profile-key'},
    prod: {baseUrl: 'https://prod/v1', apiKey: 'prod-key'},
  },
}

describe('resolveSettings precedence: flag, then environment, then profile', () => {
  it('takes the flag over the environment over the profile', () => {
    expect(
      resolveSettings(
        {apiKey: 'flag-key', baseUrl: 'https://f/v1'},
        {SFL_API_KEY: 'env-key', SFL_BASE_URL: 'https://e/v1'},
        config,
      ),
    ).toMatchObject({
      apiKey: 'flag-key',
      apiKeySource: 'flag',
      baseUrl: 'https://f/v1',
      baseUrlSource: 'flag',
    })
    expect(resolveSettings({}, {SFL_API_KEY: 'env-key'}, config)).toMatchObject({
      apiKey: 'env-key',
      apiKeySource: 'env',
      baseUrl: 'https://p/v1',
      baseUrlSource: 'profile',
    })
    expect(resolveSettings({}, {}, config)).toMatchObject({
      profile: 'default',
      apiKey: 'profile-key',
      apiKeySource: 'profile',
    })
  })

  it('selects a profile with --profile over SFL_PROFILE', () => {
    expect(resolveSettings({profile: 'prod'}, {SFL_PROFILE: 'default'}, config)).toMatchObject({
      profile: 'prod',
      apiKey: 'prod-key',
    })
    expect(resolveSettings({}, {SFL_PROFILE: 'prod'}, config)).toMatchObject({
      profile: 'prod',
      apiKey: 'prod-key',
    })
  })

  it('treats an empty variable as unset', () => {
    expect(resolveSettings({}, {SFL_API_KEY: ''}, config).apiKeySource).toBe('profile')
  })

  it('names an unknown profile and the known ones', () => {
    expect(() => resolveSettings({profile: 'staging'}, {}, config)).toThrow(
      'no profile named "staging" (known: default, prod); create it with `sfl keys set --profile staging`',
    )
  })
})

describe('config file', () => {
  it('is written 0600 and read back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-cfg-'))
    const path = await saveConfig(join(dir, 'sub'), config)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const loaded = await loadConfig(join(dir, 'sub'))
    expect(loaded.config).toEqual(config)
    expect(loaded.warning).toBeUndefined()
  })

  it('warns when the file is readable by others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-cfg-'))
    const path = await saveConfig(dir, config)
    chmodSync(path, 0o644)
    expect((await loadConfig(dir)).warning).toBe(
      `the config file ${path} holds API keys but is readable by others (mode 644); run: chmod 600 ${path}`,
    )
  })

  it('is an empty config when missing', async () => {
    expect((await loadConfig(mkdtempSync(join(tmpdir(), 'sfl-cfg-')))).config).toEqual({profiles: {}})
  })

  it.each([
    ['{not json', /is not valid JSON/],
    ['[]', /has no "profiles" object/],
    ['{"profiles": 3}', /has no "profiles" object/],
    ['{"profiles": {"a": 1}}', /profile "a" is not an object/],
    ['{"profiles": {"a": {"apiKey": 5}}}', /profile "a" field apiKey must be a string/],
  ])('a malformed file %j is an error naming the file, never a reset', async (text, msg) => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-cfg-'))
    writeFileSync(join(dir, 'config.json'), text, {mode: 0o600})
    await expect(loadConfig(dir)).rejects.toThrow(ConfigFileError)
    await expect(loadConfig(dir)).rejects.toThrow(
      new RegExp(`${join(dir, 'config.json').replace(/[/.]/g, '\\$&')}`),
    )
    expect(() => parseConfig(text, 'X')).toThrow(msg)
  })
})
