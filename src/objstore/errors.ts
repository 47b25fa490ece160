import {
  BadResponseError,
  ForbiddenError,
  InvalidKeyError,
  RateLimitExceededError,
  ServerError,
  ServerStatusError,
  type SflError,
  UnexpectedStatusError,
  UsageError,
  systemCode,
} from '../errors.js'
import {maskKeyEnds, redact} from '../api/secrets.js'

/**
 * An object store's refusal as sfl's error classes, each ONE line that names the location, what the store
 * said (its error code) and what to do, and never a secret. The exit codes (README "Exit codes"), chosen
 * to match what the same fault means for the service or a local path:
 *
 * | the store says | class | exit | why |
 * |---|---|---|---|
 * | InvalidAccessKeyId, SignatureDoesNotMatch, ExpiredToken, InvalidToken | InvalidKeyError | 4 | refused credentials are a refused key |
 * | AccessDenied (a denied write or read) | ForbiddenError | 4 | credentials not permitted, as the service's 403 |
 * | NoSuchBucket, NoSuchKey | UsageError | 2 | as a local --out-dir whose folder does not exist, or a missing input file |
 * | the bucket is in another region (PermanentRedirect, AuthorizationHeaderMalformed) | UsageError | 2 | a setting to fix |
 * | RequestTimeTooSkewed | UsageError | 2 | the local clock, fixed locally |
 * | PreconditionFailed (the object changed during a resumed read) | ServerError | 6 | read again |
 * | SlowDown, 429, still after the retries | RateLimitExceededError | 5 | the store's rate limit, as the service's |
 * | 5xx, resets, timeouts, still after the retries | ServerStatusError, ServerError | 6 | server or network |
 * | anything else | UnexpectedStatusError | 6 | the store's answer, not the user's input |
 */
export interface ErrorContext {
  /** `s3://bucket/key` or `s3://bucket/prefix/`. */
  location: string
  /** "writing", "reading", "listing", "deleting"... */
  doing: string
  host: string
  credentialsSource: string
  accessKeyId: string | undefined
  region: string
  regionSource: string
}

export interface StoreFault {
  status: number
  /** S3's <Code>, or '' when the body had none (a HEAD, a proxy's page). */
  code: string
  /** S3's <Message>, server text: redacted and cut here. */
  message: string
  /** <Region> or x-amz-bucket-region: where the bucket really is. */
  region?: string | undefined
}

/** Server text for one line: control characters and line breaks out, redacted, at most 200 characters. */
export function cleanServerText(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters would drive the terminal
  const one = redact(text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim())
  return one.length > 200 ? `${one.slice(0, 200)}…` : one
}

const THROTTLED = new Set([
  'SlowDown',
  'TooManyRequests',
  'TooManyRequestsException',
  'Throttling',
  'ThrottlingException',
])

/** A status and code worth retrying (AWS SDKs' standard retry mode): throttling, 5xx, RequestTimeout. */
export function isRetryableFault(fault: StoreFault): boolean {
  if (THROTTLED.has(fault.code) || fault.status === 429) return true
  if (fault.code === 'RequestTimeout' || fault.code === 'InternalError') return true
  // 501 NotImplemented is an answer, not a passing fault
  return fault.status >= 500 && fault.status !== 501
}

export function isThrottle(fault: StoreFault): boolean {
  return THROTTLED.has(fault.code) || fault.status === 429 || fault.status === 503
}

export function faultError(fault: StoreFault, ctx: ErrorContext, attempts: number): SflError {
  const said = `${fault.code || `HTTP ${fault.status}`}${fault.code ? `, HTTP ${fault.status}` : ''}`
  const where = ctx.location
  const key = ctx.accessKeyId ? maskKeyEnds(ctx.accessKeyId) : 'the access key'
  const storeText = fault.message ? `: ${cleanServerText(fault.message)}` : ''
  switch (fault.code) {
    case 'InvalidAccessKeyId':
      return new InvalidKeyError(
        `${where}: the store does not know the access key ${key} (${said}); check the credentials from ${ctx.credentialsSource} and the endpoint ${ctx.host}`,
        fault.status,
      )
    case 'SignatureDoesNotMatch':
      return new InvalidKeyError(
        `${where}: the store refused the request's signature (${said}): the secret access key from ${ctx.credentialsSource} does not match the access key ${key}; check it`,
        fault.status,
      )
    case 'ExpiredToken':
    case 'TokenRefreshRequired':
    case 'InvalidToken':
      return new InvalidKeyError(
        `${where}: the store refused the session token from ${ctx.credentialsSource} (${said}); it has expired or is not valid: get new credentials`,
        fault.status,
      )
    case 'AccessDenied':
    case 'AllAccessDisabled':
    case 'AccountProblem':
      return new ForbiddenError(
        `${where}: access denied while ${ctx.doing} (${said}); the credentials from ${ctx.credentialsSource} (${key}) are not permitted there: ask for the permission, or choose another bucket or prefix`,
        fault.status,
      )
    case 'NoSuchBucket':
      return new UsageError(
        `${where}: the bucket does not exist at ${ctx.host} (${said}); create it first, or check the bucket name, the region (${ctx.region}) and the endpoint`,
      )
    case 'NoSuchKey':
      return new UsageError(`${where}: no such object (${said})`)
    case 'PreconditionFailed':
      return new ServerError(
        `${where}: the object changed while sfl was ${ctx.doing} it (${said}); run again to read the new version whole`,
      )
    case 'RequestTimeTooSkewed':
      return new UsageError(
        `${where}: the store says this machine's clock is wrong by more than 15 minutes (${said}); set the system clock`,
      )
  }
  if (fault.code === '' && fault.status === 403)
    return new ForbiddenError(
      `${where}: the store refused ${ctx.doing} (HTTP 403, without a reason: a HEAD answer has no body); the credentials from ${ctx.credentialsSource} (${key}) are refused or not permitted there`,
      403,
    )
  const elsewhere = fault.region !== undefined && fault.region !== ctx.region
  if (elsewhere || fault.code === 'PermanentRedirect' || fault.code === 'AuthorizationHeaderMalformed')
    return new UsageError(
      elsewhere
        ? `${where}: the bucket is in region ${fault.region}, not ${ctx.region} (from ${ctx.regionSource}) (${said}); set AWS_REGION=${fault.region}`
        : `${where}: the store wants another endpoint or region for this bucket (${said})${storeText}; check AWS_REGION and AWS_ENDPOINT_URL_S3`,
    )
  const tries = attempts > 1 ? ` after ${attempts} attempts` : ''
  if (isThrottle(fault) && fault.status !== 500)
    return new RateLimitExceededError(
      `${where}: the store is throttling requests while ${ctx.doing} (${said})${tries}; run again later or with fewer runs at once`,
    )
  if (fault.status >= 500 && fault.status !== 501)
    return new ServerStatusError(
      `${where}: the store failed while ${ctx.doing} (${said})${tries}${storeText}; run again later`,
      fault.status,
    )
  return new UnexpectedStatusError(
    `${where}: the store refused ${ctx.doing} (${said})${storeText}`,
    fault.status,
  )
}

/** A request that never got an answer (reset, refused, timeout) and outlived the retries: exit 6. */
export function networkError(error: unknown, ctx: ErrorContext, attempts: number): SflError {
  if (error instanceof ServerError) {
    const tries = attempts > 1 ? ` after ${attempts} attempts` : ''
    return new ServerError(`${ctx.location}: ${error.message}${tries}`, {cause: error})
  }
  const code = systemCode(error) || systemCode((error as {cause?: unknown} | null)?.cause) || 'error'
  const tries = attempts > 1 ? ` after ${attempts} attempts` : ''
  return new ServerError(
    `${ctx.location}: no answer from the store at ${ctx.host} while ${ctx.doing} (${code})${tries}; check the endpoint and the network`,
    {cause: error},
  )
}

/** The store answered 2xx with something sfl cannot read (a listing without its elements...). */
export function badAnswer(ctx: ErrorContext, what: string): BadResponseError {
  return new BadResponseError(
    `${ctx.location}: the store's answer while ${ctx.doing} is not what S3 sends (${what})`,
  )
}
