import {changesFlagsChecked, changesRequest} from './changes-flags.js'
import {changesDocument, type ChangesDocument} from './json-output.js'
import {raiseJsTieringBudget} from './jit-budget.js'
import type {LocalIo} from './local-io.js'
import {withCleanInterrupt} from './session.js'
import {changeSummaryLine, compareExports, oneSidedNotices} from '../changes/compare.js'
import {scanWorkerWanted} from '../changes/prestart.js'
import {ScanWorker, scanWorkerUrl} from '../changes/scan-run.js'
import {allParquet} from '../io/export-files.js'
import {withLocalExports} from '../io/export-source.js'

/** `sfl changes` as parsed: its two sides and flags. */
export interface ChangesInput {
  previous: string
  current: string
  out?: string | undefined
  output?: 'csv' | 'ndjson' | 'json' | undefined
  ignoreFields?: string[] | undefined
  fips?: string[] | undefined
  exitCode: boolean
  /** --json: the summary document goes to stdout (the caller prints it), so the change file needs --out. */
  json: boolean
}

/**
 * `sfl changes`' run (src/cli/local-commands.ts `runChanges`, which loads this module when a comparison
 * runs), its modules imported statically: the loader reads this one's whole graph at once, where one
 * import() after another made each module wait for the one before (read, compiled, run). 0.94x the wall of
 * a comparison of two small files, 0.98x at 100,000 records a side (farm-bench in both orders, against the
 * imports asked for together but one by one).
 */
export async function runChangesNow(input: ChangesInput, io: LocalIo): Promise<ChangesDocument> {
  const flags = {
    out: input.out,
    output: input.output,
    ignoreFields: input.ignoreFields,
    fips: input.fips,
    json: input.json,
  }
  // the flags first, so a mistake costs no download of an s3:// side
  await changesFlagsChecked(flags)
  // the worker thread starts now: its start overlaps the modules loaded and the sides checked below; two
  // small files are scanned on this thread alone (src/changes/prestart.ts SCAN_WORKER_BYTES)
  const url = scanWorkerUrl()
  const wanted = scanWorkerWanted([input.previous, input.current])
  if (!wanted) ScanWorker.dropPrestarted(url)
  const worker = wanted ? ScanWorker.start(url) : undefined
  try {
    io.debugLine(
      `sfl changes: ${worker ? 'one side on a worker thread, the other on this one' : 'both sides on the main thread'}`,
    )
    // an s3:// side is read through a private local copy (src/io/export-source.ts), then checked as a file
    const s = await withLocalExports([input.previous, input.current], async ([previous, current]) => {
      worker?.warm(current!)
      const req = await changesRequest({...flags, previous: previous!, current: current!})
      // a run of the kernel (src/cli/jit-budget.ts): a folder's files known now; files were seen at the entry
      if (await allParquet([req.previous, req.current])) raiseJsTieringBudget()
      // a closed stdout (`| head`) ends it with OutputClosedError: exit 141, quietly (src/cli/report-error.ts)
      return withCleanInterrupt(() => compareExports({...req, worker}))
    })
    io.notice(changeSummaryLine(s))
    for (const line of oneSidedNotices(s)) io.notice(line)
    if (input.exitCode && s.added + s.updated + s.deleted > 0) process.exitCode = 1
    return changesDocument(s, input.previous, input.current)
  } finally {
    await worker?.end()
  }
}
