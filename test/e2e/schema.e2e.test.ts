import {mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {DuckDBInstance} from '@duckdb/node-api'
import {afterEach, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {withSandbox} from '../helpers/sandbox.js'

/**
 * One schema per run (issue 23): every file of an --out-dir run has the same columns, in the same order,
 * with the same Parquet types, whichever county finished first, empty counties included, so a plain glob
 * reads them all without union_by_name. The sandbox has data in two of California's 58 counties; the 56
 * empty ones finish first, before any record has shown the key's options.
 */
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'sfl-schema-'))
  dirs.push(d)
  return d
}

function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(dir, {recursive: true, encoding: 'utf8'})
    .filter((f) => f.endsWith(`.${ext}`))
    .map((f) => join(dir, f))
}

describe('one schema per --out-dir run', () => {
  it('Parquet: a plain glob over the folder reads every option column, with one type per column in every file', async () => {
    const dir = tmp()
    await withSandbox({records: 1500, pageSize: 500}, async (sb) => {
      const r = await sfl(['county-export', '--state', 'CA', '--out-dir', dir, '-o', 'parquet', '--quiet'], {
        env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
      })
      expect(r.code).toBe(0)
    })
    const files = filesUnder(dir, 'parquet')
    expect(files).toHaveLength(58)
    const db = await DuckDBInstance.create(':memory:')
    const c = await db.connect()
    try {
      const glob = `read_parquet('${dir}/**/*.parquet', hive_partitioning=true)`
      const cols = (await c.runAndReadAll(`DESCRIBE SELECT * FROM ${glob}`)).getRowObjectsJson()
      const names = cols.map((x) => String(x['column_name']))
      expect(names).toContain('AssumableMortgage.LoanType')
      expect(names).toContain('FHACondoEligibility.EligibilityStatus')
      const counted = (
        await c.runAndReadAll(
          `SELECT count(*) AS n, count("AssumableMortgage.LoanType") AS loans FROM ${glob}`,
        )
      ).getRowObjectsJson()[0]!
      expect(Number(counted['n'])).toBe(5000) // 06067 holds 2,000 records and 06037 3,000 in the sandbox
      expect(Number(counted['loans'])).toBeGreaterThan(0)
      // every file on its own: the same columns and types as the first one
      const schemaOf = async (f: string) =>
        (await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${f}')`))
          .getRowObjectsJson()
          .map((x) => `${String(x['column_name'])} ${String(x['column_type'])}`)
      const first = await schemaOf(files[0]!)
      for (const f of files) expect(await schemaOf(f)).toEqual(first)
    } finally {
      c.closeSync()
      db.closeSync()
    }
    const manifest = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as {
      schema: {key: string; columns: Array<{name: string; type: string}>; options: string[]}
      counties: Array<{schema: string}>
    }
    expect(manifest.schema.options).toEqual(['AssumableMortgage', 'FHACondoEligibility'])
    expect(manifest.schema.columns.find((x) => x.name === 'AssumableMortgage.TermMonths')?.type).toBe('INT32')
    expect(new Set(manifest.counties.map((x) => x.schema))).toEqual(new Set([manifest.schema.key]))
  })

  it('CSV: every county file has the same header, the empty ones included', async () => {
    const dir = tmp()
    await withSandbox({records: 1500, pageSize: 500}, async (sb) => {
      const r = await sfl(['county-export', '--state', 'CA', '--out-dir', dir, '--quiet'], {
        env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
      })
      expect(r.code).toBe(0)
    })
    const headers = new Set(filesUnder(dir, 'csv').map((f) => readFileSync(f, 'utf8').split('\r\n')[0]))
    expect(headers.size).toBe(1)
    expect([...headers][0]).toMatch(/,AssumableMortgage\.LoanType,/)
  })

  it('a key without the options: no option columns in any file, and one notice naming them', async () => {
    const dir = tmp()
    await withSandbox({records: 500}, async (sb) => {
      const r = await sfl(['county-export', '--fips', '06067', '--fips', '01001', '--out-dir', dir], {
        env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'},
      })
      expect(r.code).toBe(0)
      expect(r.stderr.match(/no record carried AssumableMortgage or FHACondoEligibility/g)).toHaveLength(1)
    })
    const headers = new Set(filesUnder(dir, 'csv').map((f) => readFileSync(f, 'utf8').split('\r\n')[0]))
    expect(headers.size).toBe(1)
    expect([...headers][0]).not.toMatch(/AssumableMortgage|FHACondoEligibility/)
  })
})
