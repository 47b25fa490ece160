import {PassThrough} from 'node:stream'

import {afterEach, describe, expect, it} from 'vitest'

import {errorDocument, reportError} from '../../src/cli/report-error.js'
import {UsageError} from '../../src/errors.js'

/** Report `error` into a buffer; the exit code the run would end with. */
function report(error: Error, debug = false): {text: string; exitCode: number | undefined} {
  const out = new PassThrough()
  let text = ''
  out.on('data', (d: Buffer) => (text += d.toString()))
  reportError(error, {message: (e) => e.message, debug}, out)
  return {text, exitCode: process.exitCode as number | undefined}
}

describe('how a run ends on an error (README "Exit codes")', () => {
  const saved = process.exitCode
  afterEach(() => {
    process.exitCode = saved
  })

  it('a limit of the machine met where no layer named it: one line, exit 8, no stack even under --debug', () => {
    const error = Object.assign(new Error("EMFILE: too many open files, open '/data/e.csv'"), {
      code: 'EMFILE',
      syscall: 'open',
      path: '/data/e.csv',
    })
    expect(report(error, true)).toEqual({
      text: 'Error: too many open files (EMFILE) while opening /data/e.csv; raise the limit of open files (`ulimit -n 1024`) and run again\n',
      exitCode: 8,
    })
  })

  it('ENOMEM from starting a process: one line, exit 8', () => {
    const error = Object.assign(new Error('spawn ENOMEM'), {code: 'ENOMEM', syscall: 'spawn'})
    expect(report(error)).toEqual({
      text: 'Error: out of memory (ENOMEM) while running; close other programs or raise the memory limit and run again\n',
      exitCode: 8,
    })
  })

  it("sfl's own errors keep their line and code; anything else is an unexpected failure, exit 1", () => {
    expect(report(new UsageError('bad flag'))).toEqual({text: 'Error: bad flag\n', exitCode: 2})
    expect(report(new Error('boom'))).toEqual({text: 'Error: unexpected failure: boom\n', exitCode: 1})
  })
})

describe("--json's error document", () => {
  it("a usage mistake's document carries the one line given, exit 2, and none of the parse error's own fields", () => {
    // oclif's errors carry the argv they parsed, which may hold a key
    const parse = Object.assign(new Error('Missing 1 required arg:\ncurrent  The later export'), {
      parse: {input: {argv: ['--api-key', 'k-secret']}},
      args: [{name: 'current'}],
    })
    expect(errorDocument(parse, 'missing the required argument CURRENT')).toEqual({
      error: {name: 'Error', message: 'missing the required argument CURRENT', exitCode: 2},
    })
    // a flag value oclif could not parse is not marked `parse`: the line given makes it a usage error
    const value = new Error(
      'Parsing --timeout \n\tExpected an integer greater than or equal to 1 but received: 0',
    )
    expect(errorDocument(value, '--timeout 0: must be a whole number of at least 1').error.exitCode).toBe(2)
    expect(errorDocument(value).error).toMatchObject({exitCode: 1, message: value.message})
  })
})
