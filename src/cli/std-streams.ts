/**
 * stdout and stderr that cannot be written: every command ends the same way (README "Exit codes").
 *
 * - the reader went away (EPIPE, `sfl ... | head`): exit 141 (128 + SIGPIPE, as a shell reports a
 *   process killed by it), quietly;
 * - anything else (ENOSPC on `> /dev/full`, EIO from a terminal that is gone, EBADF from a descriptor
 *   opened read-only): one `Error:` line on stderr naming the stream, the cause and what to do, exit 8
 *   (the local file system refused a write). When stderr itself is what fails, nothing can be said: exit 8.
 *
 * Node emits these failures as 'error' events on the stream (a file or device behind stdout writes
 * synchronously and reports on the next tick); without a listener the process dies with an 'Unhandled
 * error' and the bundle's source line (43 KB of it), and oclif's own stdout listener rethrows everything
 * but EPIPE. This listener goes first and ends the process before either.
 *
 * Installed by the entry (src/cli/main.ts, so `--version` and oclif's help are covered) and again by the base
 * command (a no-op there when already installed; in-process tests reach commands without the entry). It
 * imports only Node built-ins: scripts/build.mjs bundles it into dist/sfl.js, which must stay small. The
 * bundle holds a second copy in the commands chunk, so the state lives on `globalThis` under a registered
 * symbol, shared by both copies.
 */

export type StdStreamName = 'stdout' | 'stderr'

export interface StdStreamFailure {
  exitCode: 8 | 141
  /** The one line to print on stderr; undefined when nothing is to be said (EPIPE) or nowhere (stderr). */
  line?: string
}

/** Pure: what a write failure on stdout or stderr means for the run. */
export function describeStdStreamFailure(stream: StdStreamName, error: unknown): StdStreamFailure {
  const raw = (error as {code?: unknown} | undefined)?.code
  const code = typeof raw === 'string' ? raw : ''
  if (code === 'EPIPE') return {exitCode: 141}
  if (stream === 'stderr') return {exitCode: 8}
  const cause =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? `the disk is full (${code}); free some space or send the output elsewhere`
      : code === 'EIO'
        ? 'input/output error (EIO): the terminal or device behind stdout is gone; send the output to a file'
        : code === 'EBADF'
          ? 'stdout is not open for writing (EBADF); check the redirection (`> FILE`, not `< FILE`)'
          : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
            ? `permission denied (${code}); send the output to a file you can write`
            : `${(error as Error | undefined)?.message ?? String(error)}${code ? ` (${code})` : ''}`
  return {exitCode: 8, line: `Error: cannot write to stdout: ${cause}\n`}
}

export interface GuardOptions {
  stdout?: NodeJS.WritableStream
  stderr?: NodeJS.WritableStream
  /** process.exit, injected in tests. */
  exit?: (code: number) => void
}

interface SharedState {
  /** Cleanups that must run before the process ends (temp files), registered by the layers that make them. */
  hooks: Set<() => void>
  ended: boolean
}

const STATE = Symbol.for('sfl.std-streams.state')
const GUARDED = Symbol.for('sfl.std-streams.guarded')

function shared(): SharedState {
  const g = globalThis as {[STATE]?: SharedState}
  g[STATE] ??= {hooks: new Set(), ended: false}
  return g[STATE]
}

/**
 * Run `hook` (synchronously) before the process ends for a failed stdout or stderr; returns its removal.
 * For cleanups that must not be left behind (the run's temp files): the checkpoint stays, as on any stop.
 */
export function beforeStdStreamExit(hook: () => void): () => void {
  const s = shared()
  s.hooks.add(hook)
  return () => s.hooks.delete(hook)
}

/**
 * Put the listener on stdout and stderr (first in line, so oclif's rethrowing listener never runs). A
 * stream that already has it is left alone. A long run's own stdout target takes the stream over while it
 * writes (src/io/output.ts) and hands it back after.
 */
export function guardStdStreams(opts: GuardOptions = {}): void {
  const exit = opts.exit ?? ((code: number) => process.exit(code))
  const streams: Array<[StdStreamName, NodeJS.WritableStream]> = [
    ['stdout', opts.stdout ?? process.stdout],
    ['stderr', opts.stderr ?? process.stderr],
  ]
  const stderr = streams[1]![1]
  for (const [name, stream] of streams) {
    const marked = stream as NodeJS.WritableStream & {[GUARDED]?: boolean}
    if (marked[GUARDED]) continue
    marked[GUARDED] = true
    stream.prependListener('error', (error: unknown) => {
      const s = shared()
      if (s.ended) return // the first failure decides; later writes to a destroyed stream say the same
      s.ended = true
      const failure = describeStdStreamFailure(name, error)
      if (failure.line !== undefined)
        try {
          stderr.write(failure.line)
        } catch {
          // stderr failed too: the exit code still says it
        }
      for (const hook of s.hooks)
        try {
          hook()
        } catch {
          // a cleanup that fails must not keep the process from ending
        }
      exit(failure.exitCode)
    })
  }
}

/** Tests only: forget the first failure and the hooks. */
export function resetStdStreamState(): void {
  const s = shared()
  s.ended = false
  s.hooks.clear()
}
