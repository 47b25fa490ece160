import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {Worker} from 'node:worker_threads'

import {ExportFileError} from '../io/export-reader.js'
import {scanWorkerFile, takePrestartedWorker} from './prestart.js'
import {scanSide, type ScanRequest, type SideScan} from './scan.js'

/**
 * The worker file of the built CLI (scripts/build.mjs makes dist/change-scan-worker.js beside
 * dist/chunks/, where this module's code is); undefined when running from the sources (the tests), where
 * the sides are scanned on the main thread one after the other.
 */
export function scanWorkerUrl(): URL | undefined {
  const url = scanWorkerFile(new URL('../sfl.js', import.meta.url))
  return url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : undefined
}

/**
 * A worker thread started before its scan is known, so that its start and module loading (0.05-0.2 s)
 * overlap the checks and set-up before the comparison (issue 32). It scans one side, once; unused, it
 * never holds the process open.
 */
export class ScanWorker {
  private readonly worker: Worker
  private readonly result: Promise<SideScan>
  private label = 'a side'
  private used = false

  private constructor(url: URL) {
    // the one the CLI's entry started for this command, when there is one (src/changes/prestart.ts)
    this.worker = takePrestartedWorker(url) ?? new Worker(url)
    this.worker.unref()
    this.result = new Promise<SideScan>((resolve, reject) => {
      this.worker.once('message', (m: {scan?: SideScan; error?: WorkerError}) => {
        if (m.scan) resolve(m.scan)
        else reject(rebuild(m.error!))
      })
      this.worker.once('error', reject)
      this.worker.once('exit', (code) =>
        reject(new Error(`the scan of ${this.label} stopped (exit ${code})`)),
      )
    })
    // a worker that fails before its scan is asked for reports it then
    this.result.catch(() => undefined)
  }

  /** A worker of the built CLI's worker file, or undefined without one (src/changes/scan-run.ts `scanWorkerUrl`). */
  static start(url: URL | undefined): ScanWorker | undefined {
    return url ? new ScanWorker(url) : undefined
  }

  /** The worker the CLI's entry started ahead, ended unused (the command scans on one thread after all). */
  static dropPrestarted(url: URL | undefined): void {
    if (url) void takePrestartedWorker(url)?.terminate()
  }

  /** The file the scan will likely read, told ahead (src/changes/scan-worker.ts `warm`); nothing is answered. */
  warm(path: string): void {
    if (!this.used) this.worker.postMessage({warm: path})
  }

  scan(req: ScanRequest): Promise<SideScan> {
    if (this.used) throw new Error('a scan worker scans one side')
    this.used = true
    this.label = req.label
    this.worker.ref()
    this.worker.postMessage(req)
    return this.result
  }

  async end(): Promise<void> {
    await this.worker.terminate()
  }
}

/**
 * Scan both sides of a comparison: with `worker` (a worker file, or a worker already started for the
 * second side), the first here and the others each on a worker thread, at once (the scans share nothing,
 * so on two cores the wall time is the longer one's); without, one after the other here. A failure here
 * ends the workers' scans; a worker's failure is thrown once this thread's scan is done.
 *
 * The main thread would only wait for the scans, so it takes one itself: one thread fewer to start and
 * load modules into (issue 32: about 0.1 s of CPU each), and the page decoder the read-back runs
 * afterwards (src/changes/read.ts) is already compiled here, not cold.
 */
export async function scanSides(
  reqs: ScanRequest[],
  worker: URL | ScanWorker | undefined,
): Promise<SideScan[]> {
  if (!worker) {
    const out: SideScan[] = []
    for (const r of reqs) out.push(await scanSide(r))
    return out
  }
  const workers: ScanWorker[] = []
  let answered = false
  try {
    const others = reqs.slice(1).map((r, i) => {
      const w = i === 0 && worker instanceof ScanWorker ? worker : ScanWorker.start(urlOf(worker))!
      workers.push(w)
      return w.scan(r)
    })
    // a failure here or on a worker: the other scans' results are not awaited (their workers end below)
    for (const p of others) p.catch(() => undefined)
    const here = reqs.length ? [await scanSide(reqs[0]!)] : []
    const scans = [...here, ...(await Promise.all(others))]
    answered = true
    return scans
  } finally {
    // Workers that answered have nothing left to do and end in the background: a thread's teardown took
    // 10-20 ms that the comparison waited for (issue 32, CPU profile). After a failure each is waited for,
    // so that none still writes into the scratch folder when it is removed.
    const ending = Promise.all(workers.map((w) => w.end()))
    if (answered) ending.catch(() => undefined)
    else await ending
  }
}

function urlOf(worker: URL | ScanWorker): URL {
  if (worker instanceof URL) return worker
  throw new Error('a started worker scans one side: give the worker file for more')
}

interface WorkerError {
  message: string
  usage: boolean
  code?: string
}

/** A worker's error as the main thread throws it: the user's to fix (exit 2) or unexpected, with its code. */
function rebuild(e: WorkerError): Error {
  if (e.usage) return new ExportFileError(e.message)
  return Object.assign(new Error(e.message), e.code === undefined ? {} : {code: e.code})
}
