import {closeSync, openSync, writeSync} from 'node:fs'
import {readFile, stat} from 'node:fs/promises'
import {basename, dirname, join, resolve} from 'node:path'

import {
  asText,
  ExportFileError,
  formatFromName,
  readExport,
  type ExportFileFormat,
  type FlatRecord,
} from '../io/export-reader.js'
import {readLines} from '../io/lines.js'
import {MANIFEST_FILE, parseManifest} from './manifest.js'

/**
 * One side of a comparison (the previous or the current export), county by county: the comparison holds
 * one county at a time (src/jobs/changes.ts), so each county must be readable on its own, more than once.
 * An `--out-dir` manifest already has a file per county. A single file (any number of counties, in any
 * order) is split once into one scratch NDJSON file per county.
 */
export interface ExportSide {
  /** The path as the user gave it, for messages. */
  path: string
  /** County codes in the order the side holds them. */
  counties: string[]
  /** The county's records (again on every call); none for a county the side does not hold. */
  read(fips: string): AsyncGenerator<FlatRecord, void, undefined>
}

interface ManifestCounty {
  fips: string
  path: string
}

/** `DIR/manifest.json` of an `--out-dir` export, or the manifest itself; undefined for an export file. */
export async function manifestPathOf(path: string): Promise<string | undefined> {
  const s = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new ExportFileError(
      error.code === 'ENOENT' ? `${path}: no such file or folder` : `${path}: cannot be read (${error.code})`,
    )
  })
  if (s.isDirectory()) {
    const m = join(path, MANIFEST_FILE)
    if (!(await stat(m).catch(() => undefined))?.isFile())
      throw new ExportFileError(
        `${path} is a folder without manifest.json; give an export file or an --out-dir folder`,
      )
    return m
  }
  return basename(path) === MANIFEST_FILE ? path : undefined
}

/**
 * Read and check an `--out-dir` manifest: `{"version":1,"format":"csv","counties":[{"fips","path",…}]}`,
 * paths relative to its folder. Every county file must exist (checked before anything is compared).
 */
export async function readManifest(
  manifest: string,
): Promise<{format: ExportFileFormat | undefined; counties: ManifestCounty[]}> {
  let text: string
  try {
    text = await readFile(manifest, 'utf8')
  } catch (error) {
    throw new ExportFileError(`${manifest}: not a readable manifest (${(error as Error).message})`)
  }
  const m = parseManifest(text)
  if ('problem' in m) throw new ExportFileError(`${manifest}: ${m.problem}`)
  const dir = dirname(manifest)
  const counties: ManifestCounty[] = []
  for (const e of m.counties) {
    const file = resolve(dir, e.path)
    if (!(await stat(file).catch(() => undefined))?.isFile())
      throw new ExportFileError(`${manifest}: the file of county ${e.fips} (${e.path}) is missing`)
    counties.push({fips: e.fips, path: file})
  }
  const format =
    m.format === 'csv' || m.format === 'ndjson' || m.format === 'json' || m.format === 'parquet'
      ? m.format
      : undefined
  return {format, counties}
}

/**
 * Check that `path` can be read as a side before anything else happens (a request, a long read of the
 * other side): it exists, and its first record (of each county file, for a manifest) can be read.
 */
export async function checkSide(path: string): Promise<void> {
  const manifest = await manifestPathOf(path)
  const files = manifest ? (await readManifest(manifest)).counties.map((c) => c.path) : [path]
  for (const f of files) {
    const records = readExport(f)
    await records.next()
    await records.return(undefined)
  }
}

/** Open a side; a single file is split into `scratch` (a private folder the caller removes). */
export async function openSide(path: string, scratch: string, label: string): Promise<ExportSide> {
  const manifest = await manifestPathOf(path)
  if (manifest) {
    const {format, counties} = await readManifest(manifest)
    const files = new Map<string, string[]>()
    for (const c of counties) files.set(c.fips, [...(files.get(c.fips) ?? []), c.path])
    return {
      path,
      counties: [...files.keys()],
      async *read(fips) {
        // a county file's own extension first (the manifest's format covers files named otherwise)
        for (const f of files.get(fips) ?? []) yield* readExport(f, formatFromName(f) ?? format)
      },
    }
  }
  const split = await splitByCounty(path, join(scratch, label))
  return {
    path,
    counties: split.counties,
    async *read(fips) {
      if (fips === split.counties[0]) {
        // the file's first run of records was not copied: read it where it is, up to the next county
        for await (const rec of readExport(path)) {
          if ((asText(rec['Fips']) ?? '') !== fips) break
          yield rec
        }
      }
      const f = split.files.get(fips)
      if (!f) return
      for await (const l of readLines(f)) yield JSON.parse(l.bytes.toString('utf8')) as FlatRecord
    },
  }
}

/**
 * One pass over an export file writing each county's records to `<prefix>-<n>.ndjson`, except the run of
 * records the file starts with (read again from the file itself): a one-county file, the usual case, is
 * read but never copied. Our exports hold counties whole and in order, so one file is open at a time; a
 * county met again later is appended to. Memory: one 1 MiB buffer, whatever the file's size.
 */
async function splitByCounty(
  path: string,
  prefix: string,
): Promise<{counties: string[]; files: Map<string, string>}> {
  const counties: string[] = []
  const files = new Map<string, string>()
  let fips: string | undefined
  let firstRun = true
  let fd: number | undefined
  let buf = ''
  const flush = () => {
    if (fd !== undefined && buf !== '') writeSync(fd, buf)
    buf = ''
  }
  const close = () => {
    flush()
    if (fd !== undefined) closeSync(fd)
    fd = undefined
  }
  try {
    for await (const rec of readExport(path)) {
      // a record without Fips is its own group (""), compared with the other side's such records
      const f = asText(rec['Fips']) ?? ''
      if (f !== fips) {
        close()
        if (fips !== undefined) firstRun = false
        fips = f
        if (!counties.includes(f)) counties.push(f)
        if (!firstRun) {
          let file = files.get(f)
          if (!file) files.set(f, (file = `${prefix}-${files.size}.ndjson`))
          fd = openSync(file, 'a', 0o600)
        }
      }
      if (firstRun) continue
      buf += `${JSON.stringify(rec)}\n`
      if (buf.length > 1 << 20) flush()
    }
  } finally {
    close()
  }
  return {counties, files}
}
