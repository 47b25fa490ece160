import {describe, expect, it} from 'vitest'

import {
  duckdbSchema,
  frictionlessSchema,
  jsonSchema,
  schemaColumns,
  schemaTable,
  type SchemaColumn,
} from '../../src/render/schema.js'

const byName = (cols: readonly SchemaColumn[], name: string): SchemaColumn => {
  const c = cols.find((x) => x.name === name)
  if (!c) throw new Error(`no column ${name}`)
  return c
}

describe('sfl schema: the export columns with the spec types and rules (spec section 2)', () => {
  it('a key without options has only the 2.1 fields, codes typed text with their digits', () => {
    const cols = schemaColumns([])
    expect(cols.some((c) => c.name.includes('.'))).toBe(false)
    expect(byName(cols, 'Fips')).toEqual({
      name: 'Fips',
      type: 'varchar',
      nullable: false,
      maxLength: 5,
      pattern: '^[0-9]{5}$',
    })
    expect(byName(cols, 'Zip').pattern).toBe('^[0-9]{5}$')
    expect(byName(cols, 'State').pattern).toBe('^[A-Z]{2}$')
    expect(byName(cols, 'ServicePropertyID')).toMatchObject({
      type: 'bigint',
      minimum: 1,
      maximum: 99_999_999_999,
    })
    expect(byName(cols, 'ConfidenceScore')).toMatchObject({type: 'int', minimum: 0, maximum: 100})
    // optional and nullable in 2.1: may be empty
    expect(byName(cols, 'StateFips').nullable).toBe(true)
  })

  it("an option's columns follow the 2.1 fields, every one may be empty (the option may be null)", () => {
    const cols = schemaColumns(['AssumableMortgage'])
    const own = cols.filter((c) => c.name.startsWith('AssumableMortgage.'))
    expect(own.length).toBeGreaterThan(0)
    expect(own.every((c) => c.nullable)).toBe(true)
    expect(cols.findIndex((c) => c.name.startsWith('AssumableMortgage.'))).toBeGreaterThan(
      cols.findIndex((c) => c.name === 'Fips'),
    )
    expect(byName(cols, 'AssumableMortgage.LoanType').values).toEqual(['FHA', 'VA', 'USDA'])
    expect(cols.some((c) => c.name.startsWith('FHACondoEligibility.'))).toBe(false)
  })

  it('DuckDB read_csv types every column by name, quotes escaped, so Zip keeps its leading zero', () => {
    const sql = duckdbSchema(schemaColumns([]), "exports/o'brien/**/*.csv")
    expect(
      sql.startsWith("SELECT * FROM read_csv('exports/o''brien/**/*.csv', header = true, types = {"),
    ).toBe(true)
    expect(sql).toContain("'Zip': 'VARCHAR'")
    expect(sql).toContain("'ServicePropertyID': 'BIGINT'")
    expect(sql).toContain("'ConfidenceScore': 'INTEGER'")
    expect(sql).toContain("'FHAEligible': 'BOOLEAN'")
    expect(sql).toContain("'ValuationDate': 'TIMESTAMP'")
  })

  it('JSON Schema: nullable columns take null, required lists the others, enums and date-time patterns', () => {
    const cols = schemaColumns(['AssumableMortgage', 'FHACondoEligibility'])
    const s = jsonSchema(cols) as {required: string[]; properties: Record<string, Record<string, unknown>>}
    expect(s.required).toContain('Fips')
    expect(s.required).not.toContain('StateFips')
    expect(s.properties['Zip']).toEqual({type: 'string', maxLength: 5, pattern: '^[0-9]{5}$'})
    expect(s.properties['StateFips']!['type']).toEqual(['string', 'null'])
    expect(s.properties['AssumableMortgage.LoanType']!['enum']).toEqual(['FHA', 'VA', 'USDA', null])
    // a zone-less date-time (spec 2.1) matches the pattern; RFC 3339's date-time would refuse it
    const dt = new RegExp(s.properties['ValuationDate']!['pattern'] as string)
    expect(dt.test('2026-11-01T08:30:00')).toBe(true)
    expect(dt.test('01/11/2026')).toBe(false)
    const date = s.properties['FHACondoEligibility.LastUpdated']!
    expect(date['format']).toBe('date')
  })

  it('Frictionless: required constraints, datetime read as any, an empty cell is missing', () => {
    const s = frictionlessSchema(schemaColumns(['AssumableMortgage'])) as {
      fields: Array<{name: string; type: string; format?: string; constraints?: Record<string, unknown>}>
      missingValues: string[]
    }
    const f = (n: string) => s.fields.find((x) => x.name === n)!
    expect(f('Fips')).toEqual({
      name: 'Fips',
      type: 'string',
      constraints: {required: true, maxLength: 5, pattern: '^[0-9]{5}$'},
    })
    expect(f('ValuationDate')).toMatchObject({type: 'datetime', format: 'any'})
    expect(f('AssumableMortgage.LoanType').constraints).toEqual({enum: ['FHA', 'VA', 'USDA']})
    expect(s.missingValues).toEqual([''])
  })

  it('the table gives one aligned line a column with its rules in words', () => {
    const lines = schemaTable(schemaColumns([]))
    const line = (n: string) => lines.find((l) => l.startsWith(`${n} `))!
    expect(line('Fips')).toMatch(/^Fips +varchar +5 digits$/)
    expect(line('State')).toMatch(/two capital letters$/)
    expect(line('ConfidenceScore')).toMatch(/0 to 100$/)
    expect(line('StateFips')).toMatch(/may be empty; at most 2 characters$/)
    // aligned: every type starts in the same column
    const at = new Set(lines.map((l) => l.search(/ (varchar|bigint|int|float|boolean|date|datetime)\b/)))
    expect(at.size).toBe(1)
  })
})
