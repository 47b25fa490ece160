import {closeSync, fstatSync, openSync, readSync} from 'node:fs'

import type {FlatRecord} from '../io/export-reader.js'
import {unguardCell} from '../text/csv-cell.js'
import {csvRecordAt} from './scan-csv.js'
import {jsonLineRecord, jsonLineText} from './scan-json.js'
import type {ReadBackFile} from './scan.js'

const WINDOW = 4096
const LF = 0x0a

/**
 * Reads back, by file and byte offset, the few records a comparison writes out (src/changes/compare.ts),
 * as src/io/export-reader.ts gives them: the same record object, so a change row is what it was when
 * every record was read as an object. Reads go through a 4 KiB window per file (doubled for a longer
 * record): the records asked for come in file order nearly always (added rows in the current export's
 * order, the rest in the previous one's), often a few in one window, and a window is small enough that
 * reading one for each of records far apart costs little (64 KiB windows took about 80 ms of the main
 * thread at 200,000 records, profiled: they read the neighbours of 2,000 updated records again and again).
 */
export class RecordReader {
  /** Each file's descriptor, size and window (an updated row reads from both sides in turn). */
  private readonly open = new Map<
    number,
    {fd: number; size: number; start: number; end: number; buf: Buffer}
  >()

  constructor(private readonly files: readonly ReadBackFile[]) {}

  read(file: number, offset: number): FlatRecord {
    const f = this.files[file]!
    for (let size = WINDOW; ; size *= 2) {
      const {buf, start, end, final} = this.window(file, offset, size)
      const at = offset - start
      if (f.kind === 'csv') {
        const rec = csvRecordAt(buf, at, end - start, final)
        if (rec) return csvObject(rec.fields, f.header ?? [])
      } else {
        let nl = buf.indexOf(LF, at)
        if (nl >= end - start) nl = -1
        if (nl >= 0 || final) {
          const line = buf.toString('utf8', at, nl >= 0 ? nl : end - start)
          if (f.kind === 'flat') return JSON.parse(line) as FlatRecord
          const text = jsonLineText(line, offset === 0, f.kind === 'json')
          const rec = text === undefined ? undefined : jsonLineRecord(text)
          // the scan read this very line as a record: only a file changed since could fail here
          if (!rec) throw new Error(`${f.path}: the record at byte ${offset} changed while it was compared`)
          return rec
        }
      }
      if (final) throw new Error(`${f.path}: the record at byte ${offset} changed while it was compared`)
    }
  }

  close(): void {
    for (const {fd} of this.open.values()) closeSync(fd)
    this.open.clear()
  }

  /** At least `size` bytes from `offset` (fewer at the end of the file), from the window when it has them. */
  private window(file: number, offset: number, size: number) {
    let w = this.open.get(file)
    if (!w) {
      const fd = openSync(this.files[file]!.path, 'r')
      w = {fd, size: fstatSync(fd).size, start: 0, end: 0, buf: Buffer.alloc(0)}
      this.open.set(file, w)
    }
    if (offset < w.start || w.end < Math.min(offset + size, w.size) || w.buf.length === 0) {
      if (w.buf.length < size) w.buf = Buffer.allocUnsafe(Math.max(size, WINDOW))
      w.start = offset
      w.end = offset + readSync(w.fd, w.buf, 0, w.buf.length, offset)
    }
    return {buf: w.buf, start: w.start, end: w.end, final: w.end >= w.size}
  }
}

/** A CSV record's fields as export-reader makes them an object: empty cells null, the guard undone. */
function csvObject(fields: string[], header: readonly string[]): FlatRecord {
  const rec: FlatRecord = {}
  for (let i = 0; i < header.length; i++) {
    const v = fields[i]!
    rec[header[i]!] = v === '' ? null : unguardCell(v)
  }
  return rec
}
