import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {hostname} from 'node:os'

import {systemCode, UsageError} from '../errors.js'
import {createExclusiveWith, writeFileAtomic} from '../io/atomic-file.js'
import {localIoError} from '../io/fs-errors.js'
import {removeFileSync} from '../io/private-sync.js'

/**
 * One run per output: a lock file beside --out, created exclusively. A lock left by a process of this
 * machine that no longer runs (kill -9, a power cut) is taken over with a notice; any other lock stops the
 * second run (exit 2) naming the process that holds it.
 *
 * The takeover is atomic: two runs that both find the same dead holder cannot both end up holding the
 * lock. Replacing a lock's contents X needs the claim of X, a file named after X's bytes and created
 * exclusively (O_EXCL), so one run at a time may replace X; under the claim the run checks that the lock
 * still holds X, writes its own lock to a fresh file of a unique name and renames it over X (one atomic
 * step: the path never lacks a lock), reads it back, and drops the claim. A run that loses the claim, or
 * finds X already replaced, reads the lock again and meets the winner, alive: exit 2. A later claim of X
 * finds X gone, so a claim is never needed after the takeover it served.
 */
export interface Lock {
  release(): void
}

interface Holder {
  pid: number
  host: string
  started: string
}

/** The lock's bytes as read, and the holder they name (undefined: not a lock this version writes). */
interface Seen {
  bytes: Buffer
  holder: Holder | undefined
}

export async function acquireLock(path: string, notice: (line: string) => void): Promise<Lock> {
  const mine = JSON.stringify({pid: process.pid, host: hostname(), started: new Date().toISOString()})
  // three tries: the lock may be released, or taken over by another run, between two looks at it
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await createLock(path, mine)) return held(path, mine)
    const seen = readLock(path)
    if (!seen) continue // released meanwhile: try to create it again
    const {holder} = seen
    if (holder && holder.host === hostname() && !alive(holder.pid)) {
      const took = await takeOver(path, seen, mine)
      if (took === true) {
        notice(`sfl: taking over the lock ${path} of process ${holder.pid}, which is no longer running`)
        return held(path, mine)
      }
      // another run is taking it over: it is the one that will hold the lock
      if (took) throw refusal(path, took)
      continue // another run took it over first: look at what holds it now
    }
    throw refusal(path, holder)
  }
  throw refusal(path, readLock(path)?.holder)
}

function refusal(path: string, holder: Holder | undefined): UsageError {
  const who = holder
    ? `process ${holder.pid} on ${holder.host}, started ${holder.started}`
    : 'another process'
  return new UsageError(
    `another sfl run (${who}) is writing to the same output; wait for it to finish, or delete ${path} if that run is gone`,
  )
}

/**
 * Create the lock if there is none (no link followed), whole in one step (src/io/atomic-file.ts
 * `createExclusiveWith`: never seen empty, even by a run that looks at the very moment); false when one
 * is there already.
 */
async function createLock(path: string, mine: string): Promise<boolean> {
  try {
    await createExclusiveWith(path, mine, 0o600)
    return true
  } catch (error) {
    if (systemCode(error) === 'EEXIST') return false
    throw localIoError(error, 'locking', path)
  }
}

/**
 * Replace the dead holder's lock `seen` by `mine`, under the claim of `seen` (see the module's comment).
 * True when the lock is ours; the run that holds the claim when another run is taking it over; false
 * when another run replaced `seen` first.
 */
async function takeOver(path: string, seen: Seen, mine: string): Promise<boolean | Holder> {
  const claim = `${path}.takeover-${createHash('sha256').update(seen.bytes).digest('hex').slice(0, 16)}`
  // the claim holds its claimant's lock, so the run that loses it can name the one that will win
  if (!(await createLock(claim, mine))) return readLock(claim)?.holder ?? false
  try {
    // under the claim nobody else may replace `seen`: is it still what the lock holds?
    if (!readLock(path)?.bytes.equals(seen.bytes)) return false
    await writeFileAtomic(path, mine, 0o600) // a fresh file of a unique name, renamed over the stale one
    return readLock(path)?.bytes.toString() === mine
  } finally {
    removeFileSync(claim)
  }
}

/** The lock as held by this run; released only while the lock still holds this run's bytes. */
function held(path: string, mine: string): Lock {
  let holding = true
  return {
    release() {
      if (!holding) return
      holding = false
      if (readLock(path)?.bytes.toString() === mine) removeFileSync(path)
    },
  }
}

function readLock(path: string): Seen | undefined {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch {
    return undefined
  }
  try {
    const h = JSON.parse(bytes.toString('utf8')) as Partial<Holder>
    const holder =
      typeof h.pid === 'number' && typeof h.host === 'string'
        ? {pid: h.pid, host: h.host, started: String(h.started ?? '?')}
        : undefined
    return {bytes, holder}
  } catch {
    return {bytes, holder: undefined}
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as {code?: string}).code === 'EPERM' // exists, owned by someone else
  }
}
