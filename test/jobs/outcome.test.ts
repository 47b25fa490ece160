import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {
  CircuitOpenError,
  ExitCode,
  ForbiddenError,
  InterruptedError,
  InvalidKeyError,
  LocalIoError,
  NotFoundError,
  OutputClosedError,
  RateLimitExceededError,
  ServerError,
  BadResponseError,
  RequestCapReachedError,
} from '../../src/errors.js'
import {outcomeOf, runExitCode, type Outcome} from '../../src/jobs/outcome.js'
import {ROOT} from '../helpers/sandbox.js'

const o = (kind: Outcome['kind'], exitCode = 0): Outcome => ({kind, records: 0, exitCode})

describe('unit outcomes', () => {
  it.each([
    [new NotFoundError('x', 404), true, 'empty'],
    [new NotFoundError('x', 404), false, 'failed'],
    [new ForbiddenError('x', 403), true, 'forbidden'],
    [new BadResponseError('x'), true, 'malformed'],
    [new ServerError('x'), true, 'failed'],
  ])('%s gives %s', (error, notFoundIsEmpty, kind) => {
    expect(outcomeOf(error, 'm', notFoundIsEmpty).kind).toBe(kind)
  })
})

describe('the exit code of a run (README "Exit codes")', () => {
  it.each([
    ['every unit done or empty', {outcomes: [o('done'), o('empty')], finishedAny: true}, 0],
    ['some unit not finished', {outcomes: [o('done'), o('failed', 6)], finishedAny: true}, 7],
    [
      'nothing finished, one cause',
      {outcomes: [o('forbidden', 4), o('forbidden', 4)], finishedAny: false},
      4,
    ],
    [
      'nothing finished, mixed causes',
      {outcomes: [o('forbidden', 4), o('failed', 6)], finishedAny: false},
      7,
    ],
    [
      'rate limit after some answers',
      {outcomes: [o('done')], finishedAny: true, stopped: new RateLimitExceededError('x')},
      7,
    ],
    [
      'rate limit before any answer',
      {outcomes: [], finishedAny: false, stopped: new RateLimitExceededError('x')},
      5,
    ],
    [
      '--max-requests',
      {outcomes: [o('done')], finishedAny: true, stopped: new RequestCapReachedError('x')},
      7,
    ],
    ['Ctrl-C', {outcomes: [o('done')], finishedAny: true, stopped: new InterruptedError('x')}, 130],
    ['closed stdout', {outcomes: [o('done')], finishedAny: true, stopped: new OutputClosedError('x')}, 141],
    ['disk full', {outcomes: [o('done')], finishedAny: true, stopped: new LocalIoError('x')}, 8],
    ['invalid key', {outcomes: [o('done')], finishedAny: true, stopped: new InvalidKeyError('x', 401)}, 4],
    ['circuit breaker', {outcomes: [o('done')], finishedAny: true, stopped: new CircuitOpenError('x')}, 6],
  ])('%s', (_name, run, code) => {
    expect(runExitCode(run)).toBe(code)
  })

  it("has exactly the codes the README's exit-code table documents", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const section = readme.slice(readme.indexOf('## Exit codes'), readme.indexOf('## Security'))
    const documented = [...section.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]))
    expect(documented.length).toBeGreaterThan(0)
    expect(documented).toEqual(Object.values(ExitCode).sort((a, b) => a - b))
  })
})
