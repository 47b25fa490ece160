import {DuckDBInstance} from '@duckdb/node-api'
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {UsageError} from '../../src/errors.js'
import {keeps, parseWhere, truth, whereColumns, type ValueOf} from '../../src/model/where.js'

/** A flattened row as a getter (absent keys read as absent, as in a record without the field). */
const row =
  (r: Record<string, unknown>): ValueOf =>
  (c) =>
    r[c.header]

describe('--where: reading the filter', () => {
  it('reads comparisons, lists, patterns and null tests over spec fields, with and/or/not and parentheses', () => {
    const w = parseWhere(
      "FHAEligible = true and (FinalValue < 500000 or CRAEligible in ('Low', 'Moderate')) and not City like 'ELK%' and Assumable is not null",
    )
    expect(whereColumns(w).map((c) => c.header)).toEqual([
      'FHAEligible',
      'FinalValue',
      'CRAEligible',
      'City',
      'Assumable',
    ])
  })

  it('takes option members by their column names, and keywords in any case', () => {
    const w = parseWhere(
      "AssumableMortgage.LoanType = 'VA' AND AssumableMortgage.EstimatedInterestRate <= 3.5",
    )
    expect(
      keeps(w, row({'AssumableMortgage.LoanType': 'VA', 'AssumableMortgage.EstimatedInterestRate': 2.9})),
    ).toBe(true)
    expect(
      keeps(w, row({'AssumableMortgage.LoanType': 'FHA', 'AssumableMortgage.EstimatedInterestRate': 2.9})),
    ).toBe(false)
  })

  it.each([
    ['', 'an empty filter at character 1'],
    [
      'FinalValu < 5',
      '"FinalValu" is not a field of the spec\'s records (did you mean FinalValue?) at character 1',
    ],
    ["FHAEligible = 'yes'", 'FHAEligible is boolean; compare it with true or false at character 15'],
    ['FHAEligible < true', 'FHAEligible is true or false: compare it with = or != at character 13'],
    ["FinalValue = '100'", 'FinalValue is float; compare it with a number at character 14'],
    ['City = ELK', "a value expected ('text', a number, true or false) at character 8"],
    ['City = 5', "City is text; quote the value ('...') at character 8"],
    [
      "ValuationDate > 'last year'",
      "ValuationDate is datetime; compare it with 'YYYY-MM-DD' at character 17",
    ],
    ["City = 'ELK", 'a text that never ends at character 8'],
    [
      'FinalValue < 5 FHAEligible = true',
      'more after a whole filter (a missing "and"/"or"?) at character 16',
    ],
    ['(FinalValue < 5', 'a ")" missing at character 16'],
    ["FinalValue like '1%'", '"like" applies to text fields; FinalValue is float at character 17'],
    ["City not = 'X'", '"in" or "like" expected after "not" at character 10'],
    ['City is 5', '"null" expected after "is" at character 9'],
    ['City ; 1', 'an unexpected character ";" at character 6'],
  ])('refuses %j with one line naming the place and the fix', (source, what) => {
    let error: unknown
    try {
      parseWhere(source)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(UsageError)
    const message = (error as Error).message
    expect(message.startsWith(`--where: ${what}`)).toBe(true)
    expect(message).not.toContain('\n')
    expect(message).toContain('docs/exports.md')
  })
})

describe('--where: which rows it keeps (SQL three-valued logic)', () => {
  it('a comparison with null or an absent field is unknown, and unknown rows are dropped, negated or not', () => {
    const w = parseWhere('Assumable = false')
    expect(keeps(w, row({Assumable: false}))).toBe(true)
    expect(keeps(w, row({Assumable: true}))).toBe(false)
    expect(keeps(w, row({Assumable: null}))).toBe(false)
    expect(keeps(w, row({}))).toBe(false)
    const not = parseWhere('not Assumable = false')
    expect(keeps(not, row({Assumable: null}))).toBe(false)
    expect(truth(not, row({Assumable: null}))).toBeUndefined()
  })

  it('or with one true side is true whatever the other; and with one false side is false', () => {
    expect(keeps(parseWhere('Assumable = true or FHAEligible = true'), row({FHAEligible: true}))).toBe(true)
    expect(truth(parseWhere('Assumable = true and FHAEligible = true'), row({FHAEligible: false}))).toBe(
      false,
    )
  })

  it('not in with a null in the row is unknown; in finds a listed value', () => {
    const w = parseWhere("CRAEligible not in ('Upper', 'Middle')")
    expect(keeps(w, row({CRAEligible: 'Low'}))).toBe(true)
    expect(keeps(w, row({CRAEligible: 'Upper'}))).toBe(false)
    expect(keeps(w, row({CRAEligible: null}))).toBe(false)
  })

  it('compares dates as dates, a date literal against a datetime value', () => {
    const w = parseWhere("ValuationDate >= '2026-06-01'")
    expect(keeps(w, row({ValuationDate: '2026-06-01T00:00:00'}))).toBe(true)
    expect(keeps(w, row({ValuationDate: '2026-05-31T23:59:59'}))).toBe(false)
  })

  it('like matches the whole value, % any run and _ one character, other characters literally', () => {
    const w = parseWhere("APN like '078-____-0%'")
    expect(keeps(w, row({APN: '078-0123-045'}))).toBe(true)
    expect(keeps(w, row({APN: '078-012-045'}))).toBe(false)
    expect(keeps(parseWhere("City like 'A.C'"), row({City: 'ABC'}))).toBe(false)
  })

  it('a value of the wrong type in the row (a spec violation) is unknown, never coerced to a match', () => {
    expect(truth(parseWhere('FinalValue > 1'), row({FinalValue: 'many'}))).toBeUndefined()
    expect(truth(parseWhere('FHAEligible = true'), row({FHAEligible: 1}))).toBeUndefined()
  })
})

/**
 * The same filters as DuckDB runs them over the same rows: an independent implementation of SQL's WHERE
 * decides which rows stay, and `keeps` must keep exactly those.
 */
describe('--where agrees with DuckDB', () => {
  const fields = {
    FHAEligible: 'BOOLEAN',
    Assumable: 'BOOLEAN',
    FinalValue: 'DOUBLE',
    ConfidenceScore: 'INTEGER',
    CRAEligible: 'VARCHAR',
    City: 'VARCHAR',
    ValuationDate: 'TIMESTAMP',
    'AssumableMortgage.LoanType': 'VARCHAR',
  } as const
  type Field = keyof typeof fields
  const cities = ['ELK GROVE', 'SACRAMENTO', 'ELK', 'A_B', 'A%B', "O'NEILL"]
  const value = (f: Field): fc.Arbitrary<unknown> => {
    const v: fc.Arbitrary<unknown> = {
      BOOLEAN: fc.boolean(),
      DOUBLE: fc.integer({min: 0, max: 20}).map((n) => n * 50_000),
      INTEGER: fc.integer({min: 0, max: 100}),
      VARCHAR:
        f === 'City' ? fc.constantFrom(...cities) : fc.constantFrom('Low', 'Moderate', 'Upper', 'FHA', 'VA'),
      TIMESTAMP: fc.constantFrom('2026-01-01T00:00:00', '2026-06-15T12:30:00', '2025-12-31T23:59:59'),
    }[fields[f]]
    return fc.option(v, {nil: null, freq: 4})
  }
  const rowArb = fc.record(
    Object.fromEntries(Object.keys(fields).map((f) => [f, value(f as Field)])) as Record<
      Field,
      fc.Arbitrary<unknown>
    >,
  )
  const quote = (s: string) => `'${s.replace(/'/g, "''")}'`
  const literal = (f: Field): fc.Arbitrary<string> =>
    value(f)
      .filter((v) => v !== null)
      .map((v) => (typeof v === 'string' ? quote(v) : String(v)))
  const name = (f: Field) => (f.includes('.') ? f : f)
  const test: fc.Arbitrary<string> = fc.constantFrom(...(Object.keys(fields) as Field[])).chain((f) => {
    const kind = fields[f]
    const ops = kind === 'BOOLEAN' ? ['=', '!='] : ['=', '!=', '<>', '<', '<=', '>', '>=']
    const choices: Array<fc.Arbitrary<string>> = [
      fc.tuple(fc.constantFrom(...ops), literal(f)).map(([op, l]) => `${name(f)} ${op} ${l}`),
      fc.constantFrom(`${name(f)} is null`, `${name(f)} is not null`),
      fc
        .tuple(fc.boolean(), fc.array(literal(f), {minLength: 1, maxLength: 3}))
        .map(([neg, ls]) => `${name(f)} ${neg ? 'not ' : ''}in (${ls.join(', ')})`),
    ]
    if (kind === 'VARCHAR')
      choices.push(
        fc
          .tuple(fc.boolean(), fc.constantFrom('ELK%', '%E%', 'A_B', '_', '%', "O'%", 'A%B'))
          .map(([neg, p]) => `${name(f)} ${neg ? 'not ' : ''}like ${quote(p)}`),
      )
    return fc.oneof(...choices)
  })
  const expr: fc.Arbitrary<string> = fc.letrec<{e: string}>((tie) => ({
    e: fc.oneof(
      {depthSize: 'small', withCrossShrink: true},
      test,
      fc.tuple(tie('e'), fc.constantFrom('and', 'or'), tie('e')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
      tie('e').map((a) => `not (${a})`),
    ),
  })).e

  it('keeps exactly the rows DuckDB keeps, for 300 random filters over 40 random rows each', async () => {
    const db = await DuckDBInstance.create(':memory:')
    const c = await db.connect()
    try {
      const cols = Object.entries(fields).map(([f, t]) => `"${f}" ${t}`)
      await fc.assert(
        fc.asyncProperty(fc.array(rowArb, {minLength: 40, maxLength: 40}), expr, async (rows, filter) => {
          await c.run(`CREATE OR REPLACE TABLE t (i INTEGER, ${cols.join(', ')})`)
          const values = rows.map(
            (r, i) =>
              `(${i}, ${Object.keys(fields)
                .map((f) => {
                  const v = r[f as Field]
                  return v === null ? 'NULL' : typeof v === 'string' ? quote(v) : String(v)
                })
                .join(', ')})`,
          )
          await c.run(`INSERT INTO t VALUES ${values.join(', ')}`)
          // DuckDB quotes dotted names; the filter writes them bare, as an analyst types a header
          const sql = filter.replace(/AssumableMortgage\.LoanType/g, '"AssumableMortgage.LoanType"')
          const expected = (await c.runAndReadAll(`SELECT i FROM t WHERE ${sql} ORDER BY i`))
            .getRowObjectsJson()
            .map((r) => Number(r['i']))
          const w = parseWhere(filter)
          const actual = rows.flatMap((r, i) => (keeps(w, row(r)) ? [i] : []))
          expect(actual, filter).toEqual(expected)
        }),
        {numRuns: 300},
      )
    } finally {
      c.closeSync()
      db.closeSync()
    }
  }, 120_000)
})
