import {parentPort} from 'node:worker_threads'

import {UsageError} from '../errors.js'
import {scanSide, type ScanRequest} from './scan.js'

/**
 * The worker thread of one side's scan (src/changes/scan-run.ts): started ahead, it waits for its
 * request, scans, posts the result or the error (its message, whether it is the user's to fix, its code),
 * and ends. Built as its own entry, dist/change-scan-worker.js (scripts/build.mjs).
 */
parentPort!.once('message', (req: ScanRequest) => {
  scanSide(req).then(
    (scan) => parentPort!.postMessage({scan}),
    (error: Error & {code?: string}) =>
      parentPort!.postMessage({
        error: {message: error.message, usage: error instanceof UsageError, code: error.code},
      }),
  )
})
