import {baseUrlProblemText} from '../api/endpoint-check.js'
import {SflError, type ErrorFacts} from '../errors.js'
import {exportSourceText} from '../io/export-source-words.js'

/**
 * `sfl mcp`'s words for an error: the facts it carries (src/errors.ts ErrorFacts) said with the tools'
 * parameters and tools (`county`, `find_counties`), and, for what only the person can change (the key,
 * the base URL), what the person must do. Never a CLI flag: the assistant cannot pass one. The service's own
 * words are quoted, so they read as what it said. An error without facts keeps its message. Pure.
 */
export interface McpWordsContext {
  /** Where the key came from, in words without flags ("SFL_API_KEY", "profile default in …"). */
  keyFrom: string
}

export function mcpMessage(err: SflError, ctx: McpWordsContext): string {
  const f = err.facts
  return f ? mcpWords(f, err, ctx) : err.message
}

/** The service's message, quoted: it is the service's data, not sfl's sentence. */
const said = (text: string) => (text ? `; the service said ${JSON.stringify(text)}` : '')

function mcpWords(f: ErrorFacts, err: SflError, ctx: McpWordsContext): string {
  const cause = (otherwise: string) =>
    err.cause instanceof SflError ? mcpMessage(err.cause, ctx) : otherwise
  switch (f.topic) {
    case 'not-found':
      return `no property matches ${f.by} ${f.value} in ${f.county} (HTTP 404${said(f.said)}). Check that county names the county the parcel is in (find_counties finds its code), or look it up by address`
    case 'address-not-found':
      return `no property matches in ${f.county} (HTTP 404${said(f.said)}): tried ${f.tried}. ${f.box ? 'A PO box or a rural route box is a mailing address, not a parcel: the service looks properties up by their street address, so ask for the street address (or the parcel number, apn)' : 'Try the parcel number (apn), check county (find_counties finds its code), or spell the street as the county records it'}`
    case 'invalid-key':
      return `the API key sfl is configured with is invalid or missing (HTTP 401${said(f.said)}). It came from ${ctx.keyFrom}: the person must set a valid key (SFL_API_KEY, or \`sfl keys set\`) and restart the server; no tool takes a key`
    case 'request-timeout':
      return `no complete answer from ${f.host} within ${f.seconds} s (connect, headers and body); the server is slow or dripping its answer`
    case 'wait-too-long':
      return `rate limit: the key's budget returns in ${f.seconds} s, longer than this server waits (${f.maxWaitSeconds} s)${f.after429 ? ' (the service answered 429)' : ''}`
    case 'gave-up':
      return `${f.network ? 'network failure: ' : ''}${cause(f.detail)} (gave up after ${f.retries} retries)`
    case 'circuit-open':
      return `stopped after ${f.failures} failures in a row (the service or the network seems down; last: ${cause('')}); try again later`
    case 'no-base-url':
    case 'no-key':
      return notConfigured(f.topic)
    case 'base-url-path':
      return `${baseUrlProblemText(f)}; the person must set the server's base URL (SFL_BASE_URL, or the profile's with \`sfl keys set\`) to ${f.fixed} and restart it`
    case 'county-needed':
      return `check_key needs a county to probe: give counties ["06067"] (find_counties finds a county's code); profile ${f.profile} has no default county`
    case 'no-profile':
      return `sfl mcp runs with profile "${f.profile}", which does not exist${f.known.length ? ` (known: ${f.known.join(', ')})` : ''}: the person must store it with \`sfl keys set\`, or set SFL_PROFILE to a known one, and restart the server`
    case 'manifest-unreadable':
      return `${f.path} is not a manifest this version of sfl can read; plan without out_dir, or with another folder`
    case 'manifest-format':
      return `out_dir ${f.dir} holds a ${f.has} export, not ${f.wanted}: give format "${f.has}", or another out_dir`
    case 'deadline':
      return `the call did not finish within its deadline of ${f.seconds} s (requests, retries and rate-limit waits included); nothing more is sent for it. Try again, later if the service is slow`
    case 'export-source':
      // a manifest's file names are the manifest's text: not repeated here
      return f.problem.kind === 'county-file-missing'
        ? `${f.path}: the file of county ${f.problem.fips} is missing`
        : exportSourceText(f.path, f.problem)
    case 'budget-spent':
    case 'request-cap':
      return err.message
  }
}

/**
 * What the person must set when `sfl mcp` has no service to call (no base URL, or no key): the tool error
 * of every tool that needs the service, and the server's line on stderr at start.
 */
export function notConfigured(missing: 'no-base-url' | 'no-key', profile = 'default'): string {
  const what = missing === 'no-base-url' ? 'no service base URL' : 'no API key'
  return `sfl is not configured to call the Special Financing Lookup Service (${what}). The person must set SFL_BASE_URL and SFL_API_KEY in the environment sfl mcp is started with, or store both with \`sfl keys set\` (profile "${profile}"; SFL_PROFILE picks another), then restart the server. find_counties works without it`
}
