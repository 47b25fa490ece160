import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {KeyEcho, MIN_MASKED_KEY} from '../../src/pipeline/key-echo.js'
import {envelope, scanBody} from '../helpers/records.js'

const KEY = 'sk_live_0123456789abcdef'

/** The body through a KeyEcho in the given pieces: what comes out, joined, and the occurrences it masked. */
function through(key: string | undefined, pieces: readonly Buffer[]): {out: Buffer; occurrences: number} {
  const echo = new KeyEcho(key)
  const out: Buffer[] = pieces.map((p) => Buffer.from(echo.push(Buffer.from(p))))
  const tail = echo.end()
  if (tail) out.push(tail)
  return {out: Buffer.concat(out), occurrences: echo.occurrences}
}
const stars = (s: string) => '*'.repeat(s.length)

describe('KeyEcho masks the API key inside response bodies (spec 5.5)', () => {
  it('masks every occurrence in a chunk, byte for byte, and counts them', () => {
    const body = `{"data":[{"APN":"${KEY}","Note":"key ${KEY} and ${KEY.toUpperCase()}"}]}`
    const {out, occurrences} = through(KEY, [Buffer.from(body)])
    expect(out.toString()).toBe(body.replaceAll(KEY, stars(KEY)))
    expect(out.length).toBe(Buffer.byteLength(body))
    // the key as sent is masked; another case is another text (the printed lines' redactor still masks it)
    expect(occurrences).toBe(2)
  })

  it('masks an occurrence cut by a chunk edge, at every split point, and at every pair of split points', () => {
    const body = Buffer.from(`{"status":"success","data":{"APN":"${KEY}"}}`)
    const want = body.toString().replace(KEY, stars(KEY))
    for (let i = 0; i <= body.length; i++) {
      const r = through(KEY, [body.subarray(0, i), body.subarray(i)])
      expect(r.out.toString(), `split at ${i}`).toBe(want)
      expect(r.occurrences).toBe(1)
      for (let j = i; j <= body.length; j += 3) {
        const three = through(KEY, [body.subarray(0, i), body.subarray(i, j), body.subarray(j)])
        expect(three.out.toString(), `split at ${i}, ${j}`).toBe(want)
      }
    }
    // one byte at a time
    expect(
      through(
        KEY,
        Array.from(body, (b) => Buffer.from([b])),
      ).out.toString(),
    ).toBe(want)
  })

  it('gives back a held tail that never became the key when the body ends', () => {
    const body = `{"APN":"${KEY.slice(0, -1)}`
    const r = through(KEY, [Buffer.from(body)])
    expect(r.out.toString()).toBe(body)
    expect(r.occurrences).toBe(0)
  })

  it('masks the key in its JSON-escaped forms: a quote or a backslash escaped, a slash as \\/', () => {
    const quoted = 'key"with\\back12'
    const body = `{"a":"x${JSON.stringify(quoted).slice(1, -1)}y"}`
    const r = through(quoted, [Buffer.from(body)])
    expect(r.out.toString()).toBe(`{"a":"x${'*'.repeat(JSON.stringify(quoted).length - 2)}y"}`)
    expect(r.occurrences).toBe(1)
    const slashed = 'sk/live/0123456'
    for (const form of [slashed, slashed.replaceAll('/', '\\/')]) {
      const r2 = through(slashed, [Buffer.from(`{"a":"${form}"}`)])
      expect(r2.out.toString()).toBe(`{"a":"${stars(form)}"}`)
      expect(r2.occurrences).toBe(1)
      expect(JSON.parse(r2.out.toString())).toEqual({a: stars(form)})
    }
  })

  it(`does not look for a key shorter than ${MIN_MASKED_KEY} characters (it could be ordinary data), nor for none`, () => {
    const body = Buffer.from('{"Zip":"abc1234","City":"abc1234"}')
    expect(through('abc1234', [body])).toEqual({out: body, occurrences: 0})
    expect(through(undefined, [body])).toEqual({out: body, occurrences: 0})
    expect(through('abc12345', [Buffer.from('{"a":"abc12345"}')]).occurrences).toBe(1)
  })

  it('leaves a record valid JSON: the records stage reads it, the key masked', () => {
    const body = envelope(`{"APN":"${KEY}","Note":"see \\"${KEY}\\""}`, '{"b":2}')
    const {out} = through(KEY, [Buffer.from(body.slice(0, 40)), Buffer.from(body.slice(40))])
    const s = scanBody(out, [7])
    expect(s.error).toBeUndefined()
    expect(s.records.map((r) => JSON.parse(r.toString()) as unknown)).toEqual([
      {APN: stars(KEY), Note: `see "${stars(KEY)}"`},
      {b: 2},
    ])
  })

  it('for any text around the key and any chunks: the key masked wherever it was, nothing else changed', () => {
    const keyChar = fc.constantFrom(...'abcdefABCDEF0123456789_-./'.split(''))
    fc.assert(
      fc.property(
        fc.string({unit: keyChar, minLength: 8, maxLength: 40}),
        fc.array(fc.oneof(fc.string({unit: 'binary', maxLength: 12}), fc.constant('KEY')), {maxLength: 8}),
        fc.array(fc.integer({min: 1, max: 30}), {minLength: 1, maxLength: 5}),
        (key, parts, sizes) => {
          const text = parts.map((p) => (p === 'KEY' ? key : p)).join('')
          const body = Buffer.from(JSON.stringify({a: text}))
          const pieces: Buffer[] = []
          for (let i = 0, k = 0; i < body.length; k++) {
            pieces.push(body.subarray(i, i + sizes[k % sizes.length]!))
            i += sizes[k % sizes.length]!
          }
          const {out} = through(key, pieces)
          expect(out.length).toBe(body.length)
          const forms = [key, JSON.stringify(key).slice(1, -1), key.replaceAll('/', '\\/')]
          for (const f of forms) expect(out.includes(f), f).toBe(false)
          // what is not a star is the body's own byte
          for (let i = 0; i < out.length; i++) if (out[i] !== 0x2a) expect(out[i]).toBe(body[i])
          expect(JSON.parse(out.toString()) as unknown).toBeTypeOf('object')
        },
      ),
      {numRuns: 400},
    )
  })
})
