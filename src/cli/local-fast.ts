import {registerSecret} from '../api/secrets.js'
import {objectHooks} from '../io/object-hooks.js'
import {wantsHelp, type CliConfig} from './cli-config.js'
import {changesInput, changesTable, runChanges, runStats, statsTable, type LocalIo} from './local-commands.js'
import {plainParse} from './plain-parse.js'
import {stderrLines} from './stderr-lines.js'

/**
 * `sfl stats` and `sfl changes` without oclif's Config, plugins, manifest and command classes: issue 32
 * measures them against DuckDB, whose whole comparison of two 100,000-record Parquet files takes about
 * 0.2 s, and loading oclif and the command took 50-60 ms of that before any byte was read.
 *
 * The arguments and flags are the commands' plain tables (src/cli/local-commands.ts, with the base flags every
 * command has and oclif's --json) read by the plain parser (src/cli/plain-parse.ts), which takes the usual
 * lines as oclif's parser takes them without loading it; the runs are the commands' own functions, and an
 * error ends the run as BaseCommand's catch ends it (src/cli/report-error.ts, loaded then: its one line,
 * its exit code, and with --json the error document). Whatever this path does not handle goes to oclif,
 * which answers exactly as before, having had nothing written or read here: help (before any `--`), any
 * line the plain parser leaves (oclif parses it, and prints its usage error for a wrong one),
 * `SFL_CONTENT_TYPE` (oclif's other switch for --json) and `sfl stats --output json` (deprecated: oclif
 * prints its warning). Returns false in those cases.
 *
 * src/cli/main.ts loads this module as an entry of the ESM build (dist/local-fast.js), sharing its chunks
 * with the commands.
 */
export async function runLocalFast(argv: readonly string[], cli: CliConfig): Promise<boolean> {
  const [id, ...rest] = argv
  if (id !== 'stats' && id !== 'changes') return false
  if (wantsHelp(rest, cli.helpFlags) || process.env['SFL_CONTENT_TYPE'] !== undefined) return false
  const run = id === 'stats' ? statsRun(rest) : changesRun(rest)
  if (!run) return false
  await runParsed(run)
  return true
}

/** A parsed local command: its run, and the base flags' values. */
interface ParsedRun {
  debug: boolean
  quiet: boolean
  json: boolean
  run: (io: LocalIo) => Promise<unknown>
}

function statsRun(argv: string[]): ParsedRun | undefined {
  const parsed = plainParse(argv, statsTable)
  if (!parsed) return undefined
  const {args, flags} = parsed
  // the deprecated --output json warns through oclif's own warning
  if (flags['output'] === 'json' && !flags['json']) return undefined
  return {
    debug: flags['debug'] === true,
    quiet: flags['quiet'] === true,
    json: flags['json'] === true,
    run: () => runStats(args['file']!, {byCounty: flags['by-county'] === true, table: !flags['json']}),
  }
}

function changesRun(argv: string[]): ParsedRun | undefined {
  const parsed = plainParse(argv, changesTable)
  if (!parsed) return undefined
  const {args, flags} = parsed
  const json = flags['json'] === true
  return {
    debug: flags['debug'] === true,
    quiet: flags['quiet'] === true,
    json,
    run: (io) =>
      runChanges(
        changesInput(
          {previous: args['previous']!, current: args['current']!},
          {
            out: flags['out'] as string | undefined,
            output: flags['output'] as 'csv' | 'ndjson' | 'json' | undefined,
            'ignore-fields': flags['ignore-fields'] as string[] | undefined,
            fips: flags['fips'] as string[] | undefined,
            'exit-code': flags['exit-code'] === true,
          },
          json,
        ),
        io,
      ),
  }
}

/** The command's init, run, catch and --json output (src/cli/base-command.ts), in order. */
async function runParsed(p: ParsedRun): Promise<void> {
  registerSecret(process.env['SFL_API_KEY'])
  const io: LocalIo = {
    notice: (line) => stderrLines.notice(line, p.quiet),
    debugLine: (line) => stderrLines.debug(line, p.debug),
  }
  if (p.debug) objectHooks.debug = io.debugLine
  let result: unknown
  try {
    result = await p.run(io)
  } catch (error) {
    const err = error instanceof Error ? error : new Error(String(error))
    // loaded only now: the words of errors and their hints are most of a module graph a run does not need
    const [{errorDocument, reportError}, {cliMessage}] = await Promise.all([
      import('./report-error.js'),
      import('./error-words.js'),
    ])
    if (p.json) writeJson(errorDocument(err))
    reportError(err, {message: cliMessage, debug: p.debug})
    return
  }
  if (result !== undefined && p.json) writeJson(result)
}

/** BaseCommand's logJson: two-space JSON on stdout, no colour codes. */
function writeJson(json: unknown): void {
  process.stdout.write(`${JSON.stringify(json, null, 2)}\n`)
}
