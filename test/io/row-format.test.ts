import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {BadResponseError} from '../../src/errors.js'
import {csvCell, type FlatRow, flattenRecord, newFlatRow, PoisonRecordError} from '../../src/io/row-format.js'

/** Flatten JSON text; returns [name, cell] pairs. */
function flat(text: string, escapeFormulas = true, row: FlatRow = newFlatRow(), maxDepth?: number) {
  flattenRecord(
    Buffer.from(text),
    row,
    maxDepth === undefined ? {escapeFormulas} : {escapeFormulas, maxDepth},
  )
  return row.names.slice(0, row.length).map((n, i) => [n, row.cells[i]!] as const)
}
const cellsOf = (text: string, escapeFormulas = true) => flat(text, escapeFormulas).map(([, c]) => c)
const one = (valueJson: string, escapeFormulas = true) => cellsOf(`{"v":${valueJson}}`, escapeFormulas)[0]

describe('flattenRecord: names and shape', () => {
  it('flattens add-on option objects one level to Option.Field, in record order', () => {
    expect(
      flat(
        '{"Fips":"48201","AssumableMortgage":{"LoanType":"FHA","TermMonths":360,"IsRefinance":false},"VAEligible":true}',
      ),
    ).toEqual([
      ['Fips', '48201'],
      ['AssumableMortgage.LoanType', 'FHA'],
      ['AssumableMortgage.TermMonths', '360'],
      ['AssumableMortgage.IsRefinance', 'false'],
      ['VAEligible', 'true'],
    ])
  })

  it('gives a null option (spec 2.2 rule 3) one entry with an empty cell', () => {
    expect(flat('{"Fips":"48201","AssumableMortgage":null,"FHACondoEligibility":null}')).toEqual([
      ['Fips', '48201'],
      ['AssumableMortgage', ''],
      ['FHACondoEligibility', ''],
    ])
  })

  it('keeps unknown fields, scalar and object, where the record has them', () => {
    expect(flat('{"Surprise":"x","Fips":"1","NewOption":{"A":1,"B":null},"Tail":[1,2]}')).toEqual([
      ['Surprise', 'x'],
      ['Fips', '1'],
      ['NewOption.A', '1'],
      ['NewOption.B', ''],
      ['Tail', '"[1,2]"'],
    ])
  })

  it('gives an empty object no entries', () => {
    expect(flat('{"a":1,"o":{},"b":2}')).toEqual([
      ['a', '1'],
      ['b', '2'],
    ])
  })

  it('names late fields right when one reused row sees records of different shapes', () => {
    const row = newFlatRow()
    const plain = '{"Fips":"1","Zip":"95838","Assumable":null}'
    const condo = '{"Fips":"2","Late":"L","Zip":"95670","Opt":{"X":1,"Late2":2},"Assumable":true}'
    const other = '{"Fips":"3","Zip":"95758","Opt":{"Late2":3,"X":4},"Assumable":false,"End":0}'
    for (let round = 0; round < 3; round++) {
      expect(flat(plain, true, row)).toEqual([
        ['Fips', '1'],
        ['Zip', '95838'],
        ['Assumable', ''],
      ])
      expect(flat(condo, true, row)).toEqual([
        ['Fips', '2'],
        ['Late', 'L'],
        ['Zip', '95670'],
        ['Opt.X', '1'],
        ['Opt.Late2', '2'],
        ['Assumable', 'true'],
      ])
      expect(flat(other, true, row)).toEqual([
        ['Fips', '3'],
        ['Zip', '95758'],
        ['Opt.Late2', '3'],
        ['Opt.X', '4'],
        ['Assumable', 'false'],
        ['End', '0'],
      ])
    }
  })

  it('tells names apart that share a prefix, or differ only in the last character', () => {
    const row = newFlatRow()
    expect(flat('{"Fips":1,"FipsX":2}', true, row).map(([n]) => n)).toEqual(['Fips', 'FipsX'])
    expect(flat('{"FipsX":1,"Fips":2}', true, row).map(([n]) => n)).toEqual(['FipsX', 'Fips'])
    expect(flat('{"FipsY":1,"Fip":2}', true, row).map(([n]) => n)).toEqual(['FipsY', 'Fip'])
    expect(flat('{"o":{"a":1},"p":{"a":2}}', true, row).map(([n]) => n)).toEqual(['o.a', 'p.a'])
  })

  it('names members the same in ASCII records (compared four bytes at a time) and non-ASCII ones', () => {
    const row = newFlatRow()
    const ascii = '{"ServicePropertyID":1,"Zip":"x","Opt":{"OwnerOccupancyPercentage":2}}'
    const other = '{"ServicePropertyID":1,"Zip":"é","Opt":{"OwnerOccupancyPercentage":2}}'
    const near = '{"ServicePropertyIE":1,"Zip":"x","Opt":{"OwnerOccupancyPercentagf":2}}'
    for (const text of [ascii, other, near, ascii, other, ascii])
      expect(flat(text, true, row).map(([n]) => n)).toEqual(
        text === near
          ? ['ServicePropertyIE', 'Zip', 'Opt.OwnerOccupancyPercentagf']
          : ['ServicePropertyID', 'Zip', 'Opt.OwnerOccupancyPercentage'],
      )
    // a record cut inside a name the row knows: a poison record, never a RangeError from reading past the end
    for (const cut of ['{"ServicePropertyID', '{"ServiceProp', '{"ServicePropertyID"']) {
      expect(() => flat(cut, true, row)).toThrow(PoisonRecordError)
    }
  })

  it('decodes escapes in names', () => {
    expect(flat('{"A\\u0042":1,"o":{"\\"q\\"":2}}').map(([n]) => n)).toEqual(['AB', 'o."q"'])
  })

  it('reads a pretty-printed record like a compact one', () => {
    const rec = {a: 'x', b: {c: [1, {d: 'e'}], f: null}, g: -1.5, h: 'y,z'}
    expect(flat(JSON.stringify(rec, null, 2))).toEqual(flat(JSON.stringify(rec)))
    expect(flat(' \r\n\t{ "a" : 1 , "o" : { "b" : [ 1 , 2 ] } } \n')).toEqual([
      ['a', '1'],
      ['o.b', '"[1,2]"'],
    ])
  })

  it('accepts a Buffer slice of a larger body, as the data scanner hands it', () => {
    const body = Buffer.from('{"status":"success","data":[{"a":"é"},{"b":2}]}')
    const row = newFlatRow()
    flattenRecord(body.subarray(28, 38), row, {escapeFormulas: true})
    expect([row.names.slice(0, row.length), row.cells.slice(0, row.length)]).toEqual([['a'], ['é']])
  })
})

describe('flattenRecord: cells', () => {
  it.each([
    ['"=SUM(A1:A9)"', "'=SUM(A1:A9)"],
    ['"+1 555"', "'+1 555"],
    ['"-5"', "'-5"],
    ['"@cmd"', "'@cmd"],
    ['"\\tx"', "'\tx"],
    ['"\\rx"', '"\'\rx"'],
    ['"=a,b"', '"\'=a,b"'],
  ])('guards the formula string %s (OWASP CSV injection)', (json, cell) => {
    expect(one(json)).toBe(cell)
  })

  it('leaves formula strings alone when escapeFormulas is false', () => {
    expect(one('"=1+2"', false)).toBe('=1+2')
    expect(one('"\\tx"', false)).toBe('\tx')
    expect(one('"\\rx"', false)).toBe('"\rx"')
  })

  it('never guards numbers, negative or not, nor JSON text, nor strings with the sign later', () => {
    expect(one('-5')).toBe('-5')
    expect(one('-0.5e-3')).toBe('-0.5e-3')
    expect(one('["=x"]')).toBe('"[""=x""]"')
    expect(one('"a=b"')).toBe('a=b')
    expect(one('""')).toBe('')
  })

  it.each([
    ['"say \\"hi\\""', '"say ""hi"""'],
    ['"a,b"', '"a,b"'],
    ['"line1\\nline2"', '"line1\nline2"'],
    ['"cr\\r"', '"cr\r"'],
    ['"crlf\\r\\n"', '"crlf\r\n"'],
    ['"tab\\there"', 'tab\there'],
    ['"back\\\\slash\\/"', 'back\\slash/'],
    ['"\\b\\f"', '\b\f'],
  ])('quotes per RFC 4180 only when needed: %s', (json, cell) => {
    expect(one(json)).toBe(cell)
  })

  it.each([
    ['"São José"', 'São José'],
    ['"🏠 Zürich, 東京"', '"🏠 Zürich, 東京"'],
    ['"\\u00e9\\u00C9"', 'éÉ'],
    ['"\\ud83c\\udfe0"', '🏠'],
    ['"x\\ud83c\\udfe0y"', 'x🏠y'],
    ['"\\ud800"', '\ud800'],
    ['"\\u0000"', '\u0000'],
    ['"\\u2028"', '\u2028'],
  ])('decodes non-ASCII and \\u escapes like JSON.parse: %s', (json, cell) => {
    expect(one(json)).toBe(cell)
    expect(JSON.parse(json)).toBe(cell.replace(/^"(.*)"$/s, '$1'))
  })

  it.each([
    '1e21',
    '1E21',
    '1e+21',
    '0.1',
    '688600.0',
    '-0.0',
    '-0',
    '0',
    '12345678901234567890',
    '1.5e-7',
    '100',
  ])('writes the number %s exactly as sent', (n) => {
    expect(one(n)).toBe(n)
  })

  it('writes true, false and null as true, false and an empty cell', () => {
    expect(cellsOf('{"a":true,"b":false,"c":null}')).toEqual(['true', 'false', ''])
  })

  it('writes deeper values as compact JSON text, numbers as sent, strings as JSON.stringify writes them', () => {
    expect(one('[]')).toBe('[]')
    expect(one('[1]')).toBe('[1]')
    expect(one('[1, 2.50, null, true]')).toBe('"[1,2.50,null,true]"')
    expect(flat('{"v":{"x": {"y": [ ]}}}')).toEqual([['v.x', '"{""y"":[]}"']])
    expect(flat('{"o":{"n":{"y":[1,{"z":"a"}]}}}')).toEqual([['o.n', '"{""y"":[1,{""z"":""a""}]}"']])
    expect(one('["\\u0041\\/", "\\n", "\\u001f", "é"]')).toBe('"[""A/"",""\\n"",""\\u001f"",""é""]"')
    expect(one('[{"k\\u0041":1}]')).toBe('"[{""kA"":1}]"')
  })
})

describe('flattenRecord: poison records', () => {
  it('throws PoisonRecordError, not a RangeError, for 100,000 levels of nesting, anywhere in the record', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    for (const text of [
      `{"a":${deep}}`,
      `{"o":{"a":${deep}}}`,
      `{"a":[{"b":${deep}}]}`,
      '{"a":' + '{"b":'.repeat(100_000) + '1' + '}'.repeat(100_001),
    ]) {
      expect(() => flat(text)).toThrow(PoisonRecordError)
      expect(() => flat(text)).toThrow(/nesting deeper than 64 levels/)
    }
  })

  it('allows nesting up to maxDepth levels (the record is level 1) and refuses one more', () => {
    const nest = (levels: number) => '{"a":' + '['.repeat(levels - 1) + ']'.repeat(levels - 1) + '}'
    expect(() => flat(nest(64))).not.toThrow()
    expect(() => flat(nest(65))).toThrow(PoisonRecordError)
    expect(() => flat(nest(3), true, newFlatRow(), 3)).not.toThrow()
    expect(() => flat(nest(4), true, newFlatRow(), 3)).toThrow(PoisonRecordError)
    expect(() => flat('{"o":{"a":1}}', true, newFlatRow(), 1)).toThrow(PoisonRecordError)
  })

  it.each([
    ['an empty buffer', ''],
    ['an array', '[{"a":1}]'],
    ['a string', '"x"'],
    ['a number', '1'],
    ['null', 'null'],
    ['a truncated object', '{"a":1'],
    ['a truncated string', '{"a":"abc'],
    ['a truncated name', '{"ab'],
    ['a trailing comma', '{"a":1,}'],
    ['a missing colon', '{"a" 1}'],
    ['a missing comma', '{"a":1 "b":2}'],
    ['an unquoted name', '{a:1}'],
    ['single quotes', "{'a':1}"],
    ['a bad escape', '{"a":"\\x"}'],
    ['a short \\u escape', '{"a":"\\u12"}'],
    ['a raw newline in a string', '{"a":"x\ny"}'],
    ['a raw tab in a name', '{"a\tb":1}'],
    ['a leading zero', '{"a":01}'],
    ['a bare fraction', '{"a":.5}'],
    ['a dangling point', '{"a":1.}'],
    ['a plus sign', '{"a":+1}'],
    ['an empty exponent', '{"a":1e}'],
    ['NaN', '{"a":NaN}'],
    ['a misspelt literal', '{"a":tru}'],
    ['a truncated literal', '{"a":nul'],
    ['text after the record', '{"a":1} x'],
    ['two records', '{"a":1}{"b":2}'],
    ['a nested trailing comma', '{"a":[1,]}'],
    ['a mismatched bracket', '{"a":[1}'],
    ['a nested missing colon', '{"a":[{"b" 1}]}'],
    ['a nested bad number', '{"o":{"a":[-]}}'],
    ['an option member without a value', '{"o":{"a":}}'],
  ])('refuses %s', (_, text) => {
    const err = (() => {
      try {
        flat(text)
      } catch (e) {
        return e
      }
      return undefined
    })()
    expect(err).toBeInstanceOf(PoisonRecordError)
    expect(err).toBeInstanceOf(BadResponseError) // exit code of a malformed response
    // the inputs JSON.parse refuses, or that are not a record
    expect(() => {
      const v: unknown = JSON.parse(text)
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a record')
    }).toThrow()
  })

  it('tells where in the record the problem is', () => {
    try {
      flat('{"a":1,"b":tru}')
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(PoisonRecordError)
      expect((e as PoisonRecordError).offset).toBe(11)
      expect((e as Error).message).toMatch(/at character 11/)
    }
  })

  it('keeps working on the same row after a poison record', () => {
    const row = newFlatRow()
    expect(() => flat('{"a":1,"b":', true, row)).toThrow(PoisonRecordError)
    expect(flat('{"a":1,"b":2}', true, row)).toEqual([
      ['a', '1'],
      ['b', '2'],
    ])
  })
})

describe('csvCell', () => {
  it.each([
    ['plain', 'plain'],
    ['', ''],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r', '"cr\r"'],
    ['=1+1', "'=1+1"],
    ['-x', "'-x"],
    ['\tx', "'\tx"],
    ['=a,"b"', '"\'=a,""b"""'],
  ])('writes %j as %j', (text, cell) => {
    expect(csvCell(text, true)).toBe(cell)
  })

  it('skips the formula guard when asked', () => {
    expect(csvCell('=1+1', false)).toBe('=1+1')
    expect(csvCell('@a,b', false)).toBe('"@a,b"')
  })
})

// ---- property: the same cells as a reference built on JSON.parse -------------------------------------

/** The reference: JSON.parse the record, then the cell rules written the obvious way. */
function reference(text: string, escapeFormulas: boolean): [string, string][] {
  const rec = JSON.parse(text) as Record<string, unknown>
  const cell = (v: unknown): string =>
    v === null
      ? ''
      : typeof v === 'string'
        ? csvCell(v, escapeFormulas)
        : typeof v === 'object'
          ? csvCell(JSON.stringify(v), false)
          : String(v)
  const out: [string, string][] = []
  for (const [k, v] of Object.entries(rec)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v))
      for (const [s, w] of Object.entries(v)) out.push([`${k}.${s}`, cell(w)])
    else out.push([k, cell(v)])
  }
  return out
}

// names never look like array indexes: JSON.parse would move those first, a record keeps its order
const name = fc.string({unit: 'binary', maxLength: 8}).map((s) => `k${s}`)
const text = fc.oneof(
  fc.string({unit: 'binary'}),
  fc.string({
    unit: fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', '"', ',', 'a', '\ud800', '\udc00', '\\'),
  }),
)
// numbers whose shortest text JSON.stringify writes, so JSON.parse gives the same text back
const number = fc.oneof(fc.integer(), fc.double({noNaN: true, noDefaultInfinity: true}))
const {value} = fc.letrec((tie) => ({
  value: fc.oneof(
    {depthSize: 'small', withCrossShrink: true},
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), {maxLength: 4}),
    fc.dictionary(name, tie('value'), {maxKeys: 4}),
  ),
}))
const record = fc.dictionary(name, value, {maxKeys: 12})

describe('flattenRecord: property', () => {
  it('gives the cells of a JSON.parse-based reference, compact or pretty-printed, on one reused row', () => {
    const row = newFlatRow()
    fc.assert(
      fc.property(record, fc.boolean(), fc.boolean(), (rec, pretty, escapeFormulas) => {
        const json = pretty ? JSON.stringify(rec, null, 1) : JSON.stringify(rec)
        expect(flat(json, escapeFormulas, row)).toEqual(reference(json, escapeFormulas))
      }),
      {numRuns: 2000},
    )
  })

  it('refuses or reads every truncation of a record, never anything else', () => {
    fc.assert(
      fc.property(record, fc.nat(), (rec, cut) => {
        const json = JSON.stringify(rec)
        const part = json.slice(0, cut % (json.length + 1))
        let ok: boolean
        try {
          JSON.parse(part)
          ok = true
        } catch {
          ok = false
        }
        if (ok && part.startsWith('{')) expect(() => flat(part)).not.toThrow()
        else expect(() => flat(part)).toThrow(PoisonRecordError)
      }),
      {numRuns: 500},
    )
  })
})
