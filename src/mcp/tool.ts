import type {McpServer} from '@modelcontextprotocol/sdk/server/mcp.js'
import type {CallToolResult, ToolAnnotations} from '@modelcontextprotocol/sdk/types.js'
import type * as z from 'zod'

import {redact} from '../api/secrets.js'
import {abortedBy, RateLimitExceededError, RequestTimeoutError, SflError, UsageError} from '../errors.js'
import type {DeadlineTimers} from '../api/client.js'
import type {Core} from '../lib/core.js'
import {sanitizeForTerminal} from '../render/terminal.js'
import {CALL_DEADLINE_S} from './deadline.js'
import {mcpMessage, notConfigured} from './words.js'

/**
 * What every tool of `sfl mcp` is made of, and the one place a tool's answer or failure becomes an MCP
 * result (an assistant is an untrusted caller, and the service's text is data):
 * - every call has one deadline (CALL_DEADLINE_S, below the 60 s MCP clients wait): the request in flight,
 *   its retries and any rate-limit wait end with it, as they do on `notifications/cancelled` and when the
 *   server closes; the call then answers at once (a tool error saying so), whatever the tool was doing;
 * - a failure is a tool result with `isError: true` in `sfl mcp`'s words (src/mcp/words.ts: the tools'
 *   parameters, never a CLI flag), never a protocol error or a crash of the server;
 * - every text has its control characters, escape sequences and bidirectional marks shown escaped, as the
 *   CLI's table shows them (src/render/terminal.ts), and passes `redact` (src/api/secrets.ts);
 *   `structuredContent` keeps the values as sent (redacted), for a client that renders data as data;
 * - a tool that needs the service, on a server started without a configuration, answers what to set.
 */

export {CALL_DEADLINE_S}

/** The sentence every tool's description ends with. */
export const DEADLINE_TEXT = `Answers within ${CALL_DEADLINE_S} s, requests, retries and rate-limit waits included; past that the call ends with an error saying so.`

/** What the tools reach: the one core and what only the command knows (where the key came from, the hints). */
export interface ToolDeps {
  /**
   * The one client and scheduler of the server (src/lib/core.ts): every request shares its budget.
   * Undefined when the server started without a configuration: `unconfigured` says what to set.
   */
  core: Core | undefined
  /** Why there is no core, in words for the assistant (src/mcp/words.ts notConfigured). */
  unconfigured?: string | undefined
  /** Where the key came from, in words without flags ("SFL_API_KEY", "profile default in …"); never the key. */
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
  /** A line for the log (stderr). */
  log: (line: string) => void
  now: () => number
  /** Each call's deadline in ms (tests); CALL_DEADLINE_S otherwise. */
  deadlineMs?: number | undefined
  /** The deadline's timer (tests: one the test fires); Node's, unref'd, otherwise. */
  timers?: DeadlineTimers | undefined
  /** Aborted when the server closes (stdin ended): every call in flight ends. */
  closing?: AbortSignal | undefined
}

/** A tool's answer: a short text for a person, and the same facts as structured content for a program. */
export interface ToolAnswer {
  text: string
  structured: Record<string, unknown>
}

/** What one call has: its signal (the deadline, a cancel, the server closing), and the core when configured. */
export interface ToolCall {
  signal: AbortSignal
}

export interface ToolDef<S extends z.ZodObject> {
  name: string
  title: string
  /** What the tool does and what it will not do (the assistant reads it to choose the tool). */
  description: string
  input: S
  output: z.ZodObject
  annotations: ToolAnnotations
  /** The tool calls the service: on a server without a configuration it answers what to set. */
  needsService: boolean
  run: (args: z.infer<S>, deps: ToolDeps, call: ToolCall) => Promise<ToolAnswer>
}

/** Register a tool whose failures are tool errors in `sfl mcp`'s words, and whose calls end by a deadline. */
export function registerTool<S extends z.ZodObject>(
  server: McpServer,
  def: ToolDef<S>,
  deps: ToolDeps,
): void {
  server.registerTool(
    def.name,
    {
      title: def.title,
      description: `${def.description}\n${DEADLINE_TEXT}`,
      inputSchema: def.input,
      outputSchema: def.output,
      annotations: def.annotations,
    },
    // the SDK has checked the JSON types against `input` before this runs; the rules are checked in `run`.
    // The SDK types its callback by a conditional type over S, which TypeScript cannot resolve for a
    // generic S: the cast says what the SDK passes, the parsed arguments (z.infer<S>) and the request's extra
    (async (args: z.infer<S>, extra: {signal: AbortSignal}): Promise<CallToolResult> => {
      if (def.needsService && !deps.core)
        return errorResult(deps.unconfigured ?? notConfigured('no-base-url', deps.profile))
      const call = callSignal(extra.signal, deps)
      try {
        const answer = await Promise.race([def.run(args, deps, {signal: call.signal}), call.ended])
        return {
          content: [{type: 'text', text: redact(sanitizeForTerminal(answer.text))}],
          structuredContent: redactDeep(answer.structured),
        }
      } catch (error) {
        return toolError(error, deps)
      } finally {
        call.clear()
      }
    }) as never,
  )
}

const NODE_TIMERS: DeadlineTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

/**
 * One call's signal: the client's cancel (`extra.signal`, which the SDK also aborts when the transport
 * closes), the server closing, and the deadline, whose reason is a RequestTimeoutError saying so. `ended`
 * rejects with that reason, so the call answers at the deadline even if a step does not heed the signal.
 */
function callSignal(
  cancel: AbortSignal,
  deps: Pick<ToolDeps, 'deadlineMs' | 'closing' | 'timers'>,
): {signal: AbortSignal; ended: Promise<never>; clear: () => void} {
  const ms = deps.deadlineMs ?? CALL_DEADLINE_S * 1000
  const timers = deps.timers ?? NODE_TIMERS
  const deadline = new AbortController()
  const seconds = Math.round(ms / 100) / 10
  const timer = timers.setTimeout(
    () =>
      deadline.abort(
        new RequestTimeoutError(`the call did not finish within its deadline of ${seconds} s`, {
          facts: {topic: 'deadline', seconds},
        }),
      ),
    ms,
  )
  const signal = AbortSignal.any([cancel, deadline.signal, ...(deps.closing ? [deps.closing] : [])])
  let onAbort = (): void => undefined
  const ended = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortedBy(signal))
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, {once: true})
  })
  ended.catch(() => undefined) // a call that finished first leaves it unheard
  return {
    signal,
    ended,
    clear: () => {
      timers.clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
    },
  }
}

/** The core of a tool that needs the service (registerTool has answered for a server without one). */
export function serviceCore(deps: Pick<ToolDeps, 'core' | 'unconfigured' | 'profile'>): Core {
  if (!deps.core) throw new UsageError(deps.unconfigured ?? notConfigured('no-base-url', deps.profile))
  return deps.core
}

/** A tool error's result: one line, controls escaped, the key masked. */
function errorResult(text: string): CallToolResult {
  return {
    content: [{type: 'text', text: redact(sanitizeForTerminal(text, {singleLine: true}))}],
    isError: true,
  }
}

/**
 * The tool error for a failure: an SflError in `sfl mcp`'s words (a spent budget also says when it
 * returns); anything else is an unexpected failure, logged and said in one line, as the CLI does (exit 1).
 */
export function toolError(error: unknown, deps: Pick<ToolDeps, 'core' | 'keyFrom' | 'log'>): CallToolResult {
  let text: string
  if (error instanceof SflError) {
    text = mcpMessage(error, {keyFrom: deps.keyFrom})
    const reset = deps.core?.scheduler.budget().resetAtMs
    // the scheduler's own words say how long; the clock time is what an assistant can tell a person
    if (error instanceof RateLimitExceededError && reset !== undefined)
      text += `; the budget returns at ${new Date(reset).toISOString().replace(/\.\d{3}Z$/, 'Z')}`
  } else {
    text = `unexpected failure: ${error instanceof Error ? error.message : String(error)}`
    deps.log(`sfl mcp: ${redact(sanitizeForTerminal(text, {singleLine: true}))}`)
  }
  return errorResult(text)
}

/** Every string of a value redacted (src/api/secrets.ts): records, texts, messages alike. */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T
  if (Array.isArray(value)) return value.map(redactDeep) as T
  if (value !== null && typeof value === 'object') {
    // fromEntries: a member named __proto__ (a record may hold one) stays a member, not the prototype
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)])) as T
  }
  return value
}
