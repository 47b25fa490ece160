import {lstat} from 'node:fs/promises'
import {basename, join} from 'node:path'

import {gunzipToFile} from './gzip.js'
import {ExportFileError} from './export-reader.js'
import {InputFormatError} from './input-error.js'
import type {LocalExport} from './object-export.js'
import {makeScratchDir} from './private-files.js'
import type {InflateCaps} from './zip-reader.js'

/**
 * A gzipped export (`t.csv.gz`, `t.ndjson.gz`, `t.json.gz`: what `county-export --out` writes when the
 * name ends in .gz, src/io/output-name.ts) as `sfl stats` and `sfl changes` read it: expanded as a
 * stream (zlib, 64 KiB at a time: memory stays bounded whatever the size) into a private copy in the
 * temp folder (0700/0600), which then passes the export gate (src/io/export-source.ts) as any file
 * does and is removed when the command ends. A copy rather than a stream of records because the change
 * comparison reads a changed record back by its offset and its byte scanners read plain files
 * (src/changes/scan-io.ts): the same files, so the same answer. It costs the export's expanded size on disk.
 *
 * The caps are the user's own export's, not a stranger's workbook's: no size cap (the disk is the limit),
 * but no more than 200 bytes out per byte in past 16 MiB, which no CSV or JSON export approaches (about
 * 5 to 15 to 1) and a gzip bomb does. A damaged or truncated stream is one line and exit 2, as any
 * export sfl cannot read, and no copy is left.
 */
const EXPORT_CAPS: InflateCaps = {
  maxBytes: Number.MAX_SAFE_INTEGER,
  maxRatio: 200,
  ratioFloor: 16 * 1024 ** 2,
}

/** Is `path` named as gzip (`.gz`, any case)? */
export function gzipExportNamed(path: string): boolean {
  return /\.gz$/i.test(path)
}

/** What an untrusted caller (`export_statistics` of `sfl mcp`) bounds the expansion by. */
export interface ExpandLimits {
  /** The most bytes the copy may have: the gate's cap on a plain file, so a .gz reaches no further. */
  maxBytes?: number | undefined
  /** The call's deadline or cancel, which stops the expansion between chunks. */
  signal?: AbortSignal | undefined
}

/**
 * `file` (a local path; `shown` as the user gave it) expanded into a private copy named without `.gz`,
 * so its extension still names its format. Anything but a regular file is handed on as it is: the
 * export gate refuses a FIFO or device by lstat before opening it, and says so in its own words.
 */
export async function expandGzipExport(
  file: string,
  shown: string,
  limits: ExpandLimits = {},
): Promise<LocalExport | undefined> {
  if (!(await lstat(file).catch(() => undefined))?.isFile()) return undefined
  const scratch = makeScratchDir('sfl-gz-export-')
  const path = join(scratch.path, basename(file).replace(/\.gz$/i, '') || 'export')
  const caps = {...EXPORT_CAPS, maxBytes: Math.min(EXPORT_CAPS.maxBytes, limits.maxBytes ?? Infinity)}
  try {
    await gunzipToFile(file, path, caps, limits.signal)
  } catch (error) {
    await scratch.remove()
    if (error instanceof InputFormatError) throw new ExportFileError(`${shown}: ${error.message}`)
    throw error
  }
  return {path, release: () => scratch.remove(), shown: [[path, shown]]}
}
