import {describe, expect, it} from 'vitest'

import {closest} from '../../src/text/distance.js'
import {commandNotFoundText, extraArgumentsText, usageErrorText} from '../../src/render/usage-error.js'

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

describe('arguments: missing ones named, extra ones explained', () => {
  const counties = {
    bin: 'sfl',
    id: 'counties',
    flags: ['output'],
    args: [{name: 'search', description: 'Name or the start of a code'}],
    example: 'sfl counties "Sacramento, CA"',
  }
  it('"Missing 1 required arg:" becomes the argument\'s name and description, and the usage line shows it', () => {
    expect(
      usageErrorText(
        'Missing 1 required arg:\nsearch  Name or the start of a code\nSee more help with --help',
        {
          ...counties,
          missingArgs: ['search'],
        },
      ),
    ).toBe(
      'Error: missing the required argument SEARCH (Name or the start of a code)\nUsage: sfl counties SEARCH [FLAGS]   e.g. sfl counties "Sacramento, CA"\nSee all flags: sfl counties --help\n',
    )
  })
  it('two missing arguments are both named', () => {
    const text = usageErrorText('Missing 2 required args:', {
      bin: 'sfl',
      id: 'changes',
      flags: [],
      args: [{name: 'previous'}, {name: 'current'}],
      missingArgs: ['previous', 'current'],
    })
    expect(text.split('\n')[0]).toBe('Error: missing the required arguments PREVIOUS, CURRENT')
    expect(text).toContain('Usage: sfl changes PREVIOUS CURRENT [FLAGS]')
  })
  const commands = [
    {id: 'lookup', flags: ['fips', 'address'], example: 'sfl lookup --fips 06067 --apn 1'},
    {id: 'keys:check', flags: ['fips']},
    {id: 'counties', flags: ['output'], args: [{name: 'search'}]},
  ]
  it("words after a command are that command's usage error with the quote hint", () => {
    expect(extraArgumentsText('lookup:3526:High:St', commands, 'sfl')).toBe(
      'Error: Unexpected arguments: 3526, High, St\nHint: a value with spaces must be quoted, e.g. --address "3526 HIGH ST, SACRAMENTO, CA 95838"; the words after the first space became arguments, and sfl lookup takes no arguments\nUsage: sfl lookup [FLAGS]   e.g. sfl lookup --fips 06067 --apn 1\nSee all flags: sfl lookup --help\n',
    )
    expect(extraArgumentsText('keys:check:now', commands, 'sfl')).toContain(
      'Error: Unexpected argument: now\nHint: a value with spaces must be quoted ("like this"); each word outside quotes became an argument, and sfl keys check takes no arguments\nUsage: sfl keys check [FLAGS]',
    )
    // the command's own arguments are not extra
    expect(extraArgumentsText('counties:Orange:FL', commands, 'sfl')).toContain(
      'Error: Unexpected argument: FL\n',
    )
  })
  it('an id that no command starts is left to "not a command"', () => {
    expect(extraArgumentsText('lokup:3526', commands, 'sfl')).toBeUndefined()
    expect(extraArgumentsText('keys:chek', commands, 'sfl')).toBeUndefined()
    expect(extraArgumentsText('counties:Orange', commands, 'sfl')).toBeUndefined()
  })
})

describe('oclif parse errors, reworded to one line naming the fix (issue 31)', () => {
  const ctx = {
    bin: 'sfl',
    id: 'lookup',
    flags: ['fips', 'address', 'output', 'explain', 'timeout', 'retries'],
  }
  it.each([
    ['Parsing --timeout \n\t Expected an integer greater than or equal to 1 but received: 0', 'Error: --timeout 0: must be a whole number of at least 1 (seconds each request may take), e.g. --timeout 30'], // prettier-ignore
    ['Parsing --retries \n\t Expected an integer greater than or equal to 0 but received: -1', 'Error: --retries -1: must be a whole number of at least 0 (retries after a failure, 0 for none), e.g. --retries 3'], // prettier-ignore
    ['Parsing --timeout \n\t Expected an integer but received: ten', 'Error: --timeout ten: must be a whole number (seconds each request may take), e.g. --timeout 30'], // prettier-ignore
  ])('%j', (message, line) => {
    const text = usageErrorText(message, ctx)
    expect(text.split('\n')[0]).toBe(line)
    expect(text).not.toMatch(/Parsing|Expected an integer/)
  })

  it('lookup --json: a hint to -o json', () => {
    expect(usageErrorText('Nonexistent flag: --json', ctx).split('\n').slice(0, 2)).toEqual([
      'Error: Nonexistent flag: --json',
      'Hint: sfl lookup prints JSON with -o json (--output json); add --explain for the verdicts',
    ])
  })
})
