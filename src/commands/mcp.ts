import {Flags} from '@oclif/core'

import {serviceBaseFlags} from '../cli/flags.js'
import {paragraphs} from '../cli/help-text.js'
import {ServiceCommand} from '../cli/service-command.js'
import {SflError, UsageError} from '../errors.js'
import {CALL_DEADLINE_S} from '../mcp/deadline.js'

/** The defaults the tools use, and the deadline of a whole call (src/mcp/deadline.ts). */
const MCP_DEFAULTS = {timeout: 30, maxWait: 10, deadline: CALL_DEADLINE_S} as const

export default class Mcp extends ServiceCommand<typeof Mcp> {
  static override summary =
    'Serve sfl to an AI assistant: a Model Context Protocol (MCP) server on stdin/stdout'
  static override description = paragraphs`An MCP server over stdio for assistants such as Claude Desktop: the assistant starts
\`sfl mcp\` and calls its tools: lookup_property (one property's eligibility, explained), find_counties,
check_key, plan_export (the requests and time of a county export, and the command line that runs it) and
export_statistics (of an export on disk). No bulk export through MCP: an export runs in the CLI.

The API key and base URL come from sfl's own configuration, as for every command: SFL_API_KEY and
SFL_BASE_URL, the profile (--profile, SFL_PROFILE; \`sfl keys set\`), or --sandbox. No tool takes a key or
a URL, and none returns the key. Without a configuration the server starts all the same: find_counties and
export_statistics work, every other tool answers what the person must set, and stderr says it once.

Every tool call ends within ${MCP_DEFAULTS.deadline} s (below the 60 s MCP clients wait), requests, retries and rate-limit
waits included; a cancelled call stops its requests and retries. A spent rate-limit budget is a tool error
that says when it returns (waits longer than --max-wait, ${MCP_DEFAULTS.maxWait} s here, are not made). The server ends when
its client closes stdin, whatever is in flight. stdout carries only the protocol; notices go to stderr.
export_statistics reads sfl's exports only (an --out-dir folder with its manifest, or a file whose header
or first record is an export's; a .gz export is expanded into a private copy first), never other files,
FIFOs or devices.`

  static override examples = [
    {description: 'Try it with the embedded sandbox', command: '<%= config.bin %> mcp --sandbox'},
    {
      description: "With a stored profile's key and base URL",
      command: '<%= config.bin %> mcp --profile default',
    },
  ]

  /** The connection flags, with the defaults the tools use (a call's deadline caps them all). */
  static override baseFlags = {
    ...serviceBaseFlags,
    timeout: Flags.integer({
      description: `Deadline in seconds for each request as a whole: connect, headers and reading the body [default: ${MCP_DEFAULTS.timeout}; a tool call ends within ${MCP_DEFAULTS.deadline} s in all]`,
      min: 1,
      helpGroup: 'CONNECTION',
    }),
    'max-wait': Flags.integer({
      description: `Longest wait in seconds for a rate-limit reset before the tool says when the budget returns instead [default: ${MCP_DEFAULTS.maxWait}]`,
      min: 0,
      helpGroup: 'CONNECTION',
    }),
  }

  /** A tool call must not hang on an hour's reset: the assistant is told when the budget returns instead. */
  protected static override defaultMaxWait = MCP_DEFAULTS.maxWait
  protected static override defaultTimeout = MCP_DEFAULTS.timeout

  async run(): Promise<void> {
    const f = this.flags
    // stdin is the protocol's input: the key cannot be read from it
    if (f['api-key'] === '-')
      throw new UsageError(
        'sfl mcp reads the MCP protocol on stdin, so --api-key - cannot read a key from it; set SFL_API_KEY or use `sfl keys set`',
      )
    if (f.sandbox)
      (await import('../api/secrets.js')).registerSecret(
        (await import('../sandbox/keys.js')).SANDBOX_DEFAULT_KEY,
      )
    // no configuration is no reason to refuse the assistant: the server says what to set instead
    const ctx = await this.context().catch((error: unknown) => {
      if (error instanceof SflError && !f.sandbox) return error
      throw error
    })
    // the SDK loads here, never on another command's path (start-up)
    const {serveMcp} = await import('../cli/mcp-serve.js')
    await serveMcp({
      ctx: ctx instanceof SflError ? undefined : ctx,
      unconfigured: ctx instanceof SflError ? ctx : undefined,
      origin: this.origin,
      sandbox: f.sandbox,
      configDir: this.config.configDir,
      flags: {profile: f.profile, baseUrl: f['base-url'], apiKey: f['api-key']},
      timeoutMs: (f.timeout ?? MCP_DEFAULTS.timeout) * 1000,
      userAgent: `${this.config.name}/${this.config.version} (mcp) node/${process.versions.node}`,
      version: this.config.version,
      log: (line) => this.notice(line),
      warn: (line) => this.warnAlways(line),
    })
  }
}
