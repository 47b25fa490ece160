import type {ChangesDocument} from './json-output.js'
import type {PlainTable} from './plain-parse.js'
import type {StatsDocument} from '../stats/render.js'

/**
 * The two commands that read files and send no request, `sfl stats` and `sfl changes`, defined once: their
 * runs, used by the oclif commands (src/commands/stats.ts, changes.ts: help, usage errors, the in-process
 * tests) and by the path that runs them without oclif (src/cli/local-fast.ts: issue 32, oclif's Config and
 * command classes cost 50-60 ms of a comparison DuckDB finishes in 0.2 s, and its parser's modules 14-16
 * ms more), and their lines as the plain parser reads them (src/cli/plain-parse.ts; oclif's tables are
 * src/cli/local-flags.ts). Nothing here imports oclif, and a run loads its modules when it runs, so this
 * file is light to load.
 */

/**
 * The base flags every command has (src/cli/flags.ts `globalFlags`) and oclif's --json, as the plain parser
 * reads them (src/cli/plain-parse.ts).
 */
const PLAIN_BASE_FLAGS: PlainTable['flags'] = {
  debug: {type: 'boolean'},
  quiet: {type: 'boolean', char: 'q'},
  json: {type: 'boolean'},
}

/** `sfl stats`' line for the plain parser: src/cli/local-flags.ts `statsArgs`, `statsFlags`, for oclif. */
export const statsTable: PlainTable = {
  args: ['file'],
  flags: {
    ...PLAIN_BASE_FLAGS,
    'by-county': {type: 'boolean'},
    output: {type: 'option', char: 'o', options: ['table', 'json'], default: 'table'},
  },
}

/** `sfl changes`' line for the plain parser: src/cli/local-flags.ts `changesArgs`, `changesFlags`, for oclif. */
export const changesTable: PlainTable = {
  args: ['previous', 'current'],
  flags: {
    ...PLAIN_BASE_FLAGS,
    out: {type: 'string'},
    output: {type: 'option', char: 'o', options: ['csv', 'ndjson', 'json']},
    'ignore-fields': {type: 'string', multiple: true},
    fips: {type: 'string', multiple: true},
    'exit-code': {type: 'boolean'},
  },
}

/** What a local run prints besides its output: notices (not under --quiet) and --debug lines. */
export interface LocalIo {
  notice: (line: string) => void
  debugLine: (line: string) => void
}

/**
 * `sfl stats FILE`: the statistics document, printed as tables when `table` (otherwise the caller prints
 * the document: --json, or the deprecated `--output json`, which the oclif command warns of).
 */
export async function runStats(
  file: string,
  opts: {byCounty: boolean; table: boolean},
): Promise<StatsDocument> {
  const {statsOfFile} = await import('../jobs/file-stats.js')
  const {renderStats, statsDocument} = await import('../stats/render.js')
  // an s3:// export is read through a private local copy (src/io/export-source.ts)
  const {withLocalExports} = await import('../io/export-source.js')
  const s = await withLocalExports([file], ([path]) => statsOfFile(path!, opts.byCounty))
  const doc = statsDocument(s.run, opts.byCounty ? s.counties : [])
  if (opts.table) {
    const {forTerminal} = await import('../render/terminal.js')
    const lines = renderStats(file, s.run)
    if (opts.byCounty) for (const c of s.counties) lines.push(...renderStats(`county ${c.fips}`, c.report))
    process.stdout.write(`${lines.map((l) => forTerminal(l)).join('\n')}\n`)
  }
  return doc
}

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

/** `sfl changes`' arguments and flags as oclif's parser gives them, as the run takes them (both paths). */
export function changesInput(
  args: {previous: string; current: string},
  flags: {
    out?: string | undefined
    output?: 'csv' | 'ndjson' | 'json' | undefined
    'ignore-fields'?: string[] | undefined
    fips?: string[] | undefined
    'exit-code': boolean
  },
  json: boolean,
): ChangesInput {
  return {
    previous: args.previous,
    current: args.current,
    out: flags.out,
    output: flags.output,
    ignoreFields: flags['ignore-fields'],
    fips: flags.fips,
    exitCode: flags['exit-code'],
    json,
  }
}

/**
 * Every module a comparison of two files loads, asked for at once: the loader reads their files side by
 * side instead of one import() after another, each waiting for the one before to be read, compiled and run
 * (5-6 ms of a 100,000-record comparison, farm-bench in both orders). The awaits below find them loaded;
 * a module that fails to load fails there, where it is used.
 */
function loadAhead(): void {
  void Promise.all([
    import('../changes/scan-run.js'),
    import('../changes/prestart.js'),
    import('./session.js'),
    import('../io/export-source.js'),
    import('../changes/sides.js'),
    import('../io/parquet-reader.js'),
    import('../io/atomic-file.js'),
    import('./json-output.js'),
  ]).catch(() => undefined)
}

/** `sfl changes PREVIOUS CURRENT`: the change file written, its summary said, the summary document returned. */
export async function runChanges(input: ChangesInput, io: LocalIo): Promise<ChangesDocument> {
  loadAhead()
  const {changesFlagsChecked, changesRequest} = await import('./changes-flags.js')
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
  const {ScanWorker, scanWorkerUrl} = await import('../changes/scan-run.js')
  const {scanWorkerWanted} = await import('../changes/prestart.js')
  const url = scanWorkerUrl()
  const wanted = scanWorkerWanted([input.previous, input.current])
  if (!wanted) ScanWorker.dropPrestarted(url)
  const worker = wanted ? ScanWorker.start(url) : undefined
  try {
    const changes = await import('../changes/compare.js')
    io.debugLine(
      `sfl changes: ${worker ? 'one side on a worker thread, the other on this one' : 'both sides on the main thread'}`,
    )
    const {withCleanInterrupt} = await import('./session.js')
    // an s3:// side is read through a private local copy (src/io/export-source.ts), then checked as a file
    const {withLocalExports} = await import('../io/export-source.js')
    const s = await withLocalExports([input.previous, input.current], async ([previous, current]) => {
      worker?.warm(current!)
      const req = await changesRequest({...flags, previous: previous!, current: current!})
      // a closed stdout (`| head`) ends it with OutputClosedError: exit 141, quietly (src/cli/report-error.ts)
      return withCleanInterrupt(() => changes.compareExports({...req, worker}))
    })
    io.notice(changes.changeSummaryLine(s))
    for (const line of changes.oneSidedNotices(s)) io.notice(line)
    if (input.exitCode && s.added + s.updated + s.deleted > 0) process.exitCode = 1
    return (await import('./json-output.js')).changesDocument(s, input.previous, input.current)
  } finally {
    await worker?.end()
  }
}
