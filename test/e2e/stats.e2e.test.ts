import {cpSync, mkdtempSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {parse} from 'csv-parse/sync'

import {sfl} from '../helpers/cli.js'
import {readLog, withSandbox} from '../helpers/sandbox.js'
import {startScenario, type Reply, type Scenario, type ScenarioRequest} from '../helpers/scenario-server.js'

/**
 * Run statistics (issue 14) end to end: the built CLI exports hand-made counties from a scripted server;
 * every figure asserted here was worked out by hand from the records below, not read from a run.
 */
const made: string[] = []
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'sfl-e2e-stats-'))
  made.push(d)
  return d
}
let server: Scenario | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
  for (const d of made.splice(0)) rmSync(d, {recursive: true, force: true})
})

const CRA = ['Low', 'Moderate', 'Middle', 'Upper', 'Not Available']

/** County 06067: ten records, i = 0..9. */
function sacramento(i: number): Record<string, unknown> {
  const assumable = i % 4 === 0 // i = 0, 4, 8
  return {
    Fips: '06067',
    ServicePropertyID: 6067000 + i,
    FinalValue: 100_000 * (i + 1),
    ConfidenceScore: 50 + i,
    CRAEligible: CRA[i % 5],
    FHAEligible: i % 2 === 0,
    VAEligible: i < 3 ? null : i % 3 === 0,
    USDAAreaEligible: false,
    Assumable: assumable,
    FHACondoEligible: i === 9 ? true : null,
    AssumableMortgage: assumable
      ? {
          LoanType: i === 8 ? 'VA' : 'FHA',
          EstimatedInterestRate: 2 + i / 4,
          EstimatedEquity: 10_000 * (i + 1),
        }
      : null,
  }
}

/** County 06113: two records, neither assumable, with a formula-looking CRA value and a comma. */
const YOLO = [
  {
    Fips: '06113',
    ServicePropertyID: 6113001,
    FinalValue: 2_000_000,
    ConfidenceScore: 99,
    CRAEligible: '=Odd, level',
    FHAEligible: true,
    VAEligible: true,
    USDAAreaEligible: true,
    Assumable: false,
    FHACondoEligible: false,
    AssumableMortgage: null,
  },
  {
    Fips: '06113',
    ServicePropertyID: 6113002,
    FinalValue: 4_000_000,
    ConfidenceScore: 97,
    CRAEligible: null,
    FHAEligible: false,
    VAEligible: null,
    USDAAreaEligible: true,
    Assumable: false,
    FHACondoEligible: null,
    AssumableMortgage: null,
  },
]

/** 06067 in two pages of five (RFC 8288 next), 06113 in one; `fail` answers 503 for the counties it names. */
const answer =
  (fail: Set<string> = new Set()) =>
  (r: ScenarioRequest): Reply => {
    if (fail.has(r.fips)) return {status: 503}
    if (r.fips === '06113') return {page: {records: YOLO}}
    const from = (r.page - 1) * 5
    return {
      page: {
        records: Array.from({length: 5}, (_, k) => sacramento(from + k)),
        next: r.page === 1 ? 2 : undefined,
      },
    }
  }

/** 06067's figures, by hand: values 100k..1M (linear quantiles at ranks 2.25, 4.5, 6.75), scores 50..59. */
const SACRAMENTO = {
  records: 10,
  flags: {
    FHAEligible: {true: 5, false: 5, unknown: 0, percent: 50},
    VAEligible: {true: 3, false: 4, unknown: 3, percent: 42.9}, // i = 3, 6, 9 of 3..9
    USDAAreaEligible: {true: 0, false: 10, unknown: 0, percent: 0},
    Assumable: {true: 3, false: 7, unknown: 0, percent: 30},
    FHACondoEligible: {true: 1, false: 0, unknown: 9, percent: 100},
  },
  CRAEligible: {
    levels: ['Low', 'Moderate', 'Middle', 'Upper', 'Not Available'].map((level) => ({
      level,
      count: 2,
      percent: 20,
    })),
    unknown: 0,
  },
  FinalValue: {count: 10, p25: 325_000, median: 550_000, p75: 775_000, approximate: false},
  ConfidenceScore: {count: 10, median: 54.5, approximate: false},
  assumableLoans: [
    // i = 0, 4: rates 2 and 3, equity 10,000 and 50,000
    {
      LoanType: 'FHA',
      count: 2,
      EstimatedInterestRate: {count: 2, median: 2.5, approximate: false},
      EstimatedEquity: {count: 2, median: 30_000, approximate: false},
    },
    // i = 8: rate 4, equity 90,000
    {
      LoanType: 'VA',
      count: 1,
      EstimatedInterestRate: {count: 1, median: 4, approximate: false},
      EstimatedEquity: {count: 1, median: 90_000, approximate: false},
    },
  ],
}

/** Both counties together: values 100k..1M, 2M, 4M (12 values: ranks 2.75, 5.5, 8.25). */
const RUN = {
  records: 12,
  flags: {
    FHAEligible: {true: 6, false: 6, unknown: 0, percent: 50},
    VAEligible: {true: 4, false: 4, unknown: 4, percent: 50},
    USDAAreaEligible: {true: 2, false: 10, unknown: 0, percent: 16.7},
    Assumable: {true: 3, false: 9, unknown: 0, percent: 25},
    FHACondoEligible: {true: 1, false: 1, unknown: 10, percent: 50},
  },
  CRAEligible: {
    levels: [
      ...['Low', 'Moderate', 'Middle', 'Upper', 'Not Available'].map((level) => ({
        level,
        count: 2,
        percent: 16.7,
      })),
      {level: '=Odd, level', count: 1, percent: 8.3},
    ],
    unknown: 1,
  },
  FinalValue: {count: 12, p25: 375_000, median: 650_000, p75: 925_000, approximate: false},
  // 50..59, 97, 99: ranks 5 and 6 are 55 and 56
  ConfidenceScore: {count: 12, median: 55.5, approximate: false},
  assumableLoans: SACRAMENTO.assumableLoans,
}

const env = (s: Scenario) => ({SFL_BASE_URL: s.baseUrl, SFL_API_KEY: 'test-key-123'})
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
const BOTH = ['--fips', '06067', '--fips', '06113']

describe('run statistics after an export, and sfl stats', () => {
  it('county-export --out x.csv prints the stats table on stderr and --stats-json writes the same figures', async () => {
    const s = (server = await startScenario(answer()))
    const d = tmp()
    const out = join(d, 'x.csv')
    const r = await sfl(
      ['county-export', '--fips', '06067', '--out', out, '--stats-json', join(d, 's.json')],
      {env: env(s)},
    )
    expect(r.code).toBe(0)
    const lines = r.stderr.split('\n')
    const at = lines.indexOf('sfl county-export: statistics: 10 records')
    expect(at).toBeGreaterThan(-1)
    expect(lines.slice(at + 1, at + 18)).toEqual([
      '                             true  of known',
      '  FHAEligible                   5     50.0%',
      '  VAEligible                    3     42.9%   (3 unknown)',
      '  USDAAreaEligible              0      0.0%',
      '  Assumable                     3     30.0%',
      '  FHACondoEligible              1    100.0%   (9 unknown)',
      '  CRAEligible         Low                       2   20.0%',
      '                      Moderate                  2   20.0%',
      '                      Middle                    2   20.0%',
      '                      Upper                     2   20.0%',
      '                      Not Available             2   20.0%',
      '  FinalValue          p25 $325,000   median $550,000   p75 $775,000',
      '  ConfidenceScore     median 54.5',
      '  Assumable loans     LoanType          count  median rate  median equity',
      '                      FHA                   2        2.50%        $30,000',
      '                      VA                    1        4.00%        $90,000',
      // this scenario's records carry only the fields the statistics read: the checks name what they lack
      "  records that break the spec's rules (written as sent; --strict skips them):",
    ])
    expect(lines.slice(at).every((l) => l.length <= 80)).toBe(true)
    const doc = json(join(d, 's.json'))
    expect(doc).toEqual({
      version: 1,
      relativeError: 0.01,
      exactBound: 1_000_000,
      run: SACRAMENTO,
      counties: [{fips: '06067', ...SACRAMENTO}],
    })
  })

  it('sfl stats x.csv and sfl stats x.ndjson agree with each other and with the export --stats-json', async () => {
    const s = (server = await startScenario(answer()))
    const d = tmp()
    for (const fmt of ['csv', 'ndjson']) {
      const r = await sfl(
        [
          'county-export',
          ...BOTH,
          '--output',
          fmt,
          '--out',
          join(d, `x.${fmt}`),
          '--stats-json',
          join(d, `${fmt}.json`),
          '--quiet',
        ],
        {env: env(s)},
      )
      expect(r.code).toBe(0)
      // --quiet: no table; the records of this scenario carry only the fields the statistics read, so the
      // one problem line left is the checks stage naming what they lack (written as sent)
      expect(r.stderr.trimEnd().split('\n')).toEqual([
        "  records that break the spec's rules (written as sent; --strict skips them):",
        expect.stringMatching(/^ {4}APN 12, CompleteStreetAddress 12, .* … \(\d+ fields\)$/),
      ])
    }
    const fromCsv = await sfl(['stats', join(d, 'x.csv'), '--json'])
    const fromNdjson = await sfl(['stats', join(d, 'x.ndjson'), '--json'])
    expect(fromCsv.code).toBe(0)
    expect(fromNdjson.code).toBe(0)
    const csvDoc = JSON.parse(fromCsv.stdout) as Record<string, unknown>
    expect(csvDoc).toEqual({version: 1, relativeError: 0.01, exactBound: 1_000_000, run: RUN, counties: []})
    expect(JSON.parse(fromNdjson.stdout)).toEqual(csvDoc)
    expect(json(join(d, 'csv.json'))['run']).toEqual(RUN)
    expect(json(join(d, 'ndjson.json'))['run']).toEqual(RUN)
  })

  it('--stats-by-county adds a table per county; sfl stats --by-county gives the same counties', async () => {
    const s = (server = await startScenario(answer()))
    const d = tmp()
    const out = join(d, 'x.csv')
    const r = await sfl(
      ['county-export', ...BOTH, '--out', out, '--stats-by-county', '--stats-json', join(d, 's.json')],
      {env: env(s)},
    )
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('sfl county-export: statistics: 12 records\n')
    expect(r.stderr).toContain('\ncounty 06067: 10 records\n')
    expect(r.stderr).toContain('\ncounty 06113: 2 records\n')
    // the formula guard and the CSV quoting are undone: the CRA value reads as the service sent it
    expect(r.stderr).toContain('  CRAEligible         =Odd, level               1   50.0%\n')
    const doc = json(join(d, 's.json'))
    const counties = doc['counties'] as Array<{fips: string; records: number}>
    expect(counties.map((c) => [c.fips, c.records])).toEqual([
      ['06067', 10],
      ['06113', 2],
    ])
    expect(counties[0]).toEqual({fips: '06067', ...SACRAMENTO})
    const st = await sfl(['stats', out, '--by-county', '--json'])
    expect(st.code).toBe(0)
    expect(JSON.parse(st.stdout)).toEqual(doc)
    const table = await sfl(['stats', out, '--by-county'])
    expect(table.stdout).toContain(`${out}: 12 records\n`)
    expect(table.stdout).toContain('\ncounty 06113: 2 records\n')
  })

  it.each(['csv', 'ndjson'])(
    'a resumed %s export reports stats over every record written, earlier pages included',
    async (fmt) => {
      const fail = new Set(['06113'])
      const s = (server = await startScenario(answer(fail)))
      const d = tmp()
      const out = join(d, `x.${fmt}`)
      const cmd = [
        'county-export',
        ...BOTH,
        '--output',
        fmt,
        '--out',
        out,
        '--retries',
        '0',
        '--stats-json',
        join(d, 's.json'),
        '--stats-by-county',
      ]
      const first = await sfl(cmd, {env: env(s)})
      expect(first.code).toBe(7)
      expect(first.stderr).toMatch(/checkpoint kept/)
      // the first run wrote 06067 only: its figures are the run's
      expect(json(join(d, 's.json'))['run']).toEqual(SACRAMENTO)
      fail.clear()
      const before = s.requests.length
      const second = await sfl(cmd, {env: env(s)})
      expect(second.code).toBe(0)
      // only 06113 was fetched again; 06067's pages come from the checkpoint and still count
      expect(s.requests.slice(before).map((r) => r.fips)).toEqual(['06113'])
      const doc = json(join(d, 's.json'))
      expect(doc['run']).toEqual(RUN)
      expect((doc['counties'] as unknown[])[0]).toEqual({fips: '06067', ...SACRAMENTO})
    },
  )

  it('a page cut short and fetched again counts once: the figures match the file written', async () => {
    // a fixed sequence instead of Math.random: every third request is cut short mid-body
    let n = 0
    const random = () => (n++ % 3 === 1 ? 0.05 : 0.9)
    const d = tmp()
    const log = join(d, 'log.ndjson')
    writeFileSync(log, '')
    await withSandbox({records: 3000, pageSize: 500, truncateRate: 0.1, random, log}, async (sb) => {
      const out = join(d, 'h.csv')
      const r = await sfl(
        ['county-export', '--fips', '48201', '--out', out, '--stats-json', join(d, 's.json'), '--quiet'],
        {
          env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
        },
      )
      expect(r.code).toBe(0)
      expect(readLog(log).filter((e) => e.fault === 'truncate').length).toBeGreaterThan(0)
      // the figures again, from the file, computed here
      const rows = parse(readFileSync(out, 'utf8'), {columns: true}) as Array<Record<string, string>>
      expect(rows).toHaveLength(3000)
      const values = rows.map((row) => Number(row['FinalValue'])).sort((a, b) => a - b)
      const median = (values[1499]! + values[1500]!) / 2
      const fha = rows.filter((row) => row['FHAEligible'] === 'true').length
      const run = json(join(d, 's.json'))['run'] as {
        records: number
        FinalValue: {median: number; count: number}
        flags: {FHAEligible: {true: number}}
      }
      expect(run.records).toBe(3000)
      expect(run.FinalValue.count).toBe(3000)
      expect(run.FinalValue.median).toBe(median)
      expect(run.flags.FHAEligible.true).toBe(fha)
    })
  })

  it('lookup --input: the statistics cover the rows answered found, not the 404s', async () => {
    const s = (server = await startScenario((r) => {
      const id = Number(r.query.get('property_id'))
      return id >= 6067000 && id < 6067010
        ? {page: {records: [sacramento(id - 6067000)]}}
        : {status: 404, body: {status: 'error', message: 'No records'}}
    }))
    const d = tmp()
    const ids = [...Array.from({length: 10}, (_, i) => 6067000 + i), 999]
    writeFileSync(join(d, 'in.csv'), `fips,property_id\n${ids.map((id) => `06067,${id}`).join('\n')}\n`)
    const r = await sfl(
      [
        'lookup',
        '--input',
        join(d, 'in.csv'),
        '--out',
        join(d, 'out.csv'),
        '--stats-json',
        join(d, 's.json'),
      ],
      {env: env(s)},
    )
    expect(r.stderr).toContain('sfl lookup --input: statistics: 10 records\n')
    expect(r.code).toBe(0)
    expect(json(join(d, 's.json'))).toEqual({
      version: 1,
      relativeError: 0.01,
      exactBound: 1_000_000,
      run: SACRAMENTO,
      counties: [{fips: '06067', ...SACRAMENTO}],
    })
  })

  it('--no-stats prints no table; with --stats-json it is refused before any request', async () => {
    const s = (server = await startScenario(answer()))
    const d = tmp()
    const r = await sfl(
      ['county-export', '--fips', '06067', '--output', 'ndjson', '--out', join(d, 'x.ndjson'), '--no-stats'],
      {env: env(s)},
    )
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/10 records written/)
    expect(r.stderr).not.toContain('statistics')
    const before = s.requests.length
    const bad = await sfl(
      [
        'county-export',
        '--fips',
        '06067',
        '--out',
        join(d, 'y.csv'),
        '--no-stats',
        '--stats-json',
        join(d, 's.json'),
      ],
      {env: env(s)},
    )
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim().split('\n')).toHaveLength(1)
    expect(bad.stderr).toContain('--no-stats contradicts --stats-json')
    const same = await sfl(
      ['county-export', '--fips', '06067', '--out', join(d, 'y.csv'), '--stats-json', join(d, 'y.csv')],
      {env: env(s)},
    )
    expect(same.code).toBe(2)
    expect(same.stderr).toBe('Error: --stats-json must name another file than --out\n')
    expect(s.requests.length).toBe(before)
  })

  it('a server echoing the API key into a CRA level gets it neither printed nor written', async () => {
    const key = 'test-key-123'
    const s = (server = await startScenario(() => ({
      page: {records: [{...sacramento(0), CRAEligible: `x ${key} y`}]},
    })))
    const d = tmp()
    const r = await sfl(
      ['county-export', '--fips', '06067', '--out', join(d, 'x.csv'), '--stats-json', join(d, 's.json')],
      {env: env(s)},
    )
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('sfl county-export: statistics: 1 record\n')
    expect(r.stderr).not.toContain(key)
    expect(readFileSync(join(d, 's.json'), 'utf8')).not.toContain(key)
    expect(json(join(d, 's.json'))['run']).toMatchObject({records: 1})
  })

  it('sfl stats on a missing file, a folder without a manifest, a bad record: one line, exit 2, no request', async () => {
    const s = (server = await startScenario(answer()))
    const d = tmp()
    const missing = await sfl(['stats', join(d, 'nope.csv')], {env: env(s)})
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe(`Error: ${join(d, 'nope.csv')}: no such file or folder\n`)
    const folder = await sfl(['stats', d], {env: env(s)})
    expect(folder.code).toBe(2)
    expect(folder.stderr).toBe(
      `Error: ${d} is a folder without _sfl/manifest.json; give an export file or an --out-dir folder\n`,
    )
    writeFileSync(join(d, 'bad.ndjson'), '{"Fips":"06067"}\nnot json\n')
    const bad = await sfl(['stats', join(d, 'bad.ndjson')], {env: env(s)})
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim()).toBe(`Error: ${join(d, 'bad.ndjson')} line 2: not a JSON record`)
    expect(s.requests).toHaveLength(0)
  })

  it('sfl stats on an --out-dir folder and on its _sfl/manifest.json (or the root manifest.json of an older sfl): the figures the export printed, by county', async () => {
    const s = (server = await startScenario((r) =>
      r.fips === '06001' ? {page: {records: []}} : answer()(r),
    ))
    const d = tmp()
    const dir = join(d, 'exports')
    const r = await sfl(
      [
        'county-export',
        '--fips',
        '06001',
        ...BOTH,
        '--out-dir',
        dir,
        '--stats-by-county',
        '--stats-json',
        join(d, 's.json'),
        '--quiet',
      ],
      {env: env(s)},
    )
    expect(r.code).toBe(0)
    const doc = json(join(d, 's.json'))
    // the empty county is one of the run's counties, with 0 records
    expect(
      (doc['counties'] as Array<{fips: string; records: number}>).map((c) => [c.fips, c.records]),
    ).toEqual([
      ['06001', 0],
      ['06067', 10],
      ['06113', 2],
    ])
    expect(doc['run']).toEqual(RUN)
    const requests = s.requests.length
    for (const arg of [dir, join(dir, '_sfl', 'manifest.json')]) {
      const st = await sfl(['stats', arg, '--by-county', '--json'], {env: env(s)})
      expect(st.stderr).toBe('')
      expect(st.code).toBe(0)
      expect(JSON.parse(st.stdout)).toEqual(doc)
    }
    // a folder as sfl before 0.3 left it, its manifest at the root: the same figures
    const older = join(dirname(dir), 'older')
    cpSync(dir, older, {recursive: true})
    renameSync(join(older, '_sfl', 'manifest.json'), join(older, 'manifest.json'))
    rmSync(join(older, '_sfl'), {recursive: true})
    for (const arg of [older, join(older, 'manifest.json')]) {
      const st = await sfl(['stats', arg, '--by-county', '--json'], {env: env(s)})
      expect(st.code, st.stderr).toBe(0)
      expect(JSON.parse(st.stdout)).toEqual(doc)
    }
    const table = await sfl(['stats', dir, '--by-county'])
    expect(table.stdout).toContain(`${dir}: 12 records\n`)
    expect(table.stdout).toContain('\ncounty 06001: 0 records\n')
    expect(table.stdout).toContain('\ncounty 06113: 2 records\n')
    // a county's file gone from the folder: named, exit 2
    unlinkSync(join(dir, 'state=CA', 'fips=06113', 'data.csv'))
    const gone = await sfl(['stats', dir], {env: env(s)})
    expect(gone.code).toBe(2)
    expect(gone.stderr).toBe(
      `Error: ${join(dir, '_sfl', 'manifest.json')}: the file of county 06113 (state=CA/fips=06113/data.csv) is missing\n`,
    )
    expect(s.requests.length).toBe(requests) // sfl stats sent nothing
  })

  it('150,000 records: the ConfidenceScore median prints 69 exactly and the FinalValue quartiles are exact', async () => {
    const d = tmp()
    const file = join(d, 'big.ndjson')
    const scores: number[] = []
    const values: number[] = []
    const lines: string[] = []
    // scores skewed high (40% at 95-100), so the exact median, 69, sits at a steep point of the distribution
    for (let i = 0; i < 150_000; i++) {
      const score = i % 150 < 60 ? 95 + (i % 6) : i % 150 < 76 ? 69 : i % 69
      // a long-tailed spread of dollar values, whole dollars
      const value = Math.round(80_000 * Math.exp(((i * 7919) % 150_000) / 40_000))
      scores.push(score)
      values.push(value)
      lines.push(
        JSON.stringify({Fips: '06067', ServicePropertyID: i, FinalValue: value, ConfidenceScore: score}),
      )
    }
    writeFileSync(file, `${lines.join('\n')}\n`)
    const s = [...scores].sort((a, b) => a - b)
    expect([s[74_999], s[75_000]]).toEqual([69, 69])
    const v = [...values].sort((a, b) => a - b)
    const q = (p: number) => {
      const r = p * (v.length - 1)
      const lo = Math.floor(r)
      return v[lo]! + (v[Math.ceil(r)]! - v[lo]!) * (r - lo)
    }
    const dollars = (x: number) => `$${Math.round(x).toLocaleString('en-US')}`
    const r = await sfl(['stats', file])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('\n  ConfidenceScore     median 69\n')
    expect(r.stdout).toContain(
      `\n  FinalValue          p25 ${dollars(q(0.25))}   median ${dollars(q(0.5))}   p75 ${dollars(q(0.75))}\n`,
    )
    expect(r.stdout).not.toContain('≈')
    const doc = JSON.parse((await sfl(['stats', file, '--json'])).stdout) as {
      run: {FinalValue: unknown; ConfidenceScore: unknown}
    }
    expect(doc.run.ConfidenceScore).toEqual({count: 150_000, median: 69, approximate: false})
    expect(doc.run.FinalValue).toEqual({
      count: 150_000,
      p25: q(0.25),
      median: q(0.5),
      p75: q(0.75),
      approximate: false,
    })
  })
})
