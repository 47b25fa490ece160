import {UsageError} from '../errors.js'
import {extensionOf, type FileFormat} from '../model/formats.js'
import {type ExportDir, openExportDir, outPath} from './export-dir.js'
import {LEGACY_MANIFEST, MANIFEST, MANIFEST_FILE} from './out-dir-layout.js'
import {writeOutputFile} from './output.js'
import type {ParquetOptions} from './parquet-codecs.js'

export {MANIFEST_FILE} from './out-dir-layout.js'

/**
 * `--out-dir DIR`: one file per county in Hive-style partitions (`state=CA/fips=06067/data.csv`) and
 * `DIR/_sfl/manifest.json` (src/io/out-dir-layout.ts: under a name dataset readers skip) saying which
 * counties are there, how many records and pages each held and when it finished. The manifest is rewritten atomically after every county (src/io/atomic-file.ts; for an
 * `s3://` prefix one PutObject, which S3 makes visible whole), after the county's file is complete, so a
 * run that stops leaves a manifest of exactly the county files that are whole. Entries of earlier runs
 * stay. DIR is src/io/export-dir.ts's: a local folder or an `s3://bucket/prefix`; every reader of a
 * manifest finds it through `manifestPath`, never by its name.
 */
export interface ManifestEntry {
  fips: string
  state: string
  /** The county's name in the FHFA table ("Sacramento County": "Baltimore" alone names two in MD). */
  name: string
  /** Relative to DIR, with forward slashes. */
  path: string
  records: number
  /** Requests the county took (one per page): the next run's plan reads it (`--dry-run`). */
  pages: number
  /** ISO 8601, UTC. */
  finishedAt: string
  /** The columns the file was written with (a key of the run's schema, `schemaKey`). */
  schema?: string
  /** `--where` of the run that wrote the file, when it had one: the file holds only the rows it kept. */
  where?: string
  /**
   * A Parquet file's compression and rows per row group, as the run that wrote it (or last rewrote it)
   * asked (`--parquet-compression`, `--parquet-row-group-size`): files of several runs may differ.
   */
  parquet?: ParquetOptions
}

/** The columns every file of the folder has (one schema per run), with their Parquet types. */
export interface ManifestSchema {
  key: string
  columns: Array<{name: string; type: string}>
  /** The option objects (spec 2.2, 2.3) the key includes. */
  options: string[]
}

export interface Manifest {
  version: 1
  format: string
  schema?: ManifestSchema
  counties: ManifestEntry[]
}

/** A short stable key of a column list (FNV-1a of the names): files written with the same columns share it. */
export function schemaKey(columns: readonly string[]): string {
  let h = 0x811c9dc5
  for (const name of columns) {
    for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193)
    h = Math.imul(h ^ 0, 0x01000193)
  }
  return `${columns.length}-${(h >>> 0).toString(16).padStart(8, '0')}`
}

/** Where a county's file lives under DIR: `state=CA/fips=06067/data.csv` (the registry's extension). */
export function countyFilePath(state: string, fips: string, format: FileFormat): string {
  return `state=${state}/fips=${fips}/data.${extensionOf(format)}`
}

/**
 * The one reading of a manifest's text (an `--out-dir` run and `sfl changes` both use it): version 1, a
 * format, and counties each with at least a fips and a path. The reason it is not one, otherwise. Pure.
 */
export function parseManifest(text: string): Manifest | {problem: string} {
  let m: Partial<Manifest> | null
  try {
    m = JSON.parse(text) as Partial<Manifest> | null
  } catch (error) {
    return {problem: `not JSON (${(error as Error).message})`}
  }
  if (m === null || typeof m !== 'object' || m.version !== 1 || !Array.isArray(m.counties))
    return {problem: 'not an sfl export manifest (expected "version": 1 and a "counties" list)'}
  if (typeof m.format !== 'string') return {problem: 'the manifest names no "format"'}
  for (const [i, c] of (m.counties as unknown[]).entries()) {
    const e = c as {fips?: unknown; path?: unknown} | null
    if (typeof e?.fips !== 'string' || typeof e.path !== 'string')
      return {problem: `county ${i + 1} has no "fips" and "path"`}
  }
  // the folder's columns: the next run into the folder starts from them, so it never narrows its files
  const schema = schemaOf(m.schema)
  // in the order sfl writes the members, so a rerun that changes nothing rewrites the same bytes
  return {version: 1, format: m.format, counties: m.counties, ...(schema ? {schema} : {})}
}

/** A manifest's `schema` when it has the shape sfl writes (a key, named columns, options); else undefined. */
function schemaOf(s: unknown): ManifestSchema | undefined {
  const x = s as Partial<ManifestSchema> | null | undefined
  if (typeof x?.key !== 'string' || !Array.isArray(x.columns) || !Array.isArray(x.options)) return undefined
  const columns = x.columns as unknown[]
  const ok = columns.every(
    (c) =>
      typeof (c as {name?: unknown})?.name === 'string' && typeof (c as {type?: unknown}).type === 'string',
  )
  if (!ok || !x.options.every((o) => typeof o === 'string')) return undefined
  return {key: x.key, columns: x.columns, options: x.options}
}

/** Where a run writes DIR's manifest: `DIR/_sfl/manifest.json`, or `s3://bucket/prefix/_sfl/manifest.json`. */
export function manifestPath(dir: string): string {
  return outPath(dir, MANIFEST)
}

/** DIR's manifest, or undefined when there is none; a manifest sfl cannot read is a usage error. */
export async function readManifest(dir: string | ExportDir): Promise<Manifest | undefined> {
  return (await findManifest(dir))?.manifest
}

/**
 * DIR's manifest and where it was found (relative to DIR): `_sfl/manifest.json`, or, in a folder an
 * earlier sfl wrote, `manifest.json` at its root (read when the first is absent).
 */
export async function findManifest(
  dir: string | ExportDir,
): Promise<{manifest: Manifest; rel: string} | undefined> {
  const d = typeof dir === 'string' ? await openExportDir(dir) : dir
  for (const rel of [MANIFEST, LEGACY_MANIFEST]) {
    const text = await d.readText(rel)
    if (text === undefined) continue
    const path = d.at(rel)
    const m = parseManifest(text)
    if ('problem' in m)
      throw new UsageError(`${path} is not a manifest this version of sfl can read (${m.problem})`, {
        facts: {topic: 'manifest-unreadable', path, problem: m.problem},
      })
    return {manifest: m, rel}
  }
  return undefined
}

/** The manifest at `rel` of the folder, or undefined when it is absent or not one sfl reads. */
async function readAt(d: ExportDir, rel: string): Promise<Manifest | undefined> {
  const text = await d.readText(rel)
  const m = text === undefined ? undefined : parseManifest(text)
  return m && !('problem' in m) ? m : undefined
}

/**
 * `current` with the counties only `older` has, and those `older` saw finish later (an earlier sfl that
 * wrote the root manifest after this one moved it). Pure.
 */
export function mergeManifests(current: Manifest, older: Manifest): Manifest {
  let m = current
  const byFips = new Map(current.counties.map((c) => [c.fips, c]))
  for (const e of older.counties) {
    const had = byFips.get(e.fips)
    if (!had || Date.parse(e.finishedAt) > Date.parse(had.finishedAt)) m = withEntry(m, e)
  }
  return m
}

/** The manifest with `entry` in place of the county's earlier one; counties kept in FIPS order. Pure. */
export function withEntry(m: Manifest, entry: ManifestEntry): Manifest {
  const counties = m.counties.filter((c) => c.fips !== entry.fips)
  counties.push(entry)
  counties.sort((a, b) => a.fips.localeCompare(b.fips))
  return {...m, counties}
}

/**
 * `--max-age`: the asked counties whose manifest entry finished less than `maxAgeMs` before `nowMs` and
 * whose file is still there (`exists`, relative path), written with the same `--where` (none: none), so a
 * folder never keeps a county filtered otherwise than the run asks. Pure apart from `exists`.
 */
export function freshCounties(
  m: Manifest | undefined,
  fips: readonly string[],
  maxAgeMs: number,
  nowMs: number,
  exists: (path: string) => boolean,
  where?: string,
): Set<string> {
  const fresh = new Set<string>()
  if (!m) return fresh
  const byFips = new Map(m.counties.map((c) => [c.fips, c]))
  for (const f of fips) {
    const e = byFips.get(f)
    const at = e ? Date.parse(e.finishedAt) : NaN
    if (e && nowMs - at < maxAgeMs && at <= nowMs && e.where === where && exists(e.path)) fresh.add(f)
  }
  return fresh
}

/** A manifest that must hold `format`: a folder of another format's files is refused, nothing sent. */
export function checkFormat(m: Manifest | undefined, format: string, dir: string): void {
  if (m && m.format !== format)
    throw new UsageError(`the folder ${dir} holds a ${m.format} export (${MANIFEST_FILE}), not ${format}`, {
      facts: {topic: 'manifest-format', dir, has: m.format, wanted: format},
    })
}

/**
 * DIR's manifest as a run updates it: one atomic rewrite per finished county, one at a time, always to
 * `_sfl/manifest.json`. A folder an earlier sfl wrote has its manifest at the root: it is read, its
 * entries carried into the first rewrite, and only once that is written is the root one removed (so a
 * stop in between leaves both, never neither; the next run reads `_sfl/`'s and removes the other).
 */
export class ManifestFile {
  private chain: Promise<void> = Promise.resolve()
  private prepared: Promise<void> | undefined

  constructor(
    readonly dir: ExportDir,
    private manifest: Manifest,
    /** The root manifest.json of an earlier sfl, to remove after the first rewrite. */
    private legacy = false,
  ) {}

  static async open(dir: string | ExportDir, format: string): Promise<ManifestFile> {
    const d = typeof dir === 'string' ? await openExportDir(dir) : dir
    const found = await findManifest(d)
    let m = found?.manifest
    let legacy = found?.rel === LEGACY_MANIFEST
    if (found && !legacy) {
      // both: a stop between the move and the removal, or an earlier sfl run into a moved folder
      const old = await readAt(d, LEGACY_MANIFEST)
      if (old && old.format === found.manifest.format)
        [m, legacy] = [mergeManifests(found.manifest, old), true]
    }
    checkFormat(m, format, d.shown)
    return new ManifestFile(d, m ?? {version: 1, format, counties: []}, legacy)
  }

  get current(): Manifest {
    return this.manifest
  }

  /** Which of the manifest's files are still in DIR (looked at once, now): for `freshCounties`. */
  presence(): Promise<(path: string) => boolean> {
    return this.dir.present()
  }

  /** The folder's schema (written with the next record, or by `save`). */
  setSchema(schema: ManifestSchema): void {
    this.manifest = {...this.manifest, schema}
  }

  /** Rewrite the manifest as it stands. */
  save(): Promise<void> {
    return this.record(undefined)
  }

  /** Record a finished county and rewrite the manifest (after the writes before it). */
  record(entry: ManifestEntry | undefined): Promise<void> {
    const next = this.chain.then(async () => {
      if (entry) this.manifest = withEntry(this.manifest, entry)
      // _sfl/ made (and checked) before the first write; a run has made it already
      this.prepared ??= this.dir.prepare(MANIFEST)
      await this.prepared
      // through the output gate (src/io/output.ts), as every file of the folder
      const text = `${JSON.stringify(this.manifest, null, 2)}\n`
      await writeOutputFile(this.dir.at(MANIFEST), text, '--out-dir')
      // moved: the root manifest of an earlier sfl goes only once its entries are written under _sfl/
      if (this.legacy) await this.dir.remove(LEGACY_MANIFEST)
      this.legacy = false
    })
    // a failed write is the caller's to report; the next county still tries
    this.chain = next.catch(() => undefined)
    return next
  }
}
