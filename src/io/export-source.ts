import {constants} from 'node:fs'
import {lstat, open, realpath, type FileHandle} from 'node:fs/promises'
import {dirname, isAbsolute, join, relative, resolve, sep} from 'node:path'

import {CORE_FIELDS, CRA_LEVELS, EXTRA_FIELDS, LOAN_TYPES, OPTION_NAMES, OPTIONS} from '../api/spec.js'
import {abortedBy, type ExportSourceProblem} from '../errors.js'
import {
  ExportFileError,
  formatFromName,
  notReadWhy,
  readExport,
  writtenNotRead,
  type ExportFileFormat,
  type FlatRecord,
} from './export-reader.js'
import {exportSourceText} from './export-source-words.js'
import {isObjectUrl} from '../text/object-url.js'
import type {LocalExport} from './object-export.js'
import {parseManifest} from './manifest.js'
import {exportFolderOf, isManifestName, MANIFEST_PLACES} from './out-dir-layout.js'

/**
 * The one gate an export path passes before anything of it is read (`sfl stats`, and `export_statistics`
 * of `sfl mcp`, whose caller is untrusted: an assistant may follow instructions it found in data and ask
 * for ~/.bash_history). Only an export is read: an `--out-dir` folder with its manifest.json, or a regular
 * file whose header (CSV) or first record (NDJSON, JSON, Parquet) is an sfl export's. Everything else is
 * refused before its content is read:
 * - FIFOs, devices, sockets and anything under /proc, /sys or /dev are refused by lstat and fstat before a
 *   byte is read, and files are opened with O_NONBLOCK, so no path can hold the caller (or a thread of
 *   Node's file-system pool) waiting for a writer;
 * - a file over `maxBytes`, or (untrusted) one with a line over `maxLineBytes`, is refused: /dev/zero's
 *   cousin, a 2 GB sparse file, would otherwise be read as one line;
 * - an error names the path and the problem, never a byte of the file (src/io/export-source-words.ts);
 * - untrusted: a manifest's county files must lie inside its folder, and the records handed on carry
 *   only values the spec lists for CRAEligible and AssumableMortgage.LoanType, and Fips only as a 5-digit
 *   code: anything else becomes "(other)", so no free string of the file reaches the caller.
 * The readers behind it (src/io/export-reader.ts) are called through their entry point. Between the check
 * and the reader's own open the path is checked again (same device and inode), so a file swapped for a
 * FIFO after the check is refused rather than waited on.
 */
export interface SourceLimits {
  /** The caller is untrusted (an MCP tool): lines scanned, county files kept in the folder, values reduced. */
  untrusted: boolean
  /** Bytes a file may have; undefined: no cap. */
  maxBytes?: number | undefined
  /** The longest line an export may have (the header's and first record's always; untrusted: every one). */
  maxLineBytes: number
  /** The caller's deadline or cancel: the line scan and the records stop when it aborts. */
  signal?: AbortSignal | undefined
}

/** The CLI's limits: its user names the path; no cap on size, the head's line checked. */
export const TRUSTED_LIMITS: SourceLimits = {untrusted: false, maxLineBytes: 1 << 20}

/** `sfl mcp`'s limits: 2 GiB a file (an NDJSON county of about a million records), 1 MiB a line. */
export const UNTRUSTED_LIMITS: SourceLimits = {untrusted: true, maxBytes: 2 ** 31, maxLineBytes: 1 << 20}

export interface SourceFile {
  /** The file as its caller named it (or as the manifest names it): what a message says. */
  path: string
  /** Its real path (links resolved), what is read. */
  real: string
  /** The county, for a manifest's file. */
  fips?: string
  format: ExportFileFormat
  /** The file checked: a reader's later open must find the same one. */
  id: {dev: number; ino: number}
}

export interface ExportSource {
  /** The manifest when the path is an export folder or its manifest.json. */
  manifest: string | undefined
  files: SourceFile[]
  /** The records of one of `files`; a failure is one line naming the path and the line, never its text. */
  records(file: SourceFile): AsyncGenerator<FlatRecord, void, undefined>
}

/**
 * An export argument as the readers take it, a local path: the argument itself, or for an `s3://` export
 * (issue 34, the CLI's `sfl stats`, `sfl changes`, `--changes-since`; never `sfl mcp`, whose caller is
 * untrusted and whose paths are local) a private local copy made through the object-store source
 * (src/io/object-export.ts), and for a `.gz` export (local or in a bucket) its expansion
 * (src/io/gzip-export.ts), each of which then passes this gate like any file. `shown` maps the copy's paths back
 * to the `s3://` locations, for messages.
 */
export type {LocalExport} from './object-export.js'

export async function localExport(
  value: string,
  what = 'the export',
  limits: SourceLimits = TRUSTED_LIMITS,
): Promise<LocalExport> {
  // an untrusted caller names files on this machine only: an s3:// value is a local path (and missing)
  const copy =
    isObjectUrl(value) && !limits.untrusted
      ? await (await import('./object-export.js')).copyObjectExport(value, what)
      : {path: value, release: async () => undefined, shown: []}
  if (!/\.gz$/i.test(copy.path)) return copy
  // a gzipped export (t.csv.gz), local or the copy of an object: expanded into a private copy, read as a
  // file (src/io/gzip-export.ts); zlib loads only then. Untrusted: the path's own checks come first (no
  // byte of /proc, /sys or /dev is read), and the copy is capped at the gate's size for a plain file
  const from = limits.untrusted ? await realPathOf(copy.path) : copy.path
  try {
    const plain = await (
      await import('./gzip-export.js')
    ).expandGzipExport(from, value, {maxBytes: limits.maxBytes, signal: limits.signal})
    if (!plain) return copy
    const release = async () => {
      await plain.release()
      await copy.release()
    }
    return {path: plain.path, release, shown: [...plain.shown, ...copy.shown]}
  } catch (error) {
    await copy.release()
    throw error
  }
}

/**
 * Run `fn` on local paths for `values` (each as `localExport` gives it, under `limits`), and remove the
 * copies after, whatever happens. An error that names a copy's path names the `s3://` location instead.
 */
export async function withLocalExports<T>(
  values: readonly string[],
  fn: (paths: string[]) => Promise<T>,
  limits: SourceLimits = TRUSTED_LIMITS,
): Promise<T> {
  const copies: LocalExport[] = []
  try {
    for (const v of values) copies.push(await localExport(v, 'the export', limits))
    return await fn(copies.map((c) => c.path))
  } catch (error) {
    throw copies.reduce((e, c) => c.shown.reduce((x, [from, to]) => renamed(x, from, to), e), error)
  } finally {
    for (const c of copies) await c.release()
  }
}

/** Is the export argument an `s3://` location? */
export const isObjectExport = isObjectUrl

/** Check an `s3://` export argument (there, whole) before anything is sent; a local one is the caller's. */
export async function checkObjectExport(value: string, what = 'the export'): Promise<void> {
  await (await import('./object-export.js')).checkObjectExport(value, what)
}

/** `error` with the path `from` said as `to` in its message and facts. */
function renamed(error: unknown, from: string, to: string): unknown {
  if (!(error instanceof Error) || !error.message.includes(from)) return error
  error.message = error.message.split(from).join(to)
  const facts = (error as {facts?: Record<string, unknown>}).facts
  if (facts && typeof facts['path'] === 'string')
    Object.defineProperty(error, 'facts', {value: {...facts, path: facts['path'].split(from).join(to)}})
  return error
}

/** A refusal: one line (src/io/export-source-words.ts), the facts for each caller to word. */
function refuse(path: string, problem: ExportSourceProblem): ExportFileError {
  return new ExportFileError(exportSourceText(path, problem), {
    facts: {topic: 'export-source', path, problem},
  })
}

/** Check an export path and what it names; nothing of a file is read before its kind is known. */
export async function openExportSource(path: string, limits: SourceLimits): Promise<ExportSource> {
  const real = await realPathOf(path)
  const st = await lstat(real).catch((e: NodeJS.ErrnoException) => {
    throw refuse(path, e.code === 'ENOENT' ? {kind: 'missing'} : {kind: 'unreadable', code: e.code ?? 'EIO'})
  })
  let manifest: string | undefined
  if (st.isDirectory()) manifest = await manifestIn(real)
  else if (isManifestName(real) && st.isFile()) manifest = real
  else if (!st.isFile()) throw refuse(path, {kind: 'not-regular', is: kindOf(st)})
  if (manifest === undefined) {
    const file = await checkFile(path, real, undefined, limits)
    return {manifest, files: [file], records: (f) => recordsOf(f, limits)}
  }
  const dir = st.isDirectory() ? path : exportFolderOf(path)
  const files = await manifestFiles(
    dir,
    join(dir, relative(exportFolderOf(manifest), manifest)),
    manifest,
    limits,
  )
  return {manifest, files, records: (f) => recordsOf(f, limits)}
}

/**
 * The manifest of the folder `real` (src/io/out-dir-layout.ts): `_sfl/manifest.json`, else an earlier
 * sfl's `manifest.json` at the root, else the first place (which manifestFiles then finds missing).
 * Looked at by lstat only: nothing is opened here.
 */
async function manifestIn(real: string): Promise<string> {
  for (const rel of MANIFEST_PLACES) {
    const at = join(real, rel)
    if (!(await lstat(at).catch(() => undefined))) continue
    // _sfl/ linked elsewhere would read another folder's manifest as this one's: refused as a link is
    if ((await realpath(dirname(at)).catch(() => '')) !== dirname(at))
      throw refuse(dirname(at), {kind: 'not-regular', is: 'link'})
    return at
  }
  return join(real, MANIFEST_PLACES[0]!)
}

/** The path with its links resolved; a path under /proc, /sys or /dev is refused whatever it is. */
async function realPathOf(path: string): Promise<string> {
  const real = await realpath(path).catch((e: NodeJS.ErrnoException) => {
    throw refuse(path, e.code === 'ENOENT' ? {kind: 'missing'} : {kind: 'unreadable', code: e.code ?? 'EIO'})
  })
  if (/^\/(proc|sys|dev)(\/|$)/.test(real)) throw refuse(path, {kind: 'system-path'})
  return real
}

function kindOf(st: {
  isFIFO(): boolean
  isCharacterDevice(): boolean
  isBlockDevice(): boolean
  isSocket(): boolean
  isSymbolicLink(): boolean
}): 'FIFO' | 'device' | 'socket' | 'link' | 'other' {
  if (st.isFIFO()) return 'FIFO'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'device'
  if (st.isSocket()) return 'socket'
  return st.isSymbolicLink() ? 'link' : 'other'
}

/**
 * Open without blocking (a FIFO swapped in after lstat opens at once, and fstat refuses it) and without
 * following a link (the path is already the real one).
 */
async function openChecked(path: string, real: string, limits: SourceLimits): Promise<FileHandle> {
  const fh = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch(
    (e: NodeJS.ErrnoException) => {
      throw refuse(
        path,
        e.code === 'ENOENT' ? {kind: 'missing'} : {kind: 'unreadable', code: e.code ?? 'EIO'},
      )
    },
  )
  try {
    const st = await fh.stat()
    if (!st.isFile()) throw refuse(path, {kind: 'not-regular', is: kindOf(st)})
    if (limits.maxBytes !== undefined && st.size > limits.maxBytes)
      throw refuse(path, {kind: 'too-large', limitBytes: limits.maxBytes})
    return fh
  } catch (error) {
    await fh.close()
    throw error
  }
}

/** A file of the export: regular, within the caps, and with an export's header or first record. */
async function checkFile(
  shown: string,
  real: string,
  fips: string | undefined,
  limits: SourceLimits,
): Promise<SourceFile> {
  const fh = await openChecked(shown, real, limits)
  try {
    const st = await fh.stat()
    const head = await readHead(fh, Math.min(st.size, limits.maxLineBytes + 2))
    // a format sfl writes but does not read as an export (xlsx) is said by name, not sniffed as CSV
    const other = writtenNotRead(real)
    if (other) throw refuse(shown, {kind: 'not-an-export', format: other, why: notReadWhy(other)})
    const format = formatFromName(real) ?? sniff(head)
    const why = format === 'parquet' ? await parquetProblem(fh, st.size) : headProblem(head, format, st.size)
    if (why) throw refuse(shown, {kind: 'not-an-export', format, why})
    if (limits.untrusted && format !== 'parquet') await scanLines(shown, fh, st.size, limits)
    return {path: shown, real, format, id: {dev: st.dev, ino: st.ino}, ...(fips === undefined ? {} : {fips})}
  } finally {
    await fh.close()
  }
}

async function readHead(fh: FileHandle, n: number): Promise<Buffer> {
  const buf = Buffer.alloc(n)
  const {bytesRead} = await fh.read(buf, 0, n, 0)
  return buf.subarray(0, bytesRead)
}

/** A file named otherwise: Parquet by its magic, JSON by `[`, NDJSON by `{`, else CSV (the header decides). */
function sniff(head: Buffer): ExportFileFormat {
  if (head.subarray(0, 4).toString('latin1') === 'PAR1') return 'parquet'
  const first = head
    .toString('latin1')
    .replace(/^\xef\xbb\xbf/, '')
    .trimStart()[0]
  return first === '[' ? 'json' : first === '{' ? 'ndjson' : 'csv'
}

const TOP = new Set<string>([...CORE_FIELDS, ...EXTRA_FIELDS])
const OPTION = new Set<string>(OPTION_NAMES)
const NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/

/**
 * Why a list of column names is no export's (undefined when it is one): an export's columns are the spec's
 * fields (src/model/columns.ts), an option's as `Option.Field`, each once. The reason never quotes a name.
 */
export function columnsProblem(names: readonly string[]): string | undefined {
  if (names.length === 0 || (names.length === 1 && names[0] === '')) return 'it names no column'
  if (names.length > 400) return `it has ${names.length} columns, more than an export's`
  const seen = new Set<string>()
  for (const [i, name] of names.entries()) {
    const dot = name.indexOf('.')
    const known =
      dot === -1
        ? TOP.has(name)
        : OPTION.has(name.slice(0, dot)) &&
          (OPTIONS[name.slice(0, dot) as keyof typeof OPTIONS] as readonly string[]).includes(
            name.slice(dot + 1),
          )
    if (!known && !(dot !== -1 && OPTION.has(name.slice(0, dot)) && NAME.test(name.slice(dot + 1))))
      return `column ${i + 1} is no field of the spec`
    if (seen.has(name)) return `column ${i + 1} repeats an earlier one`
    seen.add(name)
  }
  return undefined
}

/** The first line of `head` (without its line end), or undefined when none ends within it. */
function firstLine(head: Buffer, size: number): Buffer | undefined {
  const nl = head.indexOf(0x0a)
  if (nl === -1) return head.length === size ? head : undefined
  return head.subarray(0, nl > 0 && head[nl - 1] === 0x0d ? nl - 1 : nl)
}

const utf8 = new TextDecoder('utf-8', {fatal: true})

/** Why the head of a CSV, NDJSON or JSON file is no export's; undefined when it is one. */
function headProblem(head: Buffer, format: ExportFileFormat, size: number): string | undefined {
  if (size === 0) return 'the file is empty'
  let text: string
  const line = firstLine(head, size)
  if (line === undefined) return 'its first line is longer than any export has'
  try {
    text = utf8.decode(line).replace(/^\ufeff/, '')
  } catch {
    return 'its first line is not UTF-8 text'
  }
  if (format === 'csv') {
    const names = csvHeader(text)
    return names === undefined ? 'its first line is no CSV header' : columnsProblem(names)
  }
  if (format === 'json') {
    const t = text.trim()
    if (t === '[]') return undefined
    if (t !== '[') return 'it is not a JSON array with a record a line, as sfl writes one'
    const rest = head.subarray(head.indexOf(0x0a) + 1)
    const second = firstLine(rest, size - (head.length - rest.length))
    if (second === undefined) return 'its first record is longer than any export has'
    const record = second.toString('utf8').trim().replace(/,$/, '')
    return record === ']' ? undefined : recordProblem(record)
  }
  return recordProblem(text)
}

/** The names of a CSV header line (RFC 4180 quoting), or undefined when it is not one. */
function csvHeader(line: string): string[] | undefined {
  const names: string[] = []
  let i = 0
  for (;;) {
    if (line[i] === '"') {
      let name = ''
      for (i++; ; i++) {
        if (i >= line.length) return undefined
        if (line[i] === '"') {
          if (line[i + 1] !== '"') break
          name += '"'
          i++
        } else name += line[i]
      }
      i++
      names.push(name)
    } else {
      const end = line.indexOf(',', i)
      names.push(line.slice(i, end === -1 ? line.length : end))
      i = end === -1 ? line.length : end
    }
    if (i >= line.length) return names
    if (line[i] !== ',') return undefined
    i++
  }
}

/** Why a first record (one line of JSON) is no export's: a JSON object of the spec's fields. */
function recordProblem(text: string): string | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return 'its first record is not JSON'
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return 'its first record is not a JSON object'
  const names: string[] = []
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!OPTION.has(k)) names.push(k)
    else if (v !== null && typeof v === 'object' && !Array.isArray(v))
      for (const sub of Object.keys(v)) names.push(`${k}.${sub}`)
    else if (v !== null) return 'its first record has an option that is no object'
  }
  if (names.length === 0 && Object.keys(value).length === 0) return 'its first record names no field'
  return names.length ? columnsProblem(names)?.replace(/^column/, 'field') : undefined
}

/**
 * Why a Parquet file is no export's: its footer (magic, metadata of at most 16 MiB) read through the
 * checked handle, its columns the spec's, and no row group over 512 MiB uncompressed (a reader holds one).
 */
async function parquetProblem(fh: FileHandle, size: number): Promise<string | undefined> {
  if (size < 12) return 'it is too short to be a Parquet file'
  const tail = await read(fh, size - 8, 8)
  if (tail.subarray(4).toString('latin1') !== 'PAR1') return 'its footer is not a Parquet footer'
  const length = tail.readUInt32LE(0)
  if (length > 16 * 1024 * 1024 || length > size - 12)
    return 'its Parquet metadata is larger than an export has'
  const {parquetMetadata, parquetSchema} = await import('hyparquet')
  const footer = await read(fh, size - 8 - length, length + 8)
  try {
    const metadata = parquetMetadata(new Uint8Array(footer))
    if (metadata.row_groups.some((g) => Number(g.total_byte_size) > 512 * 1024 * 1024))
      return 'a row group is larger than an export writes'
    return columnsProblem(parquetSchema(metadata).children.map((c) => c.element.name))
  } catch {
    return 'its Parquet metadata cannot be read'
  }
}

async function read(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length)
  const {bytesRead} = await fh.read(buf, 0, length, position)
  return buf.subarray(0, bytesRead)
}

/** Every line within the cap, read through the checked handle a MiB at a time; stops when the call does. */
async function scanLines(shown: string, fh: FileHandle, size: number, limits: SourceLimits): Promise<void> {
  const chunk = Buffer.allocUnsafe(1 << 20)
  const tooLong = () => refuse(shown, {kind: 'line-too-long', limitBytes: limits.maxLineBytes})
  // bytes since the last newline, across chunks
  let run = 0
  for (let pos = 0; pos < size;) {
    if (limits.signal?.aborted) throw abortedBy(limits.signal)
    const {bytesRead} = await fh.read(chunk, 0, chunk.length, pos)
    if (bytesRead === 0) break
    pos += bytesRead
    const bytes = chunk.subarray(0, bytesRead)
    let start = 0
    for (let nl = bytes.indexOf(0x0a); nl !== -1; nl = bytes.indexOf(0x0a, start)) {
      if (run + nl - start > limits.maxLineBytes) throw tooLong()
      run = 0
      start = nl + 1
    }
    run += bytesRead - start
    if (run > limits.maxLineBytes) throw tooLong()
  }
}

/**
 * The county files of a manifest, each checked as an export file (and, untrusted, inside the folder):
 * `dir` is the folder as the caller named it, `shownManifest` the manifest as messages name it, `manifest`
 * its real path.
 */
async function manifestFiles(
  dir: string,
  shownManifest: string,
  manifest: string,
  limits: SourceLimits,
): Promise<SourceFile[]> {
  const mst = await lstat(manifest).catch(() => undefined)
  if (!mst) throw refuse(dir, {kind: 'folder-without-manifest'})
  if (!mst.isFile()) throw refuse(shownManifest, {kind: 'not-regular', is: kindOf(mst)})
  const fh = await openChecked(shownManifest, manifest, {...limits, maxBytes: 64 * 1024 * 1024})
  let text: string
  try {
    text = (await fh.readFile()).toString('utf8')
  } finally {
    await fh.close()
  }
  const m = parseManifest(text)
  // the parser's reason can quote the file (JSON.parse's message does): said in the gate's own words
  if ('problem' in m)
    throw refuse(shownManifest, {kind: 'not-an-export', format: 'manifest', why: 'it is no export manifest'})
  // the folder the county paths are relative to: the parent of _sfl/ (or of an earlier sfl's manifest)
  const root = exportFolderOf(manifest)
  const files: SourceFile[] = []
  for (const e of m.counties) {
    if (limits.untrusted && !/^\d{5}$/.test(e.fips))
      throw refuse(shownManifest, {
        kind: 'not-an-export',
        format: 'manifest',
        why: 'a county is no 5-digit code',
      })
    const file = resolve(root, e.path)
    if (limits.untrusted && !inside(root, file))
      throw refuse(shownManifest, {kind: 'outside-folder', fips: e.fips})
    const real = await realpath(file).catch(() => undefined)
    if (real === undefined)
      throw refuse(shownManifest, {kind: 'county-file-missing', fips: e.fips, file: e.path})
    if (limits.untrusted && !inside(root, real))
      throw refuse(shownManifest, {kind: 'outside-folder', fips: e.fips})
    const st = await lstat(real)
    if (!st.isFile()) throw refuse(shownManifest, {kind: 'county-file-missing', fips: e.fips, file: e.path})
    const checked = await checkFile(file, real, e.fips, limits)
    // a county file's own extension first (the manifest's format covers files named otherwise)
    const named = formatFromName(real)
    files.push({...checked, format: named ?? checked.format})
  }
  return files
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel)
}

/** The reader's records, the path checked again first; a failure said without the file's text. */
async function* recordsOf(
  file: SourceFile,
  limits: SourceLimits,
): AsyncGenerator<FlatRecord, void, undefined> {
  await recheck(file)
  let n = 0
  try {
    for await (const rec of readExport(file.real, file.format)) {
      if ((++n & 1023) === 0 && limits.signal?.aborted) throw abortedBy(limits.signal)
      yield limits.untrusted ? allowedValues(rec) : rec
    }
  } catch (error) {
    // a codec this Node lacks (zstd before 22.15): said of the path as given, not the real one read
    const facts = error instanceof ExportFileError ? error.facts : undefined
    if (facts?.topic === 'export-source' && facts.problem.kind === 'codec-unavailable')
      throw refuse(file.path, facts.problem)
    if (error instanceof ExportFileError && error.facts) throw error
    const code = (error as NodeJS.ErrnoException).code
    if (!(error instanceof ExportFileError)) {
      if (typeof code === 'string') throw refuse(file.path, {kind: 'unreadable', code})
      throw error
    }
    // the reader's own message can quote a cell (a CSV syntax error does): only the line number is kept
    const line = / line (\d+)\b/.exec(error.message)?.[1]
    throw refuse(file.path, {
      kind: 'damaged',
      format: file.format,
      line: line === undefined ? undefined : Number(line),
    })
  }
}

/**
 * The file is still the one checked when its reader opens it by path: the same device and inode, still
 * a regular file (lstat: a FIFO or link swapped in since is refused, not opened).
 */
async function recheck(file: SourceFile): Promise<void> {
  const st = await lstat(file.real).catch(() => undefined)
  if (!st) throw refuse(file.path, {kind: 'missing'})
  if (!st.isFile()) throw refuse(file.path, {kind: 'not-regular', is: kindOf(st)})
  if (st.dev !== file.id.dev || st.ino !== file.id.ino)
    throw refuse(file.path, {kind: 'unreadable', code: 'ECHANGED'})
}

const OTHER = '(other)'
const CRA: ReadonlySet<string> = new Set(CRA_LEVELS)
const LOANS: ReadonlySet<string> = new Set(LOAN_TYPES)

/**
 * The record with no free string left in the fields a statistic names: CRAEligible and LoanType as the
 * spec lists them (spec 2.1, 2.2) or "(other)", Fips as a 5-digit code or "(other)".
 */
function allowedValues(rec: FlatRecord): FlatRecord {
  const cra = rec['CRAEligible']
  if (cra !== null && cra !== undefined && cra !== '' && !(typeof cra === 'string' && CRA.has(cra)))
    rec['CRAEligible'] = OTHER
  const loan = rec['AssumableMortgage.LoanType']
  if (loan !== null && loan !== undefined && loan !== '' && !(typeof loan === 'string' && LOANS.has(loan)))
    rec['AssumableMortgage.LoanType'] = OTHER
  const fips = rec['Fips']
  if (fips !== null && fips !== undefined && !(typeof fips === 'string' && /^\d{5}$/.test(fips)))
    rec['Fips'] = OTHER
  return rec
}

/**
 * Why a folder that is only read (`plan_export`'s out_dir: its manifest.json and checkpoint, `files`)
 * cannot be read safely; undefined when it can, or when it does not exist (nothing to read). A file where
 * the folder should be, a folder under /proc, /sys or /dev, anything but a regular file in the place of one
 * of `files`, or one over `maxBytes` is named; nothing is opened, so nothing can block. (The reads that
 * follow open by path: a file swapped in between is the residual risk of a local writer.)
 */
export async function outDirProblem(
  dir: string,
  files: readonly string[],
  /** A file read whole (the manifest) or line by line (the checkpoint) is refused above this size. */
  maxBytes = 256 * 1024 * 1024,
): Promise<string | undefined> {
  const st = await lstat(dir).catch(() => undefined)
  if (!st) return undefined
  const real = await realpath(dir).catch(() => dir)
  if (/^\/(proc|sys|dev)(\/|$)/.test(real)) return `${dir} is under /proc, /sys or /dev, not an export folder`
  if (!(await lstat(real)).isDirectory()) return `${dir} is not a folder; give a folder`
  for (const f of files) {
    const fst = await lstat(join(real, relative(dir, f))).catch(() => undefined)
    if (fst && !fst.isFile())
      return `${dir}: ${relative(dir, f)} is a ${kindOf(fst)}, not a regular file; not read`
    if (fst && fst.size > maxBytes)
      return `${dir}: ${relative(dir, f)} is larger than ${maxBytes / (1024 * 1024)} MiB; not read`
  }
  return undefined
}
