import {redactUrl} from '../api/secrets.js'
import type {SflError} from '../errors.js'
import {planCheck} from '../keys/plan.js'
import {createCore} from '../lib/core.js'
import {createSflMcpServer} from '../mcp/server.js'
import {serveStdio} from '../mcp/stdio.js'
import type {ToolDeps} from '../mcp/tool.js'
import type {Context} from './service-command.js'

/**
 * `sfl mcp`: the server's tools on the command's one connection (flag > env > profile, or --sandbox), served
 * on stdio until the client closes stdin. Loaded with import() by the command, so the MCP SDK is read only
 * on this path.
 */
export interface McpServeOptions {
  ctx: Context
  /** Where the key came from, as the CLI's hints name it (src/cli/error-hints.ts keySourceText). */
  keyFrom: string
  sandbox: boolean
  configDir: string
  flags: {profile?: string | undefined; baseUrl?: string | undefined; apiKey?: string | undefined}
  timeoutMs: number
  userAgent: string
  version: string
  errorMessage: (err: SflError) => string
  log: (line: string) => void
}

export async function serveMcp(o: McpServeOptions): Promise<void> {
  const {ctx} = o
  const core = {baseUrl: ctx.baseUrl, apiKey: ctx.apiKey, client: ctx.client, scheduler: ctx.scheduler}
  const deps: ToolDeps = {
    core,
    keyFrom: o.keyFrom,
    profile: ctx.profile,
    sandbox: o.sandbox,
    planCheck: (fips) =>
      planCheck({
        fips,
        sandbox: o.sandbox,
        configDir: o.configDir,
        flags: o.flags,
        keyInUse: ctx.apiKey,
        askFor: 'give counties ["06067"]',
      }),
    // plan_export's probe is one request, as county-export --dry-run sends it: no retries, no waiting
    probe: async () => ({
      ...createCore({
        baseUrl: ctx.baseUrl,
        apiKey: ctx.apiKey,
        keyOrigin: o.keyFrom,
        timeoutMs: o.timeoutMs,
        retries: 0,
        maxWaitMs: 0,
        concurrency: 1,
        userAgent: o.userAgent,
      }),
      profile: ctx.profile,
      ...(ctx.sandbox ? {sandbox: ctx.sandbox} : {}),
    }),
    errorMessage: o.errorMessage,
    log: o.log,
    now: Date.now,
  }
  const server = createSflMcpServer(deps, o.version)
  o.log(
    `sfl mcp: serving on stdio, base URL ${redactUrl(ctx.baseUrl)}, key from ${o.keyFrom} (tools: lookup_property, find_counties, check_key, plan_export, export_statistics)`,
  )
  await serveStdio(server, {log: o.log})
}
