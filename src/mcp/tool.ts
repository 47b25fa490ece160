import type {McpServer} from '@modelcontextprotocol/sdk/server/mcp.js'
import type {CallToolResult, ToolAnnotations} from '@modelcontextprotocol/sdk/types.js'
import type * as z from 'zod'

import {redact} from '../api/secrets.js'
import {RateLimitExceededError, SflError} from '../errors.js'
import type {Core} from '../lib/core.js'

/**
 * What every tool of `sfl mcp` is made of, and the one place a tool's answer or failure becomes an MCP
 * result: a failure is a tool result with `isError: true` and the CLI's one-line message (never a
 * protocol error, never a crash of the server), and every text passes `redact` (src/api/secrets.ts).
 */

/** What the tools reach: the one core and what only the command knows (where the key came from, the hints). */
export interface ToolDeps {
  /** The one client and scheduler of the server (src/lib/core.ts): every request shares its budget. */
  core: Core
  /** Where the key came from, as the CLI names it ("SFL_API_KEY", "profile default in …"); never the key. */
  keyFrom: string
  /** The profile in use. */
  profile: string
  /** true when the server runs on the embedded sandbox (`sfl mcp --sandbox`). */
  sandbox: boolean
  /**
   * The counties `check_key` probes when none is given, and the key's source label (src/keys/plan.ts): the
   * profile's default county, or the sandbox's demo county.
   */
  planCheck: (fips: string[]) => Promise<{
    fips: string[]
    why: 'asked' | 'profile default' | 'sandbox demo county'
    keySource: 'flag' | 'env' | 'profile' | 'sandbox'
    countyName: (fips: string) => string | undefined
  }>
  /** A connection of its own for `plan_export`'s one probe request: no retries and no waiting (src/lib/dry-run.ts). */
  probe: () => Promise<Core & {profile: string; sandbox?: unknown}>
  /** The CLI's message for an error, with the fix the run's settings point to (src/cli/error-hints.ts). */
  errorMessage: (err: SflError) => string
  /** A line for the log (stderr). */
  log: (line: string) => void
  now: () => number
}

/** A tool's answer: a short text for a person, and the same facts as structured content for a program. */
export interface ToolAnswer {
  text: string
  structured: Record<string, unknown>
}

export interface ToolDef<S extends z.ZodObject> {
  name: string
  title: string
  /** What the tool does and what it will not do (the assistant reads it to choose the tool). */
  description: string
  input: S
  output: z.ZodObject
  annotations: ToolAnnotations
  run: (args: z.infer<S>, deps: ToolDeps) => Promise<ToolAnswer>
}

/** Register a tool whose failures are tool errors with the CLI's message. */
export function registerTool<S extends z.ZodObject>(
  server: McpServer,
  def: ToolDef<S>,
  deps: ToolDeps,
): void {
  server.registerTool(
    def.name,
    {
      title: def.title,
      description: def.description,
      inputSchema: def.input,
      outputSchema: def.output,
      annotations: def.annotations,
    },
    // the SDK has checked the JSON types against `input` before this runs; the rules are checked in `run`.
    // The SDK types its callback by a conditional type over S, which TypeScript cannot resolve for a
    // generic S: the cast says what the SDK passes, the parsed arguments (z.infer<S>)
    (async (args: z.infer<S>): Promise<CallToolResult> => {
      try {
        const answer = await def.run(args, deps)
        return {
          content: [{type: 'text', text: redact(answer.text)}],
          structuredContent: redactDeep(answer.structured),
        }
      } catch (error) {
        return toolError(error, deps)
      }
    }) as never,
  )
}

/**
 * The tool error for a failure: an SflError reads as the CLI prints it (a spent budget also says when it
 * returns); anything else is an unexpected failure, logged and said in one line, as the CLI does (exit 1).
 */
export function toolError(
  error: unknown,
  deps: Pick<ToolDeps, 'core' | 'errorMessage' | 'log'>,
): CallToolResult {
  let text: string
  if (error instanceof SflError) {
    text = deps.errorMessage(error)
    const reset = deps.core.scheduler.budget().resetAtMs
    // the scheduler's own words say how long; the clock time is what an assistant can tell a person
    if (error instanceof RateLimitExceededError && reset !== undefined)
      text += `; the budget returns at ${new Date(reset).toISOString().replace(/\.\d{3}Z$/, 'Z')}`
  } else {
    text = `unexpected failure: ${error instanceof Error ? error.message : String(error)}`
    deps.log(`sfl mcp: ${text}`)
  }
  return {content: [{type: 'text', text: redact(text)}], isError: true}
}

/** Every string of a value redacted (src/api/secrets.ts): records, texts, messages alike. */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T
  if (Array.isArray(value)) return value.map(redactDeep) as T
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v)
    return out as T
  }
  return value
}
