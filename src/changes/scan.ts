import {join} from 'node:path'

import {AppendFile} from '../io/private-files.js'
import {asText, readExport, type ExportFileFormat} from '../io/export-reader.js'
import {unknownFormat} from '../model/formats.js'
import {flatCellValue, setField, type ChangeRecord} from './cells.js'
import {EntrySink, type GroupScan} from './entries.js'
import {FieldIds} from './names.js'
import {CsvScanner} from './scan-csv.js'
import {ScanAnomaly, type ScanTarget} from './scan-io.js'
import {JsonLinesScanner} from './scan-json.js'
import {scanParquet} from './scan-parquet.js'
import {ObjectDigester} from './row-digest.js'

/** One file of a side, its format known, and its county when it comes from a manifest. */
export interface ScanFile {
  path: string
  format: ExportFileFormat
  group?: string | undefined
}

/** A side to scan: its files in order, where its scratch files go, the fields left out of the digest. */
export interface ScanRequest {
  label: string
  scratch: string
  files: ScanFile[]
  ignore: readonly string[]
  /**
   * What a record's digest covers: its `values` by the comparison's rule (row-digest.ts: any formats on
   * either side), or its `bytes` but the ignored fields' values, when every file of both sides is of one
   * text format (CSV with one header, or NDJSON/JSON lines: src/changes/compare.ts decides): a fraction of
   * the work, and records whose bytes differ are compared by value before they are called updated.
   */
  digest?: 'values' | 'bytes'
}

/**
 * How to read an entry's record back (src/changes/read.ts): from the export file itself (CSV with its
 * header, NDJSON, JSON lines, Parquet by row number), or from the scan's scratch copy of record objects
 * (`flat`).
 */
export interface ReadBackFile {
  path: string
  kind: 'csv' | 'ndjson' | 'json' | 'parquet' | 'flat'
  header?: string[] | undefined
}

/** A side scanned: its counties in the order first met, and its files for reading records back. */
export interface SideScan {
  groups: GroupScan[]
  /** The side's files by index (an entry's file); the last one is the scratch copy. */
  files: ReadBackFile[]
  /** Whether the byte scanners read it (false: every file went through export-reader's objects). */
  bytes: boolean
}

/**
 * One pass over a side (src/changes/compare.ts): every record's key, digest and place, into per-county
 * entry files in `scratch`. CSV and NDJSON/JSON files are read as bytes by the shared readers
 * (src/changes/scan-csv.ts on src/io/csv-reader.ts, scan-json.ts on src/json/walk.ts), Parquet column by
 * column (scan-parquet.ts on src/io/parquet-reader.ts); any side they do not take (malformed, not UTF-8,
 * a Parquet layout the column reader does not know) goes through src/io/export-reader.ts's record
 * objects, which also name what is wrong. In the built CLI the current side runs on a worker thread
 * (src/changes/scan-worker.ts), the previous on the main one.
 */
export async function scanSide(req: ScanRequest): Promise<SideScan> {
  const ignore = new Set(req.ignore)
  const sink = new EntrySink(join(req.scratch, req.label))
  try {
    return await scanFiles(req, ignore, sink, true)
  } catch (error) {
    if (!(error instanceof ScanAnomaly)) throw error
    sink.discard()
  }
  return scanFiles(req, ignore, sink, false)
}

async function scanFiles(
  req: ScanRequest,
  ignore: ReadonlySet<string>,
  sink: EntrySink,
  bytes: boolean,
): Promise<SideScan> {
  const names = new FieldIds(ignore)
  const copy = new ScratchCopy(join(req.scratch, `${req.label}-copy.ndjson`))
  const files: ReadBackFile[] = []
  try {
    for (const [index, f] of req.files.entries()) {
      const target: ScanTarget = {path: f.path, index, group: f.group}
      if (!bytes) {
        await scanObjects(f, req.files.length, names, sink, copy, ignore)
        files.push({path: f.path, kind: 'flat'})
        continue
      }
      const format = f.format
      switch (format) {
        case 'csv':
          files.push({
            path: f.path,
            kind: 'csv',
            header: await new CsvScanner(names, sink, target, req.digest === 'bytes').scan(),
          })
          break
        case 'ndjson':
        case 'json':
          await new JsonLinesScanner(
            names,
            sink,
            target,
            format === 'json',
            ignore,
            req.digest === 'bytes',
          ).scan()
          files.push({path: f.path, kind: format})
          break
        case 'parquet':
          await scanParquet(names, sink, target)
          files.push({path: f.path, kind: 'parquet'})
          break
        default:
          unknownFormat(format)
      }
    }
  } finally {
    copy.close()
  }
  files.push({path: copy.path, kind: 'flat'})
  return {groups: sink.finish((id) => names.nameOf(id)), files, bytes}
}

/** A file read as record objects (export-reader): each keyed record copied to the scratch copy, as a change row's values. */
async function scanObjects(
  f: ScanFile,
  copyIndex: number,
  names: FieldIds,
  sink: EntrySink,
  copy: ScratchCopy,
  ignore: ReadonlySet<string>,
): Promise<void> {
  const d = new ObjectDigester(ignore)
  for await (const rec of readExport(f.path, f.format)) {
    // a record without Fips is its own group (""), compared with the other side's such records
    sink.select(f.group ?? asText(rec['Fips']) ?? '')
    for (const k in rec) sink.see(names.ofText(k))
    d.take(rec)
    if (!d.hasKey) sink.unkeyed()
    else {
      // a field named __proto__ kept as a field (src/changes/cells.ts), not the copy's prototype
      const cells: ChangeRecord = {}
      for (const k in rec) setField(cells, k, flatCellValue(k, rec[k]))
      sink.add(d.key.a, d.key.b, d.digest.a, d.digest.b, copy.append(cells), copyIndex)
    }
  }
}

/** Record objects as JSON lines in a scratch file, each at the byte offset `append` returns. */
class ScratchCopy {
  private file: AppendFile | undefined
  private buf = ''
  private size = 0

  constructor(readonly path: string) {}

  append(rec: object): number {
    const line = `${JSON.stringify(rec)}\n`
    const at = this.size
    this.buf += line
    this.size += Buffer.byteLength(line)
    if (this.buf.length > 1 << 20) this.flush()
    return at
  }

  close(): void {
    this.flush()
    this.file?.close()
    this.file = undefined
  }

  private flush(): void {
    if (this.buf === '') return
    this.file ??= AppendFile.open(this.path)
    this.file.write(this.buf)
    this.buf = ''
  }
}
