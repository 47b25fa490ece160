import {UsageError} from '../errors.js'

/**
 * A base URL that cannot reach the endpoint is a configuration mistake, not "this property does not
 * exist" (spec 4 and 9.1: {base_url} carries the version segment, so the path reads /v1/special-financing).
 * Pure; called by the base command (before any request) and by the lookup (on a 404).
 */
export class ConfigurationError extends UsageError {}

/** What is wrong with a base URL's path, and the base URL that fixes it (spec 4, 9.1). */
export interface BaseUrlProblem {
  baseUrl: string
  fixed: string
  /** The version is there, but so is the endpoint path, which sfl adds itself. */
  endpointPath: boolean
}

/** Does the base URL's path end in a version segment (/v1, /v2, …)? Returns the fix when it does not. */
export function baseUrlProblem(baseUrl: string): BaseUrlProblem | undefined {
  let path: string
  try {
    path = new URL(baseUrl).pathname.replace(/\/+$/, '')
  } catch {
    return undefined // the URL checks elsewhere say what is wrong with it
  }
  if (/\/v\d+$/.test(path)) return undefined
  const root = baseUrl.replace(/\/+$/, '').replace(/\/special-financing$/i, '')
  // ".../v1/special-financing": the version is there, but so is the endpoint, which sfl adds itself
  if (/\/special-financing$/i.test(path) && /\/v\d+$/.test(root))
    return {baseUrl, fixed: root, endpointPath: true}
  return {baseUrl, fixed: /\/v\d+$/.test(root) ? root : `${root}/v1`, endpointPath: false}
}

/** The problem in words without a caller's vocabulary: what is wrong, and the base URL that is right. */
export function baseUrlProblemText(p: BaseUrlProblem): string {
  return p.endpointPath
    ? `the base URL ${p.baseUrl} ends in the endpoint path /special-financing, which sfl adds to every request (spec 4: {base_url}/special-financing); drop it`
    : `the base URL ${p.baseUrl} has no version segment: the spec's base URL ends in /v1 (spec 4, 9.1)`
}

/** A 404 whose body says the endpoint, not a property, is missing ("No such endpoint", "Cannot GET /x"). */
export function isMissingEndpoint(message: string): boolean {
  return /no such endpoint|endpoint (?:does not|doesn't) exist|unknown endpoint|route not found|cannot get \//i.test(
    message,
  )
}

export function missingEndpointError(baseUrl: string, message: string): ConfigurationError {
  return new ConfigurationError(
    `the service says the endpoint does not exist (HTTP 404: ${message}): the base URL ${baseUrl} is wrong; it should be the service's address including /v1, so that ${baseUrl.replace(/\/+$/, '')}/special-financing is the endpoint (spec 4)`,
  )
}

/** The base-command check: a base URL without its version segment is a usage error (exit 2) with the fix. */
export function assertVersionedBaseUrl(baseUrl: string): void {
  const p = baseUrlProblem(baseUrl)
  if (p)
    throw new ConfigurationError(`${baseUrlProblemText(p)}; the base URL should be ${p.fixed}`, {
      facts: {topic: 'base-url-path', ...p},
    })
}
