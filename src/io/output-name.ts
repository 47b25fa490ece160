/**
 * What an output file's name asks for: its base format from the extension before any compression
 * suffix, and gzip when it ends in `.gz` (docs/exports.md, "Compression"). A name that asks for what sfl
 * cannot write is refused with the reason, before any request: a `.zst` or `.bz2` written as plain text, or
 * an `.xls` holding CSV, would fool every reader that trusts the name. A name without a known extension
 * asks for nothing (the caller's default applies). Pure; the format registry decides which command writes
 * which format.
 */

import {FORMATS, formatOfExtension, type FileFormat} from '../model/formats.js'

/** An output's base format: one of the format registry's (src/model/formats.ts). */
export type BaseFormat = FileFormat
export type Compression = 'gzip'

export type OutputName =
  | {ok: true; format: BaseFormat | undefined; compression: Compression | undefined}
  | {ok: false; reason: string}

/** Compressions sfl does not write, with the tool that does. */
const OTHER_COMPRESSION: Record<string, {label: string; tool: string}> = {
  zst: {label: 'zstd', tool: 'zstd'},
  zstd: {label: 'zstd', tool: 'zstd'},
  bz2: {label: 'bzip2', tool: 'bzip2'},
  xz: {label: 'xz', tool: 'xz'},
  lzma: {label: 'lzma', tool: 'xz --format=lzma'},
  lz4: {label: 'lz4', tool: 'lz4'},
  lz: {label: 'lzip', tool: 'lzip'},
  br: {label: 'brotli', tool: 'brotli'},
  sz: {label: 'snappy framing', tool: 'a snappy tool'},
  z: {label: 'compress', tool: 'compress'},
  gzip: {label: 'gzip under the name .gzip', tool: 'gzip'},
}

/** Archives hold several files; sfl writes one. */
const ARCHIVES = new Set(['zip', '7z', 'rar', 'tar', 'tgz', 'tbz2', 'txz'])

/** Spreadsheet files of other kinds than the one sfl writes. */
const OTHER_SHEETS: Record<string, string> = {
  xls: 'an Excel 97-2003 workbook (.xls)',
  xlsm: 'a macro-enabled workbook (.xlsm)',
  xlsb: 'a binary workbook (.xlsb)',
  ods: 'an OpenDocument spreadsheet (.ods)',
  numbers: 'a Numbers document',
}

function split(name: string): {stem: string; ext: string | undefined; typed?: string} {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1)
  const dot = base.lastIndexOf('.')
  if (dot <= 0) return {stem: base, ext: undefined}
  return {stem: base.slice(0, dot), ext: base.slice(dot + 1).toLowerCase(), typed: base.slice(dot + 1)}
}

/**
 * @example
 * classifyOutputName('t.csv.gz') // {ok: true, format: 'csv', compression: 'gzip'}
 * classifyOutputName('t.ndjson.zst') // {ok: false, reason: 'sfl writes gzip (.gz) but not zstd (.zst): ...'}
 * classifyOutputName('t.txt') // {ok: true, format: undefined, compression: undefined}
 */
export function classifyOutputName(name: string): OutputName {
  const {stem, ext, typed} = split(name)
  if (ext === undefined) return {ok: true, format: undefined, compression: undefined}
  const inner = split(stem)
  const innerFormat = inner.ext === undefined ? undefined : formatOfExtension(inner.ext)
  const other = OTHER_COMPRESSION[ext]
  if (other) {
    const base = innerFormat ? stem : `${stem}.csv`
    return {
      ok: false,
      reason: `sfl writes gzip (.gz) but not ${other.label} (.${typed}): name it ${base}.gz, or write ${base} and compress it with ${other.tool}`,
    }
  }
  if (ARCHIVES.has(ext))
    return {
      ok: false,
      reason: `sfl writes one file, not a .${ext} archive: name it .csv, .ndjson or .json (add .gz to compress)`,
    }
  const sheet = OTHER_SHEETS[ext]
  if (sheet) return {ok: false, reason: `sfl does not write ${sheet}: name it .xlsx for a workbook, or .csv`}
  if (ext !== 'gz') {
    const format = formatOfExtension(ext)
    return {ok: true, format, compression: undefined}
  }
  if (innerFormat === undefined)
    return {
      ok: false,
      reason: `name the format before .gz: ${inner.stem}.csv.gz, ${inner.stem}.ndjson.gz or ${inner.stem}.json.gz`,
    }
  // the registry says which formats the output gate gzips, and why the others are not
  const refused = FORMATS[innerFormat].noGzip
  if (refused !== undefined) return {ok: false, reason: refused}
  return {ok: true, format: innerFormat, compression: 'gzip'}
}
