import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import fc from 'fast-check'
import {afterAll, describe, expect, it} from 'vitest'

import {OPTION_NAMES, OPTIONS} from '../../src/api/spec.js'
import {readCsv} from '../../src/io/csv-reader.js'
import {columnsFor, emptyShape, observeShape} from '../../src/model/columns.js'
import {CsvRowEncoder} from '../../src/pipeline/cells.js'
import {RecordStages} from '../../src/pipeline/stages.js'
import {csvCell, csvLine, csvValueCell, guardCell} from '../../src/text/csv-cell.js'
import {hasLoneSurrogate, jsonValue, memberName, trickyText} from '../helpers/json-arbitraries.js'
import {viewOf} from '../helpers/records.js'

/** The records (JSON texts) as CSV: the run's columns over all of them, then one encoded row each. */
function csvOf(
  texts: readonly string[],
  escapeFormulas = true,
  stages = new RecordStages({strict: false, apiKey: undefined}),
) {
  for (const t of texts) stages.schema.observe(viewOf(t, stages), stages.namer.fresh)
  const columns = stages.schema.columns()
  const encoder = new CsvRowEncoder(escapeFormulas)
  const rows = texts.map((t) => {
    const view = viewOf(t, stages)
    const bound = CsvRowEncoder.bound(view, columns)
    const out = Buffer.alloc(bound)
    const end = encoder.encode(view, columns, out, 0)
    expect(end).toBeLessThanOrEqual(bound)
    return out.toString('utf8', 0, end)
  })
  return {names: stages.schema.names(columns), rows, stages}
}

/** The cells of one record, by column name (empty cells left out). */
function cellsOf(text: string, escapeFormulas = true): Record<string, string> {
  const {names, rows} = csvOf([text], escapeFormulas)
  const cells = splitLine(rows[0]!)
  return Object.fromEntries(names.flatMap((n, i) => (cells[i] === '' ? [] : [[n, cells[i]!]])))
}
const one = (valueJson: string, escapeFormulas = true) =>
  cellsOf(`{"v":${valueJson}}`, escapeFormulas)['v'] ?? ''

/** A line's cells as written (quotes kept): split on the commas outside quotes. */
function splitLine(line: string): string[] {
  expect(line.endsWith('\r\n')).toBe(true)
  const out: string[] = []
  let cell = ''
  let quoted = false
  for (const ch of line.slice(0, -2)) {
    if (ch === '"') quoted = !quoted
    if (ch === ',' && !quoted) {
      out.push(cell)
      cell = ''
    } else cell += ch
  }
  out.push(cell)
  return out
}

describe('CSV cells from a record’s spans: names and shape', () => {
  it('flattens the option objects (spec 2.2, 2.3) one level to Option.Field, in the spec’s order', () => {
    const cells = cellsOf(
      '{"Fips":"48201","AssumableMortgage":{"TermMonths":360,"LoanType":"FHA","IsRefinance":false},"VAEligible":true}',
    )
    expect(cells).toEqual({
      Fips: '48201',
      VAEligible: 'true',
      'AssumableMortgage.LoanType': 'FHA',
      'AssumableMortgage.TermMonths': '360',
      'AssumableMortgage.IsRefinance': 'false',
    })
    const {names} = csvOf(['{"AssumableMortgage":{"LoanType":"FHA"}}'])
    expect(names.filter((n) => n.startsWith('AssumableMortgage.'))).toEqual(
      OPTIONS.AssumableMortgage.map((m) => `AssumableMortgage.${m}`),
    )
  })

  it('gives a null option (spec 2.2 rule 3) its columns, all empty', () => {
    const {names, rows} = csvOf(['{"Fips":"48201","AssumableMortgage":null,"FHACondoEligibility":null}'])
    expect(names.filter((n) => n.startsWith('FHACondoEligibility.'))).toHaveLength(
      OPTIONS.FHACondoEligibility.length,
    )
    expect(splitLine(rows[0]!).filter((c) => c !== '')).toEqual(['48201'])
  })

  it('writes any other object, and a list, as one column of compact JSON text', () => {
    expect(cellsOf('{"Surprise":"x","NewOption":{"A":1,"B":null},"Tail":[1, 2]}')).toEqual({
      Surprise: 'x',
      NewOption: '"{""A"":1,""B"":null}"',
      Tail: '"[1,2]"',
    })
    // deeper values of an option's member too
    expect(cellsOf('{"AssumableMortgage":{"Lender":{"x": [ ]}}}')['AssumableMortgage.Lender']).toBe(
      '"{""x"":[]}"',
    )
  })

  it('keeps the run’s columns for every record: core fields first, unknown ones in first-seen order, then options', () => {
    const {names, rows} = csvOf(['{"Zeta":1,"Fips":"1"}', '{"Alpha":2,"FHACondoEligibility":{"New":3}}'])
    expect(names.slice(0, 2)).toEqual(['Fips', 'ServicePropertyID'])
    const tail = names.slice(names.indexOf('Zeta'))
    expect(tail.slice(0, 3)).toEqual(['Zeta', 'Alpha', 'FHACondoEligibility.ApprovalStatus'])
    expect(tail.at(-1)).toBe('FHACondoEligibility.New')
    for (const r of rows) expect(splitLine(r)).toHaveLength(names.length)
  })

  it('reads a pretty-printed record like a compact one', () => {
    const rec = {a: 'x', b: {c: [1, {d: 'e'}], f: null}, g: -1.5, h: 'y,z', AssumableMortgage: {Lender: 'L'}}
    expect(cellsOf(JSON.stringify(rec, null, 2))).toEqual(cellsOf(JSON.stringify(rec)))
  })
})

describe('CSV cells: the cell rules (src/text/csv-cell.ts) on spans', () => {
  it.each([
    ['"=SUM(A1:A9)"', "'=SUM(A1:A9)"],
    ['"+1 555"', "'+1 555"],
    ['"-5"', "'-5"],
    ['"@cmd"', "'@cmd"],
    ['"\\tx"', "'\tx"],
    ['"\\rx"', '"\'\rx"'],
    ['"=a,b"', '"\'=a,b"'],
    ['"\\u003d1"', "'=1"],
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
    ['"\\u0000"', '\u0000'],
    ['"\\u2028"', '\u2028'],
  ])('decodes non-ASCII and \\u escapes as JSON.parse does: %s', (json, cell) => {
    expect(one(json)).toBe(cell)
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
    expect(cellsOf('{"a":true,"b":false,"c":null}')).toEqual({a: 'true', b: 'false'})
  })

  it('writes objects and lists as compact JSON text with every token as sent', () => {
    expect(one('[]')).toBe('[]')
    expect(one('[1]')).toBe('[1]')
    expect(one('[1, 2.50, null, true]')).toBe('"[1,2.50,null,true]"')
    expect(one('{"x": {"y": [ ]}}')).toBe('"{""x"":{""y"":[]}}"')
    expect(one('["\\u0041\\/", "\\n", "é"]')).toBe('"[""\\u0041\\/"",""\\n"",""é""]"')
  })
})

// ---- property: the same cells as a reference built on JSON.parse -------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'sfl-cells-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** The reference: JSON.parse each record, then the cell rules written the obvious way. */
function reference(
  rec: Record<string, unknown>,
  names: readonly string[],
  escapeFormulas: boolean,
): string[] {
  const text = (v: unknown): string =>
    v === undefined || v === null
      ? ''
      : typeof v === 'string'
        ? guardCell(v, escapeFormulas)
        : typeof v === 'object'
          ? JSON.stringify(v)
          : String(v)
  return names.map((name) => {
    const opt = OPTION_NAMES.find((o) => name.startsWith(`${o}.`))
    if (opt === undefined) {
      const v = rec[name]
      // an option object that is not one has no column of its own
      return OPTION_NAMES.includes(name as never) ? '' : text(v)
    }
    const o = rec[opt]
    const sub = name.slice(opt.length + 1)
    return o !== null && typeof o === 'object' && !Array.isArray(o)
      ? text((o as Record<string, unknown>)[sub])
      : ''
  })
}

const optionValue = (opt: (typeof OPTION_NAMES)[number]) =>
  fc.oneof(
    fc.dictionary(fc.oneof(fc.constantFrom(...OPTIONS[opt]), memberName), jsonValue, {maxKeys: 5}),
    fc.constant(null),
    jsonValue,
  )
const cellRecord = fc
  .record({
    top: fc.dictionary(memberName, fc.oneof(jsonValue, trickyText), {maxKeys: 6}),
    spec: fc.dictionary(
      fc.constantFrom('Fips', 'City', 'FinalValue', 'CRAEligible', 'FHAEligible'),
      jsonValue,
      {maxKeys: 3},
    ),
    loan: fc.option(optionValue('AssumableMortgage'), {nil: undefined}),
    condo: fc.option(optionValue('FHACondoEligibility'), {nil: undefined}),
  })
  .map(({top, spec, loan, condo}) => ({
    ...spec,
    ...top,
    ...(loan === undefined ? {} : {AssumableMortgage: loan}),
    ...(condo === undefined ? {} : {FHACondoEligibility: condo}),
  }))

describe('CSV cells: property', () => {
  it('give the cells of a JSON.parse-based reference for any records, and the rows parse back with the CSV reader', async () => {
    let n = 0
    const files: Array<{path: string; expected: string[][]}> = []
    fc.assert(
      fc.property(
        fc.array(cellRecord, {minLength: 1, maxLength: 4}),
        fc.boolean(),
        fc.boolean(),
        (recs, pretty, esc) => {
          const texts = recs.map((r) => JSON.stringify(r, null, pretty ? 1 : undefined))
          if (texts.some(hasLoneSurrogate)) return
          const {names, rows} = csvOf(texts, esc)
          // the one column rule (src/model/columns.ts) over the records as JSON.parse reads them
          const shape = emptyShape()
          for (const r of recs) observeShape(shape, r)
          expect(names).toEqual(columnsFor(shape).map((c) => c.header))
          const expected = recs.map((r) => reference(r, names, esc))
          expect(rows).toEqual(expected.map((cells) => csvLine(cells, false)))
          // every row, and the header, read back by the CSV reader: the same cells unquoted
          if (n < 150) {
            const path = join(dir, `${n++}.csv`)
            writeFileSync(path, csvLine(names, true) + rows.join(''))
            files.push({path, expected: [names.map((h) => guardCell(h, true)), ...expected]})
          }
        },
      ),
      {numRuns: 600},
    )
    for (const {path, expected} of files) {
      const got: string[][] = []
      for await (const {fields} of readCsv(path)) got.push(fields)
      expect(got).toEqual(expected)
    }
    expect(files.length).toBe(150)
  })
})

describe('one cell rule, two spellings: the byte encoder and src/text/csv-cell.ts agree on any cell', () => {
  it('a string cell is csvCell of its text', () => {
    fc.assert(
      fc.property(trickyText, fc.boolean(), (t, esc) => {
        expect(one(JSON.stringify(t), esc)).toBe(csvCell(t, esc))
      }),
      {numRuns: 500},
    )
  })

  it('any value: a string as a text cell, a number, true/false or JSON text as a value cell, null empty', () => {
    // spelt as an export's reader reads a cell back: a number as sent, an object or list as compact JSON
    const literal = fc.oneof(
      fc.constantFrom('-5', '0', '-0.5e-3', '1E+400', '688600.0'),
      fc.double({noNaN: true, noDefaultInfinity: true}).map((d) => JSON.stringify(d)),
    )
    const value = fc.oneof(
      trickyText.map((t) => ({json: JSON.stringify(t), text: true, cellText: t})),
      literal.map((n) => ({json: n, text: false, cellText: n})),
      fc.boolean().map((b) => ({json: String(b), text: false, cellText: String(b)})),
      fc
        .oneof(fc.array(jsonValue, {maxLength: 3}), fc.dictionary(memberName, jsonValue, {maxKeys: 3}))
        .filter((v) => !hasLoneSurrogate(JSON.stringify(v)))
        .map((v) => ({json: JSON.stringify(v, null, 1), text: false, cellText: JSON.stringify(v)})),
    )
    fc.assert(
      fc.property(value, fc.boolean(), (v, esc) => {
        expect(one(v.json, esc)).toBe(csvValueCell(v.cellText, v.text, esc))
      }),
      {numRuns: 800},
    )
    expect(one('null')).toBe('')
  })
})
