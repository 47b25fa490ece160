import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {DuckDBInstance, type DuckDBConnection} from '@duckdb/node-api'
import {parse} from 'csv-parse/sync'
import {describe, expect, it} from 'vitest'

import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {sfl} from '../helpers/cli.js'
import {readLog, withSandbox} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * `--where` end to end: the built CLI against the sandbox, and DuckDB as the independent judge. An export
 * with a filter must hold exactly the rows the same WHERE keeps in DuckDB over the export without it, and
 * take exactly the requests the export without it takes; a bad filter is refused before any request.
 */
const tmp = () => tempDir('sfl-e2e-where-')
const KEY = 'sandbox-full'

/** Filters over every kind of field: booleans, numbers, text, dates, nulls, option members. */
const FILTERS = [
  'FHAEligible = true and FinalValue < 400000',
  "City like 'ELK%' or CRAEligible in ('Low', 'Moderate')",
  "AssumableMortgage.LoanType = 'VA' and AssumableMortgage.EstimatedInterestRate <= 3.5",
  'FHACondoEligible is null or not FHACondoEligibility.TotalUnits > 50',
  "not Assumable = true and ValuationDate >= '2026-09-15'",
]

/** The filter as DuckDB's SQL: the same text, the dotted column names quoted. */
const sqlOf = (filter: string) => filter.replace(/\b([A-Za-z]+\.[A-Za-z]+)\b/g, '"$1"')

async function withDuck<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const db = await DuckDBInstance.create(':memory:')
  const c = await db.connect()
  try {
    return await fn(c)
  } finally {
    c.closeSync()
    db.closeSync()
  }
}

async function ids(c: DuckDBConnection, sql: string): Promise<string[]> {
  return (await c.runAndReadAll(sql)).getRowsJson().map((r) => String(r[0]))
}

const lit = (path: string) => `'${path.replace(/'/g, "''")}'`

function csvRows(path: string): string[][] {
  return parse(readFileSync(path, 'utf8'), {bom: true}) as string[][]
}

/** Requests the sandbox logged since `from` (its log file, one line a request). */
const requestsIn = (log: string) => (existsSync(log) ? readLog(log).length : 0)

describe('county-export --where', () => {
  it('CSV: each filter keeps exactly the rows DuckDB keeps over the unfiltered export, in the same requests', async () => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    await withSandbox({pageSize: 300, log}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY}
      const all = join(d, 'all.csv')
      const r0 = await sfl(['county-export', '--fips', '06067', '--out', all], {env})
      expect(r0.code, r0.stderr).toBe(0)
      const unfilteredRequests = requestsIn(log)
      expect(unfilteredRequests).toBe(7) // 2,000 records in pages of 300
      const rows = csvRows(all)
      const header = rows[0]!
      const idCol = header.indexOf('ServicePropertyID')
      const byId = new Map(rows.slice(1).map((r) => [r[idCol]!, r]))
      await withDuck(async (c) => {
        for (const filter of FILTERS) {
          const out = join(d, 'f.csv')
          const before = requestsIn(log)
          const r = await sfl(['county-export', '--fips', '06067', '--out', out, '--where', filter], {env})
          expect(r.code, r.stderr).toBe(0)
          expect(requestsIn(log) - before, filter).toBe(unfilteredRequests)
          const expected = await ids(
            c,
            `SELECT ServicePropertyID FROM read_csv(${lit(all)}) WHERE ${sqlOf(filter)}`,
          )
          // each filter keeps some rows and drops some: the comparison could fail either way
          expect(expected.length, filter).toBeGreaterThan(0)
          expect(expected.length, filter).toBeLessThan(2000)
          const got = csvRows(out)
          // the columns are the unfiltered export's, and each row is that export's row, cell for cell
          expect(got[0]).toEqual(header)
          expect(
            got.slice(1).map((row) => row[idCol]),
            filter,
          ).toEqual(expected)
          expect(got.slice(1)).toEqual(expected.map((id) => byId.get(id)))
          expect(r.stderr).toContain(
            `2,000 records fetched, ${expected.length.toLocaleString('en-US')} kept by --where`,
          )
        }
      })
    })
  }, 120_000)

  it("Parquet: every column of every kept row equals DuckDB's WHERE over the unfiltered Parquet", async () => {
    await withSandbox({pageSize: 700}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY}
      const d = tmp()
      const all = join(d, 'all.parquet')
      expect((await sfl(['county-export', '--fips', '06067', '--out', all], {env})).code).toBe(0)
      await withDuck(async (c) => {
        for (const filter of FILTERS) {
          const out = join(d, 'f.parquet')
          const r = await sfl(['county-export', '--fips', '06067', '--out', out, '--where', filter], {env})
          expect(r.code, r.stderr).toBe(0)
          const want = `SELECT * FROM read_parquet(${lit(all)}) WHERE ${sqlOf(filter)}`
          const have = `SELECT * FROM read_parquet(${lit(out)})`
          const n = await ids(c, `SELECT count(*) FROM (${want})`)
          expect(Number(n[0]), filter).toBeGreaterThan(0)
          expect(await ids(c, `SELECT count(*) FROM (${have})`)).toEqual(n)
          // the same rows, column for column and value for value, both ways
          expect(await ids(c, `SELECT count(*) FROM (${want} EXCEPT ALL ${have})`)).toEqual(['0'])
          expect(await ids(c, `SELECT count(*) FROM (${have} EXCEPT ALL ${want})`)).toEqual(['0'])
          // and in the order fetched
          expect(await ids(c, `SELECT ServicePropertyID FROM (${have})`)).toEqual(
            await ids(c, `SELECT ServicePropertyID FROM (${want})`),
          )
        }
      })
    })
  }, 120_000)

  it('stdout, --out-dir and the statistics hold the kept rows; --max-age reuses a county only under the same filter', async () => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    await withSandbox({pageSize: 500, log}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY}
      const filter = FILTERS[0]!
      const file = join(d, 'f.ndjson')
      const stats = join(d, 'stats.json')
      const r1 = await sfl(
        ['county-export', '--fips', '06067', '--out', file, '--where', filter, '--stats-json', stats],
        {env},
      )
      expect(r1.code, r1.stderr).toBe(0)
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n')
      // stdout streams the same records
      const streamed = await sfl(['county-export', '--fips', '06067', '-o', 'ndjson', '--where', filter], {
        env,
      })
      expect(streamed.code, streamed.stderr).toBe(0)
      expect(streamed.stdout.trimEnd().split('\n')).toEqual(lines)
      // the run's statistics are those of the file it wrote
      const fromFile = await sfl(['stats', file, '--json'])
      expect(fromFile.code, fromFile.stderr).toBe(0)
      const run = (JSON.parse(readFileSync(stats, 'utf8')) as {run: unknown}).run
      expect(run).toEqual((JSON.parse(fromFile.stdout) as {run: unknown}).run)
      expect(JSON.stringify(run)).toContain(`"records":${lines.length}`)

      // one file per county, each the filtered rows of its county, and the manifest says so
      const dir = join(d, 'exports')
      const args = ['county-export', '--fips', '06067', '--fips', '12086', '-o', 'ndjson', '--out-dir', dir]
      const r2 = await sfl([...args, '--where', filter], {env})
      expect(r2.code, r2.stderr).toBe(0)
      expect(
        readFileSync(join(dir, 'state=CA/fips=06067/data.ndjson'), 'utf8').trimEnd().split('\n'),
      ).toEqual(lines)
      const manifest = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as {
        counties: Array<{fips: string; records: number; where?: string}>
      }
      expect(manifest.counties.map((c) => [c.fips, c.where])).toEqual([
        ['06067', filter],
        ['12086', filter],
      ])
      const miami = readFileSync(join(dir, 'state=FL/fips=12086/data.ndjson'), 'utf8').trimEnd().split('\n')
      for (const l of miami) {
        const rec = JSON.parse(l) as {FHAEligible: unknown; FinalValue: number}
        expect(rec.FHAEligible === true && rec.FinalValue < 400000).toBe(true)
      }
      expect(manifest.counties[1]!.records).toBe(miami.length)
      // a rerun within --max-age: the same filter finds both fresh (no request); another fetches both
      const before = requestsIn(log)
      const same = await sfl([...args, '--where', filter, '--max-age', '1d'], {env})
      expect(same.code, same.stderr).toBe(0)
      expect(same.stderr).toMatch(/2 fresh, not fetched/)
      expect(requestsIn(log)).toBe(before)
      const other = await sfl([...args, '--where', 'FHAEligible = false', '--max-age', '1d'], {env})
      expect(other.code, other.stderr).toBe(0)
      expect(other.stderr).not.toMatch(/fresh, not fetched/)
      expect(requestsIn(log)).toBeGreaterThan(before)
    })
  }, 120_000)

  it('a bad filter is one line, exit 2, before any request, and nothing is written', async () => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    await withSandbox({log}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY}
      const out = join(d, 'e.csv')
      const cases: Array<[string, string]> = [
        [
          'FinalValu < 500000',
          'Error: --where: "FinalValu" is not a field of the spec\'s records (did you mean FinalValue?) at character 1 ("FinalValu < 500000"); the grammar is in docs/exports.md ("Filters")',
        ],
        [
          "FHAEligible = 'yes'",
          'Error: --where: FHAEligible is boolean; compare it with true or false at character 15 ("\'yes\'"); the grammar is in docs/exports.md ("Filters")',
        ],
      ]
      for (const [filter, line] of cases) {
        for (const extra of [[], ['--dry-run']]) {
          const r = await sfl(
            ['county-export', '--fips', '06067', '--out', out, '--where', filter, ...extra],
            {
              env,
            },
          )
          expect({code: r.code, stderr: r.stderr}).toEqual({code: 2, stderr: `${line}\n`})
        }
        // a batch refuses it the same way, before its input is read
        writeFileSync(join(d, 'in.csv'), 'fips,property_id\n06067,30000000001\n')
        const b = await sfl(
          ['lookup', '--input', join(d, 'in.csv'), '--out', join(d, 'o.csv'), '--where', filter],
          {
            env,
          },
        )
        expect({code: b.code, stderr: b.stderr}).toEqual({code: 2, stderr: `${line}\n`})
      }
      expect(requestsIn(log)).toBe(0)
      // no output, no checkpoint, no temp file
      expect(readdirSync(d).filter((f) => f !== 'log.ndjson')).toEqual(['in.csv'])
      // with --changes-since: refused, one line
      const c = await sfl(
        [
          'county-export',
          '--fips',
          '06067',
          '--out',
          out,
          '--where',
          FILTERS[0]!,
          '--changes-since',
          join(d, 'in.csv'),
        ],
        {env},
      )
      expect(c.code).toBe(2)
      expect(c.stderr).toMatch(/^Error: --where and --changes-since do not go together .*\n$/)
      expect(requestsIn(log)).toBe(0)
    })
  })

  it('a resume with another filter is refused as another run; with the same filter it ends as one run would', async () => {
    const d = tmp()
    await withSandbox({pageSize: 500}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY}
      const out = join(d, 'e.csv')
      const args = ['county-export', '--fips', '06067', '--fips', '12086', '--out', out]
      const filter = FILTERS[1]!
      const stopped = await sfl([...args, '--where', filter, '--max-requests', '2'], {env})
      expect(stopped.code).toBe(7)
      expect(existsSync(`${out}.sfl-checkpoint`)).toBe(true)
      for (const other of [[], ['--where', FILTERS[0]!]]) {
        const r = await sfl([...args, ...other], {env})
        expect(r.code).toBe(2)
        expect(r.stderr).toContain(
          `belongs to a different run (fips 06067,12086; format csv; baseUrl ${sb.baseUrl}; where ${filter}); rerun with those arguments to finish it, or add --restart`,
        )
      }
      // the plan refuses it as the run does, and reads it with the same filter
      const plan = await sfl([...args, '--where', FILTERS[0]!, '--dry-run', '--no-probe'], {env})
      expect(plan.code).toBe(2)
      const same = await sfl([...args, '--where', filter], {env})
      expect(same.code, same.stderr).toBe(0)
      const whole = join(d, 'whole.csv')
      expect((await sfl([...args.slice(0, -1), whole, '--where', filter], {env})).code).toBe(0)
      expect(readFileSync(out, 'utf8')).toBe(readFileSync(whole, 'utf8'))
    })
  }, 60_000)

  it('--dry-run says rows are filtered after fetching and plans the same requests as without --where', async () => {
    await withSandbox({pageSize: 300}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY}
      const args = ['county-export', '--fips', '06067', '--dry-run', '--json']
      const plain = await sfl(args, {env})
      const filtered = await sfl([...args, '--where', FILTERS[0]!], {env})
      expect(plain.code).toBe(0)
      expect(filtered.code).toBe(0)
      const a = JSON.parse(plain.stdout) as Record<string, unknown>
      const b = JSON.parse(filtered.stdout) as Record<string, unknown>
      expect(b['where']).toBe(FILTERS[0])
      expect(a['where']).toBeNull()
      expect(b['requests']).toBe(a['requests'])
      expect(b['requestsEstimate']).toBe(a['requestsEstimate'])
      const text = await sfl(['county-export', '--fips', '06067', '--dry-run', '--where', FILTERS[0]!], {env})
      expect(text.stdout).toMatch(
        /^Filter {5}--where: rows are filtered after fetching, so the requests are those of the whole counties \(the same as without it\)$/m,
      )
    })
  })
})

describe('lookup --input --where', () => {
  it('one output row per input row: a row whose record fails the filter keeps its place as filtered', async () => {
    const d = tmp()
    const ds = new Dataset(1, 100_000)
    const sac = countyByFips('06067')!
    const lines = ['fips,property_id']
    const expected: string[] = []
    for (let i = 0; i < 40; i++) {
      const rec = ds.record(sac, i, {assumable: true, condo: true})
      lines.push(`06067,${String(rec['ServicePropertyID'])}`)
      expected.push(rec['FHAEligible'] === true ? 'ok' : 'filtered')
    }
    lines.push('06067,30000999999') // no such property: not_found, whatever the filter
    expected.push('not_found')
    writeFileSync(join(d, 'in.csv'), `${lines.join('\n')}\n`)
    expect(expected).toContain('ok')
    expect(expected).toContain('filtered')
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY}
      const out = join(d, 'out.csv')
      const r = await sfl(
        [
          'lookup',
          '--input',
          join(d, 'in.csv'),
          '--out',
          out,
          '--where',
          'FHAEligible = true',
          '--plan',
          'lookups',
        ],
        {env},
      )
      expect(r.code, r.stderr).toBe(0)
      const rows = parse(readFileSync(out, 'utf8'), {columns: true}) as Array<Record<string, string>>
      expect(rows.map((row) => row['status'])).toEqual(expected)
      for (const row of rows) {
        if (row['status'] === 'ok') expect(row['FHAEligible']).toBe('true')
        // a filtered row carries no record: its columns are empty
        if (row['status'] === 'filtered')
          expect([row['FHAEligible'], row['ServicePropertyID']]).toEqual(['', ''])
      }
      const n = (s: string) => expected.filter((e) => e === s).length
      expect(r.stderr).toContain(`41 rows (${n('ok')} ok, 1 not_found, ${n('filtered')} filtered)`)
    })
  })
})
