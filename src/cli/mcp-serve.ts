import {redactUrl} from '../api/secrets.js'
import type {SflError} from '../errors.js'
import {planCheck} from '../keys/plan.js'
import {createCore} from '../lib/core.js'
import {createSflMcpServer} from '../mcp/server.js'
import {serveStdio} from '../mcp/stdio.js'
import type {ToolDeps} from '../mcp/tool.js'
import {mcpMessage, notConfigured} from '../mcp/words.js'
import type {RunOrigin} from './error-hints.js'
import type {Context} from './service-command.js'

/**
 * `sfl mcp`: the server's tools on the command's one connection (flag > env > profile, or --sandbox), served
 * on stdio until the client closes stdin. Loaded with import() by the command, so the MCP SDK is read only
 * on this path. Without a configuration (no base URL or key, or one that cannot be used) the server starts
 * all the same: find_counties and export_statistics work, every tool that needs the service answers what
 * to set, and stderr says it once. When stdin ends, every call in flight is ended and the process exits
 * within a second, whatever was still pending.
 */
export interface McpServeOptions {
  /** The connection; undefined when the configuration could not make one (`unconfigured` says why). */
  ctx: Context | undefined
  unconfigured?: SflError | undefined
  /** Where the base URL and key came from (src/cli/error-hints.ts), when there is a connection. */
  origin: RunOrigin | undefined
  sandbox: boolean
  configDir: string
  flags: {profile?: string | undefined; baseUrl?: string | undefined; apiKey?: string | undefined}
  timeoutMs: number
  userAgent: string
  version: string
  log: (line: string) => void
  /** A line said even with --quiet (the missing configuration). */
  warn: (line: string) => void
  /** Ends the process once the server has closed (tests inject it); process.exit otherwise. */
  exit?: (code: number) => void
}

/** Where the key came from, in words an assistant can pass on: no CLI flag in them. */
export function mcpKeyFrom(o: RunOrigin | undefined): string {
  if (!o) return 'nowhere (no key is configured)'
  const overrides = o.profileHasKey ? ` (it overrides the key of profile ${o.profile})` : ''
  switch (o.keySource) {
    case 'env':
      return `SFL_API_KEY${overrides}`
    case 'profile':
      return `profile ${o.profile} in ${o.configPath}`
    case 'sandbox':
      return "the sandbox's demo keys"
    default:
      return `the api-key option sfl mcp was started with${overrides}`
  }
}

export async function serveMcp(o: McpServeOptions): Promise<void> {
  const {ctx} = o
  const profile = ctx?.profile ?? o.flags.profile ?? process.env['SFL_PROFILE'] ?? 'default'
  const keyFrom = mcpKeyFrom(o.origin)
  const unconfigured = ctx ? undefined : whatToSet(o.unconfigured, profile, keyFrom)
  const closing = new AbortController()
  const deps: ToolDeps = {
    core: ctx && {baseUrl: ctx.baseUrl, apiKey: ctx.apiKey, client: ctx.client, scheduler: ctx.scheduler},
    unconfigured,
    keyFrom,
    profile,
    sandbox: o.sandbox,
    planCheck: (fips) =>
      planCheck({
        fips,
        sandbox: o.sandbox,
        configDir: o.configDir,
        flags: o.flags,
        keyInUse: ctx?.apiKey ?? '',
      }),
    // plan_export's probe is one request, as county-export --dry-run sends it: no retries, no waiting
    probe: async () => ({
      ...createCore({
        baseUrl: ctx?.baseUrl ?? '',
        apiKey: ctx?.apiKey ?? '',
        keyOrigin: keyFrom,
        timeoutMs: o.timeoutMs,
        retries: 0,
        maxWaitMs: 0,
        concurrency: 1,
        userAgent: o.userAgent,
      }),
      profile,
      ...(ctx?.sandbox ? {sandbox: ctx.sandbox} : {}),
    }),
    log: o.log,
    now: Date.now,
    closing: closing.signal,
  }
  const server = createSflMcpServer(deps, o.version)
  const tools = 'tools: lookup_property, find_counties, check_key, plan_export, export_statistics'
  if (ctx)
    o.log(`sfl mcp: serving on stdio, base URL ${redactUrl(ctx.baseUrl)}, key from ${keyFrom} (${tools})`)
  else o.warn(`sfl mcp: serving on stdio without the service: ${unconfigured} (${tools})`)
  try {
    await serveStdio(server, {log: o.log})
  } finally {
    // stdin ended: whatever is still in flight ends now, and the process with it (an idle keep-alive
    // socket or a slow file would otherwise hold it for seconds after its client went away)
    closing.abort()
    const exit = o.exit ?? ((code: number) => process.exit(code))
    setTimeout(() => exit(typeof process.exitCode === 'number' ? process.exitCode : 0), 1000).unref()
  }
}

/** What the person must set, for the tools' errors and the line at start. */
function whatToSet(error: SflError | undefined, profile: string, keyFrom: string): string {
  const topic = error?.facts?.topic
  if (!error || topic === 'no-base-url' || topic === 'no-key')
    return notConfigured(topic === 'no-key' ? 'no-key' : 'no-base-url', profile)
  return `sfl's configuration cannot be used: ${mcpMessage(error, {keyFrom})}. The person must fix it (SFL_BASE_URL and SFL_API_KEY in the environment sfl mcp is started with, or \`sfl keys set\`; profile "${profile}") and restart the server`
}
