import {closeSync, openSync, writeSync} from 'node:fs'
import {join} from 'node:path'

import {asText, formatFromName, readExport, type FlatRecord} from '../io/export-reader.js'
import {readLines} from '../io/lines.js'
import {manifestPathOf, readManifest} from './export-files.js'

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
