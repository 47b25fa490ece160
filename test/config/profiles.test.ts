import {chmodSync, mkdtempSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it, onTestFinished} from 'vitest'

import {
  ConfigFileError,
  loadConfig,
  loadConfigLenient,
  parseConfig,
  resolveSettings,
  saveConfig,
  trustProblem,
} from '../../src/config/profiles.js'
import {cliMessage} from '../../src/cli/error-words.js'
import type {SflError} from '../../src/errors.js'

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
    const error = (() => {
      try {
        resolveSettings({profile: 'staging'}, {}, config)
      } catch (e) {
        return e as SflError
      }
      return undefined
    })()
    expect(error?.message).toBe(
      'no profile named "staging" (known: default, prod); `sfl keys set` creates one',
    )
    expect(cliMessage(error!)).toBe(
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

describe('trustProblem: a config another user could have written is refused, with the fix (like ssh StrictModes)', () => {
  const st = (uid: number, mode: number, dir = false, link = false) => ({
    uid,
    mode,
    isDirectory: () => dir,
    isSymbolicLink: () => link,
  })
  it.each([
    ['own file 0600', st(1000, 0o100600), 'file', undefined],
    ['own file 0644 (readable is a warning elsewhere, not a refusal)', st(1000, 0o100644), 'file', undefined],
    ['root-owned folder 0755', st(0, 0o40755, true), 'folder', undefined],
    [
      'group-writable file',
      st(1000, 0o100660),
      'file',
      /writable by other users \(mode 660\).*fix: chmod go-w \/c\/x/,
    ],
    [
      'world-writable folder',
      st(1000, 0o40777, true),
      'folder',
      /the config folder \/c\/x is writable by other users/,
    ],
    [
      'sticky world-writable folder (refused as the config folder itself)',
      st(0, 0o41777, true),
      'folder',
      /writable/,
    ],
    ['sticky world-writable parent such as /tmp', st(0, 0o41777, true), 'parent', undefined],
    [
      'world-writable parent without the sticky bit',
      st(0, 0o40777, true),
      'parent',
      /holding the config folder\) is writable/,
    ],
    [
      'file owned by another user',
      st(65534, 0o100600),
      'file',
      /belongs to another user \(uid 65534\).*fix: chown 1000 \/c\/x/,
    ],
    [
      'symlink owned by another user',
      st(65534, 0o120777, false, true),
      'link',
      /symbolic link \/c\/x.*belongs to another user/,
    ],
    ['own symlink (its target is checked as the file)', st(1000, 0o120777, false, true), 'link', undefined],
  ] as const)('%s', (_what, stats, role, expected) => {
    const problem = trustProblem('/c/x', stats, 1000, role)
    if (expected === undefined) expect(problem).toBeUndefined()
    else expect(problem).toMatch(expected)
  })
})

describe('loadConfig refuses a group-writable config file (exit 2) and saveConfig a world-writable folder', () => {
  it('names the file and the chmod that fixes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-trust-'))
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config))
    chmodSync(join(dir, 'config.json'), 0o664)
    await expect(loadConfig(dir)).rejects.toThrow(
      /config\.json is writable by other users \(mode 664\).*chmod go-w/,
    )
    await expect(loadConfig(dir)).rejects.toBeInstanceOf(ConfigFileError)
  })

  it('saveConfig refuses a folder others can write and writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-trust-'))
    chmodSync(dir, 0o777)
    await expect(saveConfig(dir, config)).rejects.toThrow(/the config folder .* is writable by other users/)
    expect(() => statSync(join(dir, 'config.json'))).toThrow()
  })
})

describe('loadConfigLenient: for runs that may not need the file', () => {
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-lenient-'))
    onTestFinished(() => rmSync(dir, {recursive: true, force: true}))
    return dir
  }
  it('a malformed file comes back as the problem, with no profiles', async () => {
    const dir = fresh()
    writeFileSync(join(dir, 'config.json'), '{"profiles": {', {mode: 0o600})
    const loaded = await loadConfigLenient(dir)
    expect(loaded.config).toEqual({profiles: {}})
    expect(loaded.problem).toBeInstanceOf(ConfigFileError)
    expect(loaded.problem?.message).toMatch(/config\.json is not valid JSON/)
  })
  it('a good file has no problem', async () => {
    const dir = fresh()
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config), {mode: 0o600})
    const loaded = await loadConfigLenient(dir)
    expect(loaded.problem).toBeUndefined()
    expect(loaded.config).toEqual(config)
  })
  it('a file another user could have written is still refused', async () => {
    const dir = fresh()
    writeFileSync(join(dir, 'config.json'), '{"profiles": {', {mode: 0o600})
    chmodSync(join(dir, 'config.json'), 0o666)
    await expect(loadConfigLenient(dir)).rejects.toThrow(/writable by other users/)
  })
})
