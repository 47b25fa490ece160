import {describe, expect, it} from 'vitest'

import {sanitizeForTerminal} from '../../src/render/terminal.js'

describe('sanitizeForTerminal shows every control character escaped, so no sequence takes effect', () => {
  const cases: Array<[string, string, string]> = [
    ['OSC 52 clipboard write', '\x1b]52;c;cm0gLXJmIH4=\x07', '\\x1b]52;c;cm0gLXJmIH4=\\x07'],
    ['window title (OSC 0, ST-terminated)', '\x1b]0;pwned\x1b\\', '\\x1b]0;pwned\\x1b\\'],
    ['clear screen (CSI 2J) and cursor home', '\x1b[2J\x1b[H', '\\x1b[2J\\x1b[H'],
    ['8-bit CSI (C1)', '\x9b31mred', '\\x9b31mred'],
    ['carriage return overwriting a line', 'paid\rUNPAID', 'paid\\x0dUNPAID'],
    ['bidi override', 'abc\u202edef', 'abc\\u202edef'],
    ['backspace, NUL and DEL', 'a\bb\x00c\x7f', 'a\\x08b\\x00c\\x7f'],
    ['a tab becomes a space', 'a\tb', 'a b'],
    ['a newline is kept', 'line 1\nline 2', 'line 1\nline 2'],
    [
      'plain text and non-ASCII letters are unchanged',
      'SÃO PAULO — 3526 HIGH ST',
      'SÃO PAULO — 3526 HIGH ST',
    ],
  ]
  for (const [what, input, output] of cases)
    it(what, () => {
      expect(sanitizeForTerminal(input)).toBe(output)
    })

  it('singleLine shows a newline as \\n (table cells, error lines)', () => {
    expect(sanitizeForTerminal('a\nb', {singleLine: true})).toBe('a\\nb')
  })

  it('leaves no C0/C1 control but newline for any input', () => {
    let all = ''
    for (let c = 0; c < 0xa0; c++) all += String.fromCharCode(c)
    // eslint-disable-next-line no-control-regex -- checking that none is left
    expect(sanitizeForTerminal(all)).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/)
  })
})
