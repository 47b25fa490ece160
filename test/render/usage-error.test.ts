import {describe, expect, it} from 'vitest'

import {closest} from '../../src/text/distance.js'
import {commandNotFoundText, usageErrorText} from '../../src/render/usage-error.js'

const ctx = {
  bin: 'sfl',
  id: 'lookup',
  flags: ['fips', 'county', 'address', 'apn', 'output'],
  example: 'sfl lookup --fips 06067 --apn 1',
}

describe('usage mistakes: one line, a hint, the usage line', () => {
  it('an unknown flag gets did-you-mean and no full help', () => {
    expect(usageErrorText('Nonexistent flag: --fisp\nSee more help with --help', ctx)).toBe(
      'Error: Nonexistent flag: --fisp\nHint: did you mean --fips (for --fisp)?\nUsage: sfl lookup [FLAGS]   e.g. sfl lookup --fips 06067 --apn 1\nSee all flags: sfl lookup --help\n',
    )
  })
  it('a flag far from every name gets no guess', () => {
    expect(usageErrorText('Nonexistent flag: --zzzzzzzz', ctx)).not.toContain('did you mean')
  })
  it('words of an unquoted address get a hint to quote it', () => {
    expect(usageErrorText('Unexpected arguments: high, st\nSee more help with --help', ctx)).toContain(
      'Hint: a value with spaces must be quoted, e.g. --address "3526 HIGH ST, SACRAMENTO, CA 95838"',
    )
  })
  it('an unknown command gets the nearest one', () => {
    expect(commandNotFoundText('lokup', ['lookup', 'keys:check', 'sandbox'], 'sfl')).toBe(
      'Error: "lokup" is not a sfl command. Did you mean "sfl lookup"?\nSee the commands: sfl help\n',
    )
    expect(commandNotFoundText('keys:chek', ['lookup', 'keys:check'], 'sfl')).toContain(
      'Did you mean "sfl keys check"?',
    )
    expect(closest('xyzzy', ['lookup'])).toBeUndefined()
  })
})
