import {forTerminal} from '../render/terminal.js'

/**
 * The lines a command prints on stderr besides its error (src/cli/report-error.ts), for the base command and
 * the lookup fast path alike; each goes through forTerminal, so a server's text cannot drive the terminal.
 */
export const stderrLines = {
  /** A notice or progress line, unless --quiet. */
  notice(line: string, quiet: boolean): void {
    if (!quiet) process.stderr.write(`${forTerminal(line)}\n`)
  },
  /** A warning, shown even with --quiet. */
  warning(line: string): void {
    process.stderr.write(`Warning: ${forTerminal(line)}\n`)
  },
  /** A request or response under --debug (the key already masked by the client). */
  debug(line: string, debug: boolean): void {
    if (debug) process.stderr.write(`[debug] ${forTerminal(line)}\n`)
  },
}
