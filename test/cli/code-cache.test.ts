import {spawnSync} from 'node:child_process'
import {chmodSync, chownSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {cacheFileName, requireWithCodeCache, type CodeCacheOptions} from '../../src/cli/code-cache.js'
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

describe('the code cache in the built CLI', () => {
  it('a lookup writes its cache once and later lookups read it; both answer the same', () => {
    const cache = tempDir('sfl-cache-')
    const run = () =>
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
        {encoding: 'utf8', env: {...process.env, SFL_CACHE_DIR: cache, SFL_CONFIG_DIR: join(cache, 'cfg')}},
      )
    const first = run()
    expect(first.status).toBe(0)
    const hasOwn =
      typeof (process.getBuiltinModule('node:module') as {enableCompileCache?: unknown})
        .enableCompileCache === 'function'
    const files = () => {
      try {
        return readdirSync(join(cache, 'code-cache'))
      } catch {
        return []
      }
    }
    // Node 22.1+ keeps its own cache (bin/run.js): sfl writes none of its own there
    expect(files().length).toBe(hasOwn ? 0 : 1)
    const second = run()
    expect(second.status).toBe(0)
    expect(second.stdout).toBe(first.stdout)
    expect(JSON.parse(second.stdout).APN).toBe('078-0123-045')
  })
})
