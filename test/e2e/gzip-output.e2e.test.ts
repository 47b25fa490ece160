import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {gunzipSync} from 'node:zlib'

import {DuckDBInstance} from '@duckdb/node-api'
import {describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {readLog, withSandbox} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * Compression by name (issue 32, docs/exports.md "Output names and compression"): an output named `.gz`
 * after csv, ndjson or json is gzip on every path that writes a file (the output gate wraps the target:
 * src/io/output.ts), the same bytes once expanded as the plain file, and read by DuckDB as gzip; a name sfl
 * cannot write is exit 2 before any request, with no file left behind.
 */
const GZIP_MAGIC = [0x1f, 0x8b]

function gzipped(path: string): Buffer {
  const bytes = readFileSync(path)
  expect([...bytes.subarray(0, 2)]).toEqual(GZIP_MAGIC)
  return gunzipSync(bytes)
}

describe('outputs named .gz are gzip', () => {
  it('county-export --out t.csv.gz: gzip whose expansion is the plain export byte for byte, and DuckDB reads it as gzip', async () => {
    const dir = tempDir('sfl-gz-')
    const gz = join(dir, 't.csv.gz')
    const plain = join(dir, 't.csv')
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
      for (const out of [gz, plain]) {
        const r = await sfl(['county-export', '--fips', '06067', '--out', out, '--quiet', '--no-stats'], {
          env,
        })
        expect(r.code, r.stderr).toBe(0)
      }
    })
    expect(gzipped(gz).equals(readFileSync(plain))).toBe(true)
    const db = await DuckDBInstance.create(':memory:')
    const c = await db.connect()
    try {
      const rows = (
        await c.runAndReadAll(
          `SELECT count(*) AS n, min(Fips) AS f FROM read_csv('${gz}', header = true, all_varchar = true)`,
        )
      ).getRowObjectsJson()
      expect(rows).toEqual([{n: '2000', f: '06067'}])
    } finally {
      c.closeSync()
      db.closeSync()
    }
  })

  it('county-export --out t.ndjson.gz takes NDJSON from the name (no --output) and never adopts a plain part file', async () => {
    const dir = tempDir('sfl-gz-')
    const gz = join(dir, 't.ndjson.gz')
    await withSandbox({}, async (sb) => {
      const r = await sfl(['county-export', '--fips', '06067', '--out', gz, '--quiet', '--no-stats'], {
        env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
      })
      expect(r.code, r.stderr).toBe(0)
    })
    const lines = gzipped(gz).toString('utf8').trimEnd().split('\n')
    expect(lines).toHaveLength(2000)
    expect(JSON.parse(lines[0]!)).toMatchObject({Fips: '06067'})
    expect(readdirSync(dir)).toEqual(['t.ndjson.gz'])
  })

  it('lookup --input --out r.csv.gz and sfl changes --out c.ndjson.gz write gzip', async () => {
    const dir = tempDir('sfl-gz-')
    const input = join(dir, 'in.csv')
    writeFileSync(input, 'fips,property_id\n06067,30000000006\n')
    const out = join(dir, 'r.csv.gz')
    const a = join(dir, 'a.csv')
    const b = join(dir, 'b.csv')
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
      const r = await sfl(['lookup', '--input', input, '--out', out, '--quiet', '--no-stats'], {env})
      expect(r.code, r.stderr).toBe(0)
      const e = await sfl(['county-export', '--fips', '06067', '--out', a, '--quiet', '--no-stats'], {env})
      expect(e.code, e.stderr).toBe(0)
    })
    const rows = gzipped(out).toString('utf8').trimEnd().split('\r\n')
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatch(/^fips,property_id,sfl_row,status,/)
    expect(rows[1]).toMatch(/^06067,30000000006,1,ok,/)
    // the second side: the first 4 records of the first, so 1,996 are deleted
    writeFileSync(b, `${readFileSync(a, 'utf8').split('\r\n').slice(0, 5).join('\r\n')}\r\n`)
    const changes = join(dir, 'c.ndjson.gz')
    const c = await sfl(['changes', a, b, '--out', changes, '--quiet'])
    expect(c.code, c.stderr).toBe(0)
    const kinds = gzipped(changes)
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as {Change?: string}).Change)
    expect(kinds).toHaveLength(1996)
    expect(kinds.every((k) => k === 'deleted')).toBe(true)
  })

  it('a name sfl cannot write is exit 2 before any request, and nothing is left behind', async () => {
    const dir = tempDir('sfl-gz-')
    const log = join(tempDir('sfl-gz-log-'), 'requests.log')
    const sides = tempDir('sfl-gz-sides-')
    for (const side of ['a.csv', 'b.csv']) writeFileSync(join(sides, side), 'Fips,ServicePropertyID\r\n')
    await withSandbox({log}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
      for (const [args, words] of [
        [['county-export', '--fips', '06067', '--out', join(dir, 't.ndjson.zst')], /not zstd \(\.zst\)/],
        [
          ['county-export', '--fips', '06067', '--out', join(dir, 't.json'), '-o', 'csv'],
          /names a JSON file but --output is csv/,
        ],
        [
          ['county-export', '--fips', '06067', '--out', join(dir, 't.parquet.gz')],
          /compresses its own pages/,
        ],
        [
          ['changes', join(sides, 'a.csv'), join(sides, 'b.csv'), '--out', join(dir, 'c.csv.bz2')],
          /not bzip2/,
        ],
      ] as const) {
        const r = await sfl([...args], {env})
        expect(r.code, r.stderr).toBe(2)
        expect(r.stderr).toMatch(words)
      }
    })
    expect(existsSync(log) ? readLog(log) : []).toEqual([])
    expect(readdirSync(dir)).toEqual([])
  })
})
