import {closeSync, openSync, readSync} from 'node:fs'
import {join} from 'node:path'

import {CheckpointError, systemCode} from '../errors.js'
import {localIoError} from '../io/fs-errors.js'
import {readLines} from '../io/lines.js'
import {AppendFile, makePrivateDir, removeFile, removeTree, statPrivateFile} from '../io/private-files.js'
import {count} from '../text/count.js'

/**
 * The checkpoint of a long run: an append-only journal beside --out (`<out>.sfl-checkpoint`), one JSON
 * object a line. The first line says what the run was asked for; every later line is one event (a page
 * spooled, a unit's final outcome, a batch answer). Appending costs the same at page 100,000 as at page 1,
 * and a line cut short by a crash is dropped when the journal is read back. Holds no key: a next-page URL
 * is stored only when `redactUrl` finds nothing in it to clean (src/pipeline/county.ts), a record that
 * echoes the key is masked before it is spooled (src/api/secrets.ts RecordRedactor), and the key never enters an
 * event.
 */
export interface JournalHeader {
  /** The journal's format; a journal of another format is refused (with --restart as the way out). */
  v: number
  kind: 'county-export' | 'batch'
  /** What the run was asked for; continuing needs the same. */
  params: Record<string, unknown>
}

export interface JournalPaths {
  journal: string
  parts: string
  lock: string
}

export function journalPaths(out: string): JournalPaths {
  return {journal: `${out}.sfl-checkpoint`, parts: `${out}.sfl-parts`, lock: `${out}.sfl-lock`}
}

/** `--out-dir DIR`: the run's checkpoint, parts and lock live inside DIR, beside its manifest. */
export function outDirJournalPaths(dir: string): JournalPaths {
  return {journal: join(dir, '.sfl-checkpoint'), parts: join(dir, '.sfl-parts'), lock: join(dir, '.sfl-lock')}
}

export class Journal {
  private file: AppendFile | undefined
  private readFd: number | undefined
  /** Bytes in the journal: the offset of the next event. */
  private size: number

  private constructor(
    readonly path: string,
    readonly partsDir: string,
    file: AppendFile,
    size: number,
  ) {
    this.file = file
    this.size = size
  }

  /**
   * Open the journal of `header`'s run: continue it when one exists for the same request (each event is
   * replayed through `replay`, with its byte offset), or start a new one. `restart` discards an old one.
   * A journal for a different request is refused with the flag that settles it.
   */
  static async open(
    paths: JournalPaths,
    header: JournalHeader,
    opts: {
      restart: boolean
      replay: (event: Record<string, unknown>, offset: number, length: number) => void
    },
  ): Promise<{journal: Journal; resumed: boolean}> {
    if (opts.restart) await Journal.discard(paths)
    // a checkpoint is trusted only when it is this user's (src/io/private-files.ts): never another's plant
    const existing = await statPrivateFile(paths.journal, 'the checkpoint')
    if (existing) {
      const read = await readJournal(paths, header, opts.replay)
      if (read.headed) {
        const file = openAppend(paths.journal)
        if (read.good < existing.size) file.truncate(read.good)
        await makePrivateDir(paths.parts, 'the parts folder')
        return {journal: new Journal(paths.journal, paths.parts, file, read.good), resumed: true}
      }
      // an empty or headless journal: nothing to continue
      await Journal.discard(paths)
    }
    await removeTree(paths.parts)
    await makePrivateDir(paths.parts, 'the parts folder')
    const journal = new Journal(paths.journal, paths.parts, openAppend(paths.journal, true), 0)
    journal.append(header as unknown as Record<string, unknown>)
    return {journal, resumed: false}
  }

  /** A journal for a run without --out (stdout): private, in a temp folder, removed at the end. */
  static async scratch(dir: string, header: JournalHeader): Promise<Journal> {
    const path = `${dir}/checkpoint`
    const journal = new Journal(path, dir, openAppend(path, true), 0)
    journal.append(header as unknown as Record<string, unknown>)
    return journal
  }

  static async discard(paths: Pick<JournalPaths, 'journal' | 'parts'>): Promise<void> {
    await removeFile(paths.journal)
    await removeTree(paths.parts)
  }

  /** Append one event; returns where it lies (a batch answer is read back from there at the end). */
  append(event: Record<string, unknown>): {offset: number; length: number} {
    const line = Buffer.from(`${JSON.stringify(event)}\n`)
    const offset = this.size
    try {
      this.file!.write(line)
    } catch (error) {
      throw localIoError(error, 'saving the checkpoint', this.path)
    }
    this.size += line.length
    return {offset, length: line.length - 1}
  }

  /** Read one event back by its position. */
  read(offset: number, length: number): Record<string, unknown> {
    this.readFd ??= openSync(this.path, 'r')
    const buf = Buffer.allocUnsafe(length)
    readSync(this.readFd, buf, 0, length, offset)
    return JSON.parse(buf.toString('utf8')) as Record<string, unknown>
  }

  close(): void {
    this.file?.close()
    if (this.readFd !== undefined) closeSync(this.readFd)
    this.file = undefined
    this.readFd = undefined
  }

  async remove(): Promise<void> {
    this.close()
    await Journal.discard({journal: this.path, parts: this.partsDir})
  }
}

/**
 * Read a run's journal as the run does, and only so: the header checked against the run's own (a journal
 * of another version, or of other arguments, is refused with the flag that settles it), then each event
 * handed to `replay` with where it lies, for the caller to decode (src/jobs/events.ts `decodeEvent`, which
 * refuses what this version does not write). A last line cut short by a crash is dropped. `Journal.open`
 * continues a run with it; the plan of `--dry-run` reads the checkpoint with it, so the two agree
 * (src/lib/dry-run.ts). `header` is the run's, or made from the one recorded (a plan that cannot know one
 * of the run's arguments takes the recorded one). `headed` is false for a missing, empty or headless
 * journal (nothing to continue); `good` is the length of the lines read.
 */
export async function readJournal(
  paths: Pick<JournalPaths, 'journal'>,
  header: JournalHeader | ((recorded: Record<string, unknown>) => JournalHeader),
  replay: (event: Record<string, unknown>, offset: number, length: number) => void,
): Promise<{headed: boolean; good: number}> {
  let good = 0
  let first = true
  try {
    for await (const line of readLines(paths.journal)) {
      if (!line.complete) break // cut short by a crash: dropped (the run overwrites it)
      let event: Record<string, unknown>
      try {
        event = JSON.parse(line.bytes.toString('utf8')) as Record<string, unknown>
      } catch {
        if (first) throw unreadable(paths)
        break
      }
      if (first) {
        checkHeader(paths, event, typeof header === 'function' ? header(event) : header)
        first = false
      } else replay(event, line.offset, line.bytes.length)
      good = line.offset + line.bytes.length + 1
    }
  } catch (error) {
    if (systemCode(error) === 'ENOENT') return {headed: false, good: 0}
    throw error
  }
  return {headed: !first, good}
}

function openAppend(path: string, fresh = false): AppendFile {
  try {
    return AppendFile.open(path, {fresh})
  } catch (error) {
    throw localIoError(error, 'opening the checkpoint', path)
  }
}

function unreadable(paths: Pick<JournalPaths, 'journal'>): CheckpointError {
  return new CheckpointError(
    `the checkpoint ${paths.journal} cannot be read (not written by this version of sfl?); add --restart to discard it and start over`,
  )
}

function checkHeader(
  paths: Pick<JournalPaths, 'journal'>,
  event: Record<string, unknown>,
  header: JournalHeader,
): void {
  if (event['v'] !== header.v || event['kind'] !== header.kind) throw unreadable(paths)
  const had = JSON.stringify(event['params'])
  if (had !== JSON.stringify(header.params))
    throw new CheckpointError(
      `the checkpoint ${paths.journal} belongs to a different run (${describeParams(event['params'])}); rerun with those arguments to finish it, or add --restart to discard it and start over`,
    )
}

function describeParams(p: unknown): string {
  if (p === null || typeof p !== 'object') return 'unknown arguments'
  return Object.entries(p as Record<string, unknown>)
    .filter(([, v]) => v !== null && v !== undefined && v !== false)
    .map(([k, v]) => `${k} ${Array.isArray(v) ? listOf(v) : String(v)}`)
    .join('; ')
}

/** A state or the whole country is hundreds of codes: the first few and the count. */
function listOf(v: unknown[]): string {
  return v.length <= 10 ? v.join(',') : `${v.slice(0, 5).join(',')},… (${count(v.length)} in all)`
}
