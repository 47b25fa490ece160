import {join, posix} from 'node:path'

import {type ObjectUrl, formatObjectUrl, joinKey, parseObjectUrl, parsePrefixUrl} from '../objstore/url.js'
import {writeFileAtomic} from './atomic-file.js'
import {ExportFileError} from './export-reader.js'
import {parseManifest} from './manifest.js'
import {MANIFEST, MANIFEST_FILE, MANIFEST_PLACES, SIDE_DIR} from './out-dir-layout.js'
import {downloadObject, objectStore, readObjectText} from './object-store.js'
import {createPrivateDir, makeScratchDir} from './private-files.js'

/** A local path for an export argument (src/io/export-source.ts `localExport`): the copy, and how to drop it. */
export interface LocalExport {
  path: string
  release(): Promise<void>
  /** [local path, location as shown] pairs. */
  shown: Array<[string, string]>
}

/**
 * The object-store source of the export readers (issue 34): what an `s3://` export argument of `sfl stats`,
 * `sfl changes` and `--changes-since` names, and a private local copy of it for the readers, which read
 * files (Parquet by seeking to its footer, a change's record by its offset). An argument names one object
 * (`s3://b/nov.csv`), or an export prefix: `s3://b/2026-11/`, its manifest (`_sfl/manifest.json`, or an
 * earlier sfl's `manifest.json` at the prefix's top), or `s3://b/2026-11` when no
 * object has that key. A prefix's county files are the manifest's, each checked to be there first (one
 * listing), and copied under the same relative paths beside a copy of the manifest, so the readers see an
 * `--out-dir` folder. Keys are checked as every key sfl writes (src/objstore/url.ts: no `..`, no empty
 * segment), so a manifest cannot name a file outside the copy. The copy is 0700/0600 in the temp folder,
 * as large as the export, and removed when the command ends (src/io/export-source.ts withLocalExports).
 */
type Named = {kind: 'object'; url: ObjectUrl} | {kind: 'folder'; prefix: ObjectUrl; manifest: string}

interface Resolved {
  named: Named
  /** The manifest's text and its county files (relative paths), for a prefix. */
  folder?: {text: string; files: Array<{fips: string; path: string}>}
}

async function resolve(value: string, what: string): Promise<Named> {
  const rest = value.slice('s3://'.length)
  if (!rest.includes('/') || rest.endsWith('/')) {
    const prefix = parsePrefixUrl(value, what)
    return {kind: 'folder', prefix, manifest: await manifestKey(prefix)}
  }
  const url = parseObjectUrl(value, what)
  if (posix.basename(url.key) === MANIFEST_FILE) {
    // `prefix/_sfl/manifest.json`, or an earlier sfl's `prefix/manifest.json`: the prefix is the export's
    const parent = url.key.slice(0, url.key.lastIndexOf('/') + 1)
    const side = parent === `${SIDE_DIR}/` || parent.endsWith(`/${SIDE_DIR}/`)
    const key = side ? parent.slice(0, -SIDE_DIR.length - 1) : parent
    return {kind: 'folder', prefix: {bucket: url.bucket, key}, manifest: url.key}
  }
  const store = await objectStore()
  if (await store.headObject(url.bucket, url.key)) return {kind: 'object', url}
  const prefix = {bucket: url.bucket, key: `${url.key}/`}
  const manifest = await manifestKey(prefix)
  if (await store.headObject(url.bucket, manifest)) return {kind: 'folder', prefix, manifest}
  throw new ExportFileError(
    `${value}: no such object, and no export under it (${MANIFEST}); give an export object or an --out-dir prefix`,
  )
}

/**
 * The key of the prefix's manifest: `_sfl/manifest.json`, else an earlier sfl's `manifest.json` when
 * only that one is there (src/io/out-dir-layout.ts), else the first (found missing by the caller).
 */
async function manifestKey(prefix: ObjectUrl): Promise<string> {
  const store = await objectStore()
  for (const rel of MANIFEST_PLACES)
    if (await store.headObject(prefix.bucket, joinKey(prefix.key, rel))) return joinKey(prefix.key, rel)
  return joinKey(prefix.key, MANIFEST)
}

/** What `value` names, and for a prefix its manifest read and every county object found (one listing). */
async function resolveExport(value: string, what: string): Promise<Resolved> {
  const named = await resolve(value, what)
  if (named.kind === 'object') return {named}
  const at = formatObjectUrl({bucket: named.prefix.bucket, key: named.manifest})
  const text = await readObjectText(at, what)
  if (text === undefined)
    throw new ExportFileError(
      `${formatObjectUrl(named.prefix)} has no ${MANIFEST}; give an export object or an --out-dir prefix`,
    )
  const m = parseManifest(text)
  if ('problem' in m) throw new ExportFileError(`${at}: ${m.problem}`)
  const keys = new Set<string>()
  for await (const o of (await objectStore()).listObjects(named.prefix.bucket, named.prefix.key))
    keys.add(o.key)
  const files = m.counties.map((e) => ({fips: e.fips, path: e.path}))
  for (const f of files)
    if (!keys.has(joinKey(named.prefix.key, f.path)))
      throw new ExportFileError(`${at}: the file of county ${f.fips} (${f.path}) is missing`)
  return {named, folder: {text, files}}
}

/** Check an `s3://` export argument before anything else happens (`--changes-since`): it is there, whole. */
export async function checkObjectExport(value: string, what: string): Promise<void> {
  await resolveExport(value, what)
}

/** A private local copy of the export `value` names; `release` removes it. */
export async function copyObjectExport(value: string, what: string): Promise<LocalExport> {
  const {named, folder} = await resolveExport(value, what)
  const dir = makeScratchDir('sfl-s3-export-')
  const scratch = dir.path
  const release = () => dir.remove()
  try {
    if (named.kind === 'object') {
      const path = join(scratch, posix.basename(named.url.key))
      await downloadObject(value, path)
      return {path, release, shown: [[path, value]]}
    }
    const root = join(scratch, 'export')
    await createPrivateDir(root)
    await createPrivateDir(join(root, SIDE_DIR))
    await writeFileAtomic(join(root, ...MANIFEST.split('/')), folder!.text)
    for (const f of folder!.files) {
      const local = join(root, ...f.path.split('/'))
      await createPrivateDir(join(local, '..'), {recursive: true})
      const key = joinKey(named.prefix.key, f.path)
      await downloadObject(formatObjectUrl({bucket: named.prefix.bucket, key}), local)
    }
    return {path: root, release, shown: [[root, formatObjectUrl(named.prefix).replace(/\/$/, '')]]}
  } catch (error) {
    await release()
    throw error
  }
}
