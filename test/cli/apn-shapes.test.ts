import {mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {MAX_COUNTIES, parseShapes, readShapes, rememberShapes} from '../../src/cli/apn-shapes.js'

const fipsList = (n: number) => Array.from({length: n}, (_, i) => String(10000 + i))
const doc = (entries: string[]) =>
  JSON.stringify({v: 1, shapes: Object.fromEntries(entries.map((f) => [f, '999-999']))})

describe('the APN shapes file: bounded, only shapes, anything else ignored', () => {
  it('reads a file of its own form', () => {
    expect(parseShapes('{"v":1,"shapes":{"06067":"999-9999-999"}}')).toEqual(
      new Map([['06067', '999-9999-999']]),
    )
  })

  it('refuses a file of more counties than there are, a shape of digits, arrays and truncated text', () => {
    expect(parseShapes(doc(fipsList(MAX_COUNTIES)))?.size).toBe(MAX_COUNTIES)
    expect(parseShapes(doc(fipsList(MAX_COUNTIES + 1)))).toBeUndefined()
    expect(parseShapes('{"v":1,"shapes":{"06067":"078-0123"}}')).toBeUndefined()
    expect(parseShapes(`{"v":1,"shapes":{"06067":"${'9'.repeat(41)}"}}`)).toBeUndefined()
    expect(parseShapes('{"v":1,"shapes":[]}')).toBeUndefined()
    expect(parseShapes('{"v":1,"shapes":{"06067":"999-99')).toBeUndefined()
    expect(parseShapes('null')).toBeUndefined()
  })

  it('adds no county past the bound, but still updates one it holds', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-shapes-'))
    writeFileSync(join(dir, 'apn-shapes.json'), doc(fipsList(MAX_COUNTIES)), {mode: 0o600})
    rememberShapes(dir, new Map([['99999', '99-99']]))
    expect(readShapes(dir).has('99999')).toBe(false)
    rememberShapes(dir, new Map([['10000', '99-99']]))
    expect(readShapes(dir).get('10000')).toBe('99-99')
    expect(readShapes(dir).size).toBe(MAX_COUNTIES)
  })

  it('ignores a link in place of the file, and never follows it when writing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-shapes-'))
    const target = join(dir, 'elsewhere.json')
    writeFileSync(target, '{"v":1,"shapes":{"06067":"999"}}', {mode: 0o600})
    symlinkSync(target, join(dir, 'apn-shapes.json'))
    expect(readShapes(dir).size).toBe(0)
    rememberShapes(dir, new Map([['06085', '99-99']]))
    // the link was replaced by a file of sfl's own; the file it pointed to is as it was
    expect(readFileSync(target, 'utf8')).toBe('{"v":1,"shapes":{"06067":"999"}}')
    expect(statSync(join(dir, 'apn-shapes.json')).mode & 0o777).toBe(0o600)
    expect(readShapes(dir)).toEqual(new Map([['06085', '99-99']]))
  })

  it('a cache folder that cannot be made costs nothing but the memory', () => {
    expect(() => rememberShapes('/nonexistent/sfl/cache', new Map([['06067', '999']]))).not.toThrow()
    expect(readShapes('/nonexistent/sfl/cache').size).toBe(0)
    expect(readShapes('relative/dir').size).toBe(0)
  })
})
