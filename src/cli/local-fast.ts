import {parse} from '@oclif/core/parser'
import * as Flags from '@oclif/core/flags'

import {registerSecret} from '../api/secrets.js'
import {objectHooks} from '../io/object-hooks.js'
import {wantsHelp, type CliConfig} from './cli-config.js'
import {cliMessage} from './error-words.js'
import {globalFlags} from './flags.js'
import {
  changesArgs,
  changesFlags,
  changesInput,
  runChanges,
  runStats,
  statsArgs,
  statsFlags,
  type LocalIo,
} from './local-commands.js'
import {errorDocument, reportError} from './report-error.js'
import {stderrLines} from './stderr-lines.js'

/**
 * `sfl stats` and `sfl changes` without oclif's Config, plugins, manifest and command classes: issue 32
 * measures them against DuckDB, whose whole comparison of two 100,000-record Parquet files takes about
 * 0.2 s, and loading oclif and the command took 50-60 ms of that before any byte was read.
 *
 * The arguments and flags are the commands' own tables (src/cli/local-commands.ts, with the base flags every
 * command has and oclif's --json) parsed by oclif's parser alone; the runs are the commands' own functions,
 * and an error ends the run as BaseCommand's catch ends it (src/cli/report-error.ts: its one line, its exit
 * code, and with --json the error document). Whatever this path does not handle goes to oclif, which
 * answers exactly as before, having had nothing written or read here: help (before any `--`), anything
 * oclif's parser refuses (oclif parses again and prints its usage error), `SFL_CONTENT_TYPE` (oclif's other
 * switch for --json) and `sfl stats --output json` (deprecated: oclif prints its warning). Returns false
 * in those cases.
 *
 * src/cli/main.ts loads this module as an entry of the ESM build (dist/local-fast.js), sharing its chunks
 * with the commands.
 */
export async function runLocalFast(argv: readonly string[], cli: CliConfig): Promise<boolean> {
  const [id, ...rest] = argv
  if (id !== 'stats' && id !== 'changes') return false
  if (wantsHelp(rest, cli.helpFlags) || process.env['SFL_CONTENT_TYPE'] !== undefined) return false
  const run = id === 'stats' ? await statsRun(rest) : await changesRun(rest)
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

/** oclif's --json flag, which it adds to a command that enables it (Command.enableJsonFlag). */
const jsonFlag = {
  json: Flags.boolean({description: 'Format output as json.', helpGroup: 'GLOBAL'}),
}

async function statsRun(argv: string[]): Promise<ParsedRun | undefined> {
  // the table oclif builds for a command (aggregateFlags: base flags, --json, then the command's own)
  const flagTable = {...globalFlags, ...jsonFlag, ...statsFlags}
  const parsed = await refusedAsUndefined(() =>
    parse(argv, {flags: flagTable, args: statsArgs, strict: true}),
  )
  if (!parsed) return undefined
  const {args, flags} = parsed
  // the deprecated --output json warns through oclif's own warning
  if (flags.output === 'json' && !flags.json) return undefined
  return {
    debug: flags.debug,
    quiet: flags.quiet,
    json: flags.json,
    run: () => runStats(args.file, {byCounty: flags['by-county'], table: !flags.json}),
  }
}

async function changesRun(argv: string[]): Promise<ParsedRun | undefined> {
  const flagTable = {...globalFlags, ...jsonFlag, ...changesFlags}
  const parsed = await refusedAsUndefined(() =>
    parse(argv, {flags: flagTable, args: changesArgs, strict: true}),
  )
  if (!parsed) return undefined
  const {args, flags} = parsed
  return {
    debug: flags.debug,
    quiet: flags.quiet,
    json: flags.json,
    run: (io) => runChanges(changesInput(args, flags, flags.json), io),
  }
}

/** oclif's own parse (its Command.parse without the command), or undefined where it refuses the line. */
async function refusedAsUndefined<T>(parsing: () => Promise<T>): Promise<T | undefined> {
  try {
    return await parsing()
  } catch {
    return undefined
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
