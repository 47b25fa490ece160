import {describe, expect, it} from 'vitest'

import {LocalIoError} from '../../src/errors.js'
import {limitError, localIoError} from '../../src/io/fs-errors.js'
import {limitLine} from '../../src/io/system-limits.js'

/** A system error as Node makes them: a code, the system call, the path when there is one. */
function sysError(code: string, syscall: string, path?: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: failed, ${syscall}${path ? ` '${path}'` : ''}`), {
    code,
    syscall,
    ...(path !== undefined ? {path} : {}),
  })
}

describe("the machine's limits are one line, exit 8", () => {
  it.each([
    [
      sysError('EMFILE', 'open', '/srv/sfl/dist/chunks/chunk-1.js'),
      'too many open files (EMFILE) while opening /srv/sfl/dist/chunks/chunk-1.js; raise the limit of open files (`ulimit -n 1024`) and run again',
    ],
    [
      sysError('ENFILE', 'scandir', '/data/out'),
      "the system's table of open files is full (ENFILE) while listing /data/out; close other programs and run again",
    ],
    [
      sysError('ENOMEM', 'spawn'),
      'out of memory (ENOMEM) while loading sfl; close other programs or raise the memory limit and run again',
    ],
  ])('%s', (error, line) => {
    expect(limitLine(error, 'loading sfl')).toBe(line)
  })

  it('anything else is no limit: undefined, and limitError leaves it alone', () => {
    expect(limitLine(sysError('ENOSPC', 'write', '/x'))).toBeUndefined()
    expect(limitLine(new Error('boom'))).toBeUndefined()
    expect(limitLine(undefined)).toBeUndefined()
    expect(limitError(sysError('ECONNRESET', 'read'))).toBeUndefined()
  })

  it('limitError makes a LocalIoError (exit 8) of a limit met anywhere, keeping the cause', () => {
    const cause = sysError('ENOMEM', 'read', '/data/e.parquet')
    const e = limitError(cause)!
    expect(e).toBeInstanceOf(LocalIoError)
    expect(e.exitCode).toBe(8)
    expect(e.message).toBe(
      'out of memory (ENOMEM) while reading /data/e.parquet; close other programs or raise the memory limit and run again',
    )
    expect(e.cause).toBe(cause)
  })

  it('localIoError says the same for a file sfl names itself (ENOMEM included, which was a raw error)', () => {
    for (const [code, start] of [
      ['EMFILE', 'too many open files (EMFILE) while writing e.csv;'],
      ['ENFILE', "the system's table of open files is full (ENFILE) while writing e.csv;"],
      ['ENOMEM', 'out of memory (ENOMEM) while writing e.csv;'],
    ] as const) {
      const e = localIoError(sysError(code, 'write'), 'writing', 'e.csv')
      expect(e).toBeInstanceOf(LocalIoError)
      expect(e.message.startsWith(start), e.message).toBe(true)
    }
  })
})
