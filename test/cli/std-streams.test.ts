import {PassThrough} from 'node:stream'

import {afterEach, describe, expect, it} from 'vitest'

import {
  beforeStdStreamExit,
  describeStdStreamFailure,
  guardStdStreams,
  resetStdStreamState,
} from '../../src/cli/std-streams.js'

const err = (code: string, message = `${code}: failed, write`) => Object.assign(new Error(message), {code})

describe('what a failed stdout or stderr means', () => {
  const cases: Array<[string, 'stdout' | 'stderr', string, number, RegExp | undefined]> = [
    ['the reader went away', 'stdout', 'EPIPE', 141, undefined],
    ['stderr reader went away', 'stderr', 'EPIPE', 141, undefined],
    [
      'a full disk',
      'stdout',
      'ENOSPC',
      8,
      /^Error: cannot write to stdout: the disk is full \(ENOSPC\); free some space/,
    ],
    ['a quota', 'stdout', 'EDQUOT', 8, /the disk is full \(EDQUOT\)/],
    ['a terminal that is gone', 'stdout', 'EIO', 8, /input\/output error \(EIO\)/],
    ['a read-only descriptor', 'stdout', 'EBADF', 8, /not open for writing \(EBADF\); check the redirection/],
    ['a read-only file system', 'stdout', 'EROFS', 8, /permission denied \(EROFS\)/],
    [
      'anything else',
      'stdout',
      'EWHATEVER',
      8,
      /cannot write to stdout: EWHATEVER: failed, write \(EWHATEVER\)/,
    ],
    ['stderr on a full disk: nowhere to say it', 'stderr', 'ENOSPC', 8, undefined],
  ]
  for (const [name, stream, code, exitCode, line] of cases)
    it(`${name} (${stream} ${code}): exit ${exitCode}`, () => {
      const f = describeStdStreamFailure(stream, err(code))
      expect(f.exitCode).toBe(exitCode)
      if (line) {
        expect(f.line).toMatch(line)
        expect(f.line!.endsWith('\n')).toBe(true)
        expect(f.line!.split('\n')).toHaveLength(2) // one line
      } else expect(f.line).toBeUndefined()
    })
})

describe('the guard on the standard streams', () => {
  afterEach(() => resetStdStreamState())

  function streams() {
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    let said = ''
    stderr.on('data', (d: Buffer) => (said += d.toString()))
    const exits: number[] = []
    guardStdStreams({stdout, stderr, exit: (c) => exits.push(c)})
    return {stdout, stderr, exits, said: () => said}
  }

  it('a full disk on stdout: the one line on stderr, the cleanups, then exit 8', async () => {
    const s = streams()
    const order: string[] = []
    beforeStdStreamExit(() => order.push(`cleanup after "${s.said().trim()}"`))
    s.stdout.emit('error', err('ENOSPC'))
    await new Promise((r) => setImmediate(r))
    expect(s.exits).toEqual([8])
    expect(s.said()).toMatch(/^Error: cannot write to stdout: the disk is full \(ENOSPC\)/)
    expect(order).toEqual([`cleanup after "${s.said().trim()}"`])
  })

  it('only the first failure counts: the writes that follow on a destroyed stream say nothing more', async () => {
    const s = streams()
    s.stdout.emit('error', err('ENOSPC'))
    s.stdout.emit('error', err('ERR_STREAM_DESTROYED'))
    s.stderr.emit('error', err('EPIPE'))
    await new Promise((r) => setImmediate(r))
    expect(s.exits).toEqual([8])
    expect(s.said().split('\n').filter(Boolean)).toHaveLength(1)
  })

  it('EPIPE on stdout: exit 141 and not a word', async () => {
    const s = streams()
    s.stdout.emit('error', err('EPIPE'))
    await new Promise((r) => setImmediate(r))
    expect(s.exits).toEqual([141])
    expect(s.said()).toBe('')
  })

  it('a cleanup that throws does not keep the process from ending; a removed one does not run', () => {
    const s = streams()
    const ran: string[] = []
    beforeStdStreamExit(() => {
      throw new Error('boom')
    })
    const off = beforeStdStreamExit(() => ran.push('removed'))
    off()
    s.stderr.emit('error', err('ENOSPC'))
    expect(s.exits).toEqual([8])
    expect(ran).toEqual([])
  })

  it('goes first: a listener that rethrows (as oclif has on stdout) never runs', () => {
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    let rethrown = 0
    stdout.on('error', () => rethrown++)
    const exits: number[] = []
    // process.exit does not return: a throwing exit stands for it here
    guardStdStreams({
      stdout,
      stderr,
      exit: (c) => {
        exits.push(c)
        throw new Error('exited')
      },
    })
    expect(() => stdout.emit('error', err('ENOSPC'))).toThrow('exited')
    expect(exits).toEqual([8])
    expect(rethrown).toBe(0)
  })

  it('installing twice leaves one listener per stream', () => {
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    guardStdStreams({stdout, stderr, exit: () => undefined})
    guardStdStreams({stdout, stderr, exit: () => undefined})
    expect(stdout.listenerCount('error')).toBe(1)
    expect(stderr.listenerCount('error')).toBe(1)
  })
})
