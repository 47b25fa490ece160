import {closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, statSync} from 'node:fs'
import nodeModule, {createRequire} from 'node:module'
import {basename, dirname, isAbsolute, join, relative, sep} from 'node:path'
import type {Script} from 'node:vm'

import {ownerProblem} from '../io/owner-rule.js'
import {makePrivateDirSync, removeFileSync, writeFileAtomicSync} from '../io/private-sync.js'

/**
 * A V8 code cache for one CommonJS bundle (dist/lookup.cjs) on Node versions without one of their own.
 *
 * Node 22.1+ keeps compiled code between runs itself (module.enableCompileCache, turned on by bin/run.js);
 * Node 20 compiles every file at every start, about 25 ms of a single lookup's CPU (README "Start-up").
 * There, the bundle is compiled through vm.Script with the cachedData V8 made at the end of an earlier run
 * (so it holds the functions that run compiled, not only the top level), the way Node's own cache works.
 *
 * The cache is code the process runs, so it is only read from where only this user can write: a folder
 * owned by the user that neither group nor others may write (made 0700 when missing), a regular file
 * owned by the user, opened without following a link. It is keyed by the bundle's SHA-256 and Node's
 * version and architecture (V8 also refuses data of another V8 version or flags, but checks the source by
 * its length only), written to a temp file and renamed, so a reader never sees half of it. Anything that
 * fails (no home folder, a read-only disk, a foreign owner, data V8 rejects) or takes longer than
 * BUDGET_MS (a slow network mount) falls back to compiling without the cache, silently;
 * NODE_DISABLE_COMPILE_CACHE (Node's own switch) turns it off.
 *
 * Folders are made one level at a time below a folder that must already exist (`codeCacheFolder`): never
 * from `/` for a mistyped XDG_CACHE_HOME, and never by Node's recursive mkdir, which loops forever where
 * mkdir says ENOENT for a parent that exists (/proc).
 */
export interface CodeCacheOptions {
  /** The folder of the cache files; undefined: no cache. */
  dir: string | undefined
  /**
   * The folder above `dir` that must already exist: only the folders between the two are made. Default:
   * `dir`'s parent.
   */
  existing?: string | undefined
  /** A clock in milliseconds for the time budget (tests); performance.now otherwise. */
  now?: () => number
  env?: NodeJS.ProcessEnv
  /** Whether Node has its own compile cache (module.enableCompileCache): then plain require. */
  nodeHasCompileCache?: boolean
  /** Called once at the end of the process to write the cache; tests call the returned writer instead. */
  onExit?: (write: () => void) => void
}

/** What loading did: for tests and the benchmark, never printed. */
export type CodeCacheOutcome = 'node' | 'off' | 'hit' | 'miss' | 'rejected' | 'unsafe' | 'slow'

/**
 * The most the folder checks (and then the read) may take before the cache is given up for this run: it
 * saves about 25 ms of compiling, so a folder that costs more than a few is not worth reading or writing
 * (a local disk answers in under a millisecond, about 1.5 ms with the read of the 1 MB file; a slow network
 * mount does not). Wide enough that a busy machine's scheduling does not turn a local disk into a miss.
 */
export const BUDGET_MS = 10

export interface CacheFolder {
  dir: string
  existing: string
}

/**
 * Pure: the code cache's folder (`<cache folder>/code-cache`) and the folder above it that must already
 * exist, from the cache folder oclif's rules give for an environment (cli-config.ts oclifDirs). The XDG
 * Base Directory rules: a relative XDG_CACHE_HOME is invalid and ignored (as if unset), and the folder a
 * variable names is never created, nor anything above it: $XDG_CACHE_HOME/sfl is made only when
 * $XDG_CACHE_HOME exists, SFL_CACHE_DIR only when its parent does, ~/.cache/sfl only when the home folder
 * does. Undefined (no cache) when the folder is not absolute (a relative SFL_CACHE_DIR or HOME).
 */
export function codeCacheFolder(
  cacheDirOf: (env: NodeJS.ProcessEnv) => string,
  env: NodeJS.ProcessEnv,
): CacheFolder | undefined {
  const xdg = env['XDG_CACHE_HOME']
  const usable = xdg && !isAbsolute(xdg) ? {...env, XDG_CACHE_HOME: ''} : env
  const root = cacheDirOf(usable)
  if (!isAbsolute(root)) return undefined
  const dir = join(root, 'code-cache')
  const parent = dirname(root)
  // no variable named it: the home folder's .cache/<name>, of which .cache may be made
  const named =
    Boolean(usable['XDG_CACHE_HOME']) || Object.keys(env).some((k) => /_CACHE_DIR$/.test(k) && env[k])
  const existing = !named && basename(parent) === '.cache' ? dirname(parent) : parent
  return {dir, existing}
}

export interface Loaded {
  exports: unknown
  outcome: CodeCacheOutcome
}

// node:crypto and node:vm load only on the path that uses them (Node 20): the entry that imports this
// module also answers `sfl --version`, and node:crypto alone is several ms of Node 24's start-up
const crypto = () => process.getBuiltinModule('node:crypto')

/** Pure: the cache file's name for a bundle's source on this Node. */
export function cacheFileName(bundle: string, source: string | Buffer): string {
  const hash = crypto().createHash('sha256').update(source).digest('hex').slice(0, 32)
  return `${basename(bundle)}-${process.version}-${process.arch}-${hash}.v8cache`
}

/** Load `file` (CommonJS) as require would, through the code cache when there is one to use. */
export function requireWithCodeCache(file: string, opts: CodeCacheOptions): Loaded {
  const env = opts.env ?? process.env
  const nodeHasCompileCache = opts.nodeHasCompileCache ?? hasNodeCompileCache()
  if (nodeHasCompileCache) return {exports: createRequire(file)(file), outcome: 'node'}
  if (opts.dir === undefined || env['NODE_DISABLE_COMPILE_CACHE'])
    return {exports: createRequire(file)(file), outcome: 'off'}
  const source = readFileSync(file, 'utf8')
  const cacheFile = join(opts.dir, cacheFileName(file, source))
  const now = opts.now ?? (() => performance.now())
  const started = now()
  const late = () => now() - started > BUDGET_MS
  const safe = safeFolder(opts.dir, opts.existing ?? dirname(opts.dir))
  // a folder that took longer than the budget to check is on a slow or hung file system: nothing is read
  // from it or written to it this run
  const slowFolder = safe && late()
  const stored = safe && !slowFolder ? readOwnFile(cacheFile) : undefined
  // a read that took longer is used (it is paid for), but nothing is written back there
  const slow = slowFolder || late()
  // V8 checks the data's version, flags and source length, but on Node 20 not its bytes: a damaged file
  // could be taken, so the file carries the data's SHA-256 and damaged data is never handed to V8
  const cached = stored && unsealed(stored)
  // the wrapper Node puts around a CommonJS module: the same parameters, so the bundle runs unchanged
  const {Script} = process.getBuiltinModule('node:vm')
  const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, {
    filename: file,
    ...(cached ? {cachedData: cached} : {}),
  })
  const outcome: CodeCacheOutcome = !safe
    ? 'unsafe'
    : slowFolder
      ? 'slow'
      : !stored
        ? 'miss'
        : !cached || script.cachedDataRejected
          ? 'rejected'
          : 'hit'
  if ((outcome === 'miss' || outcome === 'rejected') && !slow)
    (opts.onExit ?? ((w) => process.once('exit', w)))(() => writeCache(script, cacheFile))
  const fn = script.runInThisContext() as (...args: unknown[]) => void
  const module = {exports: {} as unknown}
  fn.call(module.exports, module.exports, createRequire(file), module, file, dirname(file))
  return {exports: module.exports, outcome}
}

// Node 22.1+ (@types/node 20 does not know it)
function hasNodeCompileCache(): boolean {
  return typeof (nodeModule as {enableCompileCache?: unknown}).enableCompileCache === 'function'
}

/**
 * The folder, made 0700 when missing, is this user's and nobody else may write to it. Only the folders
 * between `existing` (which must be a folder already) and `dir` are made, one mkdir each (never a recursive
 * mkdir, which spins under /proc), through the output gate's private primitive.
 */
function safeFolder(dir: string, existing: string): boolean {
  const below = relative(existing, dir)
  if (below === '' || isAbsolute(below) || below.split(sep)[0] === '..') return false
  try {
    if (!statSync(existing).isDirectory()) return false
  } catch {
    return false
  }
  let path = existing
  let made = false
  // a folder between `existing` and `dir` may be another's (a shared cache root): only `dir` must be private
  for (const name of below.split(sep)) {
    path = join(path, name)
    made = makePrivateDirSync(path)
  }
  return made
}

function ownedAndPrivate(st: {uid: number; mode: number}): boolean {
  const uid = process.getuid?.()
  // Windows has no uid and no mode bits: the folder is under the user's own profile (LOCALAPPDATA)
  if (uid === undefined) return true
  // the one owner rule (src/io/owner-rule.ts), this user's alone: code the process runs is not root's
  return ownerProblem(st, uid, {rootOk: false}) === undefined
}

/** The cache file's bytes when it is a regular file of this user's that nobody else may write. */
function readOwnFile(path: string): Buffer | undefined {
  let fd: number | undefined
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
    const st = fstatSync(fd)
    if (!st.isFile() || !ownedAndPrivate(st) || st.size === 0) return undefined
    return readFileSync(fd)
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/**
 * Write the cache (an exclusive temp file, renamed: src/io/private-sync.ts) and remove this bundle's caches
 * of earlier builds on this Node. No fsync: a file cut short by a crash fails its seal and is not used.
 */
function writeCache(script: Script, cacheFile: string): void {
  const dir = dirname(cacheFile)
  try {
    writeFileAtomicSync(cacheFile, sealed(script.createCachedData()), {mode: 0o600, sync: false})
    const prefix = basename(cacheFile).replace(/[0-9a-f]+\.v8cache$/, '')
    for (const name of readdirSync(dir))
      if (name.startsWith(prefix) && name.endsWith('.v8cache') && name !== basename(cacheFile))
        removeFileSync(join(dir, name))
  } catch {
    // nothing more to do (the temp file is gone): the next run compiles without the cache again
  }
}

const SEAL = 32

/** The cache file's bytes: the data's SHA-256, then the data. */
function sealed(data: Buffer): Buffer {
  return Buffer.concat([crypto().createHash('sha256').update(data).digest(), data])
}

/** The data of a cache file whose SHA-256 matches, else undefined. */
function unsealed(file: Buffer): Buffer | undefined {
  if (file.length <= SEAL) return undefined
  const data = file.subarray(SEAL)
  const sum = crypto().createHash('sha256').update(data).digest()
  return sum.equals(file.subarray(0, SEAL)) ? data : undefined
}
