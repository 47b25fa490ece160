import type {HttpClient} from '../api/client.js'
import {MissingKeyError, type SflError, UsageError} from '../errors.js'
import {registerSecret} from '../api/secrets.js'
import {loadConfigLenient, resolveSettings, type ResolvedSettings} from '../config/profiles.js'
import type {Scheduler, SchedulerOptions} from '../schedule/scheduler.js'
import type {Sandbox} from '../sandbox/server.js'
import {withHint, type RunOrigin} from './error-hints.js'
import {cliMessage} from './error-words.js'
import {raiseWasmTieringBudget} from './wasm-budget.js'
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

/** The values of the connection flags (src/cli/flags.ts) and of the global ones a connection uses. */
export interface ConnectionFlagValues {
  'base-url'?: string | undefined
  'api-key'?: string | undefined
  profile?: string | undefined
  sandbox?: boolean | undefined
  timeout?: number | undefined
  retries: number
  'max-wait'?: number | undefined
  quiet?: boolean | undefined
  /** Batch input (`lookup --input`): only to refuse `--input -` with `--api-key -`. */
  input?: string | undefined
}

/** Defaults of --timeout and --max-wait, seconds, for a command that does not set its own (county-export does). */
export const SERVICE_DEFAULTS = {timeout: 30, maxWait: 60} as const

export interface ConnectionOptions {
  /** oclif's Config.configDir: SFL_CONFIG_DIR, else the platform's config folder + "sfl". */
  configDir: string
  /** `sfl/VERSION node/VERSION`, as the service sees it. */
  userAgent: string
  /** Defaults of --timeout and --max-wait for this command, seconds. */
  defaultTimeout: number
  defaultMaxWait: number
  warnAlways: (line: string) => void
  notice: (line: string) => void
  debugLine: (line: string) => void
}

/**
 * The connection of one run, for ServiceCommand (src/cli/service-command.ts) and the lookup fast path
 * (src/cli/lookup-fast.ts) alike: the configuration precedence (flag > env > profile), the client and
 * scheduler built from it, the hints an error gets from where the settings came from, and what must be
 * closed at the end (the status line, the embedded sandbox).
 */
export class Connection {
  private ctx?: Context
  /** Where the base URL and key in use came from, for the hints of src/cli/error-hints.ts. */
  private origin?: RunOrigin
  private sandbox?: Sandbox
  private feedback?: WaitFeedback

  /**
   * Checks what can be checked before anything is read: `--api-key -` with `--input -` would take the key
   * for the batch's first line and quote it in a message ("found: KEY"), or the input for the key.
   */
  constructor(
    private readonly f: ConnectionFlagValues,
    private readonly o: ConnectionOptions,
  ) {
    if (f['api-key'] === '-' && f.input === '-')
      throw new UsageError(
        '--api-key - and --input - both read stdin; pass the key with SFL_API_KEY or `sfl keys set` instead. Nothing was read',
      )
    registerSecret(f['api-key'])
  }

  /** Where the base URL and key in use came from, once `context` has resolved them. */
  get runOrigin(): RunOrigin | undefined {
    return this.origin
  }

  /** The error's message with the fix the run's settings point to (the base URL in use, the key's source). */
  errorMessage(err: SflError): string {
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
    const f = this.f
    const {config, path, warning, problem} = await loadConfigLenient(this.o.configDir)
    if (warning) this.o.warnAlways(warning)
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
      this.o.warnAlways(
        `${cliMessage(problem)} (not needed by this run: its key and base URL come from flags or the environment)`,
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
   * The base URL a run would use (flag > env > profile), without the key (nothing is read from stdin) or a
   * client: what `county-export --dry-run` checks a checkpoint against. Undefined when none is set.
   */
  async baseUrlInUse(): Promise<string | undefined> {
    const {config} = await loadConfigLenient(this.o.configDir)
    return resolveSettings({profile: this.f.profile, baseUrl: this.f['base-url']}, process.env, config)
      .baseUrl
  }

  /**
   * Register every key the config holds as a secret, before reading a file that could contain one (a batch
   * input): a message quoting a cell then masks any 8-character run of it (src/api/secrets.ts `redact`).
   */
  async maskConfiguredKeys(): Promise<void> {
    const {config} = await loadConfigLenient(this.o.configDir)
    for (const p of Object.values(config.profiles)) registerSecret(p.apiKey)
  }

  /** Resolve base URL and key (flag > env > profile), refuse unsafe ones, and build the client + scheduler. */
  async context(schedule: Partial<SchedulerOptions> = {}): Promise<Context> {
    if (this.ctx) return this.ctx
    const f = this.f
    const {settings, fromStdin, configPath, profileHasKey} = await this.resolve()
    registerSecret(settings.apiKey)
    if (settings.apiKeySource === 'flag' && !fromStdin)
      this.o.warnAlways(
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
      this.sandbox = sandbox // closed by close() even when a check below fails
      baseUrl = sandbox.baseUrl
      apiKey = demoKey(apiKey) ? apiKey : SANDBOX_DEFAULT_KEY
      this.o.notice(`sfl: using the embedded sandbox at ${baseUrl} (synthetic data, key ${apiKey})`)
    }
    if (!baseUrl)
      throw new UsageError('no service base URL: set SFL_BASE_URL, or store one with `sfl keys set`', {
        facts: {topic: 'no-base-url'},
      })
    const {createCore, checkBaseUrl} = await import('../lib/core.js')
    raiseWasmTieringBudget() // before the client's first request (src/cli/wasm-budget.ts)
    checkBaseUrl(baseUrl)
    if (!apiKey)
      throw new MissingKeyError('no API key: set SFL_API_KEY, or store one with `sfl keys set`', {
        facts: {topic: 'no-key'},
      })
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
    this.feedback = feedback
    // the library's one core (src/lib/core.ts): the base URL and key checked, the client and the scheduler
    const {client, scheduler} = createCore({
      baseUrl,
      apiKey,
      keyOrigin: describeKeySource(fromStdin ? 'stdin' : settings.apiKeySource),
      timeoutMs: (f.timeout ?? this.o.defaultTimeout) * 1000,
      retries: f.retries,
      maxWaitMs: (f['max-wait'] ?? this.o.defaultMaxWait) * 1000,
      userAgent: this.o.userAgent,
      debug: this.o.debugLine,
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

  /** No status line left under an error. */
  stopFeedback(): void {
    this.feedback?.stop()
  }

  /** The end of the run, whatever happened: the status line gone, the embedded sandbox closed. */
  async close(): Promise<void> {
    this.feedback?.stop()
    await this.sandbox?.close()
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
