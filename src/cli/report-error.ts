import {redact} from '../api/secrets.js'
import {ExitCode, SflError} from '../errors.js'
import {limitError} from '../io/fs-errors.js'
import {forTerminal} from '../render/terminal.js'
import {nextStep} from './error-hints.js'
import {cliMessage} from './error-words.js'

/**
 * How a run ends on an error that is not a flag or argument mistake (README "Exit codes"), for the base
 * command (src/cli/base-command.ts) and the lookup fast path (src/cli/lookup-fast.ts) alike: an SflError is
 * its one `Error:` line and its exit code (nothing for a reader that went away, exit 141); anything else is
 * an unexpected failure, exit 1, with its stack under --debug, except the machine's limits (too many open
 * files, no memory: one line, exit 8, src/io/system-limits.ts), met where no layer named the file. `message`
 * adds the run's hints (the base URL in use, where the key came from: src/cli/error-hints.ts).
 */
export function reportError(
  thrown: Error,
  opts: {message: (err: SflError) => string; debug: boolean; now?: number},
  stderr: NodeJS.WritableStream = process.stderr,
): void {
  const err = limitError(thrown) ?? thrown
  if (err instanceof SflError) {
    // the reader of stdout went away (`| head`): that is how such a pipeline ends, not worth a word
    // a timeout or a spent rate limit: the flag that helps, and when the budget returns on this clock
    const next = nextStep(err, opts.now ?? Date.now()) ?? ''
    if (err.exitCode !== ExitCode.outputClosed)
      stderr.write(`Error: ${forTerminal(`${opts.message(err)}${next}`)}\n`)
    process.exitCode = err.exitCode
    return
  }
  stderr.write(`Error: unexpected failure: ${forTerminal(err.message)}\n`)
  if (opts.debug && err.stack) stderr.write(`${forTerminal(err.stack)}\n`)
  process.exitCode = ExitCode.unexpected
}

/**
 * --json's error document, oclif's `{"error": {"name", "message"}}` with the exit code the run ends with (and
 * the HTTP status when there was one); only these fields: a parse error's own fields hold the argv, which
 * can hold a key. The error line on stderr stays as it is (README "Exit codes"). For the base command and
 * the local commands' run without oclif (src/cli/local-fast.ts) alike.
 */
export function errorDocument(
  err: Error & {status?: unknown},
  /** A usage mistake's one line (src/render/usage-error.ts `usageErrorLine`), for oclif's text of several. */
  usageLine?: string,
): {error: Record<string, unknown>} {
  const exitCode =
    err instanceof SflError
      ? err.exitCode
      : usageLine !== undefined || 'parse' in err
        ? ExitCode.usage
        : ExitCode.unexpected
  return {
    error: {
      name: err.name,
      message: redact(usageLine ?? (err instanceof SflError ? cliMessage(err) : err.message)),
      exitCode,
      ...(typeof err.status === 'number' ? {status: err.status} : {}),
    },
  }
}
