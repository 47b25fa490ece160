import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {Config} from '@oclif/core'
import {afterEach, describe, expect, it} from 'vitest'

import {cliConfigOf, oclifDirs, type PackageJson} from '../../src/cli/cli-config.js'
import {ROOT} from '../helpers/sandbox.js'

const PJSON = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson
const DIRNAME = PJSON.oclif?.dirname ?? PJSON.name
const KEYS = ['SFL_CONFIG_DIR', 'SFL_CACHE_DIR', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'HOME'] as const
const saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]))
afterEach(() => {
  for (const k of KEYS)
    if (saved[k] === undefined) delete process.env[k]
    else process.env[k] = saved[k]
})

/**
 * The lookup fast path reads the config and cache folders without oclif (src/cli/cli-config.ts): they
 * must be the folders oclif's own Config gives the commands, or a lookup and `keys set` would disagree on
 * where the key is kept.
 */
describe("the CLI's folders without oclif are oclif's", () => {
  it.each([
    ['nothing set', {}],
    ['SFL_CONFIG_DIR and SFL_CACHE_DIR', {SFL_CONFIG_DIR: '/srv/sfl/conf', SFL_CACHE_DIR: '/srv/sfl/cache'}],
    ['XDG folders', {XDG_CONFIG_HOME: '/x/config', XDG_CACHE_HOME: '/x/cache'}],
    ['another HOME', {HOME: '/home/analyst'}],
    ['SFL_ over XDG', {SFL_CONFIG_DIR: '/a', XDG_CONFIG_HOME: '/b'}],
  ])('%s', async (_name, env: Record<string, string>) => {
    for (const k of KEYS) delete process.env[k]
    process.env['HOME'] = saved['HOME'] ?? '/root'
    Object.assign(process.env, env)
    const config = await Config.load({root: ROOT})
    const ours = cliConfigOf(PJSON, process.env)
    expect({configDir: ours.configDir, cacheDir: ours.cacheDir}).toEqual({
      configDir: config.configDir,
      cacheDir: config.cacheDir,
    })
    expect(ours).toMatchObject({name: config.name, version: config.version, bin: config.bin})
  })

  it("on macOS and Windows, by oclif's rules (@oclif/core config.js; oclif itself cannot be run as another platform here)", () => {
    const home = () => '/Users/lo'
    expect(oclifDirs(PJSON, {HOME: '/Users/lo'}, 'darwin', home)).toEqual({
      configDir: join('/Users/lo', '.config', DIRNAME),
      cacheDir: join('/Users/lo', 'Library', 'Caches', DIRNAME),
    })
    const win = oclifDirs(
      PJSON,
      {LOCALAPPDATA: 'C:\\Users\\lo\\AppData\\Local', USERPROFILE: 'C:\\Users\\lo'},
      'win32',
      home,
    )
    expect(win.configDir).toBe(join('C:\\Users\\lo\\AppData\\Local', DIRNAME))
    expect(win.cacheDir).toBe(win.configDir)
  })
})
