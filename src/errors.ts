/**
 * Every failure the CLI (and the library) can report is one of these classes, each tied to exactly one
 * exit code and a stable `code` a program can switch on (`err.code === 'RATE_LIMITED'`). The table is
 * documented in the README ("Exit codes") and is the same for every command. Every layer may import this
 * module; it imports nothing.
 */
export const ExitCode = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  notFound: 3,
  auth: 4,
  rateLimit: 5,
  server: 6,
  partial: 7,
  /** The local file system refused a write: disk full, permission, read-only (nothing half written). */
  localIo: 8,
  /** Ctrl-C or SIGTERM (128 + SIGINT, as a shell reports it). */
  interrupted: 130,
  /** The reader of stdout went away (`| head`): 128 + SIGPIPE, as a shell reports a process killed by it. */
  outputClosed: 141,
} as const
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

/**
 * What a failure was about, as facts rather than words: what was asked and what the service said. Each
 * caller words them in its own vocabulary: the CLI with its flags (src/cli/error-words.ts), `sfl mcp` with
 * its tools' parameters and tools (src/mcp/words.ts), the library with its option and field names
 * (src/lib/words.ts). `message` holds a neutral wording (the spec's names, no flag, no option) for a reader
 * that has no wording of its own; a topic added here fails to compile until every caller words it.
 */
export type ErrorFacts =
  /** spec 7: a 404 for a lookup by APN or property ID; `said` is the service's message (may be ''). */
  | {
      topic: 'not-found'
      by: 'apn' | 'property_id'
      value: string
      county: string
      said: string
      /** How the county's APNs look, from a record seen before (src/text/apn-shape.ts): issue 31. */
      seen?: {shape: string; source: 'earlier answer' | 'export'}
    }
  /** spec 7: every form of an address answered 404; `tried` lists them as sent. */
  /** `box`: the address typed is a PO box or a rural route box (a mailing address, not a parcel). */
  | {topic: 'address-not-found'; county: string; said: string; tried: string; fallback: boolean; box: boolean}
  /** spec 5.4: 401; `said` is the service's message without a trailing full stop. */
  | {topic: 'invalid-key'; said: string}
  /** One request's deadline (connect, headers and body) passed. */
  | {topic: 'request-timeout'; host: string; seconds: number}
  /** The budget returns later than the longest wait allowed (spec 8.3). */
  | {topic: 'wait-too-long'; seconds: number; maxWaitSeconds: number; after429: boolean}
  /** No request left, and the service did not say when the window resets. */
  | {topic: 'budget-spent'; reserve: number}
  | {topic: 'request-cap'; maxRequests: number}
  /** A request failed after its retries; `cause` is the last failure, `detail` its neutral description. */
  | {topic: 'gave-up'; retries: number; network: boolean; detail: string}
  /** Requests in a row failed; `cause` is the last one's error. */
  | {topic: 'circuit-open'; failures: number}
  | {topic: 'no-base-url'}
  /** spec 4, 9.1: the base URL lacks its version segment or carries the endpoint path. */
  | {topic: 'base-url-path'; baseUrl: string; fixed: string; endpointPath: boolean}
  | {topic: 'no-key'}
  /** A key check with no county to probe. */
  | {topic: 'county-needed'; profile: string}
  | {topic: 'no-profile'; profile: string; known: string[]}
  /** An export folder's manifest that cannot be read, or that holds another format. */
  | {topic: 'manifest-unreadable'; path: string; problem: string}
  | {topic: 'manifest-format'; dir: string; has: string; wanted: string}
  /** The whole call (requests, retries, waits) passed its deadline. */
  | {topic: 'deadline'; seconds: number}
  /** An export path refused or that could not be read (src/io/export-source.ts); never its bytes. */
  | {topic: 'export-source'; path: string; problem: ExportSourceProblem}

/** Why an export path was refused or could not be read: facts about the path, never its content. */
export type ExportSourceProblem =
  | {kind: 'missing'}
  | {kind: 'not-regular'; is: 'FIFO' | 'device' | 'socket' | 'link' | 'other'}
  | {kind: 'system-path'}
  | {kind: 'too-large'; limitBytes: number}
  | {kind: 'line-too-long'; limitBytes: number}
  /** `why` is one of the gate's own phrases ("column 3 is no field of the spec"), never the file's text. */
  | {kind: 'not-an-export'; format: string; why: string}
  | {kind: 'folder-without-manifest'}
  | {kind: 'county-file-missing'; fips: string; file: string}
  | {kind: 'outside-folder'; fips: string}
  | {kind: 'unreadable'; code: string}
  | {kind: 'damaged'; format: string; line: number | undefined}
  /** A Parquet file in a codec this Node lacks (zstd before 22.15): what it needs and what this is. */
  | {kind: 'codec-unavailable'; codec: string; needs: string; node: string}

export type ErrorTopic = ErrorFacts['topic']

export interface SflErrorOptions extends ErrorOptions {
  /** What the error is about, for each caller to word (see ErrorFacts). */
  facts?: ErrorFacts | undefined
}

export class SflError extends Error {
  readonly code: string = 'UNEXPECTED'
  readonly exitCode: ExitCodeValue = ExitCode.unexpected
  /** The facts behind the message, when a caller words this error its own way. */
  readonly facts: ErrorFacts | undefined
  /** `cause`: the low-level error behind this one (a socket's ECONNREFUSED), for the hints the CLI adds. */
  constructor(message: string, options?: SflErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.facts = options?.facts
  }
}

/** Bad flags or input, detected before any request is sent. */
export class UsageError extends SflError {
  override readonly code: string = 'USAGE'
  override readonly exitCode = ExitCode.usage
}

/** Strict schema check failed (`--strict`). */
export class SchemaError extends SflError {
  override readonly code: string = 'SCHEMA'
  override readonly exitCode = ExitCode.unexpected
}

/** Errors that carry an HTTP status from the service (spec section 7). */
export class HttpStatusError extends SflError {
  override readonly code: string = 'HTTP_STATUS'
  constructor(
    message: string,
    readonly status: number,
    options?: SflErrorOptions,
  ) {
    super(message, options)
  }
}

/** An HTTP status the spec does not describe (410, a 3xx without Location...): the server's fault, exit 6. */
export class UnexpectedStatusError extends HttpStatusError {
  override readonly code: string = 'UNEXPECTED_STATUS'
  override readonly exitCode = ExitCode.server
}

/** 400: the service rejected the query parameters. */
export class BadRequestError extends HttpStatusError {
  override readonly code: string = 'BAD_REQUEST'
  override readonly exitCode = ExitCode.usage
}

/** 404: no property matches (spec section 7). */
export class NotFoundError extends HttpStatusError {
  override readonly code: string = 'NOT_FOUND'
  override readonly exitCode = ExitCode.notFound
}

/** 401: the key is invalid or missing (spec 5.4). */
export class InvalidKeyError extends HttpStatusError {
  override readonly code: string = 'INVALID_KEY'
  override readonly exitCode = ExitCode.auth
}

/** 403: the key lacks permission for the resource (spec 5.4). */
export class ForbiddenError extends HttpStatusError {
  override readonly code: string = 'FORBIDDEN'
  override readonly exitCode = ExitCode.auth
}

/** No key configured at all: nothing was sent. */
export class MissingKeyError extends SflError {
  override readonly code: string = 'MISSING_KEY'
  override readonly exitCode = ExitCode.auth
}

/** 429 still in force after waiting up to --max-wait, or a wait longer than --max-wait is needed. */
export class RateLimitExceededError extends SflError {
  override readonly code: string = 'RATE_LIMITED'
  override readonly exitCode = ExitCode.rateLimit
}

/** 5xx, connection resets, truncated bodies and timeouts that outlived the retries. */
export class ServerError extends SflError {
  override readonly code: string = 'SERVER'
  override readonly exitCode = ExitCode.server
}

/** A response we could not understand (non-JSON body from a proxy, a 200 without data). */
export class BadResponseError extends ServerError {
  override readonly code: string = 'BAD_RESPONSE'
}

/** Some units of a batch or export failed; the rest were written. */
export class PartialFailureError extends SflError {
  override readonly code: string = 'PARTIAL'
  override readonly exitCode = ExitCode.partial
}

/** The run was interrupted (Ctrl-C, SIGTERM); what is not done stays in the checkpoint. */
export class InterruptedError extends SflError {
  override readonly code: string = 'INTERRUPTED'
  override readonly exitCode = ExitCode.interrupted
}

/** The reader of stdout closed the pipe; the run stops at once and says nothing (README "Exit codes"). */
export class OutputClosedError extends SflError {
  override readonly code: string = 'OUTPUT_CLOSED'
  override readonly exitCode = ExitCode.outputClosed
}

/** Disk full, permission denied, read-only file system: one line that says what, where and what to do. */
export class LocalIoError extends SflError {
  override readonly code: string = 'LOCAL_IO'
  override readonly exitCode = ExitCode.localIo
}

/** Too many requests in a row failed (network or 5xx): the run stops sending instead of retrying every unit. */
export class CircuitOpenError extends ServerError {
  override readonly code: string = 'CIRCUIT_OPEN'
}

/** A checkpoint that cannot be read back (edited, from another version): a usage problem, exit 2. */
export class CheckpointError extends UsageError {
  override readonly code: string = 'CHECKPOINT'
}

/** A body that ended before the JSON did (the connection was cut). Retryable like a reset. */
export class TruncatedBodyError extends ServerError {
  override readonly code: string = 'TRUNCATED'
}

/**
 * --timeout elapsed for one request, counting connect, headers and the whole body together. Retryable like
 * a reset. undici's bodyTimeout is only the gap between chunks, so a server dripping a byte a second
 * never trips it; this deadline does.
 */
export class RequestTimeoutError extends ServerError {
  override readonly code: string = 'TIMEOUT'
}

/** A 5xx status, retryable; exits 6 once the retries are spent. */
export class ServerStatusError extends HttpStatusError {
  override readonly code: string = 'SERVER_STATUS'
  override readonly exitCode = ExitCode.server
}

/** The run reached --max-requests; what is not done stays in the checkpoint. */
export class RequestCapReachedError extends PartialFailureError {
  override readonly code: string = 'REQUEST_CAP'
}

/** A system error's code (ENOSPC, EPIPE, ECONNREFUSED...), or '' when it has none. */
export function systemCode(error: unknown): string {
  const code = (error as {code?: unknown} | null | undefined)?.code
  return typeof code === 'string' ? code : ''
}

/**
 * The error a call ends with when `signal` aborted it: the signal's reason when it is one of ours (a
 * deadline), else InterruptedError. Every wait, retry and request of the library and `sfl mcp` ends so.
 */
export function abortedBy(signal: AbortSignal): SflError {
  const reason: unknown = signal.reason
  return reason instanceof SflError ? reason : new InterruptedError('interrupted')
}

/** Map any thrown value to its exit code; unknown errors are "unexpected" (1). */
export function exitCodeOf(error: unknown): ExitCodeValue {
  return error instanceof SflError ? error.exitCode : ExitCode.unexpected
}
