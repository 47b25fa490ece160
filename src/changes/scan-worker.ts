import {parentPort, workerData} from 'node:worker_threads'

import {UsageError} from '../errors.js'
import type {ChangeRecord} from './cells.js'
import {RecordReader} from './read.js'
import {ROW_BATCH} from './row-source.js'
import {scanSide, type ReadBackFile, type ScanRequest} from './scan.js'

/**
 * The worker thread of one side (src/changes/scan-run.ts), built as its own entry,
 * dist/change-scan-worker.js (scripts/build.mjs). Given a ScanRequest it scans the side, posts the result
 * or the error (its message, whether it is the user's to fix, its code). A side of text files then ends; a
 * side with Parquet files stays to read its changed records back (src/changes/row-source.ts WorkerRows:
 * `begin` a county's reads, `more` for each next batch) until it is terminated.
 */
const port = parentPort!
scanSide(workerData as ScanRequest).then(
  (scan) => {
    // a side with Parquet files stays to read its records back: its decoders are compiled and warm
    const serving = scan.files.some((f) => f.kind === 'parquet')
    port.postMessage({scan, serving})
    if (serving) serve(scan.files)
  },
  (error: Error & {code?: string}) =>
    port.postMessage({
      error: {message: error.message, usage: error instanceof UsageError, code: error.code},
    }),
)

function serve(files: ReadBackFile[]): void {
  const opened = RecordReader.create(files)
  let batches: Generator<ChangeRecord[]> | undefined
  port.on('message', (m: {begin?: {files: Uint16Array; offsets: Float64Array}; more?: true}) => {
    opened
      .then((reader) => {
        if (m.begin) batches = reader.inOrder(m.begin.files, m.begin.offsets, ROW_BATCH)
        const b = batches?.next()
        port.postMessage({rows: b && !b.done ? b.value : []})
      })
      .catch((error: Error & {code?: string}) =>
        port.postMessage({error: {message: error.message, code: error.code}}),
      )
  })
}
