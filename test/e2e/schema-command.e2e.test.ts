import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {DuckDBInstance} from '@duckdb/node-api'
import {Ajv2020} from 'ajv/dist/2020.js'
import {describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {withSandbox} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'
import {CORE_FIELDS, EXTRA_FIELDS} from '../../src/api/spec.js'

/**
 * `sfl schema` checked by the tools that read its forms: DuckDB runs the read_csv statement over a real
 * CSV export and gets the spec's types (Fips keeps its leading zero, where DuckDB's own guess makes it a
 * number), and an independent JSON Schema validator (ajv, draft 2020-12) accepts every flattened record
 * of an NDJSON export of the same county and refuses one that breaks a rule.
 */
async function exportCounty(dir: string, format: 'csv' | 'ndjson'): Promise<string> {
  const out = join(dir, `sac.${format}`)
  await withSandbox({}, async (sb) => {
    const r = await sfl(['county-export', '--fips', '06067', '--out', out, '-o', format, '--quiet'], {
      env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
    })
    expect(r.code).toBe(0)
  })
  return out
}

describe('sfl schema', () => {
  it('-o duckdb reads a CSV export with the spec types: Zip and MSACode stay text where a guess by DuckDB makes them numbers', async () => {
    const dir = tempDir('sfl-schema-cmd-')
    const csv = await exportCounty(dir, 'csv')
    const r = await sfl(['schema', '-o', 'duckdb', csv])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    const db = await DuckDBInstance.create(':memory:')
    const c = await db.connect()
    try {
      const typed = r.stdout.trim().replace(/;$/, '')
      const types = new Map(
        (await c.runAndReadAll(`DESCRIBE ${typed}`))
          .getRowObjectsJson()
          .map((x) => [String(x['column_name']), String(x['column_type'])]),
      )
      expect(types.get('Fips')).toBe('VARCHAR')
      expect(types.get('Zip')).toBe('VARCHAR')
      expect(types.get('ServicePropertyID')).toBe('BIGINT')
      expect(types.get('ValuationDate')).toBe('TIMESTAMP')
      expect(types.get('AssumableMortgage.TermMonths')).toBe('INTEGER')
      expect(types.get('AssumableMortgage.RecordingDate')).toBe('DATE')
      const fips = (await c.runAndReadAll(`SELECT DISTINCT Fips FROM (${typed})`)).getRowObjectsJson()
      expect(fips).toEqual([{Fips: '06067'}])
      const n = (await c.runAndReadAll(`SELECT count(*) AS n FROM (${typed})`)).getRowObjectsJson()[0]!['n']
      expect(Number(n)).toBe(2000) // the sandbox's 06067 holds 2,000 records
      // the failure the schema is for: DuckDB's own guess types the codes as numbers (a ZIP of New
      // England, 02134, would lose its zero)
      const guessed = new Map(
        (await c.runAndReadAll(`DESCRIBE SELECT * FROM read_csv('${csv}', header = true)`))
          .getRowObjectsJson()
          .map((x) => [String(x['column_name']), String(x['column_type'])]),
      )
      expect(guessed.get('Zip')).toBe('BIGINT')
      expect(guessed.get('MSACode')).toBe('BIGINT')
      expect(types.get('MSACode')).toBe('VARCHAR')
    } finally {
      c.closeSync()
      db.closeSync()
    }
  })

  it('-o json-schema accepts every flattened record of an export and refuses one that breaks a rule', async () => {
    const dir = tempDir('sfl-schema-cmd-')
    const nd = await exportCounty(dir, 'ndjson')
    const r = await sfl(['schema', '-o', 'json-schema'])
    expect(r.code).toBe(0)
    const schema = JSON.parse(r.stdout) as {properties: Record<string, unknown>; required: string[]}
    const validate = new Ajv2020({strict: true, allErrors: true, validateFormats: false}).compile(schema)
    const flat = (rec: Record<string, unknown>) => {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(rec))
        if (v !== null && typeof v === 'object' && !Array.isArray(v))
          for (const [s, x] of Object.entries(v)) out[`${k}.${s}`] = x
        else if (k !== 'AssumableMortgage' && k !== 'FHACondoEligibility') out[k] = v
      return out
    }
    const records = readFileSync(nd, 'utf8')
      .trim()
      .split('\n')
      .map((l) => flat(JSON.parse(l) as Record<string, unknown>))
    expect(records).toHaveLength(2000)
    for (const rec of records) expect(validate(rec), JSON.stringify(validate.errors)).toBe(true)
    expect(validate({...records[0], Zip: '9583'})).toBe(false)
    expect(validate({...records[0], CRAEligible: 'High'})).toBe(false)
    expect(validate({...records[0], ConfidenceScore: 101})).toBe(false)
    expect(validate({...records[0], FHAEligible: null})).toBe(false)
    expect(validate({...records[0], 'AssumableMortgage.RecordingDate': '2026-1-5'})).toBe(false)
    expect(schema.required).toEqual(
      [...CORE_FIELDS].filter(
        (f) => !['FHACondoEligible', 'USDAAreaEligible', 'VAEligible', 'Assumable'].includes(f),
      ),
    )
  })

  it('-o frictionless and --json name every column in the export order; --options none leaves out the add-ons', async () => {
    const fr = await sfl(['schema', '-o', 'frictionless', '--options', 'none'])
    expect(fr.code).toBe(0)
    const fields = (JSON.parse(fr.stdout) as {fields: Array<{name: string; type: string}>}).fields
    expect(fields.map((f) => f.name)).toEqual([...CORE_FIELDS, ...EXTRA_FIELDS])
    expect(fields.find((f) => f.name === 'Zip')).toEqual({
      name: 'Zip',
      type: 'string',
      constraints: {required: true, maxLength: 5, pattern: '^[0-9]{5}$'},
    })
    const js = await sfl(['schema', '--json', '--options', 'fhacondoeligibility'])
    const doc = JSON.parse(js.stdout) as {options: string[]; columns: Array<{name: string}>}
    expect(doc.options).toEqual(['FHACondoEligibility'])
    expect(doc.columns.at(-1)?.name).toBe('FHACondoEligibility.LastUpdated')
    expect(doc.columns).toHaveLength(32 + 11)
  })

  it('an unknown option is one line, exit 2', async () => {
    const r = await sfl(['schema', '--options', 'Assumable'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim().split('\n')).toEqual([
      'Error: --options Assumable: not an add-on option; give AssumableMortgage, FHACondoEligibility (comma-separated) or none',
    ])
  })
})
