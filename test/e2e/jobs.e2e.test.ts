import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {hostname} from 'node:os'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {BIN} from '../helpers/sandbox.js'
import {
  paged,
  records,
  startScenario,
  type Reply,
  type Scenario,
  type ScenarioRequest,
} from '../helpers/scenario-server.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * The job engine's guarantees (docs/long-runs.md), each against a scripted loopback server over real
 * HTTP, with the built CLI as a user or a cron job runs it.
 */
const tmp = () => tempDir('sfl-e2e-jobs-')
let server: Scenario | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})
const serve = async (answer: (r: ScenarioRequest) => Reply) => (server = await startScenario(answer))
const env = (s: Scenario, extra: Record<string, string> = {}) => ({
  SFL_BASE_URL: s.baseUrl,
  SFL_API_KEY: 'test-key-123',
  ...extra,
})
const ndjsonFips = (path: string) =>
  readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as {Fips: string}).Fips)

describe('every unit ends in a final outcome; a rerun asks again only what failed', () => {
  it('nightly cron: the same command line after a failure continues, then starts afresh', async () => {
    let dFails = true
    const s = await serve((r) => {
      if (r.fips === '06001') return {status: 404, body: {status: 'error', message: 'No records'}}
      if (r.fips === '06003') return {status: 403, body: {status: 'error', message: 'Not permitted'}}
      if (r.fips === '06005' && dFails) return {status: 503}
      return paged(r, 2, 3)
    })
    const d = tmp()
    const out = join(d, 'e.ndjson')
    const args = ['county-export', '--fips', '06113', '--fips', '06001', '--fips', '06003', '--fips', '06005']
    const cmd = [...args, '--output', 'ndjson', '--out', out, '--retries', '0']

    // night 1: 06005 fails; the rest are final
    const n1 = await sfl(cmd, {env: env(s)})
    expect(n1.code).toBe(7)
    expect(n1.stderr).toMatch(/6 records written, 3\/4 counties ended, 1 empty \(06001\)/)
    expect(n1.stderr).toMatch(/ {2}forbidden 06003: .*HTTP 403/)
    expect(n1.stderr).toMatch(/ {2}failed 06005: server error \(HTTP 503\)/)
    expect(n1.stderr).toMatch(
      /checkpoint kept at .*e\.ndjson\.sfl-checkpoint; rerun the same command to continue/,
    )
    expect(ndjsonFips(out)).toEqual(Array(6).fill('06113'))

    // night 2, same line: only the failed county is asked again, and now it works
    dFails = false
    const before = s.requests.length
    const n2 = await sfl(cmd, {env: env(s)})
    expect(n2.code).toBe(7) // 06003 is still forbidden: said every night, never a trap
    expect(s.requests.slice(before).map((r) => r.fips)).toEqual(['06005', '06005'])
    expect(ndjsonFips(out)).toEqual([...Array(6).fill('06113'), ...Array(6).fill('06005')])
    expect(existsSync(`${out}.sfl-checkpoint`)).toBe(false)

    // night 3, same line: a fresh run of everything
    const n3 = await sfl(cmd, {env: env(s)})
    expect(n3.code).toBe(7)
    expect(n3.stderr).not.toMatch(/continuing/)
    expect(s.requests.length - before).toBe(2 + 6)
    expect(readdirSync(d)).toEqual(['e.ndjson'])
  })

  it('a checkpoint for other arguments names the flag that settles it', async () => {
    const s = await serve((r) => (r.fips === '06005' ? {status: 503} : paged(r, 1, 2)))
    const out = join(tmp(), 'e.csv')
    const first = await sfl(
      ['county-export', '--fips', '06113', '--fips', '06005', '--out', out, '--retries', '0'],
      {env: env(s)},
    )
    expect(first.code).toBe(7)
    const other = await sfl(['county-export', '--fips', '06113', '--out', out], {env: env(s)})
    expect(other.code).toBe(2)
    expect(other.stderr).toMatch(
      /belongs to a different run \(fips 06113,06005; format csv.*\); rerun with those arguments to finish it, or add --restart/,
    )
    const restarted = await sfl(['county-export', '--fips', '06113', '--out', out, '--restart'], {
      env: env(s),
    })
    expect(restarted.code).toBe(0)
  })
})

describe('output integrity', () => {
  it('a county that fails on page 3 contributes no record; the finished one is written whole', async () => {
    const s = await serve((r) => (r.fips === '06113' && r.page === 3 ? {status: 500} : paged(r, 4, 5)))
    const d = tmp()
    const out = join(d, 'e.ndjson')
    const r = await sfl(
      ['county-export', '--fips', '06113', '--fips', '06001', '-o', 'ndjson', '--out', out, '--retries', '0'],
      {env: env(s)},
    )
    expect(r.code).toBe(7)
    expect(ndjsonFips(out)).toEqual(Array(20).fill('06001'))
    expect(r.stderr).toMatch(/failed 06113: server error \(HTTP 500\)/)
  })

  it('when no county finishes, an existing --out is left untouched and no temp file remains', async () => {
    const s = await serve(() => ({status: 403}))
    const d = tmp()
    const out = join(d, 'e.csv')
    writeFileSync(out, 'last month,kept\r\n')
    const r = await sfl(['county-export', '--fips', '06113', '--fips', '06001', '--out', out], {env: env(s)})
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/0 records written \(output left untouched: no county finished\)/)
    expect(readFileSync(out, 'utf8')).toBe('last month,kept\r\n')
    expect(readdirSync(d)).toEqual(['e.csv'])
  })
})

describe('answers are never thrown away', () => {
  const input = (d: string, n: number) => {
    const p = join(d, 'in.csv')
    writeFileSync(p, `row,fips,apn\n${Array.from({length: n}, (_, i) => `${i},06113,A-${i}`).join('\n')}\n`)
    return p
  }
  const lookupAnswer = (r: ScenarioRequest): Reply => ({
    status: 200,
    body: {status: 'success', data: records(r.fips, Number(r.query.get('apn')!.slice(2)), 1)[0]},
  })

  it('a batch stopped by the rate limit writes the rows it has, the rest as error; the rerun asks only those', async () => {
    let limited = true
    const s = await serve((r) => {
      if (limited && r.n > 3) {
        const reset = String(Math.ceil(Date.now() / 1000) + 3600)
        return {status: 429, headers: {'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset}}
      }
      return lookupAnswer(r)
    })
    const d = tmp()
    const inPath = input(d, 8)
    // to stdout: the answered rows are there, the rest say why
    const piped = await sfl(
      [
        'lookup',
        '--input',
        inPath,
        '-o',
        'csv',
        '--concurrency',
        '1',
        '--max-wait',
        '1',
        '--plan',
        'lookups',
      ],
      {
        env: env(s),
      },
    )
    expect(piped.code).toBe(7)
    const lines = piped.stdout.trimEnd().split('\r\n')
    expect(lines).toHaveLength(9)
    expect(lines.slice(1, 4).every((l) => /^\d,06113,A-\d,\d,ok,,/.test(l))).toBe(true)
    expect(lines[5]).toMatch(
      /^4,06113,A-4,5,error,"not looked up: rate limit: the key's budget returns in \d+ s, longer than --max-wait 1 s/,
    )
    // to --out: the same, and the same command later asks only what is missing
    const out = join(d, 'out.csv')
    const cmd = [
      'lookup',
      '--input',
      inPath,
      '--out',
      out,
      '--concurrency',
      '1',
      '--max-wait',
      '1',
      '--plan',
      'lookups',
    ]
    const before = s.requests.length
    const first = await sfl(cmd, {env: env(s)})
    expect(first.code).toBe(5) // no answer at all this time: the budget was already spent
    expect(existsSync(out)).toBe(false)
    limited = false
    const second = await sfl(cmd, {env: env(s)})
    expect(second.code).toBe(0)
    expect(
      readFileSync(out, 'utf8')
        .trimEnd()
        .split('\r\n')
        .slice(1)
        .map((l) => l.split(',')[4]),
    ).toEqual(Array(8).fill('ok'))
    expect(s.requests.length - before).toBe(1 + 8)
  })

  it('a killed server: the circuit breaker stops after 5 failures in a row, exit 6, with what it has', async () => {
    const s = await serve((r) => (r.n <= 2 ? lookupAnswer(r) : {destroy: true}))
    const d = tmp()
    const out = join(d, 'out.csv')
    const r = await sfl(
      [
        'lookup',
        '--input',
        input(d, 40),
        '--out',
        out,
        '--concurrency',
        '1',
        '--retries',
        '0',
        '--plan',
        'lookups',
      ],
      {env: env(s)},
    )
    expect(r.code).toBe(6)
    expect(r.stderr).toMatch(
      /Error: stopped after 5 failures in a row \(the service or the network seems down; last: network failure/,
    )
    expect(s.requests).toHaveLength(2 + 5)
    const statuses = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\r\n')
      .slice(1)
      .map((l) => l.split(',')[4])
    expect(statuses.filter((x) => x === 'ok')).toHaveLength(2)
    expect(statuses).toHaveLength(40)
    expect(r.stderr).toMatch(/checkpoint kept/)
  })

  it('the county export circuit breaker stops sending too', async () => {
    const s = await serve(() => ({status: 502}))
    const fips = ['06001', '06003', '06005', '06007', '06009', '06011', '06013', '06015']
    const r = await sfl(
      [
        'county-export',
        ...fips.flatMap((f) => ['--fips', f]),
        '--concurrency',
        '1',
        '--retries',
        '0',
        '-o',
        'ndjson',
      ],
      {env: env(s)},
    )
    expect(r.code).toBe(6)
    expect(s.requests).toHaveLength(5)
    expect(r.stdout).toBe('')
  })
})

describe('one run per output', () => {
  it('a second run on the same --out exits 2 naming the other process; a dead one is taken over', async () => {
    const s = await serve((r) => paged(r, 1, 2))
    const d = tmp()
    const out = join(d, 'e.csv')
    writeFileSync(
      `${out}.sfl-lock`,
      JSON.stringify({pid: process.pid, host: hostname(), started: '2026-11-22T00:00:00Z'}),
    )
    const busy = await sfl(['county-export', '--fips', '06113', '--out', out], {env: env(s)})
    expect(busy.code).toBe(2)
    expect(busy.stderr).toBe(
      `Error: another sfl run (process ${process.pid} on ${hostname()}, started 2026-11-22T00:00:00Z) is writing to the same output; wait for it to finish, or delete ${out}.sfl-lock if that run is gone\n`,
    )
    expect(s.requests).toHaveLength(0)
    // a pid that is not running (pid_max is below 2^22 on Linux)
    writeFileSync(`${out}.sfl-lock`, JSON.stringify({pid: 4_194_999, host: hostname(), started: 'x'}))
    const took = await sfl(['county-export', '--fips', '06113', '--out', out], {env: env(s)})
    expect(took.code).toBe(0)
    expect(took.stderr).toMatch(
      /taking over the lock .*e\.csv\.sfl-lock of process 4194999, which is no longer running/,
    )
    expect(readdirSync(d)).toEqual(['e.csv'])
  })
})

describe('streaming to stdout', () => {
  it('a county that fails at the head does not hold back the counties after it', async () => {
    const s = await serve((r) => (r.fips === '06001' ? {status: 503} : paged(r, 2, 2)))
    const r = await sfl(
      [
        'county-export',
        '--fips',
        '06001',
        '--fips',
        '06113',
        '--fips',
        '06005',
        '-o',
        'ndjson',
        '--retries',
        '0',
      ],
      {env: env(s)},
    )
    expect(r.code).toBe(7)
    const fips = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as {Fips: string}).Fips)
    expect(fips).toEqual([...Array(4).fill('06113'), ...Array(4).fill('06005')])
    expect(r.stderr).toMatch(/ {2}failed 06001: server error \(HTTP 503\)/)
  })

  it('ndjson streams as records arrive; a closed pipe stops the run at once, quietly, exit 141, nothing left', async () => {
    const s = await serve((r) => paged(r, 50, 200))
    const scratch = join(tmp(), 'tmp')
    mkdirSync(scratch)
    const child = spawn(
      process.execPath,
      [BIN, 'county-export', '--fips', '06113', '-o', 'ndjson', '--concurrency', '1'],
      {
        env: {...process.env, ...env(s), SFL_CONFIG_DIR: '/nonexistent', TMPDIR: scratch},
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
    // like `| head -1`: read the first line, then close the pipe
    const first = await new Promise<string>((resolve) => {
      let buf = ''
      child.stdout.on('data', (b: Buffer) => {
        buf += b.toString()
        if (buf.includes('\n')) {
          child.stdout.destroy()
          resolve(buf.split('\n')[0]!)
        }
      })
    })
    const code = await new Promise<number | null>((r) => child.once('exit', r))
    expect(JSON.parse(first)).toMatchObject({Fips: '06113', APN: '06113-0'})
    expect(code).toBe(141)
    expect(stderr).toBe('')
    expect(s.requests.length).toBeLessThan(50)
    // nothing of sfl's is left (Node 22+ keeps its compile cache in the temp folder: not ours)
    expect(readdirSync(scratch).filter((f) => f !== 'node-compile-cache')).toEqual([])
  })
})

describe('disk faults', () => {
  it('a full disk under stdout is one line and exit 8', async () => {
    const s = await serve((r) => paged(r, 1, 50))
    // spawned asynchronously: the server runs in this process
    const child = spawn(
      '/bin/sh',
      ['-c', `'${process.execPath}' '${BIN}' county-export --fips 06113 -o ndjson > /dev/full`],
      {
        env: {...process.env, ...env(s), SFL_CONFIG_DIR: '/nonexistent'},
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    )
    const r = {status: 0 as number | null, stderr: ''}
    child.stderr.on('data', (b: Buffer) => (r.stderr += b.toString()))
    r.status = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    expect(r.status).toBe(8)
    expect(r.stderr).toMatch(
      /^(sfl county-export: .*\n( {2}.*\n)*)?Error: the disk is full \(ENOSPC\) while writing to stdout; free some space or write elsewhere\n$/,
    )
  })

  const mount = (dir: string, opts: string) =>
    spawnSync('mount', ['-t', 'tmpfs', '-o', opts, 'tmpfs', dir]).status === 0
  const umount = (dir: string) => spawnSync('umount', [dir])

  it('a full disk under --out is one line, exit 8, no stack trace, the old file untouched', async (ctx) => {
    const d = join(tmp(), 'small')
    mkdirSync(d)
    // a small tmpfs is the full disk; mounting one needs root (CI and the dev machines run as root)
    if (!mount(d, 'size=256k')) return ctx.skip('needs root to mount a 256 KB tmpfs as the full disk')
    try {
      const s = await serve((r) => paged(r, 40, 100))
      const out = join(d, 'e.ndjson')
      writeFileSync(out, 'old\n')
      const r = await sfl(['county-export', '--fips', '06113', '-o', 'ndjson', '--out', out], {env: env(s)})
      expect(r.code).toBe(8)
      expect(r.stderr).toMatch(
        /Error: the disk is full \(ENOSPC\) while writing .*; free some space or write elsewhere\n/,
      )
      expect(r.stderr).not.toMatch(/\n\s+at /)
      expect(readFileSync(out, 'utf8')).toBe('old\n')
    } finally {
      umount(d)
    }
  })

  it('a disk that fills while the output is put together keeps the checkpoint; the rerun sends nothing', async (ctx) => {
    const d = join(tmp(), 'assembly')
    mkdirSync(d)
    if (!mount(d, 'size=1m')) return ctx.skip('needs root to mount a 1 MB tmpfs as the filling disk')
    try {
      // two counties of about 250 KB each: their part files fit beside the ballast, the output does not
      const big = (fips: string) => records(fips, 0, 200).map((rec) => ({...rec, Note: 'x'.repeat(1200)}))
      const s = await serve((r) => ({page: {records: big(r.fips), next: undefined}}))
      const out = join(d, 'e.ndjson')
      writeFileSync(join(d, 'ballast'), Buffer.alloc(300 * 1024))
      const cmd = ['county-export', '--fips', '06113', '--fips', '06005', '-o', 'ndjson', '--out', out]
      const r1 = await sfl(cmd, {env: env(s)})
      expect(r1.code).toBe(8)
      expect(r1.stderr).toMatch(/Error: the disk is full \(ENOSPC\) while writing .*e\.ndjson/)
      expect(existsSync(out)).toBe(false)
      expect(existsSync(`${out}.sfl-checkpoint`)).toBe(true)
      expect(s.requests).toHaveLength(2)
      // space freed: the same command puts the output together from the checkpoint alone
      spawnSync('rm', [join(d, 'ballast')])
      const r2 = await sfl(cmd, {env: env(s)})
      expect(r2.code).toBe(0)
      expect(s.requests).toHaveLength(2)
      expect(ndjsonFips(out)).toEqual([...Array(200).fill('06113'), ...Array(200).fill('06005')])
      expect(existsSync(`${out}.sfl-checkpoint`)).toBe(false)
    } finally {
      umount(d)
    }
  })

  it('a read-only folder for --out is one line and exit 8 before any request', async (ctx) => {
    const d = join(tmp(), 'ro')
    mkdirSync(d)
    if (!mount(d, 'ro,size=64k')) return ctx.skip('needs root to mount a read-only tmpfs')
    try {
      const s = await serve((r) => paged(r, 1, 1))
      const r = await sfl(['county-export', '--fips', '06113', '--out', join(d, 'e.csv')], {env: env(s)})
      expect(r.code).toBe(8)
      expect(r.stderr).toMatch(
        /^Error: read-only file system \(EROFS\) while locking .*e\.csv\.sfl-lock; write to a writable folder\n$/,
      )
      expect(s.requests).toHaveLength(0)
    } finally {
      umount(d)
    }
  })
})
