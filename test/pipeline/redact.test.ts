import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {MIN_MASKED_KEY, RecordRedactor} from '../../src/api/secrets.js'
import {RecordScanner} from '../../src/pipeline/records.js'
import {envelope, scanBody} from '../helpers/records.js'
import {keyRuns, leakedRun} from '../hostile/expect.js'

/**
 * The records stage masks the key, and every run of 8 or more of its characters in any case, before it
 * reads a byte (src/api/secrets.ts RecordRedactor): what comes out of the scanner in any chunks is the
 * body with those runs as `*` and nothing else changed.
 */
const KEY = 'sk_live_0123456789abcdef'
const stars = (n: number) => '*'.repeat(n)

/** The body's records through a scanner masking `key`, in chunks of `sizes`; their texts, and the runs masked. */
function through(key: string | undefined, body: string, sizes?: readonly number[]) {
  const scanner = new RecordScanner(undefined, new RecordRedactor(key))
  const s = scanBody(body, sizes, scanner)
  if (s.error) throw s.error as Error
  return {records: s.records.map((r) => r.toString()), rejected: s.rejected, echoes: scanner.keyEchoes}
}

describe('the records stage masks the key, whole or any run of 8 or more of its characters, any case', () => {
  const part = KEY.slice(3, 13) // 10 characters: "ive_012345"
  const cases: Array<[string, string, string]> = [
    ['the whole key', KEY, stars(KEY.length)],
    ['the key upper-cased', KEY.toUpperCase(), stars(KEY.length)],
    ['10 characters of it, in a word', `x${part}y`, `x${stars(10)}y`],
    [
      '10 characters of it, mixed case',
      `X${part.toUpperCase().slice(0, 5)}${part.slice(5)}Y`,
      `X${stars(10)}Y`,
    ],
    ['exactly 8 characters', `<${KEY.slice(16)}>`, `<${stars(8)}>`],
    ['7 characters only (below the run length)', `<${KEY.slice(17)}>`, `<${KEY.slice(17)}>`],
    ['two runs side by side', `${KEY.slice(0, 9)}${KEY.slice(12)}`, stars(9 + 12)],
    ['the key twice', `${KEY} ${KEY}`, `${stars(KEY.length)} ${stars(KEY.length)}`],
    ['nothing of it', 'SACRAMENTO', 'SACRAMENTO'],
  ]
  for (const [what, value, masked] of cases)
    it(`${what}: at every chunk split`, () => {
      const body = envelope(JSON.stringify({APN: value, n: 1}))
      const want = JSON.stringify({APN: masked, n: 1})
      for (let i = 1; i < body.length; i++) {
        const r = through(KEY, body, [i, body.length])
        expect(r.records, `split at ${i}`).toEqual([want])
      }
      // one byte at a time
      expect(through(KEY, body, [1]).records).toEqual([want])
    })

  it('masks a run in a member name (the column it names is masked too)', () => {
    const r = through(KEY, envelope(`{"${part}":1,"b":"${KEY}"}`))
    expect(r.records).toEqual([`{"${stars(10)}":1,"b":"${stars(KEY.length)}"}`])
    expect(r.echoes).toBe(2)
  })

  it('leaves a member name the spec gives (a demo key holding "assumable"), masks the same word as a value', () => {
    const key = 'sandbox-assumable'
    const record =
      '{"Assumable":true,"AssumableMortgage":{"LoanType":"VA"},"AssumableNote":"Assumable","x":"SANDBOX-ASSUMABLE"}'
    const want = `{"Assumable":true,"AssumableMortgage":{"LoanType":"VA"},"${stars(9)}Note":"${stars(9)}","x":"${stars(17)}"}`
    const body = envelope(record)
    for (let i = 1; i < body.length; i++)
      expect(through(key, body, [i, body.length]).records, `split at ${i}`).toEqual([want])
    expect(through(key, body, [1]).records).toEqual([want])
    expect(through(key, body).echoes).toBe(3)
  })

  it('counts each run once, across chunks, and nothing for a body without one', () => {
    const body = envelope(`{"a":"${KEY}","b":"${part}"}`, `{"c":"${KEY.toUpperCase()}"}`)
    for (const size of [1, 5, 17, 1 << 20]) expect(through(KEY, body, [size]).echoes, String(size)).toBe(3)
    expect(through(KEY, envelope('{"a":"b"}')).echoes).toBe(0)
  })

  it('masks a run hidden by escapes (\\u0041, \\/, and a quote or backslash the key holds) in the decoded string', () => {
    const esc = (s: string) => [...s].map((c) => (c === 'l' ? '\\u006c' : c === '_' ? '\\u005F' : c)).join('')
    const r = through(KEY, envelope(`{"a":"x${esc(KEY)}y","b":"k"}`))
    expect(r.records).toEqual([`{"a":"x${stars(KEY.length)}y","b":"k"}`])
    const slashed = 'sk/live/0123456'
    expect(through(slashed, envelope(`{"a":"${slashed.replaceAll('/', '\\/')}"}`)).records).toEqual([
      `{"a":"${stars(slashed.length)}"}`,
    ])
    const quoted = 'key"with\\back12'
    expect(through(quoted, envelope(`{"a":${JSON.stringify(`<${quoted}>`)}}`)).records).toEqual([
      `{"a":"<${stars(quoted.length)}>"}`,
    ])
    // a name spelt with escapes is masked too
    expect(through(KEY, envelope(`{"${esc(part)}":1}`)).records).toEqual([`{"${stars(10)}":1}`])
  })

  it('never masks an escape sequence half: a run right after \\n or \\u00e9 keeps the escape whole', () => {
    // "n0123456789" begins with the n of \n; the run the mask may take is the 10 characters after it
    const key = 'xn0123456789abc'
    const r = through(key, envelope('{"a":"\\n0123456789ab","b":"\\u00e90123456789"}'))
    expect(r.records).toEqual([`{"a":"\\n${stars(12)}","b":"\\u00e9${stars(10)}"}`])
    expect(r.records.map((t) => JSON.parse(t) as unknown)).toEqual([
      {a: `\n${stars(12)}`, b: `é${stars(10)}`},
    ])
  })

  it('rejects a record whose number holds a run (masked, it is no JSON), and says why without the key', () => {
    const key = 'k-123456789012'
    const r = through(key, envelope('{"a":51234567890123}', '{"b":1}'))
    expect(r.records).toEqual(['{"b":1}'])
    expect(r.rejected).toEqual([
      {
        index: 1,
        reason:
          'holds 8 or more characters of your API key outside a string (at byte 6 of the record): masked, it is no JSON any more',
      },
    ])
  })

  it('masks a record too big to carry (collected in pieces) across every piece edge', () => {
    const pad = 'p'.repeat(1 << 21)
    const body = envelope(`{"a":"${pad}","k":"${KEY}","z":"${pad}"}`)
    const r = through(KEY, body, [65_536 - 7, 65_536])
    expect(r.records).toHaveLength(1)
    expect(leakedRun(r.records[0]!, KEY)).toBeUndefined()
    expect(r.records[0]!.length).toBe(body.length - '{"status":"success","data":[]}'.length)
  })

  it(`does not look for a key shorter than ${MIN_MASKED_KEY} characters (it could be ordinary data), nor for none`, () => {
    const body = envelope('{"Zip":"abc1234","City":"abc1234"}')
    expect(through('abc1234', body).records).toEqual(['{"Zip":"abc1234","City":"abc1234"}'])
    expect(through(undefined, body).records).toEqual(['{"Zip":"abc1234","City":"abc1234"}'])
    expect(through('abc12345', envelope('{"a":"abc12345"}')).records).toEqual([`{"a":"${stars(8)}"}`])
  })

  it('for any key, any text around parts of it and any chunks: no run of 8 is left, nothing else changed, still JSON', () => {
    // JSON's escape letters (b f n r t u /) among them: an escape's letter printed next to a run is 8 characters too
    const keyChar = fc.constantFrom(...'abcdefnrtuABCDEF0123456789_-./'.split(''))
    fc.assert(
      fc.property(
        fc.string({unit: keyChar, minLength: 8, maxLength: 40}),
        fc.array(
          fc.oneof(
            fc.string({unit: 'binary', maxLength: 12}),
            fc.tuple(fc.nat(40), fc.integer({min: 6, max: 40}), fc.boolean()),
          ),
          {maxLength: 8},
        ),
        fc.array(fc.integer({min: 1, max: 30}), {minLength: 1, maxLength: 5}),
        (key, parts, sizes) => {
          // parts of the key (from, length, upper-cased or not) between arbitrary text
          const text = parts
            .map((p) => {
              if (typeof p === 'string') return p
              const [from, len, upper] = p
              const s = key.slice(from % key.length, (from % key.length) + len)
              return upper ? s.toUpperCase() : s
            })
            .join('')
          const record = JSON.stringify({a: text, [[...text].slice(0, 20).join('')]: 1})
          const r = through(key, envelope(record), sizes)
          expect(r.rejected).toEqual([])
          const out = r.records[0]!
          // every run of 8 masked, in the record's decoded strings too
          const parsed = JSON.parse(out) as Record<string, unknown>
          for (const s of [out, ...Object.keys(parsed), ...Object.values(parsed).map(String)])
            expect(leakedRun(s, key), s).toBeUndefined()
          // what is not a star is the record's own text: a byte of it, or (escapes) the decoded character
          if (!record.includes('\\')) {
            expect(out.length).toBe(record.length)
            for (let i = 0; i < out.length; i++) if (out[i] !== '*') expect(out[i]).toBe(record[i])
          }
        },
      ),
      {numRuns: 400},
    )
  })

  // found 2026-11-28 by the property above: JSON's escape letters are key characters too. A string "\f"
  // + 7 characters of the key is written `\faaaaaaa`, 8 characters in a row that match the key's though
  // the value holds 7; the escape is masked whole with the run, so the JSON stays JSON
  it('an escape letter next to 7 characters of the key is masked with them, backslash included', () => {
    const key = 'Faaaaaaaa'
    const out = through(key, envelope(JSON.stringify({a: '\faaaaaaa'}))).records[0]!
    expect(out).toBe(`{"a":"${stars(9)}"}`)
    expect(leakedRun(out, key)).toBeUndefined()
  })

  it('a \\u escape whose hex digits begin a run is masked whole, and a run after it alone', () => {
    const key = '00e9abcdefgh'
    // é written as \u00e9: "00e9" + "abcd" prints 8 characters of the key; the backslash and the u go too
    expect(through(key, envelope('{"a":"x\\u00e9abcdy"}')).records[0]).toBe(`{"a":"x${stars(10)}y"}`)
    // after an escaped backslash the f is plain text: only the run itself is masked
    expect(through('faaaaaaa0', envelope('{"a":"\\\\faaaaaaa"}')).records[0]).toBe(`{"a":"\\\\${stars(8)}"}`)
  })

  it('the runs it looks for are the rule of printed lines (src/api/secrets.ts redact): every 8 characters of the key', () => {
    expect(keyRuns(KEY)).toHaveLength(KEY.length - 7)
    for (const run of keyRuns(KEY))
      expect(through(KEY, envelope(JSON.stringify({a: `.${run}.`}))).records).toEqual([
        JSON.stringify({a: `.${stars(8)}.`}),
      ])
  })
})
