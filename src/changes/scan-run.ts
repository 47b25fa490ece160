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

/**
 * Scan both sides of a comparison: with `worker`, the first here and the others each on its own thread,
 * at once (the scans share nothing, so on two cores the wall time is the longer one's); without, one
 * after the other here. A failure here ends the workers' scans; a worker's failure is thrown once this
 * thread's scan is done.
 *
 * The main thread would only wait for the scans, so it takes one itself: one thread fewer to start and
 * load modules into (issue 32: about 0.1 s of CPU each), and the page decoder the read-back runs
 * afterwards (src/changes/read.ts) is already compiled here, not cold.
 */
export async function scanSides(reqs: ScanRequest[], worker: URL | undefined): Promise<SideScan[]> {
  if (!worker) {
    const out: SideScan[] = []
    for (const r of reqs) out.push(await scanSide(r))
    return out
  }
  const workers: Worker[] = []
  try {
    const others = reqs.slice(1).map((r) => onWorker(worker, r, workers))
    // a failure here or on a worker: the other scans' results are not awaited (their workers end below)
    for (const p of others) p.catch(() => undefined)
    const here = reqs.length ? [await scanSide(reqs[0]!)] : []
    return [...here, ...(await Promise.all(others))]
  } finally {
    await Promise.all(workers.map((w) => w.terminate()))
  }
}

function onWorker(worker: URL, r: ScanRequest, workers: Worker[]): Promise<SideScan> {
  return new Promise<SideScan>((resolve, reject) => {
    const w = new Worker(worker, {workerData: r})
    workers.push(w)
    w.once('message', (m: {scan?: SideScan; error?: {message: string; usage: boolean; code?: string}}) => {
      if (m.scan) resolve(m.scan)
      else reject(rebuild(m.error!))
    })
    w.once('error', reject)
    w.once('exit', (code) => reject(new Error(`the scan of ${r.label} stopped (exit ${code})`)))
  })
}

/** A worker's error as the main thread throws it: the user's to fix (exit 2) or unexpected, with its code. */
function rebuild(e: {message: string; usage: boolean; code?: string}): Error {
  if (e.usage) return new ExportFileError(e.message)
  return Object.assign(new Error(e.message), e.code === undefined ? {} : {code: e.code})
}
