import {readFileSync} from 'node:fs'
import {hostname} from 'node:os'

import {UsageError} from '../errors.js'
import {openExclusive} from '../io/atomic-file.js'
import {localIoError} from '../io/fs-errors.js'
import {removeFileSync} from '../io/private-sync.js'

/**
 * One run per output: a lock file beside --out, created exclusively. A lock left by a process of this
 * machine that no longer runs (kill -9, a power cut) is taken over with a notice; any other lock stops the
 * second run (exit 2) naming the process that holds it.
 */
export interface Lock {
  release(): void
}

interface Holder {
  pid: number
  host: string
  started: string
}

export async function acquireLock(path: string, notice: (line: string) => void): Promise<Lock> {
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await openExclusive(path, 0o600)
      const me: Holder = {pid: process.pid, host: hostname(), started: new Date().toISOString()}
      await fh.writeFile(JSON.stringify(me))
      await fh.close()
      let held = true
      return {
        release() {
          if (!held) return
          held = false
          // only remove the lock if it is still ours (a stale-lock takeover by another run replaced it)
          if (readHolder(path)?.pid === process.pid) removeFileSync(path)
        },
      }
    } catch (error) {
      if ((error as {code?: string}).code !== 'EEXIST' || attempt > 0)
        throw localIoError(error, 'locking', path)
      const holder = readHolder(path)
      if (holder && holder.host === hostname() && !alive(holder.pid)) {
        notice(`sfl: taking over the lock ${path} of process ${holder.pid}, which is no longer running`)
        removeFileSync(path)
        continue
      }
      const who = holder
        ? `process ${holder.pid} on ${holder.host}, started ${holder.started}`
        : 'another process'
      throw new UsageError(
        `another sfl run (${who}) is writing to the same output; wait for it to finish, or delete ${path} if that run is gone`,
      )
    }
  }
}

function readHolder(path: string): Holder | undefined {
  try {
    const h = JSON.parse(readFileSync(path, 'utf8')) as Partial<Holder>
    return typeof h.pid === 'number' && typeof h.host === 'string'
      ? {pid: h.pid, host: h.host, started: String(h.started ?? '?')}
      : undefined
  } catch {
    return undefined
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
