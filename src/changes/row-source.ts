import type {Worker} from 'node:worker_threads'

import type {ChangeRecord} from './cells.js'
import type {RecordReader} from './read.js'

/**
 * Where a side's changed records come from (src/changes/compare.ts): `begin` names a county's reads in
 * the order they will be made (file indexes and offsets, as entryRef gives them), `next` gives each
 * record in turn.
 */
export interface RowSource {
  begin(files: Uint16Array, offsets: Float64Array): void
  next(): ChangeRecord | Promise<ChangeRecord>
  close(): void
}

/** Records this many at a time: a batch is decoded while the one before is written. */
export const ROW_BATCH = 1024

/** The records read here, on the thread that compares (the tests; a side of text files). */
export class LocalRows implements RowSource {
  private batches: Generator<ChangeRecord[]> | undefined
  private batch: ChangeRecord[] = []
  private at = 0

  constructor(private readonly reader: RecordReader) {}

  begin(files: Uint16Array, offsets: Float64Array): void {
    this.batches = this.reader.inOrder(files, offsets, ROW_BATCH)
    this.batch = []
    this.at = 0
  }

  next(): ChangeRecord {
    if (this.at === this.batch.length) {
      const b = this.batches?.next()
      if (!b || b.done) throw new Error('a record read past the county’s reads')
      this.batch = b.value
      this.at = 0
    }
    return this.batch[this.at++]!
  }

  close(): void {
    this.reader.close()
  }
}

/** A message of a serving scan worker (src/changes/scan-worker.ts). */
export interface RowsMessage {
  rows?: ChangeRecord[]
  error?: {message: string; code?: string | undefined}
}

/**
 * The records read by the side's scan worker, which stays to serve them (a side with Parquet files:
 * decoding a row group's pages again costs as much as its scan, so the two sides decode at once, each on
 * its thread, and while this thread writes). One batch is asked ahead of the one being used, so memory
 * holds two batches whatever the number of changes.
 */
export class WorkerRows implements RowSource {
  private batch: ChangeRecord[] = []
  private at = 0
  private readonly ready: ChangeRecord[][] = []
  private asked = 0
  private total = 0
  private waiting: {resolve: () => void; reject: (e: Error) => void} | undefined
  private failure: Error | undefined

  constructor(private readonly worker: Worker) {
    worker.on('message', (m: RowsMessage) => {
      if (m.rows) this.ready.push(m.rows)
      else if (m.error)
        this.fail(Object.assign(new Error(m.error.message), m.error.code ? {code: m.error.code} : {}))
      this.wake()
    })
    worker.on('error', (e) => this.fail(e))
    worker.on('exit', (code) => this.fail(new Error(`the read-back thread stopped (exit ${code})`)))
  }

  begin(files: Uint16Array, offsets: Float64Array): void {
    this.total = Math.ceil(files.length / ROW_BATCH)
    this.batch = []
    this.at = 0
    this.ready.length = 0
    this.asked = this.total > 0 ? 1 : 0
    if (this.total > 0) this.worker.postMessage({begin: {files, offsets}})
  }

  next(): ChangeRecord | Promise<ChangeRecord> {
    if (this.at < this.batch.length) return this.batch[this.at++]!
    return this.take().then(() => this.batch[this.at++]!)
  }

  close(): void {
    this.failure ??= new Error('closed')
    void this.worker.terminate()
  }

  /** The next batch made current, and the one after it asked for. */
  private async take(): Promise<void> {
    while (this.ready.length === 0) {
      if (this.failure) throw this.failure
      await new Promise<void>((resolve, reject) => (this.waiting = {resolve, reject}))
    }
    this.batch = this.ready.shift()!
    this.at = 0
    if (this.asked < this.total) {
      this.asked++
      this.worker.postMessage({more: true})
    }
  }

  private wake(): void {
    const w = this.waiting
    this.waiting = undefined
    w?.resolve()
  }

  private fail(e: Error): void {
    this.failure ??= e
    const w = this.waiting
    this.waiting = undefined
    w?.reject(this.failure)
  }
}
