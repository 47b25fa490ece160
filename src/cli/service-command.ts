import {Command, Interfaces} from '@oclif/core'

import type {HttpClient} from '../api/client.js'
import {MissingKeyError, type SflError, UsageError} from '../errors.js'
import {registerSecret} from '../api/secrets.js'
import {loadConfigLenient, resolveSettings, type ResolvedSettings} from '../config/profiles.js'
import type {Scheduler, SchedulerOptions} from '../schedule/scheduler.js'
import type {Sandbox} from '../sandbox/server.js'
import {BaseCommand} from './base-command.js'
import {withHint, type RunOrigin} from './error-hints.js'
import {connectionFlags} from './flags.js'
import {WaitFeedback} from './wait-feedback.js'

/** Everything a command needs to talk to the service, resolved once from flags > env > profile. */
export interface Context {
  baseUrl: string
  profile: string
  /** The key in use; print only through maskKey. */
  apiKey: string
  client: HttpClient
  scheduler: Scheduler
  sandbox?: Sandbox
  /** The waiting and retry lines of a single request at a terminal; a long run stops it and draws progress. */
  feedback?: WaitFeedback
}

export type ServiceFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof ServiceCommand)['baseFlags'] & T['flags']
>

/**
 * A command that talks to the service (lookup, county-export, keys check): the connection flags, the
 * configuration precedence (flag > env > profile) and the client and scheduler built from them.
 */
export abstract class ServiceCommand<T extends typeof Command> extends BaseCommand<T> {
  static override baseFlags = {...BaseCommand.baseFlags, ...connectionFlags}

  declare flags: ServiceFlags<T>
  protected ctx?: Context
  /** Where the base URL and key in use came from, for the hints of src/cli/error-hints.ts. */
  protected origin?: RunOrigin
  /** Default of --max-wait for this command, seconds. */
  protected static defaultMaxWait = 60
  /** Default of --timeout for this command, seconds. */
  protected static defaultTimeout = 30

  public override async init(): Promise<void> {
    await super.init()
    // before anything reads stdin: the key would be taken for the batch's first line and quoted in a
    // message ("found: KEY"), or the input for the key
    if (this.flags['api-key'] === '-' && (this.flags as {input?: unknown}).input === '-')
      throw new UsageError(
        '--api-key - and --input - both read stdin; pass the key with SFL_API_KEY or `sfl keys set` instead. Nothing was read',
      )
    registerSecret(this.flags['api-key'])
  }

  /** The error's message with the fix the run's settings point to (the base URL in use, the key's source). */
  protected override errorMessage(err: SflError): string {
    return withHint(err, this.origin)
  }

  /**
   * Flag > env > profile, with the config file read only as far as the run needs it: a malformed file is
   * an error when a value (or a named profile) must come from it, and otherwise one warning line, so a CI
   * job with SFL_API_KEY and SFL_BASE_URL keeps working (README "Configuration").
   */
  private async resolve(): Promise<{
    settings: ResolvedSettings
    fromStdin: boolean
    configPath: string
    profileHasKey: boolean
  }> {
    const f = this.flags
    const {config, path, warning, problem} = await loadConfigLenient(this.config.configDir)
    if (warning) this.warnAlways(warning)
    const fromStdin = f['api-key'] === '-'
    let flagKey = f['api-key']
    if (fromStdin) {
      const {readKeyFromStdin} = await import('../keys/prompt.js')
      flagKey = await readKeyFromStdin()
    }
    if (problem && (f.profile ?? process.env['SFL_PROFILE']) !== undefined) throw problem
    const settings = resolveSettings(
      {profile: f.profile, baseUrl: f['base-url'], apiKey: flagKey},
      process.env,
      config,
    )
    if (problem) {
      if (!f.sandbox && (settings.baseUrl === undefined || settings.apiKey === undefined)) throw problem
      this.warnAlways(
        `${problem.message} (not needed by this run: its key and base URL come from flags or the environment)`,
      )
    }
    return {
      settings,
      fromStdin,
      configPath: path,
      profileHasKey: Boolean(config.profiles[settings.profile]?.apiKey),
    }
  }

  /**
   * Register every key the config holds as a secret, before reading a file that could contain one (a batch
   * input): a message quoting a cell then masks any 8-character run of it (src/api/secrets.ts `redact`).
   */
  protected async maskConfiguredKeys(): Promise<void> {
    const {config} = await loadConfigLenient(this.config.configDir)
    for (const p of Object.values(config.profiles)) registerSecret(p.apiKey)
  }

  /** Resolve base URL and key (flag > env > profile), refuse unsafe ones, and build the client + scheduler. */
  async context(schedule: Partial<SchedulerOptions> = {}): Promise<Context> {
    if (this.ctx) return this.ctx
    const f = this.flags
    const {settings, fromStdin, configPath, profileHasKey} = await this.resolve()
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
    const {createCore, checkBaseUrl} = await import('../lib/core.js')
    checkBaseUrl(baseUrl)
    if (!apiKey)
      throw new MissingKeyError(
        'no API key: set SFL_API_KEY, run `sfl keys set` (reads the key from stdin or a hidden prompt), or try --sandbox',
      )
    this.origin = {
      baseUrl,
      baseUrlSource: sandbox ? 'sandbox' : (settings.baseUrlSource ?? 'flag'),
      keySource:
        sandbox && apiKey !== settings.apiKey
          ? 'sandbox'
          : fromStdin
            ? 'stdin'
            : (settings.apiKeySource ?? 'flag'),
      profile: settings.profile,
      profileHasKey: profileHasKey && settings.apiKeySource !== 'profile',
      configPath,
    }
    const feedback = new WaitFeedback(process.stderr, {
      live: Boolean(process.stderr.isTTY) && !f.quiet,
      quiet: Boolean(f.quiet),
    })
    // the library's one core (src/lib/core.ts): the base URL and key checked, the client and the scheduler
    const {client, scheduler} = createCore({
      baseUrl,
      apiKey,
      keyOrigin: describeKeySource(fromStdin ? 'stdin' : settings.apiKeySource),
      timeoutMs: (f.timeout ?? (this.constructor as typeof ServiceCommand).defaultTimeout) * 1000,
      retries: f.retries,
      maxWaitMs: (f['max-wait'] ?? (this.constructor as typeof ServiceCommand).defaultMaxWait) * 1000,
      userAgent: `${this.config.name}/${this.config.version} node/${process.versions.node}`,
      debug: this.debugLine,
      // a long rate-limit wait, a retry, a slow answer: said at the terminal (exports and batches draw their
      // own progress instead)
      onClientEvent: feedback.onClientEvent,
      onSchedulerEvent: feedback.onSchedulerEvent,
      schedule,
    })
    this.ctx = {
      baseUrl,
      profile: settings.profile,
      apiKey,
      client,
      scheduler,
      feedback,
      ...(sandbox ? {sandbox} : {}),
    }
    return this.ctx
  }

  protected override async catch(
    err: Error & {exitCode?: number; oclif?: {exit?: number}},
  ): Promise<unknown> {
    this.ctx?.feedback?.stop() // no status line left under the error
    return super.catch(err)
  }

  protected override async finally(err: Error | undefined): Promise<unknown> {
    this.ctx?.feedback?.stop()
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
