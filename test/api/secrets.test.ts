import {afterEach, describe, expect, it} from 'vitest'

import {
  clearSecrets,
  containsSecret,
  redact,
  redactUrl,
  keyEchoWarning,
  registerSecret,
  RecordRedactor,
} from '../../src/api/secrets.js'

const KEY = 'sk_live_ABCdef0123456789xyz'

afterEach(() => {
  clearSecrets()
})

describe('redact masks the key whole, in any case, and any run of 8+ of its characters', () => {
  const cases: Array<[string, string, string]> = [
    ['the whole key', `bad key ${KEY}.`, 'bad key sk_l….'],
    ['the key upper-cased', `bad key ${KEY.toUpperCase()}.`, 'bad key sk_l….'],
    ['the key lower-cased', `bad key ${KEY.toLowerCase()}.`, 'bad key sk_l….'],
    ['the key minus its last character', `bad key ${KEY.slice(0, -1)}.`, 'bad key [redacted].'],
    ['the first 20 characters (a page cut mid-key)', `…denied ${KEY.slice(0, 20)}…`, '…denied [redacted]…'],
    ['8 characters from the middle', `x${KEY.slice(5, 13)}x`, 'x[redacted]x'],
    ['two copies', `${KEY} and ${KEY}`, 'sk_l… and sk_l…'],
    ['7 characters only (below the run length)', `x${KEY.slice(0, 7)}x`, `x${KEY.slice(0, 7)}x`],
    ['no key at all', 'nothing to see', 'nothing to see'],
  ]
  for (const [what, input, output] of cases)
    it(what, () => {
      registerSecret(KEY)
      expect(redact(input)).toBe(output)
    })

  it('a key shorter than 8 characters is masked whole, in any case', () => {
    registerSecret('AbCd12')
    expect(redact('key abcd12 and ABCD12 and abcd1')).toBe('key AbCd… and AbCd… and abcd1')
  })

  it('a run that begins at a JSON escape letter takes the escape with it, so JSON text stays JSON', () => {
    registerSecret('Faaaaaaaa')
    const text = JSON.stringify({error: '\faaaaaaa', n: 1})
    expect(redact(text)).toBe('{"error":"[redacted]","n":1}')
    expect(JSON.parse(redact(text))).toEqual({error: '[redacted]', n: 1})
    // an escaped backslash before the f: the f is text, the backslashes stay
    expect(redact(JSON.stringify({e: '\\faaaaaaa'}))).toBe('{"e":"\\\\[redacted]"}')
  })

  it('keeps text that has no registered key unchanged when nothing is registered', () => {
    expect(redact(KEY)).toBe(KEY)
  })

  it('masks a key at the end of a 1 MB line and leaves the rest as it was', () => {
    registerSecret(KEY)
    const text = 'x'.repeat(1_000_000)
    const out = redact(`${text}${KEY}`)
    expect(out.startsWith(text)).toBe(true)
    expect(out).not.toContain(KEY)
    expect(out.length).toBeLessThan(text.length + KEY.length)
  })
})

describe('redactUrl', () => {
  it('drops credentials-looking query parameters (any case) and user:password@, then redacts', () => {
    registerSecret(KEY)
    expect(
      redactUrl(
        `https://user:pw@api.test/v1/special-financing?fips=06067&page=2&API_KEY=${KEY}&Token=t&sig=s&signature=s&password=p&secret=s&access_token=a&apikey=a&key=k`,
      ),
    ).toBe('https://api.test/v1/special-financing?fips=06067&page=2')
  })

  it('redacts the key anywhere else in the URL (a path segment)', () => {
    registerSecret(KEY)
    expect(redactUrl(`https://api.test/v1/${KEY}/x?page=3`)).toBe('https://api.test/v1/sk_l…/x?page=3')
  })

  it('only redacts a string that is not a URL', () => {
    registerSecret(KEY)
    expect(redactUrl(`not a url ${KEY}`)).toBe('not a url sk_l…')
  })
})

describe('a key echoed inside a record', () => {
  it('is warned about in one line that says how often and what to do, never with the key', () => {
    registerSecret(KEY)
    expect(keyEchoWarning(1)).toBe(
      'the service echoed your API key (whole, or 8 or more of its characters) 1 time in its answers; it is masked with * in the output. Rotate the key and tell the provider',
    )
    expect(keyEchoWarning(12_345)).toMatch(
      /echoed your API key \(whole, or 8 or more of its characters\) 12,345 times in its answers/,
    )
    for (const n of [0, 1, 2, 1000]) {
      const line = keyEchoWarning(n)
      expect(line).not.toContain('\n')
      expect(containsSecret(line)).toBe(false)
      expect(line).not.toContain(KEY.slice(0, 8))
    }
    // the check itself finds a run of 8 characters of the key
    expect(containsSecret(`x${KEY.slice(3, 11)}x`)).toBe(true)
  })
})

describe("RecordRedactor.parsed and a member named as Object.prototype's own", () => {
  it('masks a run inside a number member by member, and a member named __proto__ stays a member', () => {
    // the key's run inside a number: masked, the JSON no longer parses, so each member is masked alone
    const key = '12345678'
    const value = JSON.parse(`{"__proto__":"a ${key} b","n":9${key}9}`) as Record<string, unknown>
    const out = new RecordRedactor(key).parsed(value) as Record<string, unknown>
    expect(Object.keys(out)).toEqual(['__proto__', 'n'])
    expect(out['__proto__']).toBe(`a ${'*'.repeat(key.length)} b`)
    expect(out['n']).toBeNull()
  })
})
