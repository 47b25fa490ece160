import {clockNotice} from './notices.js'
import {Command, Flags, Interfaces} from '@oclif/core'

import {assertSafeBaseUrl, HttpClient} from '../api/client.js'
import {ExitCode, MissingKeyError, SflError, UsageError} from '../errors.js'
import {registerSecret} from '../api/secrets.js'
import {apiKeyProblem} from '../api/validate.js'
import {forTerminal} from '../render/terminal.js'
import {loadConfig, resolveSettings} from '../config/profiles.js'
import type {Scheduler, SchedulerOptions} from '../schedule/scheduler.js'
import type {Sandbox} from '../sandbox/server.js'
import type {OutputFormat} from '../render/formats.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)['baseFlags'] & T['flags']
>

/** Everything a command needs to talk to the service, resolved once from flags > env > profile. */
export interface Context {
  baseUrl: string
  profile: string
  /** The key in use; print only through maskKey. */
  apiKey: string
  client: HttpClient
  scheduler: Scheduler
  sandbox?: Sandbox
}

/**
 * Shared flags, configuration precedence and the error → exit code mapping (README "Exit codes").
 * Commands stay thin: parse, call one function, render.
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override baseFlags = {
    'base-url': Flags.string({
      description: 'Service base URL including its /v1 segment [env: SFL_BASE_URL]',
      helpGroup: 'CONNECTION',
    }),
    'api-key': Flags.string({
      description:
        'API key, or - to read it from stdin (prefer SFL_API_KEY or `sfl keys set`: a key given as a flag lands in shell history and the process list) [env: SFL_API_KEY]',
      helpGroup: 'CONNECTION',
    }),
    profile: Flags.string({
      description: 'Credential profile to use [env: SFL_PROFILE]',
      helpGroup: 'CONNECTION',
    }),
    sandbox: Flags.boolean({
      description: 'Run against the embedded sandbox (synthetic data, demo key sandbox-full)',
      helpGroup: 'CONNECTION',
    }),
    timeout: Flags.integer({
      description:
        'Deadline in seconds for each request as a whole: connect, headers and reading the body [default: 30; county-export 900, a whole county can be one body]',
      min: 1,
      helpGroup: 'CONNECTION',
    }),
    retries: Flags.integer({
      description: 'Retries for 5xx and network errors',
      default: 3,
      min: 0,
      helpGroup: 'CONNECTION',
    }),
    'max-wait': Flags.integer({
      description:
        'Longest wait in seconds for a rate-limit reset before giving up (exit 5) [default: 60; county-export 3600]',
      min: 0,
      helpGroup: 'CONNECTION',
    }),
    debug: Flags.boolean({
      description: 'Show requests and responses on stderr (the key masked)',
      helpGroup: 'GLOBAL',
    }),
    quiet: Flags.boolean({
      char: 'q',
      description: 'No progress or notices on stderr (errors still shown)',
      helpGroup: 'GLOBAL',
    }),
  }

  flags!: BaseFlags<T>
  protected ctx?: Context
  /** Default of --max-wait for this command, seconds. */
  protected static defaultMaxWait = 60
  /** Default of --timeout for this command, seconds. */
  protected static defaultTimeout = 30

  public override async init(): Promise<void> {
    await super.init()
    const {flags} = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      args: this.ctor.args,
      strict: this.ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    registerSecret(this.flags['api-key'])
    registerSecret(process.env['SFL_API_KEY'])
  }

  /** How a long run prints (src/cli/jobs.ts). */
  protected io(): {quiet: boolean; notice: (line: string) => void} {
    return {quiet: Boolean(this.flags?.quiet), notice: (line) => this.notice(line)}
  }

  /** stderr line unless --quiet (notices, progress); errors use `warnAlways`. */
  protected notice(line: string): void {
    if (!this.flags?.quiet) process.stderr.write(`${forTerminal(line)}\n`)
  }

  protected warnAlways(line: string): void {
    process.stderr.write(`Warning: ${forTerminal(line)}\n`)
  }

  protected debugLine = (line: string): void => {
    if (this.flags?.debug) process.stderr.write(`[debug] ${forTerminal(line)}\n`)
  }

  /** Default output: a table for a person at a terminal, JSON for a pipe or a script. */
  protected outputFormat(flag: OutputFormat | undefined): OutputFormat {
    return flag ?? (process.stdout.isTTY ? 'table' : 'json')
  }

  /** Resolve base URL and key (flag > env > profile), refuse unsafe ones, and build the client + scheduler. */
  async context(schedule: Partial<SchedulerOptions> = {}): Promise<Context> {
    if (this.ctx) return this.ctx
    const f = this.flags
    const {config, warning} = await loadConfig(this.config.configDir)
    if (warning) this.warnAlways(warning)
    const fromStdin = f['api-key'] === '-'
    let flagKey = f['api-key']
    if (fromStdin) {
      if ((f as {input?: unknown}).input === '-')
        throw new UsageError(
          '--api-key - and --input - both read stdin; pass the key with SFL_API_KEY instead',
        )
      const {readKeyFromStdin} = await import('../keys/prompt.js')
      flagKey = await readKeyFromStdin()
    }
    const settings = resolveSettings(
      {profile: f.profile, baseUrl: f['base-url'], apiKey: flagKey},
      process.env,
      config,
    )
    registerSecret(settings.apiKey)
    if (settings.apiKeySource === 'flag' && !fromStdin)
      this.warnAlways(
        '--api-key puts the key in your shell history and in the process list (`ps`), where other users of this machine can read it for the whole run; prefer `--api-key -` (reads stdin), SFL_API_KEY or `sfl keys set`',
      )
    let baseUrl = settings.baseUrl
    let apiKey = settings.apiKey
    let sandbox: Sandbox | undefined
    if (f.sandbox) {
      const [{startSandbox}, {demoKey, SANDBOX_DEFAULT_KEY}] = await Promise.all([
        import('../sandbox/server.js'),
        import('../sandbox/keys.js'),
      ])
      sandbox = await startSandbox({port: 0})
      baseUrl = sandbox.baseUrl
      apiKey = demoKey(apiKey) ? apiKey : SANDBOX_DEFAULT_KEY
      this.notice(`sfl: using the embedded sandbox at ${baseUrl} (synthetic data, key ${apiKey})`)
    }
    if (!baseUrl)
      throw new UsageError(
        'no service base URL: pass --base-url, set SFL_BASE_URL, store one with `sfl keys set --base-url URL`, or try --sandbox',
      )
    assertSafeBaseUrl(baseUrl)
    ;(await import('../api/endpoint-check.js')).assertVersionedBaseUrl(baseUrl) // spec 4, 9.1: …/v1
    if (!apiKey)
      throw new MissingKeyError(
        'no API key: set SFL_API_KEY, run `sfl keys set` (reads the key from stdin or a hidden prompt), or try --sandbox',
      )
    const keyProblem = apiKeyProblem(apiKey)
    if (keyProblem)
      throw new UsageError(
        `the API key (from ${describeKeySource(fromStdin ? 'stdin' : settings.apiKeySource)}) ${keyProblem}; nothing was sent`,
      )
    const {Scheduler} = await import('../schedule/scheduler.js')
    const client = new HttpClient({
      apiKey,
      timeoutMs: (f.timeout ?? (this.constructor as typeof BaseCommand).defaultTimeout) * 1000,
      userAgent: `${this.config.name}/${this.config.version} node/${process.versions.node}`,
      debug: this.debugLine,
    })
    const scheduler = new Scheduler({
      concurrency: 1,
      retries: f.retries,
      maxWaitMs: (f['max-wait'] ?? (this.constructor as typeof BaseCommand).defaultMaxWait) * 1000,
      // a long rate-limit wait says so (exports and batches draw their own progress instead)
      onEvent: (e) => {
        if (e.type === 'clock') this.notice(clockNotice(e.skewMs))
        if (e.type === 'wait' && e.ms >= 5000)
          this.notice(
            `sfl: waiting ${Math.ceil(e.ms / 1000)} s for ${e.reason === '429' ? 'a 429' : 'the rate-limit reset'}`,
          )
      },
      ...schedule,
    })
    this.ctx = {baseUrl, profile: settings.profile, apiKey, client, scheduler, ...(sandbox ? {sandbox} : {})}
    return this.ctx
  }

  /** Map every error to its documented exit code; the key never reaches the message. */
  protected override async catch(
    err: Error & {exitCode?: number; oclif?: {exit?: number}},
  ): Promise<unknown> {
    if (err instanceof SflError) {
      process.stderr.write(`Error: ${forTerminal(err.message)}\n`)
      process.exitCode = err.exitCode
      return undefined
    }
    if (err.oclif?.exit !== undefined) {
      // oclif's own parse errors (unknown flag, bad option) are usage errors: exit 2
      if (err.oclif.exit !== 0) err.oclif.exit = ExitCode.usage
      err.message = forTerminal(err.message)
      if ('parse' in err) return this.usageError(err.message) // the one line, a hint, the usage line
      return super.catch(err)
    }
    process.stderr.write(`Error: unexpected failure: ${forTerminal(err.message)}\n`)
    if (this.flags?.debug && err.stack) process.stderr.write(`${forTerminal(err.stack)}\n`)
    process.exitCode = ExitCode.unexpected
    return undefined
  }

  /** A flag or argument mistake: one error line, a hint, the usage line (src/render/usage-error.ts). */
  private async usageError(message: string): Promise<void> {
    const {usageErrorText} = await import('../render/usage-error.js')
    const ctor = this.constructor as typeof BaseCommand
    const example = ctor.examples?.[0]
    const text = typeof example === 'string' ? example : example?.command
    process.stderr.write(
      usageErrorText(message, {
        bin: this.config.bin,
        id: this.id ?? '',
        flags: Object.keys({...ctor.baseFlags, ...ctor.flags}),
        example: text?.replace(/<%= config.bin %>/g, this.config.bin),
      }),
    )
    process.exitCode = ExitCode.usage
  }

  protected override async finally(err: Error | undefined): Promise<unknown> {
    await this.ctx?.sandbox?.close()
    return super.finally(err)
  }
}

function describeKeySource(source: 'flag' | 'env' | 'profile' | 'stdin' | undefined): string {
  switch (source) {
    case 'flag':
      return '--api-key'
    case 'stdin':
      return '--api-key - (stdin)'
    case 'env':
      return 'SFL_API_KEY'
    default:
      return 'the config profile'
  }
}
