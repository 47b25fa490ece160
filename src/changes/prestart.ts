import {existsSync, statSync} from 'node:fs'
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
  if (!scanWorkerWanted(sidesOf(argv.slice(1)))) return
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

/**
 * Both sides' files together below this many bytes are scanned by one thread, one after the other; above,
 * the current side on a worker thread. On these machines a second thread scans at about two thirds of the
 * speed, and its start competes with the first's (issue 32, docs/performance.md "Fifth session").
 * Measured crossovers: two Parquet files of 100,000 records (9 MB) 0.92x the wall time on one thread, of
 * 200,000 (18 MB) 1.01x; two CSV files of 30,000 records (16 MB) 1.01x, of 60,000 (32 MB) 1.04x; one
 * thread always took 0.85-0.93x the CPU. With V8's optimising compiler kept off the second core for
 * Parquet runs (src/cli/jit-budget.ts): 0.97x at 100,000 records a side, 1.06x at 200,000 ("Seventh session").
 */
export const SCAN_WORKER_BYTES = 16 * 1024 * 1024

/**
 * Whether a comparison of the sides `paths` scans one of them on a worker thread: yes unless every one is
 * a regular file and together they are below SCAN_WORKER_BYTES (a folder, an `s3://` side or a path that
 * cannot be read: yes, as before). SFL_SCAN_WORKER_BYTES sets another bound (the tests' worker path).
 */
export function scanWorkerWanted(paths: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  // a value that is not a whole number of bytes is ignored (NaN would have meant one thread, silently)
  const given = Number(env['SFL_SCAN_WORKER_BYTES'])
  const bound = Number.isSafeInteger(given) && given > 0 ? given : SCAN_WORKER_BYTES
  let total = 0
  for (const p of paths) {
    try {
      const st = statSync(p)
      if (!st.isFile()) return true
      total += st.size
    } catch {
      return true
    }
  }
  return total >= bound
}

/**
 * `sfl changes`' positional arguments in `argv` (after the command), as its parser will find them in the
 * usual lines: every word that is not a flag or the value of one that takes a value (src/cli/local-commands.ts
 * `changesTable`; test/changes/prestart.test.ts holds the list to it). A guess at the entry, before the
 * command loads: the command decides again from the parsed arguments.
 */
export function sidesOf(argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (VALUE_FLAGS.has(a)) i++
    else if (!a.startsWith('-') || a === '-') out.push(a)
  }
  return out
}

/** The flags of `sfl changes` that take a value in the next word. */
export const VALUE_FLAGS: ReadonlySet<string> = new Set([
  '--out',
  '--output',
  '-o',
  '--fips',
  '--ignore-fields',
])
