import {existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {UsageError} from '../../src/errors.js'
import {acquireLock} from '../../src/jobs/lock.js'

const dir = () => mkdtempSync(join(tmpdir(), 'sfl-lock-'))

describe('the output lock', () => {
  it('is exclusive while held and gone when released', async () => {
    const path = join(dir(), 'o.csv.sfl-lock')
    const lock = await acquireLock(path, () => undefined)
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({pid: process.pid, host: hostname()})
    await expect(acquireLock(path, () => undefined)).rejects.toThrow(UsageError)
    await expect(acquireLock(path, () => undefined)).rejects.toThrow(new RegExp(`process ${process.pid} on`))
    lock.release()
    expect(existsSync(path)).toBe(false)
  })

  it('takes over the lock of a process that no longer runs, with a notice', async () => {
    const path = join(dir(), 'o.csv.sfl-lock')
    writeFileSync(path, JSON.stringify({pid: 4_194_999, host: hostname(), started: 'x'}))
    const notices: string[] = []
    const lock = await acquireLock(path, (l) => notices.push(l))
    expect(notices).toEqual([
      `sfl: taking over the lock ${path} of process 4194999, which is no longer running`,
    ])
    lock.release()
  })

  it('never writes through a symlink planted at the lock path', async () => {
    const d = dir()
    const victim = join(d, 'victim')
    writeFileSync(victim, 'precious')
    symlinkSync(victim, join(d, 'o.csv.sfl-lock'))
    await expect(acquireLock(join(d, 'o.csv.sfl-lock'), () => undefined)).rejects.toThrow(/another sfl run/)
    expect(readFileSync(victim, 'utf8')).toBe('precious')
  })
})
