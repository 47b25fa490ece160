import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {DuckDBInstance} from '@duckdb/node-api'
import pl from 'nodejs-polars'
import {describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {withSandbox} from '../helpers/sandbox.js'
import {readParquetRecords} from '../../src/io/parquet-reader.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * An --out-dir Parquet folder as the engines analysts use read it (issue 32, "Folders any reader opens";
 * docs/exports.md "Reading the folder"): only county files where they look, the manifest and the change
 * file under _sfl/, and the partition key fips read as the text "06067" when typed as the docs show.
 * DuckDB (@duckdb/node-api) and polars (nodejs-polars 0.25.2, pinned: its platform package
 * nodejs-polars-linux-x64-gnu is a devDependency, so nothing here is skipped on linux x64).
 */
interface Manifest {
  counties: Array<{fips: string; path: string; records: number}>
}

const COUNTIES = ['06067', '12086']

/** Two runs: `oct`, then `nov` with --changes-since oct, so nov/_sfl holds a manifest and a change file. */
async function exportFolder(): Promise<{dir: string; manifest: Manifest}> {
  const d = tempDir('sfl-readers-')
  await withSandbox({}, async (sb) => {
    const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
    const args = ['county-export', ...COUNTIES.flatMap((f) => ['--fips', f]), '-o', 'parquet', '--quiet']
    expect((await sfl([...args, '--out-dir', join(d, 'oct')], {env})).code).toBe(0)
    const nov = await sfl([...args, '--out-dir', join(d, 'nov'), '--changes-since', join(d, 'oct')], {env})
    expect(nov.code, nov.stderr).toBe(0)
  })
  const dir = join(d, 'nov')
  expect(readdirSync(dir).sort()).toEqual(['_sfl', 'state=CA', 'state=FL'])
  expect(readdirSync(join(dir, '_sfl')).sort()).toEqual(['changes.ndjson', 'manifest.json'])
  const manifest = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as Manifest
  expect(manifest.counties.map((c) => [c.fips, c.records])).toEqual([
    ['06067', 2000],
    ['12086', 2000],
  ])
  return {dir, manifest}
}

/** Each county's ServicePropertyIDs and FinalValues as its own file holds them, read by sfl's reader. */
async function fileRows(dir: string, m: Manifest): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  for (const c of m.counties) {
    const rows: string[] = []
    for await (const r of readParquetRecords(join(dir, c.path)))
      rows.push(`${String(r['ServicePropertyID'])}:${String(r['FinalValue'])}`)
    out.set(c.fips, rows.sort())
  }
  return out
}

describe('an --out-dir Parquet folder read by dataset engines', () => {
  it('DuckDB with hive_types: fips and state are VARCHAR, "06067", each county its file rows', async () => {
    const {dir, manifest} = await exportFolder()
    const db = await DuckDBInstance.create(':memory:')
    const c = await db.connect()
    try {
      const glob = `${dir.replace(/'/g, "''")}/**/*.parquet`
      for (const typed of [
        `hive_types={'state': 'VARCHAR', 'fips': 'VARCHAR'}`,
        'hive_types_autocast=false',
      ]) {
        const rows = (
          await c.runAndReadAll(
            `SELECT typeof(fips), typeof(state), state, fips, count(*)::INTEGER, count(*) FILTER (WHERE fips = Fips)::INTEGER
             FROM read_parquet('${glob}', hive_partitioning=true, ${typed}) GROUP BY ALL ORDER BY fips`,
          )
        ).getRowsJson()
        expect(rows).toEqual([
          ['VARCHAR', 'VARCHAR', 'CA', '06067', 2000, 2000],
          ['VARCHAR', 'VARCHAR', 'FL', '12086', 2000, 2000],
        ])
      }
      const want = await fileRows(dir, manifest)
      for (const fips of COUNTIES) {
        const got = (
          await c.runAndReadAll(
            `SELECT ServicePropertyID::VARCHAR, FinalValue FROM read_parquet('${glob}',
             hive_partitioning=true, hive_types={'state': 'VARCHAR', 'fips': 'VARCHAR'}) WHERE fips = '${fips}'`,
          )
        )
          .getRowsJson()
          .map((r) => `${String(r[0])}:${String(Number(r[1]))}`)
          .sort()
        expect(got).toEqual(want.get(fips))
      }
    } finally {
      c.closeSync()
      db.closeSync()
    }
  }, 120_000)

  it('polars (nodejs-polars 0.25.2) with hivePartitioning and hiveSchema: fips is a String "06067", the rows are the files\'', async () => {
    const {dir, manifest} = await exportFolder()
    const glob = join(dir, '**', '*.parquet')
    const df = pl
      .scanParquet(glob, {hivePartitioning: true, hiveSchema: {state: pl.String, fips: pl.String}})
      .collectSync()
    expect(df.getColumn('fips').dtype.equals(pl.String)).toBe(true)
    expect(df.getColumn('state').dtype.equals(pl.String)).toBe(true)
    expect(df.height).toBe(4000)
    const groups = df
      .groupBy(['state', 'fips'])
      .agg(pl.len().alias('n'), pl.col('Fips').eq(pl.col('fips')).sum().alias('same'))
      .sort('fips')
      .toRecords()
    expect(groups).toEqual([
      {state: 'CA', fips: '06067', n: 2000, same: 2000},
      {state: 'FL', fips: '12086', n: 2000, same: 2000},
    ])
    const want = await fileRows(dir, manifest)
    for (const fips of COUNTIES) {
      const part = df.filter(pl.col('fips').eq(pl.lit(fips)))
      const ids = part.getColumn('ServicePropertyID').toArray()
      const values = part.getColumn('FinalValue').toArray()
      const got = ids.map((id, i) => `${String(id)}:${String(values[i])}`).sort()
      expect(got).toEqual(want.get(fips))
    }
    // untyped, polars infers the key as an integer and drops the zero: why the docs type it
    const untyped = pl.scanParquet(glob, {hivePartitioning: true}).select('fips').unique().collectSync()
    expect(untyped.getColumn('fips').dtype.equals(pl.Int64)).toBe(true)
    expect(
      untyped
        .getColumn('fips')
        .toArray()
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual([6067, 12086])
    // given the folder itself, this polars lists every file under it, _sfl/ too (its hiddenFilePrefix
    // looks at file names, not folders), and refuses the mix: the docs give it the glob above
    expect(() => pl.scanParquet(dir, {hivePartitioning: true}).collectSync()).toThrow(
      /different file extensions.*_sfl\/(manifest|changes)/,
    )
  }, 120_000)
})
