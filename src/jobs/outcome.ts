import {
  BadResponseError,
  CircuitOpenError,
  ExitCode,
  exitCodeOf,
  ForbiddenError,
  InterruptedError,
  InvalidKeyError,
  LocalIoError,
  MissingKeyError,
  NotFoundError,
  OutputClosedError,
  RateLimitExceededError,
  SflError,
  RequestCapReachedError,
} from '../errors.js'

/**
 * Every unit of a long run (a county of an export, a distinct lookup of a batch) ends in one of these.
 * Only `failed` is asked again by a rerun; the others are final, so a county that is empty or forbidden
 * never keeps a run open (docs/long-runs.md, "Every unit ends in a final outcome").
 */
export type OutcomeKind = 'done' | 'empty' | 'forbidden' | 'malformed' | 'failed'

export interface Outcome {
  kind: OutcomeKind
  records: number
  /** Why, for every kind but done and empty (redacted, one line); for done, the poison records skipped. */
  error?: string
  exitCode: number
  /** Poison records skipped (too large, too deep): the unit is done, but not whole. */
  skipped?: number
}

/** Units whose records belong in the output. */
export const isFinished = (kind: OutcomeKind): boolean => kind === 'done' || kind === 'empty'

/** The outcome a unit's error gives it. `notFoundIsEmpty`: a 404 on a county means "no records" (spec 7). */
export function outcomeOf(error: unknown, message: string, notFoundIsEmpty: boolean): Outcome {
  const exitCode = exitCodeOf(error)
  if (error instanceof NotFoundError && notFoundIsEmpty)
    return {kind: 'empty', records: 0, exitCode: ExitCode.ok}
  if (error instanceof ForbiddenError) return {kind: 'forbidden', records: 0, error: message, exitCode}
  if (error instanceof BadResponseError) return {kind: 'malformed', records: 0, error: message, exitCode}
  return {kind: 'failed', records: 0, error: message, exitCode}
}

/**
 * Errors after which no other unit can succeed either: the run stops sending, writes what it has, and
 * keeps its checkpoint (an invalid key, the rate limit beyond --max-wait, --max-requests, the circuit
 * breaker, a full disk, Ctrl-C, a closed stdout).
 */
export function stopsTheRun(error: unknown): error is SflError {
  return (
    error instanceof InvalidKeyError ||
    error instanceof MissingKeyError ||
    error instanceof RateLimitExceededError ||
    error instanceof RequestCapReachedError ||
    error instanceof CircuitOpenError ||
    error instanceof LocalIoError ||
    error instanceof InterruptedError ||
    error instanceof OutputClosedError
  )
}

/** The run's exit code (README "Exit codes"), the same rule for exports and batches. */
export function runExitCode(run: {
  outcomes: Iterable<Outcome>
  stopped?: SflError | undefined
  finishedAny: boolean
}): number {
  if (run.stopped) {
    const code = run.stopped.exitCode
    // the rate limit or --max-requests after some answers is a partial run (7): rerun to continue; the
    // other stops keep their own code (130, 141, 8, 4, 6 for the circuit breaker) so a script can tell them
    return run.finishedAny && (code === ExitCode.rateLimit || code === ExitCode.partial)
      ? ExitCode.partial
      : code
  }
  const bad = [...run.outcomes].filter((o) => !isFinished(o.kind) || (o.skipped ?? 0) > 0)
  if (bad.length === 0) return ExitCode.ok
  if (run.finishedAny) return ExitCode.partial
  // nothing finished: the failures' own code when they agree
  const codes = new Set(bad.map((o) => (o.skipped ? ExitCode.partial : o.exitCode)))
  return codes.size === 1 ? [...codes][0]! : ExitCode.partial
}
