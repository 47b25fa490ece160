import {keySourceText} from '../cli/error-hints.js'
import {ServiceCommand} from '../cli/service-command.js'
import {UsageError} from '../errors.js'
import {paragraphs} from '../cli/help-text.js'

export default class Mcp extends ServiceCommand<typeof Mcp> {
  static override summary =
    'Serve sfl to an AI assistant: a Model Context Protocol (MCP) server on stdin/stdout'
  static override description = paragraphs`An MCP server over stdio for assistants such as Claude Desktop: the assistant starts
\`sfl mcp\` and calls its tools: lookup_property (one property's eligibility, explained), find_counties,
check_key, plan_export (the requests and time of a county export, and the command line that runs it) and
export_statistics (of an export on disk). No bulk export through MCP: an export runs in the CLI.

The API key and base URL come from sfl's own configuration, as for every command: SFL_API_KEY and
SFL_BASE_URL, the profile (--profile, SFL_PROFILE; \`sfl keys set\`), or --sandbox. No tool takes a key or
a URL, and none returns the key. stdout carries only the protocol; notices go to stderr. A spent rate-limit
budget is a tool error that says when it returns (waits longer than --max-wait, 10 s here, are not made).`

  static override examples = [
    {description: 'Try it with the embedded sandbox', command: '<%= config.bin %> mcp --sandbox'},
    {
      description: "With a stored profile's key and base URL",
      command: '<%= config.bin %> mcp --profile default',
    },
  ]

  /** A tool call must not hang on an hour's reset: the assistant is told when the budget returns instead. */
  protected static override defaultMaxWait = 10

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
    const ctx = await this.context()
    // the SDK loads here, never on another command's path (start-up)
    const {serveMcp} = await import('../cli/mcp-serve.js')
    await serveMcp({
      ctx,
      keyFrom: keySourceText(this.origin!),
      sandbox: f.sandbox,
      configDir: this.config.configDir,
      flags: {profile: f.profile, baseUrl: f['base-url'], apiKey: f['api-key']},
      timeoutMs: (f.timeout ?? 30) * 1000,
      userAgent: `${this.config.name}/${this.config.version} (mcp) node/${process.versions.node}`,
      version: this.config.version,
      errorMessage: (err) => this.errorMessage(err),
      log: (line) => this.notice(line),
    })
  }
}
