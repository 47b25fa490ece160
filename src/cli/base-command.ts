import {Command, Interfaces} from '@oclif/core'

import {ExitCode, SflError} from '../errors.js'
import {registerSecret} from '../api/secrets.js'
import {objectHooks} from '../io/object-hooks.js'
import {forTerminal} from '../render/terminal.js'
import type {OutputFormat} from '../render/formats.js'
import type {UsageContext} from '../render/usage-error.js'
import {globalFlags} from './flags.js'
import {cliMessage} from './error-words.js'
import {errorDocument, reportError} from './report-error.js'
import {stderrLines} from './stderr-lines.js'
import {guardStdStreams} from './std-streams.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)['baseFlags'] & T['flags']
>

/**
 * The flags every command has (--debug, --quiet) and the error → exit code mapping (README "Exit codes").
 * A command that talks to the service extends ServiceCommand (src/cli/service-command.ts), which adds the
 * connection flags; one that sends no request (stats, changes, counties, keys list) has none of them.
 * Commands stay thin: parse, call one function, render.
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override baseFlags = globalFlags

  flags!: BaseFlags<T>

  public override async init(): Promise<void> {
    // the entry installed it already (src/cli/main.ts); a command run in-process (tests) gets it here
    guardStdStreams()
    await super.init()
    const {flags} = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    registerSecret(process.env['SFL_API_KEY'])
    // the object store (loaded only for s3://) prints its requests under --debug too
    if (this.flags.debug) objectHooks.debug = this.debugLine
  }

  /** How a long run prints (src/cli/jobs.ts). */
  protected io(): {quiet: boolean; notice: (line: string) => void; cacheDir: string} {
    return {
      quiet: Boolean(this.flags?.quiet),
      notice: (line) => this.notice(line),
      cacheDir: this.config.cacheDir,
    }
  }

  /** stderr line unless --quiet (notices, progress); errors use `warnAlways`. */
  protected notice(line: string): void {
    stderrLines.notice(line, Boolean(this.flags?.quiet))
  }

  protected warnAlways(line: string): void {
    stderrLines.warning(line)
  }

  protected debugLine = (line: string): void => {
    stderrLines.debug(line, Boolean(this.flags?.debug))
  }

  /** Default output: a table for a person at a terminal, JSON for a pipe or a script. */
  protected outputFormat(flag: OutputFormat | undefined): OutputFormat {
    return flag ?? (process.stdout.isTTY ? 'table' : 'json')
  }

  /** The message of `err` as printed; a command that talks to the service adds the likely fix. */
  protected errorMessage(err: SflError): string {
    return cliMessage(err)
  }

  /** Map every error to its documented exit code; the key never reaches the message. */
  protected override async catch(
    err: Error & {exitCode?: number; oclif?: {exit?: number}},
  ): Promise<unknown> {
    const oclif = err instanceof SflError ? undefined : err.oclif
    // a flag or argument mistake: the one line, a hint, the usage line; a flag value oclif could not parse
    // ("Parsing --timeout") too
    const usage = oclif?.exit !== undefined && ('parse' in err || /^Parsing --/.test(err.message))
    const ctx = usage ? await this.usageContext(err) : undefined
    // --json: the error is also the one JSON document on stdout (oclif's own catch prints it for the rest),
    // a usage mistake's message the line stderr shows, not oclif's text of several lines
    if (this.jsonEnabled() && (err.oclif?.exit === undefined || usage))
      this.logJson(errorDocument(err, ctx && ctx.render.usageErrorLine(forTerminal(err.message), ctx.of)))
    if (oclif?.exit === undefined) {
      reportError(err, {message: (e) => this.errorMessage(e), debug: Boolean(this.flags?.debug)})
      return undefined
    }
    // oclif's own parse errors (unknown flag, bad option) are usage errors: exit 2
    if (oclif.exit !== 0) oclif.exit = ExitCode.usage
    if (ctx) {
      process.stderr.write(ctx.render.usageErrorText(forTerminal(err.message), ctx.of))
      process.exitCode = ExitCode.usage
      return undefined
    }
    err.message = forTerminal(err.message)
    return super.catch(err)
  }

  /**
   * --json's document, written as every other output is (process.stdout, two-space JSON, no colour codes):
   * oclif's own goes through console.log with colourised tokens.
   */
  override logJson(json: unknown): void {
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`)
  }

  /** What a usage mistake's lines are made from (src/render/usage-error.ts, loaded only for one). */
  private async usageContext(err: Error & {args?: unknown}) {
    const render = await import('../render/usage-error.js')
    const ctor = this.constructor as typeof BaseCommand
    const example = ctor.examples?.[0]
    const text = typeof example === 'string' ? example : example?.command
    // oclif's RequiredArgsError carries the missing arguments (with their names) as `args`
    const missing = Array.isArray(err.args)
      ? err.args
          .map((a: {name?: unknown}) => (typeof a.name === 'string' ? a.name : ''))
          .filter((n) => n !== '')
      : undefined
    const of: UsageContext = {
      bin: this.config.bin,
      id: this.id ?? '',
      flags: Object.keys({...ctor.baseFlags, ...ctor.flags}),
      args: Object.entries(ctor.args ?? {}).map(([name, a]) => ({name, description: a.description})),
      missingArgs: missing,
      example: text?.replace(/<%= config.bin %>/g, this.config.bin),
    }
    return {render, of}
  }
}
