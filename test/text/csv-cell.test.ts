import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import fc from 'fast-check'
import {afterAll, describe, expect, it} from 'vitest'

import {stringify} from 'csv-stringify/sync'

import {readCsv} from '../../src/io/csv-reader.js'
import {
  csvCell,
  csvHeaderCell,
  csvLine,
  csvValueCell,
  FORMULA_START,
  guardCell,
  isFormulaStart,
  needsQuotes,
  QUOTED,
  unguardCell,
} from '../../src/text/csv-cell.js'

describe('csvCell: the formula guard, then RFC 4180 quoting', () => {
  it.each([
    ['plain', 'plain'],
    ['', ''],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r', '"cr\r"'],
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-x', "'-x"],
    ['@a', "'@a"],
    ['\tx', "'\tx"],
    ['\rx', '"\'\rx"'],
    ['=a,"b"', '"\'=a,""b"""'],
    ['a=b', 'a=b'],
    ["'=already", "'=already"],
    ['é, 東京', '"é, 東京"'],
  ])('writes %j as %j', (text, cell) => {
    expect(csvCell(text, true)).toBe(cell)
  })

  it('skips the formula guard when asked, and still quotes', () => {
    expect(csvCell('=1+1', false)).toBe('=1+1')
    expect(csvCell('@a,b', false)).toBe('"@a,b"')
    expect(guardCell('=x', false)).toBe('=x')
  })

  it('guards exactly = + - @ tab and CR (OWASP CSV injection), nothing else', () => {
    const guarded = [...Array(128).keys()].filter(isFormulaStart)
    expect(String.fromCharCode(...guarded)).toBe('\t\r+-=@')
  })

  it('a line: cells joined by commas, CRLF at the end (RFC 4180)', () => {
    expect(csvLine(['a', '=b', 'c,d', ''], true)).toBe('a,\'=b,"c,d",\r\n')
    expect(csvLine([], true)).toBe('\r\n')
  })
})

describe('the cells every CSV writer takes from the rule (exports, lookups, batches, change files)', () => {
  it('a header cell is server text: guarded and quoted (a field named =HYPERLINK(...) never runs)', () => {
    expect(csvHeaderCell('=HYPERLINK("http://x")', true)).toBe('"\'=HYPERLINK(""http://x"")"')
    expect(csvHeaderCell('AssumableMortgage.LoanType', true)).toBe('AssumableMortgage.LoanType')
    expect(csvHeaderCell('@a', false)).toBe('@a')
  })

  it('a value cell is guarded when the value is text (an APN of +1), never when it is a number (-5), a flag or JSON', () => {
    expect(csvValueCell('+1', true, true)).toBe("'+1")
    expect(csvValueCell('-5', false, true)).toBe('-5')
    expect(csvValueCell('true', false, true)).toBe('true')
    expect(csvValueCell('{"a":1,"b":"-"}', false, true)).toBe('"{""a"":1,""b"":""-""}"')
    expect(csvValueCell('-5', true, false)).toBe('-5')
  })

  it('is two tables of bytes: the guarded first bytes and the quoted ones, which the text functions read', () => {
    expect(String.fromCharCode(...[...FORMULA_START.keys()].filter((c) => FORMULA_START[c] === 1))).toBe(
      '\t\r+-=@',
    )
    expect(String.fromCharCode(...[...QUOTED.keys()].filter((c) => QUOTED[c] === 1))).toBe('\n\r",')
    for (let c = 0; c < 256; c++) {
      expect(needsQuotes(`x${String.fromCharCode(c)}`)).toBe(QUOTED[c] === 1)
      expect(isFormulaStart(c)).toBe(FORMULA_START[c] === 1)
    }
    // a character past the byte range is in neither table
    expect(needsQuotes('\u2028')).toBe(false)
    expect(isFormulaStart(0xff0b)).toBe(false)
  })
})

describe('unguardCell: a guarded cell’s text back, for reading sfl’s own CSV', () => {
  it.each([
    ["'=1", '=1'],
    ["'-5", '-5'],
    ["'\tx", '\tx'],
    ["'plain", "'plain"],
    ["'", "'"],
    ['=1', '=1'],
    ['', ''],
  ])('%j reads as %j', (cell, text) => {
    expect(unguardCell(cell)).toBe(text)
  })

  it('undoes guardCell for any text that does not itself start with a quote and a formula character', () => {
    fc.assert(
      fc.property(
        fc.string({unit: fc.constantFrom('=', '+', '-', '@', '\t', '\r', "'", 'a', ',', '"', 'é')}),
        (t) => {
          fc.pre(!(t.startsWith("'") && t.length > 1 && isFormulaStart(t.charCodeAt(1))))
          expect(unguardCell(guardCell(t, true))).toBe(t)
        },
      ),
      {numRuns: 1000},
    )
  })
})

describe('csvLine: rows the CSV reader reads back', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-csv-cell-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('for any cells: the reader gives the guarded texts back', async () => {
    const cell = fc.string({
      unit: fc.oneof(
        fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', '"', ',', "'", ' '),
        fc.string({unit: 'binary', minLength: 1, maxLength: 1}),
      ),
      maxLength: 8,
    })
    const rows = fc.sample(
      fc.array(fc.array(cell, {minLength: 3, maxLength: 3}), {minLength: 1, maxLength: 5}),
      {
        numRuns: 60,
        seed: 20,
      },
    )
    for (const [n, table] of rows.entries()) {
      const path = join(dir, `${n}.csv`)
      writeFileSync(path, table.map((r) => csvLine(['x', ...r], true)).join(''))
      const got: string[][] = []
      for await (const {fields} of readCsv(path)) got.push(fields)
      expect(got).toEqual(table.map((r) => ['x', ...r].map((t) => guardCell(t, true))))
    }
  })
})

describe('csvLine against csv-stringify, an independent RFC 4180 writer', () => {
  it('quotes any cells exactly as csv-stringify does when told to quote every line break', () => {
    const cell = fc.string({unit: fc.constantFrom('a', ' ', ',', '"', '\n', '\r', "'", '=', 'é', '😀', ';')})
    fc.assert(
      fc.property(fc.array(cell, {minLength: 1, maxLength: 6}), (cells) => {
        // the guard is ours (csv-stringify has none), so both get cells already guarded. csv-stringify
        // quotes only the record delimiter itself (CRLF), so a lone LF or CR would end the row for Excel
        // or DuckDB: it is told to quote any line break, as RFC 4180 section 2 rule 6 means
        const guarded = cells.map((c) => guardCell(c, true))
        const theirs = stringify([guarded], {record_delimiter: 'windows', quoted_match: /[\r\n]/})
        expect(csvLine(cells, true)).toBe(theirs)
      }),
      {numRuns: 2000},
    )
  })
})
