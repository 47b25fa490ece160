import type {Writable} from 'node:stream'

import {InterruptedError, OutputClosedError, SflError} from '../errors.js'
import type {BudgetView, Scheduler} from '../schedule/scheduler.js'
import {redact} from '../api/secrets.js'
import {isObjectUrl} from '../text/object-url.js'
import {onImmediateExit} from '../io/exit-cleanup.js'
import {limitError} from '../io/fs-errors.js'
import {FileTarget, gzipNamed, openOutput, StdoutTarget, type OutputTarget} from '../io/output.js'
import {makeScratchDir, type ScratchDir} from '../io/private-files.js'
import {assertWritableTarget} from '../io/target-kind.js'
import {Journal, journalPaths, outDirJournalPaths, type JournalHeader} from './journal.js'
import {acquireLock, type Lock} from './lock.js'
import {runExitCode, stopsTheRun, type Outcome} from './outcome.js'

/** What a job needs from the command that runs it. */
export interface JobDeps {
  /** Ctrl-C / SIGTERM. */
  signal: AbortSignal
  /** A notice on stderr (not with --quiet). */
  notice: (line: string) => void
  /** Where stdout output goes (tests); process.stdout otherwise. */
  stdout?: Writable
  /** Every request goes through it; a stop halts it. */
  scheduler: Scheduler
  /** The caller's words for an error (the CLI's flags: src/cli/error-words.ts); its message otherwise. */
  words?: ((error: SflError) => string) | undefined
  /**
   * The user's cache folder (the CLI's: ~/.cache/sfl, SFL_CACHE_DIR): a run writing an `s3://` location
   * keeps its checkpoint, parts and local lock in a private folder under it (src/io/object-store.ts).
   */
  stateRoot?: string | undefined
}

interface StartOptions {
  out?: string | undefined
  /** `--out-dir`: the checkpoint and lock live in this folder instead of beside `out`. */
  dir?: string | undefined
  restart: boolean
  header: JournalHeader
  replay: (event: Record<string, unknown>, offset: number, length: number) => void
}

/**
 * The state every long run shares, whatever its units: the lock and journal beside --out (or a private
 * scratch folder for stdout; for an `s3://` location a private local folder and the bucket's lock
 * object), the one reason the run stopped, the run's own abort signal (Ctrl-C, or a stop such as the
 * rate limit or the circuit breaker: nothing more is sent), and the exit-code rule.
 */
export class RunState {
  stopped: SflError | undefined
  private readonly controller = new AbortController()
  private unregister: Array<() => void> = []
  /** An `s3://` run: the release of its lock object in the bucket. */
  private releaseObject: (() => Promise<void>) | undefined
  /** An `s3://` run: the removal of its local state folder, once the run has finished (`finish`). */
  private forgetPlace: (() => Promise<void>) | undefined
  private finished = false

  private constructor(
    private readonly deps: JobDeps,
    readonly journal: Journal,
    private readonly lock: Lock | undefined,
    private readonly scratch: ScratchDir | undefined,
  ) {
    const onAbort = () => this.stop(new InterruptedError('interrupted'))
    if (deps.signal.aborted) onAbort()
    else deps.signal.addEventListener('abort', onAbort, {once: true})
    this.unregister.push(() => deps.signal.removeEventListener('abort', onAbort))
  }

  static async start(deps: JobDeps, o: StartOptions): Promise<RunState> {
    const remote = o.dir ?? o.out
    if (remote !== undefined && isObjectUrl(remote)) return RunState.startObject(deps, o, remote)
    // stdout, or an --out that is a FIFO or device (written in order, src/io/output.ts): nothing beside it;
    // the checkpoint is private and the run cannot be continued, as on stdout
    const stream = o.out !== undefined && (await assertWritableTarget(o.out)).kind === 'stream'
    if ((!o.out && !o.dir) || stream) {
      const scratch = makeScratchDir('sfl-run-')
      try {
        return new RunState(deps, await Journal.scratch(scratch.path, o.header), undefined, scratch)
      } catch (error) {
        await scratch.remove()
        throw error
      }
    }
    const paths = o.dir ? outDirJournalPaths(o.dir) : journalPaths(o.out!)
    const lock = await acquireLock(paths.lock, deps.notice)
    const unlockOnExit = onImmediateExit(() => lock.release())
    try {
      const {journal, resumed} = await Journal.open(paths, o.header, {restart: o.restart, replay: o.replay})
      if (resumed)
        deps.notice(`sfl: continuing the run recorded in ${paths.journal} (add --restart to start over)`)
      const run = new RunState(deps, journal, lock, undefined)
      run.unregister.push(unlockOnExit)
      return run
    } catch (error) {
      unlockOnExit()
      lock.release()
      throw error
    }
  }

  /**
   * `--out s3://bucket/key` or `--out-dir s3://bucket/prefix` (issue 34): the checkpoint, parts folder and
   * local lock in the run's private folder under the user's cache folder (src/io/object-store.ts
   * objectRunPlace), then the bucket's lock object, so a second run writing the same location at the same
   * time is refused wherever it runs; then the uploads a killed run left there are aborted (invisible to
   * readers, but billed until then). The same command continues a stopped run from that folder.
   */
  private static async startObject(deps: JobDeps, o: StartOptions, value: string): Promise<RunState> {
    const {objectRunPlace} = await import('../io/object-store.js')
    const place = await objectRunPlace(value, {prefix: o.dir !== undefined, stateRoot: deps.stateRoot})
    const paths = outDirJournalPaths(place.stateDir)
    const lock = await acquireLock(paths.lock, deps.notice)
    const unlockOnExit = onImmediateExit(() => lock.release())
    let releaseObject: (() => Promise<void>) | undefined
    try {
      releaseObject = await place.lock(deps.notice)
      const aborted = await place.abortAbandoned()
      if (aborted.length > 0)
        deps.notice(
          `sfl: aborted ${aborted.length} unfinished ${aborted.length === 1 ? 'upload' : 'uploads'} a stopped run left at ${place.shown} (never visible to readers)`,
        )
      const {journal, resumed} = await Journal.open(paths, o.header, {restart: o.restart, replay: o.replay})
      if (resumed)
        deps.notice(
          `sfl: continuing the run recorded in ${paths.journal} (the checkpoint of ${place.shown}; add --restart to start over)`,
        )
      const run = new RunState(deps, journal, lock, undefined)
      run.unregister.push(unlockOnExit)
      run.releaseObject = releaseObject
      run.forgetPlace = () => place.forget()
      return run
    } catch (error) {
      unlockOnExit()
      lock.release()
      await releaseObject?.().catch(() => undefined)
      throw error
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  get outputClosed(): boolean {
    return this.stopped instanceof OutputClosedError
  }

  /**
   * The first stop wins. Nothing more is sent after a stop; requests already in flight finish and their
   * answers are kept (they cost budget), except on Ctrl-C or a closed stdout, which abort them at once.
   */
  stop(error: SflError): void {
    this.stopped ??= error
    this.deps.scheduler.halt(this.stopped)
    if (
      (error instanceof InterruptedError || error instanceof OutputClosedError) &&
      !this.controller.signal.aborted
    )
      this.controller.abort()
  }

  throwIfStopped(): void {
    if (this.stopped) throw this.stopped
  }

  /**
   * A unit's error that ends the whole run (or arrives because the run is ending) is taken here: true
   * means "not this unit's outcome". Anything else is the unit's own failure.
   */
  absorbStop(error: unknown): boolean {
    // the machine's limits (too many open files, no memory) stop the run as a full disk does: exit 8
    const stop = limitError(error) ?? error
    if (stopsTheRun(stop)) {
      this.stop(stop)
      return true
    }
    // an aborted request of a run that already stopped
    return this.controller.signal.aborted
  }

  /** For errors outside any unit (writing the output): a stop is taken, anything else is a bug and thrown. */
  absorbOrThrow = (error: unknown): void => {
    if (!this.absorbStop(error)) throw error
  }

  /** One redacted line for a unit's error. */
  message(error: unknown): string {
    const text =
      error instanceof SflError && this.deps.words
        ? this.deps.words(error)
        : error instanceof Error
          ? error.message
          : String(error)
    return redact(text.split('\n')[0]!)
  }

  stdoutTarget(): StdoutTarget {
    return new StdoutTarget((e) => this.absorbStop(e), this.deps.stdout)
  }

  /**
   * The target of `out` through the output gate (src/io/output.ts: a file written atomically, a FIFO or
   * device written in order), or stdout. `flag` names it in a refusal (`--out-dir` for a county file).
   */
  async outputTarget(out: string | undefined, flag = '--out'): Promise<OutputTarget> {
    return out ? openOutput(out, (e) => this.absorbStop(e), flag) : this.stdoutTarget()
  }

  /** May `out` start as one of the run's part files (renamed into place)? Only a plain regular file may. */
  async canAdopt(out: string): Promise<boolean> {
    // a gzip output is compressed as it is written: a plain part file cannot become it
    return !gzipNamed(out) && (await assertWritableTarget(out)).kind === 'file'
  }

  /** The key's rate-limit budget as the scheduler knows it now. */
  budget(): BudgetView {
    return this.deps.scheduler.budget()
  }

  /** --out starting with one of the run's own part files (NDJSON: its records are already the output's). */
  adoptOutput(part: string, out: string): OutputTarget {
    return FileTarget.adopt(part, out, (e) => this.absorbStop(e))
  }

  /** Keep the checkpoint when some unit is not final (returns its path); otherwise remove it. */
  async finish(open: boolean): Promise<string | undefined> {
    // the scheduler's circuit breaker may have stopped the run without any unit being refused by it
    const halted = this.deps.scheduler.haltedBy
    if (!this.stopped && halted instanceof SflError) this.stopped = halted
    if (this.scratch) return undefined
    if (open) {
      this.journal.close()
      return this.journal.path
    }
    await this.journal.remove()
    this.finished = true
    return undefined
  }

  exitCode(outcomes: Outcome[], finishedAny: boolean): number {
    return runExitCode({outcomes, stopped: this.stopped, finishedAny})
  }

  async close(): Promise<void> {
    this.journal.close()
    // the bucket's lock first, while the local one still keeps another run of this folder out
    await this.releaseObject?.().catch((error: unknown) =>
      this.deps.notice(
        `sfl: the lock object could not be removed (${this.message(error)}); the next run of this command takes it over`,
      ),
    )
    this.lock?.release()
    for (const u of this.unregister) u()
    await this.scratch?.remove()
    // an s3:// run's state folder has nothing left to continue: removed, so the cache does not grow
    if (this.finished) await this.forgetPlace?.().catch(() => undefined)
  }
}
