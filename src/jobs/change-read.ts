import {closeSync, fstatSync, openSync, readSync} from 'node:fs'

import {unguardCell, type FlatRecord} from '../io/export-reader.js'
import {csvRecordAt} from './change-scan-csv.js'
import {jsonLineRecord, jsonLineText} from './change-scan-json.js'
import type {ReadBackFile} from './change-scan.js'

const WINDOW = 64 * 1024
const LF = 0x0a

/**
 * Reads back, by file and byte offset, the few records a comparison writes out (src/jobs/changes.ts),
 * as src/io/export-reader.ts gives them: the same record object, so a change row is what it was when
 * every record was read as an object. Reads go through a 64 KiB window: the records asked for come in
 * file order nearly always (added rows in the current export's order, the rest in the previous one's).
 */
export class RecordReader {
  private readonly fds = new Map<number, {fd: number; size: number}>()
  private win = {file: -1, start: 0, end: 0, buf: Buffer.alloc(0)}

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
    for (const {fd} of this.fds.values()) closeSync(fd)
    this.fds.clear()
  }

  /** At least `size` bytes from `offset` (fewer at the end of the file), from the window when it has them. */
  private window(file: number, offset: number, size: number) {
    let h = this.fds.get(file)
    if (!h) {
      const fd = openSync(this.files[file]!.path, 'r')
      h = {fd, size: fstatSync(fd).size}
      this.fds.set(file, h)
    }
    const want = Math.min(offset + size, h.size)
    const w = this.win
    if (w.file !== file || offset < w.start || w.end < want) {
      if (w.buf.length < size) w.buf = Buffer.allocUnsafe(Math.max(size, WINDOW))
      const n = readSync(h.fd, w.buf, 0, Math.max(size, WINDOW), offset)
      Object.assign(w, {file, start: offset, end: offset + n})
    }
    return {buf: w.buf, start: w.start, end: w.end, final: w.end >= h.size}
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
