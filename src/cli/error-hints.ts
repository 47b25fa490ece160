import {redactUrl} from '../api/secrets.js'
import {
  ForbiddenError,
  InvalidKeyError,
  RateLimitExceededError,
  RequestTimeoutError,
  type SflError,
} from '../errors.js'
import {cliMessage} from './error-words.js'
import {clockTime} from './wait-feedback.js'

/**
 * The likely fix for a failure that depends on where the run's settings came from, which only the CLI
 * knows (flag, environment, profile): a refused connection names the base URL in use and its source, a 401
 * or 403 names where the key came from ("SFL_API_KEY is set and overrides profile default"). Pure.
 */
export type KeySource = 'flag' | 'stdin' | 'env' | 'profile' | 'sandbox'
export type UrlSource = 'flag' | 'env' | 'profile' | 'sandbox'

export interface RunOrigin {
  baseUrl: string
  baseUrlSource: UrlSource
  keySource: KeySource
  profile: string
  /** The selected profile holds a key of its own, which a flag or SFL_API_KEY then overrode. */
  profileHasKey: boolean
  configPath: string
}

/** Codes that say the base URL points nowhere useful: nothing listens, no such host, no route to it. */
const WHERE_CODES: Record<string, string> = {
  ECONNREFUSED: 'nothing accepts connections at that address',
  ENOTFOUND: 'no such host (or DNS or a proxy failed)',
  EAI_AGAIN: 'the host name could not be looked up just now',
  EHOSTUNREACH: 'no route to that host',
  ENETUNREACH: 'no route to that network',
  ERR_SSL_WRONG_VERSION_NUMBER: 'that port speaks plain HTTP',
  ERR_SSL_PACKET_LENGTH_TOO_LONG: 'that port speaks plain HTTP',
}

/** The first code of the cause chain that WHERE_CODES knows. */
function whereCode(error: unknown): string | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as {code?: unknown}).code
    if (typeof code === 'string' && code in WHERE_CODES) return code
  }
  return undefined
}

function urlSource(o: RunOrigin): string {
  switch (o.baseUrlSource) {
    case 'flag':
      return 'from --base-url'
    case 'env':
      return 'from SFL_BASE_URL; --base-url overrides it'
    case 'profile':
      return `from profile ${o.profile} in ${o.configPath}; --base-url or SFL_BASE_URL override it`
    default:
      return 'the embedded sandbox'
  }
}

/** "SFL_API_KEY (it is set and overrides profile default)". */
export function keySourceText(
  o: Pick<RunOrigin, 'keySource' | 'profile' | 'profileHasKey' | 'configPath'>,
): string {
  const overrides = o.profileHasKey ? ` (it is set and overrides profile ${o.profile})` : ''
  switch (o.keySource) {
    case 'flag':
      return `--api-key${overrides}`
    case 'stdin':
      return `--api-key - (stdin)${overrides}`
    case 'env':
      return `SFL_API_KEY${overrides}`
    case 'profile':
      return `profile ${o.profile} in ${o.configPath}`
    default:
      return "the sandbox's demo keys"
  }
}

function keyFix(o: RunOrigin): string {
  switch (o.keySource) {
    case 'env':
      return o.profileHasKey
        ? 'fix SFL_API_KEY, or unset it to use the profile'
        : 'fix SFL_API_KEY, or unset it and store a key with `sfl keys set`'
    case 'profile':
      return `store a valid key with \`sfl keys set --profile ${o.profile}\``
    case 'sandbox':
      return 'see `sfl sandbox` for the demo keys'
    default:
      return 'check the key given'
  }
}

/**
 * "the API key is invalid or missing (HTTP 401): The API key is invalid or missing." → "the API key is
 * invalid or missing (HTTP 401)": the service's message is dropped where it only repeats sfl's sentence
 * (spec 7: 401 "Invalid or missing API key"); anything it adds is kept. Pure.
 */
export function withoutEcho(message: string): string {
  const m = /^(.+?) \(HTTP (\d{3})\): (.+?)((?:\. [A-Z].*)?)$/s.exec(message)
  if (!m) return message
  const words = (t: string) =>
    t
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, ' ')
      .trim()
  const [, ours, status, theirs, after] = m as unknown as [string, string, string, string, string]
  const said = words(theirs)
  return said !== '' && words(ours).includes(said) ? `${ours} (HTTP ${status})${after}` : message
}

/**
 * The CLI's next step after a timeout or a spent rate limit, with the clock time a wait would end: added
 * to the error line by src/cli/report-error.ts (it names CLI flags, so `sfl mcp`'s tool errors, which
 * share withHint, do not get it). Read from the error's facts (src/errors.ts), never from its words.
 */
export function nextStep(err: SflError, now: number): string | undefined {
  const f = err.facts
  if (f?.topic === 'request-timeout') {
    const more = Math.max(10, Math.ceil(f.seconds * 2))
    return `; if the server is only slow, give it longer with --timeout ${more} (each retry waits the same, and --retries 0 fails sooner)`
  }
  if (err instanceof RequestTimeoutError)
    return '; if the server is only slow, give it longer with --timeout (each retry waits the same, and --retries 0 fails sooner)'
  if (f?.topic === 'wait-too-long' && err instanceof RateLimitExceededError)
    return `: at ${clockTime(now + f.seconds * 1000)} on this machine's clock; run again then, or allow the wait with --max-wait ${f.seconds + 5}`
  return undefined
}

/**
 * The message to print for `err`: the CLI's words for it (src/cli/error-words.ts), without an echo of the
 * service's words, with the fix that the run's origin points to. A 401's general advice gives way to
 * where the key in use came from.
 */
export function withHint(err: SflError, o: RunOrigin | undefined): string {
  const text = withoutEcho(cliMessage(err))
  if (!o) return text
  if (err instanceof InvalidKeyError)
    return `${withoutEcho(err.message).replace(/[.\s]+$/, '')}. The key came from ${keySourceText(o)}: ${keyFix(o)}`
  if (err instanceof ForbiddenError)
    return `${text}; the key came from ${keySourceText(o)}: a key with permission for this county is needed`
  const code = whereCode(err)
  if (code)
    return `${text}; ${WHERE_CODES[code]}: check the base URL, in use ${redactUrl(o.baseUrl)} (${urlSource(o)})`
  return text
}
