/**
 * What must not outlive a process that exits at once (a second Ctrl-C, a closed stdout: src/cli/session.ts):
 * a lock, a scratch folder, a temp file beside an output. A module of its own, importing nothing, so that
 * every file that makes such a thing (src/io/atomic-file.ts, src/io/private-files.ts, src/jobs/run.ts) can
 * register its removal without importing the others.
 */
const cleanups = new Set<() => void>()

/** Register a synchronous clean-up for an immediate exit; returns its removal. */
export function onImmediateExit(fn: () => void): () => void {
  cleanups.add(fn)
  return () => cleanups.delete(fn)
}

/** Run every clean-up registered (synchronously, nothing else runs after), each one at most once. */
export function runExitCleanups(): void {
  for (const fn of cleanups) {
    try {
      fn()
    } catch {
      // best effort: the process is leaving
    }
  }
  cleanups.clear()
}
