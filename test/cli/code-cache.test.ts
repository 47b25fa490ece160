import {spawnSync} from 'node:child_process'
import {chmodSync, chownSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {oclifDirs} from '../../src/cli/cli-config.js'
import {
  BUDGET_MS,
  cacheFileName,
  codeCacheFolder,
  requireWithCodeCache,
  type CodeCacheOptions,
} from '../../src/cli/code-cache.js'
import {tempDir} from '../helpers/tmp.js'

const IS_ROOT = process.getuid?.() === 0
const NOBODY = 65534

/** A CommonJS bundle that reports what it was run with, and a cache folder beside it. */
function bundle(
  source = 'module.exports = {sum: (a, b) => a + b, file: __filename, self: this === exports}',
) {
  const d = tempDir('sfl-code-cache-')
  const file = join(d, 'lookup.cjs')
  writeFileSync(file, source)
  return {file, dir: join(d, 'cache')}
}

/** Load through the cache as the entry does on Node 20, collecting the writer the entry runs at exit. */
function load(file: string, dir: string | undefined, extra: Partial<CodeCacheOptions> = {}) {
  const writers: Array<() => void> = []
  const r = requireWithCodeCache(file, {
    dir,
    env: {},
    nodeHasCompileCache: false,
    onExit: (w) => writers.push(w),
    // a clock that stands still: the time budget is tested with its own clocks, never the machine's
    now: () => 0,
    ...extra,
  })
  for (const w of writers) w()
  return {...r, wrote: writers.length > 0}
}

const cacheFiles = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.v8cache'))

describe('the code cache of the lookup bundle (Node 20)', () => {
  it('compiles and writes the cache on the first run, then runs from it; the module is the same either way', () => {
    const {file, dir} = bundle()
    const first = load(file, dir)
    expect(first.outcome).toBe('miss')
    expect(first.wrote).toBe(true)
    const second = load(file, dir)
    expect(second.outcome).toBe('hit')
    expect(second.wrote).toBe(false)
    for (const r of [first, second]) {
      const m = r.exports as {sum: (a: number, b: number) => number; file: string; self: boolean}
      expect(m.sum(2, 3)).toBe(5)
      expect(m.file).toBe(file) // __filename as require gives it
      expect(m.self).toBe(true) // `this` is module.exports, as in a CommonJS module
    }
  })

  it('keeps the cache private: a 0700 folder and a 0600 file of this user', () => {
    const {file, dir} = bundle()
    load(file, dir)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    const [name] = cacheFiles(dir)
    expect(statSync(join(dir, name!)).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, name!)).uid).toBe(process.getuid!())
  })

  it.each([
    ['garbage', (b: Buffer) => Buffer.alloc(b.length, 0x5a)],
    ['a flipped byte', (b: Buffer) => Buffer.from(b.map((x, i) => (i === b.length - 9 ? x ^ 0xff : x)))],
    ['cut short', (b: Buffer) => b.subarray(0, b.length >> 1)],
  ])(
    'a damaged cache (%s) is refused silently, the bundle still runs, and the cache is rewritten',
    (_name, damage) => {
      const {file, dir} = bundle()
      load(file, dir)
      const [name] = cacheFiles(dir)
      const path = join(dir, name!)
      writeFileSync(path, damage(readFileSync(path)), {mode: 0o600})
      const r = load(file, dir)
      expect(r.outcome).toBe('rejected')
      expect(r.wrote).toBe(true)
      expect((r.exports as {sum: (a: number, b: number) => number}).sum(1, 1)).toBe(2)
      expect(load(file, dir).outcome).toBe('hit')
    },
  )

  it('another build of the bundle gets its own cache file, and the old one is removed', () => {
    const {file, dir} = bundle()
    load(file, dir)
    const [before] = cacheFiles(dir)
    writeFileSync(file, 'module.exports = {sum: (a, b) => a + b + 1}')
    expect(load(file, dir).outcome).toBe('miss')
    const after = cacheFiles(dir)
    expect(after).toHaveLength(1)
    expect(after[0]).not.toBe(before)
    expect(cacheFileName(file, readFileSync(file))).toBe(after[0])
  })

  it('a folder others may write is not used: nothing read from it, nothing written to it', () => {
    const {file, dir} = bundle()
    load(file, dir)
    chmodSync(dir, 0o777)
    const r = load(file, dir)
    expect(r.outcome).toBe('unsafe')
    expect(r.wrote).toBe(false)
    expect((r.exports as {sum: (a: number, b: number) => number}).sum(2, 2)).toBe(4)
  })

  it('a cache file that is a link, or that others may write, is not read', () => {
    const {file, dir} = bundle()
    load(file, dir)
    const [name] = cacheFiles(dir)
    const real = join(dir, '..', 'elsewhere.v8cache')
    writeFileSync(real, readFileSync(join(dir, name!)), {mode: 0o600})
    writeFileSync(join(dir, name!), '') // replaced by a link below
    const {rmSync} = process.getBuiltinModule('node:fs')
    rmSync(join(dir, name!))
    symlinkSync(real, join(dir, name!))
    expect(load(file, dir).outcome).toBe('miss')
    rmSync(join(dir, name!), {force: true})
    writeFileSync(join(dir, name!), readFileSync(real), {mode: 0o600})
    chmodSync(join(dir, name!), 0o666)
    expect(load(file, dir).outcome).toBe('miss')
  })

  it.skipIf(!IS_ROOT)('a cache file of another user is not read (needs root to make one)', () => {
    const {file, dir} = bundle()
    load(file, dir)
    const [name] = cacheFiles(dir)
    chownSync(join(dir, name!), NOBODY, NOBODY)
    expect(load(file, dir).outcome).toBe('miss')
  })

  it('is off with NODE_DISABLE_COMPILE_CACHE, without a folder, and where Node has its own cache', () => {
    const {file, dir} = bundle()
    expect(load(file, dir, {env: {NODE_DISABLE_COMPILE_CACHE: '1'}}).outcome).toBe('off')
    expect(load(file, undefined).outcome).toBe('off')
    expect(load(file, dir, {nodeHasCompileCache: true}).outcome).toBe('node')
    expect(() => readdirSync(dir)).toThrow() // none of them made the folder
  })

  it('an unwritable folder falls back to compiling, with no error', () => {
    const {file, dir} = bundle()
    const parent = join(dir, '..', 'ro')
    const {mkdirSync} = process.getBuiltinModule('node:fs')
    mkdirSync(parent, {mode: 0o500})
    // root writes anywhere: a path under a regular file cannot be made by anyone
    writeFileSync(join(parent, '..', 'plain'), '')
    const r = load(file, join(parent, '..', 'plain', 'cache'))
    expect(r.outcome).toBe('unsafe')
    expect((r.exports as {sum: (a: number, b: number) => number}).sum(3, 3)).toBe(6)
  })
})

describe('where the code cache may make folders', () => {
  const PJSON = {name: 'special-financing-cli', version: '0', oclif: {bin: 'sfl', dirname: 'sfl'}}
  const folderOf = (env: NodeJS.ProcessEnv) =>
    codeCacheFolder((e) => oclifDirs(PJSON, e, 'linux', () => '/home/lo').cacheDir, env)

  it.each([
    [
      'the default: ~/.cache/sfl, with .cache made when missing',
      {HOME: '/home/lo'},
      '/home/lo/.cache/sfl',
      '/home/lo',
    ],
    [
      'an absolute XDG_CACHE_HOME, never made itself',
      {HOME: '/home/lo', XDG_CACHE_HOME: '/var/c'},
      '/var/c/sfl',
      '/var/c',
    ],
    [
      'a relative XDG_CACHE_HOME is ignored (XDG Base Directory)',
      {HOME: '/home/lo', XDG_CACHE_HOME: 'rel/c'},
      '/home/lo/.cache/sfl',
      '/home/lo',
    ],
    [
      'SFL_CACHE_DIR, made only in a folder that exists',
      {HOME: '/home/lo', SFL_CACHE_DIR: '/srv/x/sfl'},
      '/srv/x/sfl',
      '/srv/x',
    ],
    [
      'an XDG_CACHE_HOME named .cache is still never made',
      {HOME: '/home/lo', XDG_CACHE_HOME: '/a/.cache'},
      '/a/.cache/sfl',
      '/a/.cache',
    ],
  ])('%s', (_name, env, root, existing) => {
    expect(folderOf(env)).toEqual({dir: join(root, 'code-cache'), existing})
  })

  it('no cache for a relative SFL_CACHE_DIR or a relative home folder', () => {
    expect(folderOf({HOME: '/home/lo', SFL_CACHE_DIR: 'cache'})).toBeUndefined()
    expect(folderOf({HOME: 'lo'})).toBeUndefined()
  })

  it('a folder above a missing one is never made: no cache, the bundle runs, nothing created', () => {
    const {file} = bundle()
    const base = tempDir('sfl-cc-missing-')
    const r = load(file, join(base, 'missing', 'xdg', 'sfl', 'code-cache'), {
      existing: join(base, 'missing', 'xdg'),
    })
    expect(r.outcome).toBe('unsafe')
    expect(r.wrote).toBe(false)
    expect((r.exports as {sum: (a: number, b: number) => number}).sum(1, 2)).toBe(3)
    expect(readdirSync(base)).toEqual([])
  })

  it('makes the folders below the existing one, each 0700', () => {
    const {file} = bundle()
    const home = tempDir('sfl-cc-home-')
    const dir = join(home, '.cache', 'sfl', 'code-cache')
    expect(load(file, dir, {existing: home}).outcome).toBe('miss')
    for (const d of ['.cache', '.cache/sfl', '.cache/sfl/code-cache'])
      expect(statSync(join(home, d)).mode & 0o777).toBe(0o700)
  })
})

describe('the code cache gives up on a slow file system', () => {
  /** A clock that moves `step` ms at every reading after the first. */
  const clock = (steps: number[]) => {
    let t = 0
    let i = 0
    return () => (t += steps[Math.min(i++, steps.length - 1)]!)
  }

  it('a folder slower than the budget to check: nothing read from it, nothing written to it', () => {
    const {file, dir} = bundle()
    expect(load(file, dir).outcome).toBe('miss') // a good cache is there
    const r = load(file, dir, {now: clock([0, BUDGET_MS + 1])})
    expect(r.outcome).toBe('slow')
    expect(r.wrote).toBe(false)
    expect((r.exports as {sum: (a: number, b: number) => number}).sum(4, 4)).toBe(8)
  })

  it('a folder within the budget is used, however slow the clock is afterwards; a slow read writes nothing back', () => {
    const {file, dir} = bundle()
    load(file, dir)
    expect(load(file, dir, {now: clock([0, BUDGET_MS, 100])}).outcome).toBe('hit')
    const fresh = bundle()
    const miss = load(fresh.file, fresh.dir, {now: clock([0, 0, BUDGET_MS + 1])})
    expect(miss.outcome).toBe('miss')
    expect(miss.wrote).toBe(false)
  })
})

describe('the code cache in the built CLI', () => {
  const lookup = (env: Record<string, string>, cwd?: string) =>
    spawnSync(
      process.execPath,
      [
        join(__dirname, '..', '..', 'bin', 'run.js'),
        'lookup',
        '--sandbox',
        '--quiet',
        '--fips',
        '06067',
        '--property-id',
        '30000000006',
        '-o',
        'json',
      ],
      // a hang is what is tested against (Node's recursive mkdir loops under /proc): the 30 s kill is far
      // beyond a lookup, never a measure of speed
      {encoding: 'utf8', env: {...withoutCacheVars(), ...env}, timeout: 30_000, ...(cwd ? {cwd} : {})},
    )

  it.each([
    ['/proc (the lookup used to spin in mkdir)', () => '/proc'],
    ['a missing folder (nothing made from /)', (base: string) => join(base, 'no', 'such', 'cache')],
    ['a relative path (ignored; nothing made in the working folder)', () => 'relative/cache'],
  ])('XDG_CACHE_HOME=%s: the lookup answers, exit 0, and makes no folder but ~/.cache', (_name, xdg) => {
    const base = tempDir('sfl-xdg-')
    const home = join(base, 'home')
    const cwd = join(base, 'cwd')
    const {mkdirSync} = process.getBuiltinModule('node:fs')
    mkdirSync(home)
    mkdirSync(cwd)
    const r = lookup({XDG_CACHE_HOME: xdg(base), HOME: home, SFL_CONFIG_DIR: join(base, 'cfg')}, cwd)
    expect(r.signal).toBeNull()
    expect({status: r.status, stderr: r.stderr}).toEqual({status: 0, stderr: ''})
    expect(JSON.parse(r.stdout).APN).toBe('078-0123-045')
    expect(readdirSync(base).sort()).toEqual(['cwd', 'home'])
    expect(readdirSync(cwd)).toEqual([])
    // the relative XDG_CACHE_HOME falls back to ~/.cache, as if unset; the others make nothing at all
    const made = readdirSync(home)
    expect(made).toEqual(xdg(base) === 'relative/cache' && !nodeHasOwnCache() ? ['.cache'] : [])
  })

  it('a lookup writes its cache once and later lookups read it; both answer the same', () => {
    const cache = tempDir('sfl-cache-')
    const run = () => lookup({SFL_CACHE_DIR: cache, SFL_CONFIG_DIR: join(cache, 'cfg')})
    const hasOwn = nodeHasOwnCache()
    const files = () => {
      try {
        return readdirSync(join(cache, 'code-cache'))
      } catch {
        return []
      }
    }
    let first = run()
    // a folder check slower than the budget (a busy machine) writes nothing, by design: one more lookup
    if (!hasOwn && files().length === 0) first = run()
    expect(first.status).toBe(0)
    // Node 22.1+ keeps its own cache (bin/run.js): sfl writes none of its own there
    expect(files().length).toBe(hasOwn ? 0 : 1)
    const second = run()
    expect(second.status).toBe(0)
    expect(second.stdout).toBe(first.stdout)
    expect(JSON.parse(second.stdout).APN).toBe('078-0123-045')
  })
})

/** Node 22.1+ keeps its own compile cache (bin/run.js turns it on): sfl's is not used there. */
function nodeHasOwnCache(): boolean {
  return (
    typeof (process.getBuiltinModule('node:module') as {enableCompileCache?: unknown}).enableCompileCache ===
    'function'
  )
}

/** The test's environment without the variables that place the CLI's cache and config. */
function withoutCacheVars(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(SFL_|XDG_)/.test(k) && k !== 'HOME') env[k] = v
  return env
}
