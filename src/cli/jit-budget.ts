import {closeSync, openSync, readSync, statSync} from 'node:fs'

import {setV8FlagBelow, setV8Flags} from './wasm-budget.js'

/**
 * V8 before 12 (Node 20) optimises a JavaScript function with TurboFan once it has run 67,584 bytes of
 * bytecode since its budget was last reset (`--interrupt-budget`), on background threads. A run that reads
 * only Parquet files (`sfl changes`, `sfl stats`) spends its time in the WebAssembly kernel
 * (src/changes/kernel/), and its JavaScript runs many functions briefly: at the default budget V8
 * optimised dozens of them, 0.2 s of CPU for `sfl changes` of two 200,000-record files (`perf record`:
 * OptimizingCompileDispatcher), on the core the scan's worker thread needs. Fifteen times the budget leaves
 * that to the functions that run long (docs/performance.md "Seventh session of 2026-11-29"). Not for CSV or
 * NDJSON, whose parsers are JavaScript that must be optimised early (1.05x slower with it), and never from
 * the library (a process-wide flag is its host's to set). V8 12 and later tier by invocation counts
 * (Maglev, then TurboFan) and have no such flag: nothing is set there.
 */
export const JS_INTERRUPT_BUDGET = 1_000_000

/** Raise the budget for a run of the kernel (see above); whether it was set. */
export function raiseJsTieringBudget(
  v8Version: string = process.versions.v8,
  setFlags: (flags: string) => void = setV8Flags,
): boolean {
  return setV8FlagBelow(12, `--interrupt-budget=${JS_INTERRUPT_BUDGET}`, v8Version, setFlags)
}

/**
 * Whether each of `paths` is a Parquet file as src/io/export-reader.ts `exportFormatOf` would call it (its
 * name ends in .parquet, or it begins with PAR1), read at the CLI's entry, before anything loads: the
 * earlier the budget is raised, the fewer functions are optimised at the old one (0.96x the wall of
 * raising it after the sides are checked). A folder, a missing file or an `s3://` side: false (the run
 * decides again once the sides are found, src/io/export-files.ts `allParquet`).
 */
export function parquetFiles(paths: readonly string[]): boolean {
  if (paths.length === 0) return false
  for (const p of paths) {
    let fd: number | undefined
    try {
      // a regular file only: opening a named pipe would wait for its writer (the run then says what it is)
      if (!statSync(p).isFile()) return false
      if (/\.parquet$/i.test(p)) continue
      fd = openSync(p, 'r')
      const head = Buffer.alloc(4)
      if (readSync(fd, head, 0, 4, 0) !== 4 || head.toString('latin1') !== 'PAR1') return false
    } catch {
      return false
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }
  return true
}
