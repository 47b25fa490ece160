import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {DuckDBInstance} from '@duckdb/node-api'
import {describe, expect, it} from 'vitest'

import {hasZstd} from '../../src/io/parquet-codecs.js'
import {killWhen, sfl} from '../helpers/cli.js'
import {withSandbox} from '../helpers/sandbox.js'
import {paged, startScenario} from '../helpers/scenario-server.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * `county-export --parquet-compression` and `--parquet-row-group-size` through the built CLI, checked by
 * DuckDB: `parquet_metadata()` names each file's codec and row groups, the values are the same whatever
 * the codec, sfl stats and sfl changes read every codec, and the flags are refused (exit 2, one line, no
 * request) wherever they cannot apply. zstd runs for real on a Node whose node:zlib has it (22.15+; CI's
 * Node 24) and is refused, in one line naming that Node, elsewhere (CI's Node 20): the CLI runs on the
 * test's own Node (process.execPath).
 */
const tmp = () => tempDir('sfl-e2e-parquet-options-')

const ZSTD_LINE = `Error: --parquet-compression zstd needs Node 22.15 or later (node:zlib has no zstd in Node ${process.versions.node}); use --parquet-compression snappy, gzip or brotli, or run sfl on a newer Node\n`

interface Meta {
  codecs: string[]
  groups: number[]
  rows: unknown[]
}

/** DuckDB's view of a file (or a glob): codecs of the column chunks, rows per row group, every row by id. */
async function duck(path: string): Promise<Meta> {
  const db = await DuckDBInstance.create(':memory:')
  const c = await db.connect()
  try {
    const p = path.replace(/'/g, "''")
    const codecs = (
      await c.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata('${p}') ORDER BY 1`)
    ).getRows()
    const groups = (
      await c.runAndReadAll(
        `SELECT DISTINCT file_name, row_group_id, row_group_num_rows FROM parquet_metadata('${p}') ORDER BY 1, 2`,
      )
    ).getRows()
    const rows = (
      await c.runAndReadAll(`SELECT * FROM read_parquet('${p}') ORDER BY ServicePropertyID`)
    ).getRowObjectsJson()
    return {codecs: codecs.map((r) => String(r[0])), groups: groups.map((r) => Number(r[2])), rows}
  } finally {
    c.closeSync()
    db.closeSync()
  }
}

describe('county-export --parquet-compression and --parquet-row-group-size', () => {
  it('each codec: parquet_metadata shows it and groups of the rows asked, the values equal across codecs, sfl stats and sfl changes read each alike', async () => {
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
      const d = tmp()
      const codecs = {snappy: 'SNAPPY', gzip: 'GZIP', brotli: 'BROTLI', none: 'UNCOMPRESSED', zstd: 'ZSTD'}
      const seen = new Map<string, {meta: Meta; stats: unknown; file: string}>()
      for (const [c, codec] of Object.entries(codecs)) {
        const file = join(d, `${c}.parquet`)
        const args = ['county-export', '--fips', '06067', '--out', file, '--quiet', '--no-stats']
        const r = await sfl([...args, '--parquet-compression', c, '--parquet-row-group-size', '1024'], {env})
        if (c === 'zstd' && !hasZstd()) {
          // this Node cannot write it: refused before the run, nothing written
          expect([r.code, r.stderr]).toEqual([2, ZSTD_LINE])
          expect(existsSync(file)).toBe(false)
          continue
        }
        expect(r.code, r.stderr).toBe(0)
        const meta = await duck(file)
        expect(meta.codecs).toEqual([codec])
        expect(meta.groups).toEqual([1024, 976])
        const stats = await sfl(['stats', file, '--json'], {env})
        expect(stats.code, stats.stderr).toBe(0)
        seen.set(c, {meta, stats: JSON.parse(stats.stdout), file})
      }
      expect([...seen.keys()]).toEqual(
        hasZstd() ? ['snappy', 'gzip', 'brotli', 'none', 'zstd'] : ['snappy', 'gzip', 'brotli', 'none'],
      )
      const snappy = seen.get('snappy')!
      expect(snappy.meta.rows).toHaveLength(2000)
      expect((snappy.stats as {run: {records: number}}).run.records).toBe(2000)
      for (const [c, got] of seen) {
        expect(got.meta.rows, c).toEqual(snappy.meta.rows)
        expect(got.stats, c).toEqual(snappy.stats)
        if (c === 'snappy') continue
        const changes = await sfl(['changes', snappy.file, got.file, '--output', 'ndjson'], {env})
        expect(changes.code, `${c}: ${changes.stderr}`).toBe(0)
        expect(changes.stderr).toMatch(/0 added, 0 updated, 0 deleted, 2,000 unchanged/)
      }
      if (!hasZstd()) {
        // a zstd file another tool wrote: sfl stats says which Node reads it, in one line
        const zstd = join(d, 'duck.parquet')
        const db = await DuckDBInstance.create(':memory:')
        const con = await db.connect()
        await con.run(`COPY (SELECT * FROM '${snappy.file}') TO '${zstd}' (FORMAT parquet, COMPRESSION zstd)`)
        con.closeSync()
        db.closeSync()
        const stats = await sfl(['stats', zstd], {env})
        expect([stats.code, stats.stderr]).toEqual([
          2,
          `Error: ${zstd}: its columns are zstd-compressed, which needs Node 22.15 or later to read; this is Node ${process.versions.node}\n`,
        ])
      }
    })
  })

  it('refused in one line (exit 2) before any request: the flags without Parquet output, a bad size or codec, zstd where Node lacks it', async () => {
    const server = await startScenario((r) => paged(r, 1, 1))
    try {
      const env = {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'golden-key-123'}
      const d = tmp()
      const base = ['county-export', '--fips', '06067']
      const cases: Array<[string[], string]> = [
        [
          ['--out', join(d, 'a.csv'), '--parquet-compression', 'gzip'],
          'Error: --parquet-compression applies to Parquet output only; this run writes csv (add --output parquet, or drop --parquet-compression)\n',
        ],
        [
          ['--out', join(d, 'a.ndjson'), '--parquet-row-group-size', '4096'],
          'Error: --parquet-row-group-size applies to Parquet output only; this run writes ndjson (add --output parquet, or drop --parquet-row-group-size)\n',
        ],
        [
          ['--out-dir', join(d, 'dir'), '--parquet-compression', 'brotli', '--dry-run', '--no-probe'],
          'Error: --parquet-compression applies to Parquet output only; this run writes csv (add --output parquet, or drop --parquet-compression)\n',
        ],
        [
          ['--out-dir', join(d, 'dir'), '-o', 'ndjson', '--parquet-row-group-size', '2048'],
          'Error: --parquet-row-group-size applies to Parquet output only; this run writes ndjson (add --output parquet, or drop --parquet-row-group-size)\n',
        ],
        [
          ['--out-dir', join(d, 'dir'), '-o', 'parquet', '--parquet-row-group-size', '262145'],
          'Error: --parquet-row-group-size 262145: must be a whole number of rows from 1,024 to 262,144, e.g. --parquet-row-group-size 16384\n',
        ],
        [
          ['--out', join(d, 'a.parquet'), '--parquet-row-group-size', '100'],
          'Error: --parquet-row-group-size 100: must be a whole number of rows from 1,024 to 262,144, e.g. --parquet-row-group-size 16384\n',
        ],
        [
          ['--out', join(d, 'a.parquet'), '--parquet-row-group-size', '1e6'],
          'Error: --parquet-row-group-size 1e6: must be a whole number of rows from 1,024 to 262,144, e.g. --parquet-row-group-size 16384\n',
        ],
        ...(hasZstd()
          ? []
          : [
              [['--out', join(d, 'a.parquet'), '--parquet-compression', 'zstd'], ZSTD_LINE] as [
                string[],
                string,
              ],
            ]),
      ]
      for (const [args, line] of cases) {
        const r = await sfl([...base, ...args], {env})
        expect([r.code, r.stdout, r.stderr], args.join(' ')).toEqual([2, '', line])
      }
      // a codec sfl does not write: oclif's line naming the ones it does, first
      const lz4 = await sfl([...base, '--out', join(d, 'a.parquet'), '--parquet-compression', 'lz4'], {env})
      expect(lz4.code).toBe(2)
      expect(lz4.stderr.split('\n')[0]).toBe(
        'Error: Expected --parquet-compression=lz4 to be one of: snappy, zstd, gzip, brotli, none',
      )
      expect(server.requests).toHaveLength(0)
      // nothing made: no output, no checkpoint, no --out-dir folder
      expect(readdirSync(d)).toEqual([])
    } finally {
      await server.close()
    }
  })

  it('a run stopped half way keeps its codec and row groups: a rerun with others is refused (the plan too), the same flags complete it', async () => {
    let hang = true
    const server = await startScenario((r) => (hang && r.page >= 6 ? {hang: true} : paged(r, 40, 50)))
    try {
      const d = tmp()
      const out = join(d, 'k.parquet')
      const env = {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'golden-key-123'}
      const args = ['county-export', '--fips', '06113', '--out', out, '--concurrency', '1']
      const asked = ['--parquet-compression', 'gzip', '--parquet-row-group-size', '1024']
      await killWhen([...args, ...asked], env, () => server.requests.length >= 6, server.idle)
      expect(existsSync(`${out}.sfl-checkpoint`)).toBe(true)
      hang = false
      const sent = server.requests.length
      // the last line (the first rerun may say before it that it took over the killed run's lock)
      const last = (stderr: string) => `${stderr.trimEnd().split('\n').at(-1)}\n`
      const refusal = (shown: string) =>
        `Error: the checkpoint ${out}.sfl-checkpoint belongs to a different run (fips 06113; format parquet; baseUrl ${server.baseUrl}; ${shown}); rerun with those arguments to finish it, or add --restart to discard it and start over\n`
      const had = 'parquetCompression gzip; parquetRowGroupSize 1024'
      for (const other of [
        ['--parquet-compression', 'brotli', '--parquet-row-group-size', '1024'],
        ['--parquet-compression', 'gzip', '--parquet-row-group-size', '2048'],
        [], // the defaults are other options too
      ]) {
        const r = await sfl([...args, ...other], {env})
        expect([r.code, last(r.stderr)], other.join(' ')).toEqual([2, refusal(had)])
        const plan = await sfl([...args, ...other, '--dry-run', '--no-probe'], {env})
        expect([plan.code, last(plan.stderr)], other.join(' ')).toEqual([2, refusal(had)])
      }
      expect(server.requests).toHaveLength(sent)
      expect(existsSync(out)).toBe(false)

      const again = await sfl([...args, ...asked], {env})
      expect(again.code, again.stderr).toBe(0)
      expect(again.stderr).toMatch(/2,000 records written/)
      const meta = await duck(out)
      expect(meta.codecs).toEqual(['GZIP'])
      expect(meta.groups).toEqual([1024, 976])
      expect(new Set(meta.rows.map((r) => (r as {ServicePropertyID: unknown}).ServicePropertyID)).size).toBe(
        2000,
      )
      expect(readdirSync(d)).toEqual(['k.parquet'])
    } finally {
      await server.close()
    }
  })

  it('--out-dir: each county file in the codec asked, recorded in its manifest entry; a later run with another codec leaves the others as they were', async () => {
    const server = await startScenario((r) => paged(r, 3, 50))
    try {
      const env = {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'golden-key-123'}
      const dir = join(tmp(), 'exports')
      const run = (fips: string[], codec: string) =>
        sfl(
          [
            'county-export',
            ...fips.flatMap((f) => ['--fips', f]),
            '-o',
            'parquet',
            '--out-dir',
            dir,
            '--parquet-compression',
            codec,
            '--parquet-row-group-size',
            '1024',
            '--quiet',
          ],
          {env},
        )
      const first = await run(['06067', '06113'], 'gzip')
      expect(first.code, first.stderr).toBe(0)
      const second = await run(['06113'], 'brotli')
      expect(second.code, second.stderr).toBe(0)
      const manifest = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as {
        counties: Array<{fips: string; path: string; records: number; parquet?: unknown}>
      }
      expect(manifest.counties.map((c) => [c.fips, c.records, c.parquet])).toEqual([
        ['06067', 150, {compression: 'gzip', rowGroupRows: 1024}],
        ['06113', 150, {compression: 'brotli', rowGroupRows: 1024}],
      ])
      for (const [c, codec] of [
        [manifest.counties[0]!, 'GZIP'],
        [manifest.counties[1]!, 'BROTLI'],
      ] as const)
        expect((await duck(join(dir, c.path))).codecs).toEqual([codec])
      // the folder as one dataset: DuckDB reads both codecs together
      const all = await duck(`${dir}/**/*.parquet`)
      expect(all.codecs).toEqual(['BROTLI', 'GZIP'])
      expect(all.rows).toHaveLength(300)
    } finally {
      await server.close()
    }
  })
})
