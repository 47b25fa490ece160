import {UsageError} from '../errors.js'
import {extensionOf, type FileFormat} from '../model/formats.js'
import {type ExportDir, openExportDir, outPath} from './export-dir.js'
import {writeOutputFile} from './output.js'

/**
 * `--out-dir DIR`: one file per county in Hive-style partitions (`state=CA/fips=06067/data.csv`) and
 * `DIR/manifest.json` saying which counties are there, how many records and pages each held and when it
 * finished. The manifest is rewritten atomically after every county (src/io/atomic-file.ts; for an
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

export const MANIFEST_FILE = 'manifest.json'

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

/** Where DIR's manifest is: `DIR/manifest.json`, or `s3://bucket/prefix/manifest.json`. */
export function manifestPath(dir: string): string {
  return outPath(dir, MANIFEST_FILE)
}

/** DIR's manifest, or undefined when there is none; a manifest sfl cannot read is a usage error. */
export async function readManifest(dir: string | ExportDir): Promise<Manifest | undefined> {
  const d = typeof dir === 'string' ? await openExportDir(dir) : dir
  const path = d.at(MANIFEST_FILE)
  const text = await d.readText(MANIFEST_FILE)
  if (text === undefined) return undefined
  const m = parseManifest(text)
  if ('problem' in m)
    throw new UsageError(`${path} is not a manifest this version of sfl can read (${m.problem})`, {
      facts: {topic: 'manifest-unreadable', path, problem: m.problem},
    })
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
 * whose file is still there (`exists`, relative path). Pure apart from `exists`.
 */
export function freshCounties(
  m: Manifest | undefined,
  fips: readonly string[],
  maxAgeMs: number,
  nowMs: number,
  exists: (path: string) => boolean,
): Set<string> {
  const fresh = new Set<string>()
  if (!m) return fresh
  const byFips = new Map(m.counties.map((c) => [c.fips, c]))
  for (const f of fips) {
    const e = byFips.get(f)
    const at = e ? Date.parse(e.finishedAt) : NaN
    if (e && nowMs - at < maxAgeMs && at <= nowMs && exists(e.path)) fresh.add(f)
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

/** DIR's manifest as a run updates it: one atomic rewrite per finished county, one at a time. */
export class ManifestFile {
  private chain: Promise<void> = Promise.resolve()

  constructor(
    readonly dir: ExportDir,
    private manifest: Manifest,
  ) {}

  static async open(dir: string | ExportDir, format: string): Promise<ManifestFile> {
    const d = typeof dir === 'string' ? await openExportDir(dir) : dir
    const m = await readManifest(d)
    checkFormat(m, format, d.shown)
    return new ManifestFile(d, m ?? {version: 1, format, counties: []})
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
      // through the output gate (src/io/output.ts), as every file of the folder
      const text = `${JSON.stringify(this.manifest, null, 2)}\n`
      await writeOutputFile(this.dir.at(MANIFEST_FILE), text, '--out-dir')
    })
    // a failed write is the caller's to report; the next county still tries
    this.chain = next.catch(() => undefined)
    return next
  }
}
