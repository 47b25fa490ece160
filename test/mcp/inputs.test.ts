import {execFileSync} from 'node:child_process'

import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {countyListOf, countyOf, shellLine} from '../../src/mcp/inputs.js'

describe('shellLine', () => {
  it.each([
    [['sfl', 'county-export', '--fips', '06067'], 'sfl county-export --fips 06067'],
    [['--county', 'Sacramento, CA'], "--county 'Sacramento, CA'"],
    [['--county', "Prince George's, MD"], "--county 'Prince George'\\''s, MD'"],
    [['--out-dir', 'my exports/$HOME'], "--out-dir 'my exports/$HOME'"],
    [['--out', ''], "--out ''"],
  ])('quotes %j as %s', (words, line) => {
    expect(shellLine(words)).toBe(line)
  })

  it('a POSIX shell reads back the words given, whatever they hold', () => {
    fc.assert(
      fc.property(fc.array(fc.string({unit: 'grapheme-ascii'}), {minLength: 1, maxLength: 4}), (words) => {
        const clean = words.map((w) => w.replace(/\0/g, ''))
        const echoed = execFileSync('sh', ['-c', `printf '%s\\0' ${shellLine(clean)}`], {encoding: 'utf8'})
        expect(echoed.split('\0').slice(0, -1)).toEqual(clean)
      }),
      {numRuns: 30},
    )
  })
})

describe('county inputs', () => {
  it('a code or a name resolves to one county; a bad one is refused naming the parameter', () => {
    expect(countyOf('06067', 'county')).toEqual({fips: '06067', label: 'Sacramento County, CA (06067)'})
    expect(countyOf('Yolo, CA', 'county').fips).toBe('06113')
    expect(() => countyOf('99999', 'counties[2]')).toThrow(
      /^counties\[2\] "99999": no US county has the FIPS code 99999/,
    )
    expect(() => countyOf('', 'county')).toThrow('county is empty')
  })

  it('a plan takes the named counties first, then the states, without duplicates', () => {
    expect(countyListOf({counties: ['10003', 'Sacramento, CA'], states: ['de']})).toEqual([
      '10003',
      '06067',
      '10001',
      '10005',
    ])
  })
})
