import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import {join, relative} from 'node:path'

import {asyncBufferFromFile, parquetMetadataAsync, parquetSchema} from 'hyparquet'
import {describe, expect, it} from 'vitest'

import {sfl, type CliResult} from '../helpers/cli.js'
import {readLog, withSandbox} from '../helpers/sandbox.js'
import {records} from '../helpers/scenario-server.js'
import {tempDir} from '../helpers/tmp.js'
import {expectOneErrorLine} from './expect.js'

/**
 * The output gate (src/io/output.ts) on the paths that used to write their own way (issue 29): `sfl
 * changes --out` and `county-export --stats-json` into a FIFO and into a character device made here
 * (never the machine's own /dev/null), a partition folder of an `--out-dir` that another user made a
 * symlink, and an `--out-dir` that a rerun must never narrow. Each case asserts the exit code, what the
 * output holds, and that nothing else changed: no temp file is ever left behind.
 */
const IS_ROOT = process.getuid?.() === 0
const NOBODY = 65534
const NEEDS_ROOT = IS_ROOT ? '' : ' (SKIPPED: needs root for mknod and to act as a second local user)'
const tmp = () => tempDir('sfl-gate-')

/** Every path under `dir` (relative, sorted), with a mark for what is not a regular file. */
function tree(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      const st = lstatSync(p)
      const rel = relative(dir, p)
      if (st.isDirectory()) {
        out.push(`${rel}/`)
        walk(p)
      } else if (st.isFile()) out.push(rel)
      else
        out.push(
          `${rel} (${st.isFIFO() ? 'fifo' : st.isCharacterDevice() ? 'chardev' : st.isSymbolicLink() ? 'link' : 'other'})`,
        )
    }
  }
  walk(dir)
  return out.sort()
}

/**
 * A reader at the other end of a FIFO (cat into a file), as a shell pipeline would have. `done(r)` waits
 * for it after the run `r`; when the run failed or the FIFO was replaced (what this guards against) no
 * writer ever comes, so the reader is let go rather than left blocked.
 */
function readFifo(fifo: string, into: string): {done: (r: CliResult) => Promise<unknown>} {
  const child = spawn('sh', ['-c', `exec cat "${fifo}" > "${into}"`])
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return {
    done: (r) => {
      if (r.code !== 0 || !lstatSync(fifo).isFIFO()) child.kill()
      return exited
    },
  }
}

/** Two small exports a month apart: one record gone, one revalued, one new (as `sfl changes` compares). */
function sides(d: string): [string, string] {
  const prev = records('06067', 0, 4)
  const cur = records('06067', 1, 4)
  cur[0] = {...cur[0], FinalValue: 650_000}
  const ndjson = (recs: Array<Record<string, unknown>>) => recs.map((r) => `${JSON.stringify(r)}\n`).join('')
  writeFileSync(join(d, 'prev.ndjson'), ndjson(prev))
  writeFileSync(join(d, 'cur.ndjson'), ndjson(cur))
  return [join(d, 'prev.ndjson'), join(d, 'cur.ndjson')]
}

describe('sfl changes --out: a FIFO or a device is written into, never replaced', () => {
  it('a FIFO: the reader gets the change file byte for byte; it is still a FIFO; nothing is made beside it', async () => {
    const d = tmp()
    const [prev, cur] = sides(d)
    const file = join(d, 'changes.csv')
    expect((await sfl(['changes', prev, cur, '--out', file, '-o', 'csv'])).code).toBe(0)
    const want = readFileSync(file, 'utf8')
    expect(want.split('\r\n')[0]).toMatch(/^Change,ServicePropertyID,Fips,ChangedFields,/)
    expect(want.trimEnd().split('\r\n')).toHaveLength(4) // the header, added, deleted, updated
    const fifo = join(d, 'pipe')
    execFileSync('mkfifo', [fifo])
    const got = join(d, 'got')
    const read = readFifo(fifo, got)
    const r = await sfl(['changes', prev, cur, '--out', fifo, '-o', 'csv'])
    await read.done(r)
    expect(r.code).toBe(0)
    expect(readFileSync(got, 'utf8')).toBe(want)
    expect(tree(d)).toEqual(['changes.csv', 'cur.ndjson', 'got', 'pipe (fifo)', 'prev.ndjson'])
  })

  it.skipIf(!IS_ROOT)(
    `a character device (mknod c 1 3 in a temp folder): still the same device afterwards, nothing beside it${NEEDS_ROOT}`,
    async () => {
      const d = tmp()
      const [prev, cur] = sides(d)
      const dev = join(d, 'null')
      execFileSync('mknod', [dev, 'c', '1', '3'])
      const rdev = statSync(dev).rdev
      const r = await sfl(['changes', prev, cur, '--out', dev, '-o', 'csv'])
      expect(r.code).toBe(0)
      expect(lstatSync(dev).isCharacterDevice()).toBe(true)
      expect(lstatSync(dev).rdev).toBe(rdev)
      expect(tree(d)).toEqual(['cur.ndjson', 'null (chardev)', 'prev.ndjson'])
    },
  )
})

describe('county-export --stats-json: a FIFO or a device is written into, never replaced', () => {
  const exportArgs = (dir: string, statsJson: string) => [
    'county-export',
    '--fips',
    '06067',
    '--out',
    join(dir, 'sac.csv'),
    '--stats-json',
    statsJson,
  ]

  it('a FIFO: the reader gets the statistics document, the same bytes as a file gets; still a FIFO', async () => {
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
      const d = tmp()
      expect((await sfl(exportArgs(d, join(d, 'stats.json')), {env})).code).toBe(0)
      const want = readFileSync(join(d, 'stats.json'), 'utf8')
      expect(JSON.parse(want)).toMatchObject({version: 1, run: {records: 2000}})
      const fifo = join(d, 'pipe')
      execFileSync('mkfifo', [fifo])
      const got = join(d, 'got')
      const read = readFifo(fifo, got)
      const r = await sfl(exportArgs(d, fifo), {env})
      await read.done(r)
      expect(r.code).toBe(0)
      expect(readFileSync(got, 'utf8')).toBe(want)
      expect(tree(d)).toEqual(['got', 'pipe (fifo)', 'sac.csv', 'stats.json'])
    })
  })

  it.skipIf(!IS_ROOT)(
    `a character device (mknod c 1 3 in a temp folder): still the same device afterwards, nothing beside it${NEEDS_ROOT}`,
    async () => {
      await withSandbox({}, async (sb) => {
        const d = tmp()
        const dev = join(d, 'null')
        execFileSync('mknod', [dev, 'c', '1', '3'])
        const rdev = statSync(dev).rdev
        const r = await sfl(exportArgs(d, dev), {
          env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
        })
        expect(r.code).toBe(0)
        expect(lstatSync(dev).isCharacterDevice()).toBe(true)
        expect(lstatSync(dev).rdev).toBe(rdev)
        expect(tree(d)).toEqual(['null (chardev)', 'sac.csv'])
      })
    },
  )
})

/** Run a shell command as the second local user (uid/gid nobody). */
function asNobody(cmd: string): void {
  const r = spawnSync('/bin/sh', ['-c', cmd], {uid: NOBODY, gid: NOBODY, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`as nobody: ${cmd}: ${r.stderr}`)
}

describe.skipIf(!IS_ROOT)(`an --out-dir's partition folders made by another user${NEEDS_ROOT}`, () => {
  /** A shared export folder (sticky, like /tmp) and a folder of the user's the attacker points at. */
  function setting(): {exports: string; mine: string; precious: string} {
    const base = tmp()
    chmodSync(base, 0o755) // the attacker may walk in, not write
    const exports = join(base, 'exports')
    mkdirSync(exports)
    chmodSync(exports, 0o1777)
    const mine = join(base, 'mine')
    mkdirSync(join(mine, 'fips=06067'), {recursive: true})
    const precious = join(mine, 'fips=06067', 'data.csv')
    writeFileSync(precious, 'precious\n')
    return {exports, mine, precious}
  }

  async function run(exports: string, log: string): Promise<CliResult> {
    return withSandbox({log}, (sb) =>
      sfl(['county-export', '--fips', '06067', '--out-dir', exports], {
        env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
      }),
    )
  }

  it('state=CA, a symlink of theirs to a folder of yours: refused (exit 2, the folder and the fix named), nothing sent, nothing written through it', async () => {
    const {exports, mine, precious} = setting()
    asNobody(`ln -s ${mine} ${exports}/state=CA`)
    const log = join(tmp(), 'requests.ndjson')
    const r = await run(exports, log)
    expectOneErrorLine(
      r,
      2,
      new RegExp(
        `--out-dir: the partition folder ${exports}/state=CA is a symbolic link, which sfl never writes through .*; remove it \\(rm ${exports}/state=CA\\) and run again`,
      ),
    )
    expect(existsSync(log) ? readLog(log) : []).toEqual([])
    expect(readFileSync(precious, 'utf8')).toBe('precious\n')
    expect(tree(mine)).toEqual(['fips=06067/', 'fips=06067/data.csv'])
    expect(tree(exports)).toEqual(['state=CA (link)'])
  })

  it('state=CA/fips=06067, a symlink of theirs in a folder of theirs: refused at state=CA (another user owns it), nothing written through it', async () => {
    const {exports, mine, precious} = setting()
    asNobody(`mkdir -m 755 ${exports}/state=CA && ln -s ${mine}/fips=06067 ${exports}/state=CA/fips=06067`)
    const log = join(tmp(), 'requests.ndjson')
    const r = await run(exports, log)
    expectOneErrorLine(
      r,
      2,
      new RegExp(
        `--out-dir: the partition folder ${exports}/state=CA belongs to another user \\(uid ${NOBODY}\\), who could swap the files sfl writes there; remove it or use an --out-dir of your own`,
      ),
    )
    expect(existsSync(log) ? readLog(log) : []).toEqual([])
    expect(readFileSync(precious, 'utf8')).toBe('precious\n')
    expect(tree(mine)).toEqual(['fips=06067/', 'fips=06067/data.csv'])
  })

  it('a checkpoint planted by another user beside --out in a shared sticky folder is refused before it is read, nothing sent', async () => {
    const {exports} = setting()
    const out = join(exports, 'sac.csv')
    const forged = JSON.stringify({v: 1, kind: 'county-export', params: {}})
    asNobody(`printf '%s\\n' '${forged}' > ${out}.sfl-checkpoint`)
    const log = join(tmp(), 'requests.ndjson')
    const r = await withSandbox({log}, (sb) =>
      sfl(['county-export', '--fips', '06067', '--out', out], {
        env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
      }),
    )
    expectOneErrorLine(
      r,
      2,
      new RegExp(
        `refusing to use the checkpoint ${out}\\.sfl-checkpoint: it belongs to another user \\(uid ${NOBODY}\\).* or write elsewhere, and run again`,
      ),
    )
    expect(existsSync(log) ? readLog(log) : []).toEqual([])
    expect(tree(exports)).toEqual(['sac.csv.sfl-checkpoint'])
  })

  it('the same folder without the plant: the export is written, in real folders of the user', async () => {
    const {exports} = setting()
    const r = await run(exports, join(tmp(), 'requests.ndjson'))
    expect(r.code).toBe(0)
    expect(tree(exports)).toEqual([
      '_sfl/',
      '_sfl/manifest.json',
      'state=CA/',
      'state=CA/fips=06067/',
      'state=CA/fips=06067/data.csv',
    ])
    expect(lstatSync(join(exports, 'state=CA', 'fips=06067')).uid).toBe(0)
  })
})

/** The columns of a full key's export (spec 2.1, then both add-on objects, spec 2.2 and 2.3). */
const FULL_COLUMNS = [
  'Fips',
  'ServicePropertyID',
  'APN',
  'CompleteStreetAddress',
  'StandardizeStreetAddress',
  'City',
  'State',
  'Zip',
  'FinalValue',
  'HighValue',
  'LowValue',
  'ConfidenceScore',
  'StandardDeviation',
  'ValuationDate',
  'CRAEligible',
  'FHAEligible',
  'FHALoanLimit',
  'FHACondoEligible',
  'USDAAreaEligible',
  'VAEligible',
  'Assumable',
  'TractIncomeLevel',
  'TractMinorityPopulationPercent',
  'Tract',
  'StateFips',
  'CountyFips',
  'MSACode',
  'FHAOwnerOccupancyViolation',
  'FHAOwnerOccupancyPercentage',
  'FHAConcentration',
  'FHAConcentrationViolation',
  'FHAExpirationDate',
  'AssumableMortgage.LoanType',
  'AssumableMortgage.FinancingType',
  'AssumableMortgage.Lender',
  'AssumableMortgage.OriginalLoanAmount',
  'AssumableMortgage.RecordingDate',
  'AssumableMortgage.TermMonths',
  'AssumableMortgage.LoanDueDate',
  'AssumableMortgage.RemainingYears',
  'AssumableMortgage.EstimatedLoanBalance',
  'AssumableMortgage.EstimatedInterestRate',
  'AssumableMortgage.EstimatedMonthlyPayment',
  'AssumableMortgage.EstimatedLTV',
  'AssumableMortgage.EstimatedEquity',
  'AssumableMortgage.IsRefinance',
  'AssumableMortgage.SecondMortgageBalance',
  'AssumableMortgage.SecondMortgageInterestRate',
  'FHACondoEligibility.ApprovalStatus',
  'FHACondoEligibility.EligibilityStatus',
  'FHACondoEligibility.CondoName',
  'FHACondoEligibility.CondoID',
  'FHACondoEligibility.TotalUnits',
  'FHACondoEligibility.OwnerOccupancyPercentage',
  'FHACondoEligibility.OwnerOccupancyViolation',
  'FHACondoEligibility.FHAConcentration',
  'FHACondoEligibility.FHAConcentrationViolation',
  'FHACondoEligibility.ExpirationDate',
  'FHACondoEligibility.LastUpdated',
]

/** A county file's columns: a CSV's header, a Parquet file's schema. */
async function columnsOf(path: string, format: 'csv' | 'parquet'): Promise<string[]> {
  if (format === 'csv') return readFileSync(path, 'utf8').split('\r\n')[0]!.split(',')
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  return parquetSchema(metadata).children.map((c) => c.element.name)
}

/** A file's SHA-256: equal bytes, with a short diff when they are not (a diff of 1 MB takes minutes). */
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

/** Every file of the folder with its bytes' hash (the checkpoint is gone after a run that ended). */
function snapshot(dir: string): Map<string, string> {
  return new Map(
    tree(dir)
      .filter((p) => !p.endsWith('/'))
      .map((p) => [p, sha(join(dir, p))]),
  )
}

describe('an --out-dir is never narrowed (issue 29)', () => {
  const SAC = (f: string) => `state=CA/fips=06067/data.${f}`
  const MIAMI = (f: string) => `state=FL/fips=12086/data.${f}`

  it.each(['csv', 'parquet'] as const)(
    '%s: a --max-age rerun over fresh counties rewrites nothing, and keeps every add-on column',
    async (format) => {
      await withSandbox({}, async (sb) => {
        const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const dir = join(tmp(), 'exports')
        const args = ['county-export', '--fips', '06067', '--out-dir', dir, '-o', format]
        expect((await sfl(args, {env})).code).toBe(0)
        expect(await columnsOf(join(dir, SAC(format)), format)).toEqual(FULL_COLUMNS)
        const before = snapshot(dir)
        const r = await sfl([...args, '--max-age', '30d'], {env})
        expect(r.code).toBe(0)
        expect(r.stderr).toContain('0 records written to 0 county files in')
        expect(r.stderr).not.toContain('rewritten')
        expect(await columnsOf(join(dir, SAC(format)), format)).toEqual(FULL_COLUMNS)
        expect(snapshot(dir)).toEqual(before)
      })
    },
  )

  it.each(['csv', 'parquet'] as const)(
    "%s: a county added with a key without the add-ons keeps the earlier files' add-on columns, and gets them too",
    async (format) => {
      await withSandbox({}, async (sb) => {
        const dir = join(tmp(), 'exports')
        const run = (fips: string, key: string) =>
          sfl(['county-export', '--fips', fips, '--out-dir', dir, '-o', format], {
            env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: key},
          })
        expect((await run('06067', 'sandbox-full')).code).toBe(0)
        const before = snapshot(dir)
        const r = await run('12086', 'sandbox-basic')
        expect(r.code).toBe(0)
        expect(r.stderr).not.toContain('rewritten')
        const after = snapshot(dir)
        // Sacramento's file as it was, byte for byte; Miami with the folder's 59 columns
        expect(after.get(SAC(format))).toBe(before.get(SAC(format)))
        expect(await columnsOf(join(dir, MIAMI(format)), format)).toEqual(FULL_COLUMNS)
        expect([...after.keys()].sort()).toEqual(['_sfl/manifest.json', SAC(format), MIAMI(format)])
        if (format === 'csv') {
          // the basic key's records have no add-on values: those cells are empty, every one
          const rows = readFileSync(join(dir, MIAMI(format)), 'utf8')
            .trimEnd()
            .split('\r\n')
            .slice(1)
          expect(rows).toHaveLength(2000)
          expect(rows.every((row) => row.endsWith(','.repeat(FULL_COLUMNS.length - 32)))).toBe(true)
        }
        const m = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as {
          schema: {columns: Array<{name: string}>; options: string[]}
          counties: Array<{fips: string; schema: string}>
        }
        expect(m.schema.columns.map((c) => c.name)).toEqual(FULL_COLUMNS)
        expect(m.schema.options).toEqual(['AssumableMortgage', 'FHACondoEligibility'])
        expect(new Set(m.counties.map((c) => c.schema)).size).toBe(1)
      })
    },
  )

  it.each(['csv', 'parquet'] as const)(
    "%s: a manifest that names no schema (an older sfl, an edit): the files' own columns are read, none dropped",
    async (format) => {
      await withSandbox({}, async (sb) => {
        const dir = join(tmp(), 'exports')
        const run = (fips: string, key: string) =>
          sfl(['county-export', '--fips', fips, '--out-dir', dir, '-o', format], {
            env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: key},
          })
        expect((await run('06067', 'sandbox-full')).code).toBe(0)
        const path = join(dir, '_sfl', 'manifest.json')
        const m = JSON.parse(readFileSync(path, 'utf8')) as {
          schema?: unknown
          counties: Array<{schema?: string}>
        }
        delete m.schema
        for (const c of m.counties) delete c.schema
        // as an older sfl left it: at the folder's root, without schemas; the run moves it to _sfl/
        rmSync(join(dir, '_sfl'), {recursive: true})
        writeFileSync(join(dir, 'manifest.json'), JSON.stringify(m))
        const sac = sha(join(dir, SAC(format)))
        const r = await run('12086', 'sandbox-basic')
        expect(r.code).toBe(0)
        // Sacramento's file is not rewritten (its columns are already the folder's); Miami's widened once
        expect(sha(join(dir, SAC(format)))).toBe(sac)
        expect(await columnsOf(join(dir, MIAMI(format)), format)).toEqual(FULL_COLUMNS)
        expect(tree(dir).filter((p) => !p.endsWith('/'))).toEqual([
          '_sfl/manifest.json',
          SAC(format),
          MIAMI(format),
        ])
      })
    },
  )

  it('csv: --fields into a folder of fuller files writes its county with those fields and leaves the others as they are', async () => {
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
      const dir = join(tmp(), 'exports')
      expect((await sfl(['county-export', '--fips', '06067', '--out-dir', dir], {env})).code).toBe(0)
      const sac = sha(join(dir, SAC('csv')))
      const fields = ['--fields', 'Fips,ServicePropertyID,FinalValue']
      const r = await sfl(['county-export', '--fips', '12086', '--out-dir', dir, ...fields], {env})
      expect(r.code).toBe(0)
      expect(sha(join(dir, SAC('csv')))).toBe(sac)
      expect(await columnsOf(join(dir, MIAMI('csv')), 'csv')).toEqual([
        'Fips',
        'ServicePropertyID',
        'FinalValue',
      ])
      const m = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as {
        counties: Array<{fips: string; schema: string}>
      }
      // each entry's schema key says which columns its file has
      expect(m.counties.map((c) => [c.fips, c.schema.split('-')[0]])).toEqual([
        ['06067', '59'],
        ['12086', '3'],
      ])
    })
  })
})
