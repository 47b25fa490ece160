import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import CountyExport from '../../src/commands/county-export.js'
import type {Manifest} from '../../src/io/manifest.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {runCommand} from '../helpers/run-command.js'
import {readLog} from '../helpers/sandbox.js'
import {paged, record, startScenario} from '../helpers/scenario-server.js'
import {tempDir} from '../helpers/tmp.js'

// the sandbox logs every request it answers: the count proves which counties were (not) fetched
let sb: Sandbox
let log: string
beforeAll(async () => {
  log = join(mkdtempSync(join(tmpdir(), 'sfl-outdir-log-')), 'requests.ndjson')
  sb = await startSandbox({pageSize: 400, log})
})
afterAll(async () => sb.close())
const env = {SFL_BASE_URL: '', SFL_API_KEY: 'sandbox-full'}
const run = (args: string[]) => runCommand(CountyExport, args, {...env, SFL_BASE_URL: sb.baseUrl})
const tmp = () => tempDir('sfl-outdir-')
/** Requests the sandbox answered from here on, by county. */
const mark = () => {
  const from = existsSync(log) ? readLog(log).length : 0
  return () => (existsSync(log) ? readLog(log).slice(from) : []).map((l) => l.query['fips'])
}
const manifestOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as Manifest
const csvIds = (path: string) => {
  const lines = readFileSync(path, 'utf8').trimEnd().split('\r\n')
  const col = lines[0]!.split(',').indexOf('ServicePropertyID')
  return lines.slice(1).map((l) => l.split(',')[col])
}

describe('county-export --out-dir: one file per county and a manifest', () => {
  it('writes state=XX/fips=NNNNN/data.csv per county, an empty county as a header, and _sfl/manifest.json; no checkpoint left', async () => {
    const dir = join(tmp(), 'exports') // created by the run
    const r = await run(['--fips', '06067', '--fips', '12086', '--fips', '01001', '--out-dir', dir])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toMatch(
      /4,000 records written to 3 county files in .*exports, 3\/3 counties ended, 1 empty \(01001\), 11 requests/,
    )
    // the root holds partitions only (a dataset for every reader); the manifest under _sfl/
    expect(readdirSync(dir).sort()).toEqual(['_sfl', 'state=AL', 'state=CA', 'state=FL'])
    expect(readdirSync(join(dir, '_sfl'))).toEqual(['manifest.json'])
    const sac = csvIds(join(dir, 'state=CA/fips=06067/data.csv'))
    expect(sac).toHaveLength(2000)
    expect(new Set(sac).size).toBe(2000)
    expect(csvIds(join(dir, 'state=FL/fips=12086/data.csv'))).toHaveLength(2000)
    // an empty county: the header alone, so every manifest entry names a file that exists
    const empty = readFileSync(join(dir, 'state=AL/fips=01001/data.csv'), 'utf8')
    expect(empty.split('\r\n')).toHaveLength(2)
    expect(empty.startsWith('Fips,ServicePropertyID,APN,')).toBe(true)
    const m = manifestOf(dir)
    expect(m.version).toBe(1)
    expect(m.format).toBe('csv')
    expect(
      m.counties.map(({finishedAt, ...rest}) => (expect(finishedAt).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/), rest)),
    ).toEqual([
      {
        fips: '01001',
        state: 'AL',
        name: 'Autauga County',
        path: 'state=AL/fips=01001/data.csv',
        records: 0,
        pages: 0,
        schema: m.schema!.key,
      },
      {
        fips: '06067',
        state: 'CA',
        name: 'Sacramento County',
        path: 'state=CA/fips=06067/data.csv',
        records: 2000,
        pages: 5,
        schema: m.schema!.key,
      },
      {
        fips: '12086',
        state: 'FL',
        name: 'Miami-Dade County',
        path: 'state=FL/fips=12086/data.csv',
        records: 2000,
        pages: 5,
        schema: m.schema!.key,
      },
    ])
  })

  it('--state CA: a file for each of its 58 counties, the many empty ones counted rather than listed', async () => {
    const dir = tmp()
    const sent = mark()
    const r = await run(['--state', 'CA', '--out-dir', dir])
    expect(r.exitCode).toBe(0)
    // 06067 (2,000 records) and 06037 (3,000) in pages of 400; 56 counties without data (404)
    // the empty counties that ended before the first record showed the key's options were written with
    // the standard columns, and are rewritten at the end with the run's final ones (one schema per run)
    expect(r.stderr).toMatch(
      /5,000 records written to 58 county files in .* \(\d+ earlier files? rewritten with the run's final columns\), 58\/58 counties ended, 56 empty, 69 requests/,
    )
    expect(sent()).toHaveLength(69)
    expect(readdirSync(join(dir, 'state=CA'))).toHaveLength(58)
    const m = manifestOf(dir)
    expect(m.counties).toHaveLength(58)
    expect(m.counties.filter((c) => c.records > 0).map((c) => [c.fips, c.records, c.pages])).toEqual([
      ['06037', 3000, 8],
      ['06067', 2000, 5],
    ])
  })

  it('a stopped run of a whole state names the first 20 unfinished counties and counts the rest', async () => {
    const dir = tmp()
    const r = await run(['--state', 'TX', '--out-dir', dir, '--max-requests', '2'])
    expect(r.exitCode).toBe(7)
    // 48001 and 48003 have no data (404: empty) and are written; 252 counties are not finished
    expect(r.stderr).toMatch(
      /0 records written to 2 county files in .*, 2\/254 counties ended, 2 empty \(48001, 48003\)/,
    )
    expect(r.stderr.match(/^ {2}not finished \d{5}: /gm)).toHaveLength(20)
    expect(r.stderr).toContain('  … and 232 more: 232 not finished\n')
    expect(manifestOf(dir).counties.map((c) => c.fips)).toEqual(['48001', '48003'])
  })

  it('ndjson: data.ndjson, a record a line', async () => {
    const dir = tmp()
    const r = await run(['--fips', '12086', '--output', 'ndjson', '--out-dir', dir])
    expect(r.exitCode).toBe(0)
    const lines = readFileSync(join(dir, 'state=FL/fips=12086/data.ndjson'), 'utf8').trimEnd().split('\n')
    expect(lines).toHaveLength(2000)
    expect((JSON.parse(lines[0]!) as {Fips: string}).Fips).toBe('12086')
    expect(manifestOf(dir)).toMatchObject({
      format: 'ndjson',
      counties: [{path: 'state=FL/fips=12086/data.ndjson', records: 2000}],
    })
  })

  it('--max-age skips counties exported within the age (no request); without it every county is fetched again', async () => {
    const dir = tmp()
    expect((await run(['--fips', '06067', '--out-dir', dir])).exitCode).toBe(0)
    const first = manifestOf(dir).counties[0]!
    let sent = mark()
    const fresh = await run(['--fips', '06067', '--fips', '12086', '--out-dir', dir, '--max-age', '1h'])
    expect(fresh.exitCode).toBe(0)
    expect(sent()).toEqual(Array(5).fill('12086'))
    expect(fresh.stderr).toMatch(
      /2,000 records written to 1 county file in .*, 1\/1 counties ended, 1 fresh, not fetched \(06067\), 5 requests/,
    )
    const m = manifestOf(dir)
    expect(m.counties.map((c) => c.fips)).toEqual(['06067', '12086'])
    expect(m.counties[0]).toEqual(first) // untouched
    // a young entry whose file was deleted is not fresh: fetched again
    rmSync(join(dir, 'state=CA/fips=06067/data.csv'))
    sent = mark()
    expect(
      (await run(['--fips', '06067', '--fips', '12086', '--out-dir', dir, '--max-age', '1h'])).exitCode,
    ).toBe(0)
    expect(sent()).toEqual(Array(5).fill('06067'))
    expect(csvIds(join(dir, 'state=CA/fips=06067/data.csv'))).toHaveLength(2000)
    // without --max-age a new run exports every asked county again
    sent = mark()
    expect((await run(['--fips', '06067', '--fips', '12086', '--out-dir', dir])).exitCode).toBe(0)
    expect(sent().sort()).toEqual([...Array(5).fill('06067'), ...Array(5).fill('12086')])
  })

  it('--dry-run sends exactly one request (the probe), --no-probe none; the plan uses the manifest', async () => {
    const dir = tmp()
    let sent = mark()
    const probed = await run(['--fips', '06067', '--fips', '12086', '--out-dir', dir, '--dry-run', '--json'])
    expect(probed.exitCode).toBe(0)
    // the probe goes to the county with the most homes: Miami-Dade (990,000) before Sacramento (560,000)
    expect(sent()).toEqual(['12086'])
    const plan = JSON.parse(probed.stdout) as {
      requests: number
      requestsExact: boolean
      budget: {source: string; limit: number}
      probeRequests: number
    }
    // the probe read 12086's first page: 5 pages of 400 (X-Total-Count 2,000); 06067 scaled by its homes:
    // 2,000 x 560,000 / 990,000 = 1,131 records, 3 pages
    expect(plan).toMatchObject({
      requests: 6,
      requestsExact: false,
      requestsEstimate: 8,
      budget: {source: 'probe', limit: 1000},
      probeRequests: 1,
    })
    expect(existsSync(join(dir, '_sfl', 'manifest.json'))).toBe(false)

    expect((await run(['--fips', '06067', '--out-dir', dir])).exitCode).toBe(0)
    sent = mark()
    const known = await run([
      '--fips',
      '06067',
      '--fips',
      '12086',
      '--out-dir',
      dir,
      '--dry-run',
      '--no-probe',
    ])
    expect(known.exitCode).toBe(0)
    expect(sent()).toEqual([])
    expect(known.stdout.split('\n')[0]).toBe(
      '2 counties, at least 6 requests (page counts unknown): the current window holds 6 (the default 1,000/hour, window assumed full); more windows if the counties take more pages',
    )
    expect(known.stdout).toContain('Requests   5 for 1 county from the pages the last run recorded')
    const fresh = await run([
      '--fips',
      '06067',
      '--fips',
      '12086',
      '--out-dir',
      dir,
      '--max-age',
      '1d',
      '--dry-run',
      '--no-probe',
    ])
    expect(fresh.stdout).toContain(
      'Counties   2 asked; 1 fresh (finished less than 1d ago), skipped; 1 to fetch',
    )
    expect(sent()).toEqual([])
  })

  it.each([
    [['--fips', '06067', '--out', 'x.csv', '--out-dir', 'x'], /--out and --out-dir contradict each other/],
    [['--fips', '06067', '--max-age', '30d'], /--max-age needs --out-dir/],
    [
      ['--fips', '06067', '--out-dir', 'x', '--max-age', '30 days'],
      /--max-age "30 days": give a number and a unit/,
    ],
    [['--state', 'XX', '--dry-run', '--no-probe'], /--state "XX": .*did you mean TX\?/],
    [['--fips', '06067', '--no-probe'], /--no-probe only applies to --dry-run/],
    [['--fips', '06067', '--out-dir', 'package.json'], /--out-dir package.json is a file; give a folder/],
    [
      ['--fips', '06067', '--out-dir', '/nonexistent-sfl/a'],
      /--out-dir \/nonexistent-sfl\/a: the folder \/nonexistent-sfl does not exist; create it first/,
    ],
    [['--restart'], /give at least one county: .*--state CA or --all-counties/],
  ])('bad input %j: one line, exit 2, nothing sent', async (args, message) => {
    const sent = mark()
    const r = await run(args)
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(message)
    expect(sent()).toEqual([])
  })
})

describe('a stopped --out-dir run', () => {
  it('keeps every finished county; the same command continues without fetching them again', async () => {
    // 06067: one page; 12086: three pages of two records
    const server = await startScenario((r) => (r.fips === '06067' ? paged(r, 1, 3) : paged(r, 3, 2)))
    try {
      const dir = tmp()
      const args = [
        '--fips',
        '06067',
        '--fips',
        '12086',
        '--out-dir',
        dir,
        '--output',
        'ndjson',
        '--concurrency',
        '1',
      ]
      const e = {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'test-key-123'}
      const first = await runCommand(CountyExport, [...args, '--max-requests', '3'], e)
      expect(first.exitCode).toBe(7)
      expect(first.stderr).toMatch(
        /checkpoint kept at .*\.sfl-checkpoint; rerun the same command to continue/,
      )
      expect(existsSync(join(dir, '.sfl-checkpoint'))).toBe(true)
      expect(
        readFileSync(join(dir, 'state=CA/fips=06067/data.ndjson'), 'utf8').trimEnd().split('\n'),
      ).toHaveLength(3)
      expect(existsSync(join(dir, 'state=FL'))).toBe(false)
      expect(manifestOf(dir).counties.map((c) => c.fips)).toEqual(['06067'])
      const before = server.requests.length
      expect(before).toBe(3)
      // the plan knows from the checkpoint that 06067 ended; 12086 needs at least one more request
      const plan = await runCommand(CountyExport, [...args, '--dry-run', '--no-probe'], e)
      expect(plan.stdout.split('\n').slice(0, 2)).toEqual([
        '2 counties (1 to fetch), at least 1 request (page counts unknown): the current window holds 1 (the default 1,000/hour, window assumed full); more windows if the counties take more pages',
        'Counties   2 asked; 1 already ended in the checkpoint; 1 to fetch',
      ])
      expect(server.requests.length).toBe(before)

      const again = await runCommand(CountyExport, args, e)
      expect(again.exitCode).toBe(0)
      // only the unfinished county's last page: 06067 is not asked again
      expect(server.requests.slice(before).map((r) => [r.fips, r.page])).toEqual([['12086', 3]])
      const ids = readFileSync(join(dir, 'state=FL/fips=12086/data.ndjson'), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as {ServicePropertyID: number}).ServicePropertyID)
      expect(ids).toHaveLength(6)
      expect(new Set(ids).size).toBe(6)
      expect(manifestOf(dir).counties.map((c) => [c.fips, c.records, c.pages])).toEqual([
        ['06067', 3, 1],
        ['12086', 6, 3],
      ])
      expect(readdirSync(dir).sort()).toEqual(['_sfl', 'state=CA', 'state=FL'])
    } finally {
      await server.close()
    }
  })
})

describe('the --dry-run probe is one request whatever it meets', () => {
  it.each([
    [
      'a spent window (429): the plan waits for the reset',
      {
        status: 429,
        headers: {
          'x-ratelimit-limit': '1000',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': 'RESET',
          'retry-after': '1200',
        },
      },
      /^1 county, at least 1 request \(page counts unknown\): at least 20 min of waiting: 1 window \(now 0 of 1,000 left, resets \d\d:\d\d(:\d\d)? UTC\) plus at least 1 more at 1,000 a window/,
      /Budget {5}0 of 1,000 left this window/,
      0,
    ],
    [
      'a server error: no retry, the default figures, and why',
      {status: 500},
      /^1 county, at least 1 request \(page counts unknown\): the current window holds 1 \(the default 1,000\/hour, window assumed full\)/,
      /Budget {5}the default 1,000 requests\/hour \(spec 8.2\), window assumed full: the probe to 06067 failed \(/,
      0,
    ],
    [
      'an invalid key (401): exit 4, the run would stop at once',
      {status: 401},
      /^1 county, at least 1 request/,
      /the probe to 06067 was refused: the API key is invalid or missing \(HTTP 401\)/,
      4,
    ],
  ])('%s', async (_name, reply, headline, budget, exitCode) => {
    const reset = String(Math.floor(Date.now() / 1000) + 1200)
    const server = await startScenario(() =>
      'headers' in reply
        ? {
            ...reply,
            headers: Object.fromEntries(
              Object.entries(reply.headers).map(([k, v]) => [k, v === 'RESET' ? reset : v]),
            ),
          }
        : reply,
    )
    try {
      const r = await runCommand(CountyExport, ['--fips', '06067', '--dry-run'], {
        SFL_BASE_URL: server.baseUrl,
        SFL_API_KEY: 'test-key-123',
      })
      expect(r.exitCode).toBe(exitCode)
      expect(r.stdout).toMatch(headline)
      expect(r.stdout).toMatch(budget)
      expect(server.requests).toHaveLength(1)
    } finally {
      await server.close()
    }
  })
})

describe('CSV columns of a county file', () => {
  it("a column that appears on a later page is in the county's header; earlier rows leave it empty", async () => {
    const server = await startScenario((r) =>
      r.page === 1
        ? {page: {records: [record(r.fips, 1)], next: 2}}
        : {page: {records: [{...record(r.fips, 2), Zeta: 'late'}]}},
    )
    try {
      const dir = tmp()
      const r = await runCommand(CountyExport, ['--fips', '06067', '--out-dir', dir], {
        SFL_BASE_URL: server.baseUrl,
        SFL_API_KEY: 'test-key-123',
      })
      expect(r.exitCode).toBe(0)
      const [head, first, second] = readFileSync(join(dir, 'state=CA/fips=06067/data.csv'), 'utf8').split(
        '\r\n',
      )
      const cols = head!.split(',')
      const at = cols.indexOf('Zeta')
      expect(at).toBeGreaterThan(0)
      expect(first!.split(',')[at]).toBe('')
      expect(second!.split(',')[at]).toBe('late')
      expect(first!.split(',')[cols.indexOf('APN')]).toBe('06067-1')
    } finally {
      await server.close()
    }
  })
})
