import type {ChangesInput} from './changes-run.js'
import type {ChangesDocument} from './json-output.js'
import type {LocalIo} from './local-io.js'
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

export type {ChangesInput} from './changes-run.js'
export type {LocalIo} from './local-io.js'

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
  const s = await withLocalExports([file], async ([path]) => {
    // a run of the kernel (src/cli/jit-budget.ts): a folder's files known now; a file was seen at the entry
    const [{allParquet}, {raiseJsTieringBudget}] = await Promise.all([
      import('../io/export-files.js'),
      import('./jit-budget.js'),
    ])
    if (await allParquet([path!])) raiseJsTieringBudget()
    return statsOfFile(path!, opts.byCounty)
  })
  const doc = statsDocument(s.run, opts.byCounty ? s.counties : [])
  if (opts.table) {
    const {forTerminal} = await import('../render/terminal.js')
    const lines = renderStats(file, s.run)
    if (opts.byCounty) for (const c of s.counties) lines.push(...renderStats(`county ${c.fips}`, c.report))
    process.stdout.write(`${lines.map((l) => forTerminal(l)).join('\n')}\n`)
  }
  return doc
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

/** `sfl changes PREVIOUS CURRENT`: the change file written, its summary said, the summary document returned. */
export async function runChanges(input: ChangesInput, io: LocalIo): Promise<ChangesDocument> {
  return (await import('./changes-run.js')).runChangesNow(input, io)
}
