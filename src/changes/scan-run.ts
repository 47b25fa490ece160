import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {Worker} from 'node:worker_threads'

import {ExportFileError} from '../io/export-reader.js'
import {scanSide, type ScanRequest, type SideScan} from './scan.js'

/**
 * The worker file of the built CLI (scripts/build.mjs makes dist/change-scan-worker.js beside
 * dist/chunks/, where this module's code is); undefined when running from the sources (the tests), where
 * the sides are scanned on the main thread one after the other.
 */
export function scanWorkerUrl(): URL | undefined {
  const url = new URL('../change-scan-worker.js', import.meta.url)
  return url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : undefined
}

/** A side scanned, and the worker that stays to read its records back (a side with Parquet files). */
export interface ScannedSide {
  scan: SideScan
  worker?: Worker | undefined
}

/**
 * A worker's young generation, MB (V8's default here is 48): a scan's garbage is short-lived and small,
 * and a worker that stays to read records back would otherwise keep the larger one resident.
 */
const YOUNG_MB = 16

/**
 * Scan both sides of a comparison: with `worker`, each on its own thread at once (the two scans share
 * nothing, so on two cores the wall time is the longer one's); without, one after the other here.
 * The first failure stops the other scan. A worker that stays to serve its side's records (scan-worker.ts)
 * is the caller's to terminate.
 */
export async function scanSides(reqs: ScanRequest[], worker: URL | undefined): Promise<ScannedSide[]> {
  if (!worker) {
    const out: ScannedSide[] = []
    for (const r of reqs) out.push({scan: await scanSide(r)})
    return out
  }
  const workers: Worker[] = []
  const serving = new Set<Worker>()
  let done = false
  try {
    const out = await Promise.all(
      reqs.map(
        (r) =>
          new Promise<ScannedSide>((resolve, reject) => {
            const w = new Worker(worker, {
              workerData: r,
              resourceLimits: {maxYoungGenerationSizeMb: YOUNG_MB},
            })
            workers.push(w)
            w.once(
              'message',
              (m: {
                scan?: SideScan
                serving?: boolean
                error?: {message: string; usage: boolean; code?: string}
              }) => {
                if (!m.scan) return reject(rebuild(m.error!))
                if (m.serving) serving.add(w)
                resolve({scan: m.scan, worker: m.serving ? w : undefined})
              },
            )
            w.once('error', reject)
            w.once('exit', (code) => reject(new Error(`the scan of ${r.label} stopped (exit ${code})`)))
          }),
      ),
    )
    done = true
    return out
  } finally {
    await Promise.all(workers.filter((w) => !done || !serving.has(w)).map((w) => w.terminate()))
  }
}

/** A worker's error as the main thread throws it: the user's to fix (exit 2) or unexpected, with its code. */
function rebuild(e: {message: string; usage: boolean; code?: string}): Error {
  if (e.usage) return new ExportFileError(e.message)
  return Object.assign(new Error(e.message), e.code === undefined ? {} : {code: e.code})
}
