import {fdatasync, type WriteStream} from 'node:fs'
import {join} from 'node:path'

import type {Redacted} from '../api/secrets.js'
import {localIoError} from '../io/fs-errors.js'
import {openPartStream, removeFile} from '../io/private-files.js'
import {readCsv} from '../io/csv-reader.js'
import {countLines} from '../io/lines.js'
import {CsvRowEncoder} from './cells.js'
import type {Rejected} from './records.js'
import type {RecordView} from './view.js'

/**
 * The spool stage: part files, one per page of a county (CSV: one per page and column layout), in the
 * run's parts folder (0700, made by the run). A part is journaled only after its body was read to the end
 * and the file closed, so a resumed run never keeps half a page; a retried page starts its part afresh.
 */
export interface PagePart {
  n: number
  /** Records written (after duplicates and rejected records). */
  records: number
  /** NDJSON and JSON: the page's records as sent, one a line. */
  file: string
  /**
   * CSV: the page's rows, already formatted, in one file per column layout (a layout changes when a
   * record brings a new column); `layout` indexes the run's layouts.
   */
  segments?: Segment[]
  /** Records of the page skipped: broken, over a cap, or breaking the spec with --strict. */
  rejected?: Rejected[]
  /** Records dropped as repeats of a ServicePropertyID the county already had. */
  duplicates?: number
  /** Records `--where` did not keep (not in the part files). */
  filtered?: number
  /**
   * Their ServicePropertyIDs, until the page is journaled (then dropped from memory): a resumed county
   * takes them back from the checkpoint, as it takes the kept ones from the part files.
   */
  filteredIds?: number[]
  /** Records that break the spec's rules (written), by field name. */
  violations?: Record<string, number>
  /** The page's URL in canonical form (src/pipeline/pages.ts), for the loop check of a resumed run. */
  url?: string
}

/** A part file's name: the county, the page, for CSV the segment (nothing else: no folder, no `..`). */
export const PART_NAME = /^\d{5}-\d{5,6}(-\d{1,6})?\.(ndjson|csv)$/

export interface Segment {
  file: string
  layout: number
  records: number
}

const NL = Buffer.from('\n')
const BATCH = 256 * 1024

export class PartFile {
  private failure: Error | undefined

  private constructor(
    readonly path: string,
    private readonly stream: WriteStream,
    private readonly fd: number,
    private readonly syncEvery: number,
  ) {
    stream.on('error', (error) => (this.failure ??= error))
  }

  /**
   * `syncEvery` bytes: start the disk's write-back of what was written so far each time that many more
   * went out (an NDJSON part that becomes the output: the commit's fsync then waits for the last stretch
   * only, not for the whole county; npm run bench counts that wait in the export's wall time).
   */
  static async create(path: string, opts: {syncEvery?: number} = {}): Promise<PartFile> {
    let part: {fd: number; stream: WriteStream}
    try {
      // 0600, created or cut to nothing, never through a link (the output gate's part file)
      part = openPartStream(path)
    } catch (error) {
      throw localIoError(error, 'writing the part file', path)
    }
    return new PartFile(path, part.stream, part.fd, opts.syncEvery ?? 0)
  }

  private unsynced = 0

  /** Bytes handed to the stream: past `syncEvery`, an fdatasync on the thread pool (its result is not waited for: the commit's fsync reports any failure). */
  private wrote(bytes: number): void {
    if (this.syncEvery === 0) return
    this.unsynced += bytes
    if (this.unsynced < this.syncEvery) return
    this.unsynced = 0
    fdatasync(this.fd, () => undefined)
  }

  /**
   * Records are copied into one batch buffer and handed to the stream about 256 KiB at a time: a write per
   * record (two with its newline) cost the NDJSON export about 400,000 stream writes per 200,000 records,
   * where the byte copy it is measured against (npm run bench) writes once per response chunk. CSV rows
   * are encoded into the same buffer as they come rather than gathered as strings or Buffers: a batch of
   * objects lives through many young-generation collections (each copies it), which grew V8's new space to
   * its 32 MB maximum on a CSV export; bytes outside the heap are never copied (npm run bench: peak RSS).
   */
  private batch: Buffer | undefined
  private batchBytes = 0

  /** Write one record's bytes (redacted: src/api/secrets.ts) and its newline. */
  write(bytes: Redacted<Uint8Array>): void {
    const n = bytes.length + 1
    if (this.batchBytes + n > BATCH) this.flushBatch()
    if (n > BATCH) {
      this.stream.write(Buffer.concat([bytes, NL]))
      this.wrote(n)
      return
    }
    const buf = (this.batch ??= Buffer.allocUnsafe(BATCH))
    buf.set(bytes, this.batchBytes)
    buf[this.batchBytes + n - 1] = 0x0a
    this.batchBytes += n
  }

  /** Write the record in `view` as one CSV row in `columns` (src/pipeline/cells.ts), encoded into the batch buffer. */
  writeRow(encoder: CsvRowEncoder, view: RecordView, columns: Int32Array): void {
    const most = CsvRowEncoder.bound(view, columns)
    if (this.batchBytes + most > BATCH) this.flushBatch()
    if (most > BATCH) {
      const own = Buffer.allocUnsafe(most)
      this.stream.write(own.subarray(0, encoder.encode(view, columns, own, 0)))
      return
    }
    const buf = (this.batch ??= Buffer.allocUnsafe(BATCH))
    this.batchBytes = encoder.encode(view, columns, buf, this.batchBytes)
  }

  /** Write text as it is (a CSV row with its line end). */
  writeText(text: string): void {
    // at most 3 UTF-8 bytes per UTF-16 unit (a surrogate pair's 4 bytes count as its 2 units' 6)
    const most = text.length * 3
    if (this.batchBytes + most > BATCH) this.flushBatch()
    if (most > BATCH) {
      this.stream.write(text)
      return
    }
    const buf = (this.batch ??= Buffer.allocUnsafe(BATCH))
    this.batchBytes += buf.write(text, this.batchBytes)
  }

  private flushBatch(): void {
    if (this.batchBytes === 0) return
    // the stream keeps the bytes until written: the next rows go to a fresh buffer
    this.stream.write(this.batch!.subarray(0, this.batchBytes))
    this.wrote(this.batchBytes)
    this.batch = undefined
    this.batchBytes = 0
  }

  get needsDrain(): boolean {
    return this.stream.writableNeedDrain
  }

  async drain(): Promise<void> {
    if (!this.failure)
      await new Promise<void>((resolve) => {
        // both listeners go when either fires: a close listener left behind per drain piles up over a
        // county's thousands of drains (Node warned of a listener leak on the 11th)
        const done = () => {
          this.stream.off('drain', done)
          this.stream.off('close', done)
          resolve()
        }
        this.stream.on('drain', done)
        this.stream.on('close', done)
      })
    if (this.failure) throw localIoError(this.failure, 'writing the part file', this.path)
  }

  async close(): Promise<void> {
    this.flushBatch()
    if (!this.stream.closed)
      await new Promise<void>((resolve) => {
        this.stream.once('close', resolve)
        this.stream.end()
      })
    if (this.failure) throw localIoError(this.failure, 'writing the part file', this.path)
  }

  async discard(): Promise<void> {
    this.batch = undefined
    this.batchBytes = 0
    this.stream.destroy()
    await removeFile(this.path)
  }
}

/**
 * On resume: does every part file hold exactly the records the journal says? The first problem, or none.
 * The names were checked when the journal was read (PART_NAME): plain names inside the parts folder.
 */
export async function verifyPages(dir: string, pages: readonly PagePart[]): Promise<string | undefined> {
  for (const p of pages) {
    const files = p.segments
      ? p.segments.map((s) => ({path: join(dir, s.file), records: s.records, csv: true}))
      : [{path: join(dir, p.file), records: p.records, csv: false}]
    for (const f of files) {
      let n = 0
      try {
        if (f.csv) for await (const _ of readCsv(f.path)) n++
        else n = await countLines(f.path)
      } catch {
        return `the part file ${f.path} is missing or damaged`
      }
      if (n !== f.records)
        return `the part file ${f.path} holds ${n} records where the checkpoint says ${f.records}`
    }
  }
  return undefined
}
