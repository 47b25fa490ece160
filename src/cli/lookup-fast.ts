import {parse} from '@oclif/core/parser'

import {registerSecret} from '../api/secrets.js'
import {wantsHelp, type CliConfig} from './cli-config.js'
import {Connection, SERVICE_DEFAULTS} from './connection.js'
import {serviceBaseFlags} from './flags.js'
import {lookupFlags} from './lookup-definition.js'
import {lookupOne} from './lookup-one.js'
import {readZipTable} from '../address/zip-counties.js'
import {cliMessage} from './error-words.js'
import {reportError} from './report-error.js'
import {stderrLines} from './stderr-lines.js'

/**
 * `sfl lookup` of one property without oclif's Config, plugins, manifest and command classes (about 55 ms
 * of CPU at every start, more than a lookup's whole allowance over a bare fetch script: README "Start-up").
 *
 * The flags are the command's own table (src/cli/lookup-definition.ts, with the base flags of every
 * ServiceCommand) parsed by oclif's parser alone, and the run is the command's own (src/cli/lookup-one.ts)
 * on the same Connection, error report and stderr lines as ServiceCommand. Whatever this path does not
 * handle goes to oclif, which answers exactly as before: help (`-h`, `--help`, before any `--`), a batch
 * (`--input`), and any flag or argument oclif's parser refuses (oclif parses again and prints its usage
 * error). Returns false in those cases, having written nothing and read nothing.
 *
 * `cli` is what oclif's Config would say (src/cli/cli-config.ts). The entry (src/cli/main.ts) loads this
 * module as one CommonJS bundle, dist/lookup.cjs, through a V8 code cache on Node 20
 * (src/cli/code-cache.ts).
 */
export async function runLookupFast(argv: string[], cli: CliConfig): Promise<boolean> {
  if (wantsHelp(argv, cli.helpFlags)) return false
  let flags: Awaited<ReturnType<typeof parseLookup>>
  try {
    flags = await parseLookup(argv)
  } catch {
    return false
  }
  // a batch, and --from (the export readers), run through oclif: this bundle holds neither
  if (flags.input !== undefined || flags.from !== undefined) return false
  await runParsed(flags, cli)
  return true
}

/** oclif's own parse of the lookup command's flags (its Command.parse, without the command). */
async function parseLookup(argv: string[]) {
  // the same table oclif builds for the command (aggregateFlags: base flags, then the command's own)
  const {flags} = await parse(argv, {flags: {...serviceBaseFlags, ...lookupFlags}, strict: true})
  return flags
}

/** The command's init, run, catch and finally (src/cli/base-command.ts, service-command.ts), in order. */
async function runParsed(flags: Awaited<ReturnType<typeof parseLookup>>, cli: CliConfig): Promise<void> {
  registerSecret(process.env['SFL_API_KEY'])
  const quiet = flags.quiet
  const debug = flags.debug
  let connection: Connection | undefined
  try {
    connection = new Connection(flags, {
      configDir: cli.configDir,
      userAgent: `${cli.name}/${cli.version} node/${process.versions.node}`,
      // ServiceCommand's, which `sfl lookup` keeps
      defaultTimeout: SERVICE_DEFAULTS.timeout,
      defaultMaxWait: SERVICE_DEFAULTS.maxWait,
      warnAlways: (line) => stderrLines.warning(line),
      notice: (line) => stderrLines.notice(line, quiet),
      debugLine: (line) => stderrLines.debug(line, debug),
    })
    const conn = connection
    await lookupOne(flags, {
      context: () => conn.context(),
      warnAlways: (line) => stderrLines.warning(line),
      notice: (line) => stderrLines.notice(line, quiet),
      // this bundle runs as CommonJS from dist/ (src/cli/code-cache.ts gives it __dirname), beside the table
      zipTable: () => readZipTable([__dirname]),
      cacheDir: cli.cacheDir,
    })
  } catch (error) {
    connection?.stopFeedback() // no status line left under the error
    const err = error instanceof Error ? error : new Error(String(error))
    reportError(err, {message: (e) => (connection ? connection.errorMessage(e) : cliMessage(e)), debug})
  } finally {
    await connection?.close()
  }
}
