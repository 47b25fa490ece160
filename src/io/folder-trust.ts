import type {Stats} from 'node:fs'
import {lstat, mkdir, readdir, stat} from 'node:fs/promises'
import {dirname, join} from 'node:path'

import {LocalIoError, UsageError} from '../errors.js'
import {isObjectUrl} from '../text/object-url.js'
import {localIoError} from './fs-errors.js'
import {ownerProblem, type OwnerProblem} from './owner-rule.js'

/**
 * The folders of an `--out-dir`: DIR and its partition folders (`state=CA`, `state=CA/fips=06067`) are
 * created or entered only when they are real folders (not symlinks) that belong to the user (or root) and
 * that neither group nor others may write unless the sticky bit is set, on the rule the config's check
 * uses (src/io/owner-rule.ts, like ssh's StrictModes). A partition folder another user made (a symlink to a
 * folder of yours, planted in a shared sticky export folder) would carry the export's writes, and its
 * renames, wherever it points: it is refused, and nothing is written through it.
 *
 * DIR itself may be the user's own symlink (or root's) to such a folder (an export folder kept on a bigger
 * disk); another user's link is refused like the partitions.
 */

/** A partition folder's name: `state=XX` or `fips=NNNNN` (src/io/manifest.ts countyFilePath). */
const PARTITION = /^(state|fips)=/

function problemText(p: OwnerProblem, path: string, what: string): string {
  return p.kind === 'owner'
    ? `${what} ${path} belongs to another user (uid ${p.uid}), who could swap the files sfl writes there; remove it or use an --out-dir of your own`
    : `${what} ${path} is writable by other users (mode ${p.mode.toString(8)}), who could swap the files sfl writes there; fix: chmod go-w ${path} (or chmod +t for a shared folder)`
}

/** Why the folder `path` (its lstat `st`) may not be written into, or undefined. */
function folderProblem(path: string, st: Stats, what: string): string | undefined {
  if (st.isSymbolicLink())
    return `${what} ${path} is a symbolic link, which sfl never writes through (another user may have planted it); remove it (rm ${path}) and run again`
  if (!st.isDirectory()) return `${what} ${path} is not a folder; move it away and run again`
  const uid = process.getuid?.()
  // Windows has no uid and no mode bits to check
  const p = uid === undefined ? undefined : ownerProblem(st, uid, {stickyOk: true})
  return p && problemText(p, path, what)
}

/**
 * `--out-dir DIR`, checked before anything is sent: DIR is created when missing (its parent must exist, as
 * for --out; `create: false`, --dry-run, only checks), a file in its place is refused, and so is a DIR or
 * an existing partition folder that fails the rule above. Usage errors (exit 2), one line naming the
 * folder and the fix. An `s3://bucket/prefix` is checked with a probe write (src/objstore/probe.ts).
 */
export async function prepareOutDir(dir: string, create: boolean): Promise<void> {
  if (isObjectUrl(dir)) {
    // s3://bucket/prefix (issue 34): no folders to trust; its form, and (unless --dry-run) a probe write
    if (create) await (await import('./object-store.js')).probeObjectTarget(dir, '--out-dir', true)
    else (await import('../objstore/url.js')).parsePrefixUrl(dir, '--out-dir')
    return
  }
  const link = await lstat(dir).catch(() => undefined)
  if (!link) {
    if (!create) return
    const parent = dirname(dir)
    if (!(await stat(parent).catch(() => undefined))?.isDirectory())
      throw new UsageError(`--out-dir ${dir}: the folder ${parent} does not exist; create it first`)
    try {
      await mkdir(dir, {mode: 0o755})
    } catch (error) {
      if ((error as {code?: string}).code !== 'EEXIST') throw localIoError(error, 'creating', dir)
    }
  }
  const st = await outDirStat(dir)
  const problem = folderProblem(dir, st, '--out-dir')
  if (problem) throw new UsageError(problem)
  await checkPartitions(dir)
}

/** DIR's own stat: through the user's (or root's) own link, never through another user's. */
async function outDirStat(dir: string): Promise<Stats> {
  const link = await lstat(dir)
  if (!link.isSymbolicLink()) {
    if (!link.isDirectory())
      throw new UsageError(`--out-dir ${dir} is a file; give a folder (it is created if missing)`)
    return link
  }
  const uid = process.getuid?.()
  const p = uid === undefined ? undefined : ownerProblem(link, uid)
  if (p?.kind === 'owner')
    throw new UsageError(
      `--out-dir ${dir} is another user's symbolic link (uid ${p.uid}), which sfl never writes through; remove it or use an --out-dir of your own`,
    )
  const target = await stat(dir).catch(() => undefined)
  if (!target?.isDirectory())
    throw new UsageError(`--out-dir ${dir} is a file; give a folder (it is created if missing)`)
  return target
}

/** Every partition folder already in DIR (two levels), checked without following any link. */
async function checkPartitions(dir: string): Promise<void> {
  for (const state of await names(dir)) {
    const s = join(dir, state)
    await checkFolder(s)
    if ((await lstat(s).catch(() => undefined))?.isDirectory())
      for (const fips of await names(s)) await checkFolder(join(s, fips))
  }
}

async function names(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => PARTITION.test(n))
  } catch (error) {
    throw localIoError(error, 'reading', dir)
  }
}

async function checkFolder(path: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined)
  if (!st) return // gone since it was listed: nothing to write through
  const problem = folderProblem(path, st, 'the partition folder')
  if (problem) throw new UsageError(`--out-dir: ${problem}`)
}

/**
 * Enter (creating what is missing) the partition folders of `rel` (`state=CA/fips=06067/data.csv`) under
 * DIR, one level at a time, each checked by the rule above before anything is made inside it. A folder
 * that fails it now (planted after the run's start) stops the run (exit 8) with nothing written.
 */
export async function enterPartitions(dir: string, rel: string): Promise<void> {
  let at = dir
  for (const part of dirname(rel).split('/')) {
    if (part === '.' || part === '') continue
    at = join(at, part)
    try {
      await mkdir(at, {mode: 0o755})
    } catch (error) {
      if ((error as {code?: string}).code !== 'EEXIST') throw localIoError(error, 'creating', at)
    }
    let st: Stats
    try {
      st = await lstat(at)
    } catch (error) {
      throw localIoError(error, 'entering', at)
    }
    const problem = folderProblem(at, st, 'the partition folder')
    if (problem) throw new LocalIoError(`--out-dir: ${problem}`)
  }
}
