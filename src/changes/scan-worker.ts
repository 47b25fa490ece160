import {parentPort} from 'node:worker_threads'

import {UsageError} from '../errors.js'
import {exportFormatOf} from '../io/export-reader.js'
import {ParquetColumns} from '../io/parquet-reader.js'
import {scanSide, type ScanRequest} from './scan.js'

/**
 * The worker thread of one side's scan (src/changes/scan-run.ts): started ahead, it waits for its
 * request, scans, posts the result or the error (its message, whether it is the user's to fix, its code),
 * and ends. Built as its own entry, dist/change-scan-worker.js (scripts/build.mjs).
 *
 * While it waits it may be told the file it will likely scan (`warm`): a Parquet file's footer is read then
 * (src/io/parquet-reader.ts keeps its reading by its bytes), while the main thread still checks the sides,
 * instead of after the request (18 ms at 200,000 records, cold). Nothing is said of it: what is wrong with
 * the file, the main thread's check or the scan says.
 */
parentPort!.on('message', (m: {warm: string} | ScanRequest) => {
  if ('warm' in m) {
    void warm(m.warm)
    return
  }
  scanSide(m).then(
    (scan) => parentPort!.postMessage({scan}),
    (error: Error & {code?: string}) =>
      parentPort!.postMessage({
        error: {message: error.message, usage: error instanceof UsageError, code: error.code},
      }),
  )
})

async function warm(path: string): Promise<void> {
  try {
    if ((await exportFormatOf(path)) === 'parquet') (await ParquetColumns.open(path)).close()
  } catch {
    // the check on the main thread, or the scan, says what is wrong
  }
}
