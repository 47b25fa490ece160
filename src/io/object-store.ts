import {createHash, randomBytes} from 'node:crypto'
import {homedir, hostname} from 'node:os'
import {basename, join} from 'node:path'

import {UsageError} from '../errors.js'
import type {ObjectStore} from '../objstore/client.js'
import {abortAbandonedUploads} from '../objstore/cleanup.js'
import {acquireLockObject, releaseLockObject} from '../objstore/lock.js'
import {resolveStore, storeWith, type StoreBase} from '../objstore/open.js'
import {probeWrite} from '../objstore/probe.js'
import {openObjectSource} from '../objstore/source.js'
import {ObjectTarget} from '../objstore/target.js'
import {type ObjectUrl, formatObjectUrl, joinKey, parseObjectUrl, parsePrefixUrl} from '../objstore/url.js'
import type {ExportDir, LocalFile} from './export-dir-types.js'
import {objectHooks} from './object-hooks.js'
import {writeFileAtomicSync} from './private-sync.js'
import {
  createPrivateDir,
  makePrivateDir,
  removeEmptyDir,
  removeFile,
  streamToPrivateFile,
} from './private-files.js'

/**
 * The output gate's object-store side (issue 34), loaded with import() only when a value is `s3://`, so a
 * run that writes local files parses nothing of src/objstore. Everything the gate does for a path it does
 * here for an object, on the core in src/objstore:
 * - a target (`openObjectTarget`, an `OutputTarget` of src/io/output.ts): multipart, whole or nothing;
 * - the check before anything is sent to the service (`probeObjectTarget`): a probe object written and
 *   removed, once per location and process;
 * - an `--out-dir` prefix as src/io/export-dir.ts's `ExportDir`;
 * - the place of a run (`objectRunPlace`): its private local state folder (checkpoint, parts, local lock)
 *   and the lock object in the bucket, and the uploads a killed run left there.
 * The AWS configuration is resolved once per process. No store is given a run's signal: after Ctrl-C a run
 * still writes what finished and releases its lock (as on disk); a second Ctrl-C exits at once, and the
 * upload it cut is aborted by the next run (`abortAbandoned`). `--debug` lines: src/io/object-hooks.ts.
 */
let base: Promise<StoreBase> | undefined

export async function objectStore(): Promise<ObjectStore> {
  base ??= resolveStore()
  return storeWith(await base, {debug: objectHooks.debug})
}

const probes = new Map<string, Promise<void>>()

/**
 * `--out s3://bucket/key` (`prefix` false) or `--out-dir s3://bucket/prefix` (true), checked before any
 * request to the service: the location's form (exit 2), the credentials (exit 4 when there are none), and
 * a probe write (src/objstore/probe.ts). Once per location: the command's check and the run's open share it.
 */
export async function probeObjectTarget(value: string, flag: string, prefix: boolean): Promise<void> {
  const url = prefix ? parsePrefixUrl(value, flag) : parseObjectUrl(value, flag)
  const shown = formatObjectUrl(url)
  let probe = probes.get(shown)
  if (!probe) {
    probe = objectStore().then((store) => probeWrite(store, url, shown))
    probes.set(shown, probe)
  }
  return probe
}

const CONTENT_TYPES: Record<string, string> = {
  csv: 'text/csv',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/x-ndjson',
  json: 'application/json',
  parquet: 'application/vnd.apache.parquet',
  gz: 'application/gzip',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
}

/** The target of `s3://bucket/key`: its bytes sent in parts as they come, the object made whole by `commit`. */
export async function openObjectTarget(
  value: string,
  onFailure: (error: Error) => void,
  flag: string,
): Promise<ObjectTarget> {
  const url = parseObjectUrl(value, flag)
  const ext = /\.([a-z]+)$/i.exec(url.key)?.[1]?.toLowerCase() ?? ''
  const options = CONTENT_TYPES[ext] ? {contentType: CONTENT_TYPES[ext]} : {}
  return new ObjectTarget(await objectStore(), url, onFailure, options)
}

/** The text of a small object (a manifest), or undefined when there is none; over `maxBytes` is refused. */
export async function readObjectText(
  value: string,
  what: string,
  maxBytes = 64 * 1024 * 1024,
): Promise<string | undefined> {
  const url = parseObjectUrl(value, what)
  const object = await (await objectStore()).getObjectIfExists(url.bucket, url.key)
  if (!object) return undefined
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of object.body) {
      size += chunk.length
      if (size > maxBytes)
        throw new UsageError(`${value} is larger than ${maxBytes} bytes, more than a manifest has; not read`)
      chunks.push(chunk)
    }
  } finally {
    object.cancel()
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Copy `s3://bucket/key` to a new private file `path` (0600, created exclusively), streamed. */
export async function downloadObject(value: string, path: string): Promise<void> {
  const url = parseObjectUrl(value, 'the export')
  const source = await openObjectSource(await objectStore(), url)
  await streamToPrivateFile(source.stream, path)
}

/** An `--out-dir s3://bucket/prefix` as src/io/export-dir.ts's ExportDir. */
export function objectExportDir(dir: string): ExportDir {
  const url = parsePrefixUrl(dir, '--out-dir')
  const at = (rel: string) => formatObjectUrl({bucket: url.bucket, key: joinKey(url.key, rel)})
  return {
    shown: formatObjectUrl(url),
    at,
    // a key has no folders to enter, and uploads a killed run left were aborted when the run started
    prepare: async () => undefined,
    readText: (rel) => readObjectText(at(rel), '--out-dir'),
    async present() {
      // one listing for the run (ListObjectsV2 pages of 1,000 keys), not a request per county
      const keys = new Set<string>()
      const store = await objectStore()
      for await (const o of store.listObjects(url.bucket, url.key)) keys.add(o.key.slice(url.key.length))
      return (rel) => keys.has(rel)
    },
    async local(rel, scratch): Promise<LocalFile | undefined> {
      const store = await objectStore()
      const key = joinKey(url.key, rel)
      if (!(await store.headObject(url.bucket, key))) return undefined
      const path = join(scratch, `fetched-${randomBytes(6).toString('hex')}-${basename(rel)}`)
      await downloadObject(formatObjectUrl({bucket: url.bucket, key}), path)
      return {path, release: () => removeFile(path)}
    },
    async remove(rel) {
      await (await objectStore()).deleteObject(url.bucket, joinKey(url.key, rel))
    },
  }
}

/** The names sfl writes under an `--out-dir` prefix whose uploads can be large (multipart). */
const OUR_UPLOADS =
  /^(state=[^/]+\/fips=[^/]+\/data\.[a-z.]+|(_sfl\/)?rejects\.ndjson|(_sfl\/)?changes\.[a-z.]+)$/

/** Where a run writing an `s3://` location keeps what a run writing a path keeps beside its output. */
export interface ObjectRunPlace {
  /** `s3://bucket/prefix/` or `s3://bucket/key`, for messages. */
  shown: string
  /** The run's private local folder: checkpoint, parts folder, local lock (src/jobs/journal.ts names them). */
  stateDir: string
  /**
   * Take the bucket's lock object for the run (or refuse, exit 2, naming who holds it); returns its
   * release. A lock left by a run of this machine and this state folder (killed: the caller now holds the
   * folder's local lock, so that run is gone) is taken over with a notice.
   */
  lock(notice: (line: string) => void): Promise<() => Promise<void>>
  /** Abort the uploads a killed run left at the run's keys (the caller holds the lock); their keys. */
  abortAbandoned(): Promise<string[]>
  /**
   * After a finished run (its checkpoint and parts removed, its locks released): remove the state folder,
   * unless another run has begun in it meanwhile. A stopped run keeps it, to be continued.
   */
  forget(): Promise<void>
}

/**
 * The place of a run writing `value` (`--out-dir s3://bucket/prefix` when `prefix`, else `--out
 * s3://bucket/key`): the local state folder is `<stateRoot>/s3-runs/<16 hex>`, a SHA-256 of the store's
 * endpoint, the bucket and the key or prefix, made 0700 (src/io/private-files.ts), so the same command
 * finds its checkpoint again, and two locations, or two stores with the same bucket name, never share one.
 */
export async function objectRunPlace(
  value: string,
  opts: {prefix: boolean; stateRoot?: string | undefined},
): Promise<ObjectRunPlace> {
  const {url, endpoint, runs, stateDir} = await statePlace(value, opts)
  await createPrivateDir(runs, {recursive: true})
  await makePrivateDir(stateDir, 'the run folder')
  const shown = formatObjectUrl(url)
  // what the folder is for, for a person who finds it
  const about = join(stateDir, 'location.json')
  // (the output gate's synchronous primitive: this module stays apart from atomic-file.ts, which reaches it)
  writeFileAtomicSync(about, Buffer.from(`${JSON.stringify({location: shown, endpoint}, null, 2)}\n`), {
    mode: 0o600,
  })
  // a name the engines skip (`.`): beside the object, or first under the prefix
  const slash = url.key.lastIndexOf('/')
  const lockKey = opts.prefix
    ? `${url.key}.sfl-lock`
    : `${url.key.slice(0, slash + 1)}.${url.key.slice(slash + 1)}.sfl-lock`
  const plain = await objectStore()
  return {
    shown,
    stateDir,
    lock: (notice) => lockRun(plain, url, lockKey, stateDir, notice),
    abortAbandoned: () =>
      // every upload at our keys is a killed run's: we hold the lock and have not started one yet
      abortAbandonedUploads(plain, url.bucket, url.key, new Date(8.64e15), (key) =>
        opts.prefix
          ? OUR_UPLOADS.test(key.slice(url.key.length))
          : key === url.key || key === `${url.key}.rejects.ndjson`,
      ),
    async forget() {
      await removeFile(about)
      await removeEmptyDir(stateDir)
    },
  }
}

async function statePlace(
  value: string,
  opts: {prefix: boolean; stateRoot?: string | undefined},
): Promise<{url: ObjectUrl; endpoint: string; runs: string; stateDir: string}> {
  const flag = opts.prefix ? '--out-dir' : '--out'
  const url = opts.prefix ? parsePrefixUrl(value, flag) : parseObjectUrl(value, flag)
  // the configuration only (no request): the endpoint tells two stores with the same bucket name apart
  const endpoint = (await objectStore()).config.endpoint?.href ?? 'aws'
  const id = createHash('sha256').update(`${endpoint}\n${url.bucket}\n${url.key}`).digest('hex').slice(0, 16)
  const runs = join(opts.stateRoot ?? defaultCacheDir(), 's3-runs')
  return {url, endpoint, runs, stateDir: join(runs, id)}
}

/** Where a run writing `value` keeps its checkpoint (objectRunPlace), found without making anything. */
export async function objectStateDir(
  value: string,
  opts: {prefix: boolean; stateRoot?: string | undefined},
): Promise<string> {
  return (await statePlace(value, opts)).stateDir
}

/**
 * The cache folder of a caller that did not give one (the CLI gives oclif's, src/cli/cli-config.ts):
 * SFL_CACHE_DIR, else $XDG_CACHE_HOME/sfl, else ~/.cache/sfl.
 */
function defaultCacheDir(): string {
  const env = process.env
  return env['SFL_CACHE_DIR'] || join(env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'sfl')
}

interface Holder {
  host: string
  pid: number
  started: string
  /** The local state folder of the run: on this machine, a run of the same folder holds its local lock. */
  state: string
}

function holderOf(text: string | undefined): Holder | undefined {
  try {
    const h = JSON.parse(text ?? '') as Partial<Holder>
    return typeof h.host === 'string' && typeof h.pid === 'number' && typeof h.state === 'string'
      ? {host: h.host, pid: h.pid, started: String(h.started ?? '?'), state: h.state}
      : undefined
  } catch {
    return undefined
  }
}

async function lockRun(
  store: ObjectStore,
  url: ObjectUrl,
  lockKey: string,
  stateDir: string,
  notice: (line: string) => void,
): Promise<() => Promise<void>> {
  const me: Holder = {host: hostname(), pid: process.pid, started: new Date().toISOString(), state: stateDir}
  const token = `${JSON.stringify({...me, id: randomBytes(8).toString('hex')})}\n`
  const lockAt = formatObjectUrl({bucket: url.bucket, key: lockKey})
  const outcome = await acquireLockObject(store, url.bucket, lockKey, token, (held) => {
    const h = holderOf(held)
    // this machine, this state folder: that run would hold the local lock we now hold, so it is gone
    const stale = h !== undefined && h.host === me.host && h.state === me.state
    if (stale)
      notice(`sfl: taking over the lock object ${lockAt} of process ${h.pid}, which is no longer running`)
    return stale
  })
  if (outcome !== 'acquired') {
    const h = holderOf(outcome.held)
    const who = h ? `process ${h.pid} on ${h.host}, started ${h.started}` : 'another process'
    throw new UsageError(
      `another sfl run (${who}) is writing to ${formatObjectUrl(url)} (its lock object ${lockAt}); wait for it to finish, or delete ${lockAt} if that run is gone`,
    )
  }
  return async () => {
    await releaseLockObject(store, url.bucket, lockKey, token)
  }
}
