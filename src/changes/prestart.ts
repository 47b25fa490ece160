import {existsSync} from 'node:fs'
import type {Worker} from 'node:worker_threads'

/**
 * `sfl changes`' scan worker started by the CLI's entry (src/cli/main.ts), before oclif and the command's
 * modules load: a worker thread's own start-up (Node's bootstrap, then the scan's modules) took
 * 0.1-0.25 s and was the longest path of a Parquet comparison (issue 32), the main thread waiting for it
 * after its own side was scanned. Started here, it boots on the second core while the first loads the
 * command. This module imports only built-ins, as the entry must (scripts/build.mjs ENTRY_INPUTS).
 *
 * The entry (dist/sfl.js) and the commands (dist/chunks/) are separate bundles, each with its own copy of
 * a module's variables, so the worker is handed over through the global symbol registry.
 */
const SLOT = Symbol.for('sfl.changes.prestartedScanWorker')

interface Prestarted {
  worker: Worker
  href: string
  exited: boolean
}

/** The worker file beside the entry's bundle (scripts/build.mjs: dist/change-scan-worker.js). */
export function scanWorkerFile(entryUrl: string | URL): URL {
  return new URL('./change-scan-worker.js', entryUrl)
}

/**
 * Start the scan worker when the command is `sfl changes` (not its help): unreferenced, so a run that
 * never uses it (a usage error, an s3:// side that cannot be read) still ends at once. A worker that fails
 * to start is noted, never thrown: the command then starts its own.
 */
export async function prestartScanWorker(argv: readonly string[], entryUrl: string | URL): Promise<void> {
  if (argv[0] !== 'changes' || argv.includes('--help') || argv.includes('-h')) return
  const url = scanWorkerFile(entryUrl)
  if (url.protocol !== 'file:' || !existsSync(url)) return
  // loaded here, not at the entry's top: every other command (a single lookup above all) starts without it
  const {Worker} = await import('node:worker_threads')
  let worker: Worker
  try {
    worker = new Worker(url)
  } catch {
    return // no thread to be had now (the machine's limits): the command starts its own, and says so if it fails
  }
  worker.unref()
  const p: Prestarted = {worker, href: url.href, exited: false}
  worker.on('error', () => undefined)
  worker.once('exit', () => {
    p.exited = true
  })
  ;(globalThis as Record<symbol, unknown>)[SLOT] = p
}

/**
 * The worker `prestartScanWorker` started for the worker file `url`, once, while it is alive; undefined
 * otherwise (none started, another file, or it ended), when the caller starts its own.
 */
export function takePrestartedWorker(url: URL): Worker | undefined {
  const g = globalThis as Record<symbol, unknown>
  const p = g[SLOT] as Prestarted | undefined
  delete g[SLOT]
  if (!p) return undefined
  if (p.exited || p.href !== url.href) {
    void p.worker.terminate()
    return undefined
  }
  p.worker.removeAllListeners()
  return p.worker
}
