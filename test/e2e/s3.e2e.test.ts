import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {parse} from 'csv-parse/sync'
import {describe, expect, it} from 'vitest'

import {readParquetRecords} from '../../src/io/parquet-reader.js'
import {killWhen, sfl} from '../helpers/cli.js'
import {S3TestServer, type TestCredentials} from '../helpers/s3-server.js'
import {readLog, withSandbox} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * `s3://` end to end (issue 34): the built CLI against the sandbox and a loopback S3-compatible server
 * (test/helpers/s3-server.ts: strict SigV4, parts invisible until Complete, injected faults), found
 * through AWS_ENDPOINT_URL_S3 as MinIO or any other store would be. Every object is read back from the
 * server's own store, not through sfl.
 */
const KEY_ID = 'AKIAS3E2ETESTKEY0001'
const SECRET = 'sfl/S3e2eTestSecret+0123456789abcdefGHIJK'

const tmp = () => tempDir('sfl-e2e-s3-')

/** The sandbox's request log; no file: no request. */
const sent = (log: string) => (existsSync(log) ? readLog(log) : [])

const TOKEN = 'FwoGZXIvYXdzEXAMPLEe2eSessionTokenForSfl0123456789'

async function withStore<T>(
  fn: (s: S3TestServer) => Promise<T>,
  credentials: TestCredentials[] = [{accessKeyId: KEY_ID, secretAccessKey: SECRET}],
): Promise<T> {
  const s = await S3TestServer.start({
    credentials,
    buckets: ['exports'],
  })
  try {
    return await fn(s)
  } finally {
    await s.close()
  }
}

/** The AWS chain of the child: this store only (no profile files, no instance role), state in `cache`. */
function storeEnv(s: S3TestServer, cache: string, secret = SECRET): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_S3: s.endpoint,
    AWS_ACCESS_KEY_ID: KEY_ID,
    AWS_SECRET_ACCESS_KEY: secret,
    AWS_REGION: 'us-east-1',
    AWS_CONFIG_FILE: '/nonexistent/aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
    AWS_EC2_METADATA_DISABLED: 'true',
    SFL_CACHE_DIR: cache,
  }
}

interface Manifest {
  format: string
  counties: Array<{fips: string; path: string; records: number}>
}

function manifestOf(s3: S3TestServer, prefix: string): Manifest {
  const m = s3.object('exports', `${prefix}/_sfl/manifest.json`)
  expect(m, `${prefix}/_sfl/manifest.json`).toBeDefined()
  return JSON.parse(m!.body.toString('utf8')) as Manifest
}

/** The records of a Parquet object, read from a copy of the server's bytes. */
async function parquetObject(s3: S3TestServer, key: string): Promise<Array<Record<string, unknown>>> {
  const path = join(tmp(), 'object.parquet')
  writeFileSync(path, s3.object('exports', key)!.body)
  const rows: Array<Record<string, unknown>> = []
  for await (const r of readParquetRecords(path)) rows.push(r as Record<string, unknown>)
  return rows
}

function csvObject(s3: S3TestServer, key: string): Array<Record<string, string>> {
  return parse(s3.object('exports', key)!.body, {columns: true}) as Array<Record<string, string>>
}

const EXPORT = ['county-export', '--fips', '06067', '--fips', '48201']

describe('county-export --out-dir s3://bucket/prefix (built CLI, loopback S3 server)', () => {
  it('a Parquet run: every county object read back holds each record once, the manifest is last, nothing else is left', async () => {
    await withStore(async (s3) =>
      withSandbox({}, async (sb) => {
        const cache = tmp()
        const env = {...storeEnv(s3, cache), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const r = await sfl([...EXPORT, '-o', 'parquet', '--out-dir', 's3://exports/2026-11'], {env})
        expect(r.code, r.stderr).toBe(0)
        // a finished run leaves no state folder behind
        expect(readdirSync(join(cache, 's3-runs'))).toEqual([])
        expect(r.stderr).toContain('102,000 records written to 2 county files in s3://exports/2026-11')
        // the probe and the lock object are gone: only what an engine reads, and the manifest
        expect(s3.keys('exports')).toEqual([
          '2026-11/_sfl/manifest.json',
          '2026-11/state=CA/fips=06067/data.parquet',
          '2026-11/state=TX/fips=48201/data.parquet',
        ])
        expect(s3.uploads.size).toBe(0)
        const m = manifestOf(s3, '2026-11')
        expect(m.format).toBe('parquet')
        expect(m.counties.map((c) => [c.fips, c.path, c.records])).toEqual([
          ['06067', 'state=CA/fips=06067/data.parquet', 2000],
          ['48201', 'state=TX/fips=48201/data.parquet', 100_000],
        ])
        for (const c of m.counties) {
          const rows = await parquetObject(s3, `2026-11/${c.path}`)
          expect(rows).toHaveLength(c.records)
          expect(new Set(rows.map((x) => x['ServicePropertyID'])).size).toBe(c.records)
          expect(new Set(rows.map((x) => x['Fips']))).toEqual(new Set([c.fips]))
        }
        // each county's object is complete before the manifest that names it is written
        const puts = s3.log.filter((l) => l.method === 'PUT' && l.status === 200 && !l.key.includes('.sfl-'))
        expect(puts.map((l) => l.key.replace(/^2026-11\//, ''))).toEqual([
          ...puts.slice(0, -1).map((l) => l.key.replace(/^2026-11\//, '')),
          '_sfl/manifest.json',
        ])
        const firstManifest = puts.findIndex((l) => l.key.endsWith('manifest.json'))
        expect(puts[firstManifest - 1]!.key).toMatch(/fips=\d{5}\/data\.parquet$/)
      }),
    )
  }, 120_000)

  it('SIGKILL while a county object is being uploaded, then the same command: no partial object was visible, no county fetched again, every record once', async () => {
    await withStore(async (s3) => {
      const log = join(tmp(), 'requests.ndjson')
      await withSandbox({log}, async (sb) => {
        const cache = tmp()
        const env = {...storeEnv(s3, cache), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        // Harris County as CSV is about 30 MB: several 8 MiB parts of one multipart upload
        const args = [...EXPORT, '-o', 'csv', '--out-dir', 's3://exports/run', '--concurrency', '1']
        // settled: the sandbox has answered what was in flight; a store request the kill cut changes nothing
        // (the test server stores a part only once its body has arrived whole)
        await killWhen(args, env, () => s3.log.some((l) => l.query['partNumber'] === '1'), sb.idle)
        // killed mid-upload: the parts are in the store, but no object of Harris County is visible
        expect([...s3.uploads.values()].map((u) => u.key)).toEqual(['run/state=TX/fips=48201/data.csv'])
        expect(s3.keys('exports').filter((k) => k.includes('48201'))).toEqual([])
        expect(manifestOf(s3, 'run').counties.map((c) => c.fips)).toEqual(['06067'])
        // the checkpoint is in the cache folder, keyed by the location; it names no credentials
        const runs = join(cache, 's3-runs')
        expect(readdirSync(runs)).toHaveLength(1)
        const state = join(runs, readdirSync(runs)[0]!)
        expect(readdirSync(state).sort()).toEqual([
          '.sfl-checkpoint',
          '.sfl-lock',
          '.sfl-parts',
          'location.json',
        ])
        expect(JSON.parse(readFileSync(join(state, 'location.json'), 'utf8'))).toEqual({
          location: 's3://exports/run/',
          endpoint: `${s3.endpoint}/`,
        })
        for (const f of ['.sfl-checkpoint', 'location.json'])
          expect(readFileSync(join(state, f), 'utf8')).not.toContain(KEY_ID.slice(4))
        const before = readLog(log).length
        // the plan reads the same checkpoint: both counties ended, nothing to fetch
        const plan = await sfl([...args, '--dry-run', '--no-probe', '--json'], {env})
        expect(plan.code, plan.stderr).toBe(0)
        expect((JSON.parse(plan.stdout) as {toFetch: string[]}).toFetch).toEqual([])
        expect(
          readLog(log)
            .map((l) => l.query['fips'])
            .sort(),
        ).toEqual(['06067', '48201'])

        const again = await sfl(args, {env})
        expect(again.code, again.stderr).toBe(0)
        expect(again.stderr).toMatch(/continuing the run recorded in .*s3-runs\/[0-9a-f]{16}\//)
        expect(again.stderr).toContain('aborted 1 unfinished upload a stopped run left at s3://exports/run/')
        // both counties were whole in the checkpoint: not one request to the service
        expect(readLog(log)).toHaveLength(before)
        expect(readdirSync(runs)).toEqual([])
        expect(s3.uploads.size).toBe(0)
        expect(s3.keys('exports')).toEqual([
          'run/_sfl/manifest.json',
          'run/state=CA/fips=06067/data.csv',
          'run/state=TX/fips=48201/data.csv',
        ])
        for (const c of manifestOf(s3, 'run').counties) {
          const rows = csvObject(s3, `run/${c.path}`)
          expect(rows).toHaveLength(c.records)
          expect(new Set(rows.map((x) => x['ServicePropertyID'])).size).toBe(c.records)
        }
        expect(manifestOf(s3, 'run').counties.map((c) => c.records)).toEqual([2000, 100_000])
      })
    })
  }, 180_000)

  it('--max-age reads the manifest from the bucket and sends no request for fresh counties; the --dry-run plan agrees', async () => {
    await withStore(async (s3) => {
      const log = join(tmp(), 'requests.ndjson')
      await withSandbox({log}, async (sb) => {
        const env = {...storeEnv(s3, tmp()), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const args = ['county-export', '--fips', '06067', '--fips', '10001', '--out-dir', 's3://exports/m']
        expect((await sfl(args, {env})).code).toBe(0)
        const sent = readLog(log).length
        const objects = s3.keys('exports').map((k) => [k, s3.object('exports', k)!.etag])
        s3.log.length = 0
        // the plan answers from the bucket's manifest as the run does: only the missing county
        const plan = await sfl(
          [...args, '--max-age', '1d', '--fips', '10003', '--dry-run', '--no-probe', '--json'],
          {
            env,
          },
        )
        expect(plan.code, plan.stderr).toBe(0)
        expect((JSON.parse(plan.stdout) as {toFetch: string[]}).toFetch).toEqual(['10003'])
        expect(readLog(log)).toHaveLength(sent)
        const again = await sfl([...args, '--max-age', '1d', '--fips', '10003'], {env})
        expect(again.code, again.stderr).toBe(0)
        // only the county not in the manifest is asked for
        expect(
          readLog(log)
            .slice(sent)
            .map((l) => l.query['fips']),
        ).toEqual(['10003'])
        expect(
          s3.log.some((l) => l.method === 'GET' && l.key === 'm/_sfl/manifest.json' && l.status === 200),
        ).toBe(true)
        // the fresh counties' objects are not written again
        for (const [k, etag] of objects.filter(([k]) => k!.includes('/data.')))
          expect(s3.object('exports', k!)!.etag).toBe(etag)
        expect(manifestOf(s3, 'm').counties.map((c) => c.fips)).toEqual(['06067', '10001', '10003'])
      })
    })
  }, 120_000)

  it('a second run writing the same prefix is refused while the lock object is held: exit 2, one line naming the holder, nothing sent', async () => {
    await withStore(async (s3) => {
      const log = join(tmp(), 'requests.ndjson')
      await withSandbox({log}, async (sb) => {
        const env = {...storeEnv(s3, tmp()), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const holder = {
          host: 'other-host',
          pid: 4242,
          started: '2026-11-26T10:00:00.000Z',
          state: '/x',
          id: 'a',
        }
        s3.put('exports', 'busy/.sfl-lock', `${JSON.stringify(holder)}\n`)
        const r = await sfl(['county-export', '--fips', '06067', '--out-dir', 's3://exports/busy'], {env})
        expect(r.code).toBe(2)
        expect(r.stderr.trim().split('\n')).toEqual([
          'Error: another sfl run (process 4242 on other-host, started 2026-11-26T10:00:00.000Z) is writing to s3://exports/busy/ (its lock object s3://exports/busy/.sfl-lock); wait for it to finish, or delete s3://exports/busy/.sfl-lock if that run is gone',
        ])
        expect(sent(log)).toEqual([])
        expect(s3.keys('exports')).toEqual(['busy/.sfl-lock'])
      })
    })
  }, 60_000)

  it('a throttled store (503 SlowDown three times) is retried with backoff and the run completes', async () => {
    await withStore(async (s3) =>
      withSandbox({}, async (sb) => {
        const env = {...storeEnv(s3, tmp()), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const slow = {kind: 'status' as const, status: 503, code: 'SlowDown'}
        const data = (r: {method: string; key: string}) => r.method === 'PUT' && r.key.endsWith('data.csv')
        s3.inject({...slow, match: data}, {...slow, match: data}, {...slow, match: data})
        const r = await sfl(['county-export', '--fips', '06067', '--out-dir', 's3://exports/t'], {env})
        expect(r.code, r.stderr).toBe(0)
        expect(s3.log.filter((l) => l.key === 't/state=CA/fips=06067/data.csv').map((l) => l.status)).toEqual(
          [503, 503, 503, 200],
        )
        expect(csvObject(s3, 't/state=CA/fips=06067/data.csv')).toHaveLength(2000)
      }),
    )
  }, 60_000)
})

describe('refusals before any request to the service (a probe write)', () => {
  const cases: Array<{
    name: string
    setup?: (s3: S3TestServer) => void
    env?: Record<string, string>
    credentials?: TestCredentials[]
    /** The bucket written to: `exports`, which the store has, unless said. */
    bucket?: string
    code: number
    line: RegExp
  }> = [
    {
      name: 'a wrong secret access key: exit 4',
      env: {AWS_SECRET_ACCESS_KEY: 'wrongSecretValue/0123456789abcdefghijklmn'},
      code: 4,
      line: /^Error: s3:\/\/exports\/2026-11\/: the store refused the request's signature \(SignatureDoesNotMatch, HTTP 403\): the secret access key from the environment \(AWS_ACCESS_KEY_ID\) does not match the access key AKIA…0001; check it$/,
    },
    {
      name: 'an expired session token: exit 4',
      env: {AWS_SESSION_TOKEN: TOKEN},
      credentials: [{accessKeyId: KEY_ID, secretAccessKey: SECRET, sessionToken: TOKEN, expired: true}],
      code: 4,
      line: /^Error: s3:\/\/exports\/2026-11\/: the store refused the session token from the environment \(AWS_ACCESS_KEY_ID\) \(ExpiredToken, HTTP 400\); it has expired or is not valid: get new credentials$/,
    },
    {
      name: 'a missing bucket: exit 2',
      bucket: 'nosuchbucket',
      env: {},
      code: 2,
      line: /^Error: s3:\/\/nosuchbucket\/2026-11\/: the bucket does not exist at 127\.0\.0\.1:\d+ \(NoSuchBucket, HTTP 404\); create it first/,
    },
    {
      name: 'a denied write: exit 4',
      setup: (s3) => s3.denyWrites('exports'),
      code: 4,
      line: /^Error: s3:\/\/exports\/2026-11\/: access denied while checking that sfl may write there \(a probe object, removed at once\) \(AccessDenied, HTTP 403\)/,
    },
  ]
  for (const c of cases)
    it(`${c.name}, one line naming the bucket and prefix, the secret never printed (also under --debug), nothing sent`, async () => {
      await withStore(async (s3) => {
        c.setup?.(s3)
        const log = join(tmp(), 'requests.ndjson')
        await withSandbox({log}, async (sb) => {
          const env: Record<string, string> = {
            ...storeEnv(s3, tmp()),
            ...c.env,
            SFL_BASE_URL: sb.baseUrl,
            SFL_API_KEY: 'sandbox-full',
          }
          const bucket = c.bucket ?? 'exports'
          const args = ['county-export', '--fips', '06067', '--out-dir', `s3://${bucket}/2026-11`]
          const r = await sfl(args, {env})
          expect(r.code, r.stderr).toBe(c.code)
          const lines = r.stderr.trim().split('\n')
          expect(lines).toHaveLength(1)
          expect(lines[0]).toMatch(c.line)
          const debug = await sfl([...args, '--debug'], {env})
          expect(debug.code).toBe(c.code)
          for (const out of [r.stdout, r.stderr, debug.stdout, debug.stderr]) {
            expect(out).not.toContain(env['AWS_SECRET_ACCESS_KEY']!.slice(0, 12))
            expect(out).not.toContain(SECRET.slice(0, 12))
            expect(out).not.toContain(TOKEN.slice(0, 12))
          }
          expect(sent(log)).toEqual([])
          expect(s3.keys('exports')).toEqual([])
        })
      }, c.credentials)
    }, 60_000)
})

describe('--out s3://bucket/key, and readers of s3:// (stats, changes)', () => {
  it('county-export --out s3://bucket/key.csv; stats reads it back; changes compares two s3:// exports into an s3:// --out; --changes-since s3:// and --stats-json s3://', async () => {
    await withStore(async (s3) =>
      withSandbox({}, async (sb) => {
        const env = {...storeEnv(s3, tmp()), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const r = await sfl(['county-export', '--fips', '06067', '--out', 's3://exports/nov/cur.csv'], {env})
        expect(r.code, r.stderr).toBe(0)
        expect(s3.keys('exports')).toEqual(['nov/cur.csv'])
        const rows = csvObject(s3, 'nov/cur.csv')
        expect(rows).toHaveLength(2000)
        expect(new Set(rows.map((x) => x['ServicePropertyID'])).size).toBe(2000)

        const stats = await sfl(['stats', 's3://exports/nov/cur.csv', '--json'], {env})
        expect(stats.code, stats.stderr).toBe(0)
        expect((JSON.parse(stats.stdout) as {run: {records: number}}).run.records).toBe(2000)

        // the previous export: the same records, one FinalValue changed and one record missing
        const text = s3.object('exports', 'nov/cur.csv')!.body.toString('utf8').split('\n')
        const header = text[0]!.split(',')
        const at = header.indexOf('FinalValue')
        const second = text[2]!.split(',')
        second[at] = '1'
        s3.put('exports', 'oct/prev.csv', [text[0], text[1], second.join(','), ...text.slice(4)].join('\n'))
        const ch = await sfl(
          [
            'changes',
            's3://exports/oct/prev.csv',
            's3://exports/nov/cur.csv',
            '--out',
            's3://exports/nov/changes.ndjson',
          ],
          {env},
        )
        expect(ch.code, ch.stderr).toBe(0)
        expect(ch.stderr).toContain(
          'sfl changes: 1 added, 1 updated, 0 deleted, 1,998 unchanged in 1 county -> s3://exports/nov/changes.ndjson',
        )
        const changes = s3
          .object('exports', 'nov/changes.ndjson')!
          .body.toString('utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as {Change: string})
        expect(changes.map((c) => c.Change).sort()).toEqual(['added', 'updated'])
        expect(s3.keys('exports')).toEqual(['nov/changes.ndjson', 'nov/cur.csv', 'oct/prev.csv'])

        // the next month: --changes-since an s3:// export, --stats-json to an object
        const dec = await sfl(
          [
            'county-export',
            '--fips',
            '06067',
            '--out',
            's3://exports/dec/cur.csv',
            '--changes-since',
            's3://exports/oct/prev.csv',
            '--stats-json',
            's3://exports/dec/stats.json',
          ],
          {env},
        )
        expect(dec.code, dec.stderr).toBe(0)
        expect(dec.stderr).toContain('1 added, 1 updated, 0 deleted, 1,998 unchanged in 1 county')
        expect(s3.keys('exports').filter((k) => k.startsWith('dec/'))).toEqual([
          'dec/cur.changes.csv',
          'dec/cur.csv',
          'dec/stats.json',
        ])
        const doc = JSON.parse(s3.object('exports', 'dec/stats.json')!.body.toString('utf8')) as {
          run: {records: number}
        }
        expect(doc.run.records).toBe(2000)
      }),
    )
  }, 120_000)

  it('stats reads an --out-dir prefix from its manifest', async () => {
    await withStore(async (s3) =>
      withSandbox({}, async (sb) => {
        const env = {...storeEnv(s3, tmp()), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const args = ['county-export', '--fips', '06067', '--fips', '10001', '-o', 'parquet']
        expect((await sfl([...args, '--out-dir', 's3://exports/p'], {env})).code).toBe(0)
        const stats = await sfl(['stats', 's3://exports/p', '--json', '--by-county'], {env})
        expect(stats.code, stats.stderr).toBe(0)
        const doc = JSON.parse(stats.stdout) as {run: {records: number}; counties: Array<{fips: string}>}
        const m = manifestOf(s3, 'p')
        expect(doc.run.records).toBe(m.counties.reduce((a, c) => a + c.records, 0))
        expect(doc.counties.map((c) => c.fips)).toEqual(['06067', '10001'])
      }),
    )
  }, 120_000)

  it('a prefix an older sfl wrote (manifest.json at its top): stats and changes read it, and the next run moves the manifest under _sfl/', async () => {
    await withStore(async (s3) =>
      withSandbox({}, async (sb) => {
        const env = {...storeEnv(s3, tmp()), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const args = ['county-export', '--fips', '06067', '--out-dir', 's3://exports/old']
        expect((await sfl(args, {env})).code).toBe(0)
        // as sfl before 0.3 left it: the manifest at the prefix's top, nothing under _sfl/
        const text = s3.object('exports', 'old/_sfl/manifest.json')!.body.toString('utf8')
        s3.put('exports', 'old/manifest.json', text)
        expect((await sfl(['changes', 's3://exports/old', 's3://exports/old'], {env})).code).toBe(0)
        s3.delete('exports', 'old/_sfl/manifest.json')
        for (const arg of ['s3://exports/old', 's3://exports/old/manifest.json']) {
          const stats = await sfl(['stats', arg, '--json'], {env})
          expect(stats.code, stats.stderr).toBe(0)
          expect((JSON.parse(stats.stdout) as {run: {records: number}}).run.records).toBe(2000)
        }
        const ch = await sfl(['changes', 's3://exports/old', 's3://exports/old/manifest.json'], {env})
        expect(ch.code, ch.stderr).toBe(0)
        expect(ch.stderr).toContain('0 added, 0 updated, 0 deleted, 2,000 unchanged in 1 county')
        // a run into it (--max-age: the county is fresh, nothing fetched) moves the manifest, entries kept
        const again = await sfl([...args, '--fips', '10001', '--max-age', '1d'], {env})
        expect(again.code, again.stderr).toBe(0)
        expect(s3.keys('exports')).toEqual([
          'old/_sfl/manifest.json',
          'old/state=CA/fips=06067/data.csv',
          'old/state=DE/fips=10001/data.csv',
        ])
        expect(manifestOf(s3, 'old').counties.map((c) => [c.fips, c.records])).toEqual([
          ['06067', 2000],
          ['10001', expect.any(Number)],
        ])
      }),
    )
  }, 120_000)

  it('a gzipped export in the bucket (x.ndjson.gz): sfl stats, sfl changes and --changes-since read it as the plain one', async () => {
    await withStore(async (s3) =>
      withSandbox({}, async (sb) => {
        const env = {...storeEnv(s3, tmp()), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const url = 's3://exports/g/x.ndjson.gz'
        const r = await sfl(['county-export', '--fips', '06067', '--out', url], {env})
        expect(r.code, r.stderr).toBe(0)
        // gzip on the wire: the object starts with gzip's magic
        expect([...s3.object('exports', 'g/x.ndjson.gz')!.body.subarray(0, 2)]).toEqual([0x1f, 0x8b])
        const stats = await sfl(['stats', url, '--json'], {env})
        expect(stats.code, stats.stderr).toBe(0)
        expect((JSON.parse(stats.stdout) as {run: {records: number}}).run.records).toBe(2000)
        const ch = await sfl(['changes', url, url], {env})
        expect(ch.code, ch.stderr).toBe(0)
        expect(ch.stderr).toContain('0 added, 0 updated, 0 deleted, 2,000 unchanged in 1 county')
        const out = join(tmp(), 'again.ndjson')
        const since = await sfl(['county-export', '--fips', '06067', '--out', out, '--changes-since', url], {
          env,
        })
        expect(since.code, since.stderr).toBe(0)
        expect(since.stderr).toContain('0 added, 0 updated, 0 deleted, 2,000 unchanged in 1 county')
      }),
    )
  }, 120_000)

  it('--out s3:// in NDJSON and JSON (the formats whose part files a local run adopts): every record once', async () => {
    await withStore(async (s3) =>
      withSandbox({}, async (sb) => {
        const env = {...storeEnv(s3, tmp()), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        for (const format of ['ndjson', 'json']) {
          const key = `f/x.${format}`
          const r = await sfl(
            ['county-export', '--fips', '06067', '-o', format, '--out', `s3://exports/${key}`],
            {
              env,
            },
          )
          expect(r.code, r.stderr).toBe(0)
          const text = s3.object('exports', key)!.body.toString('utf8')
          const records = (
            format === 'json'
              ? JSON.parse(text)
              : text
                  .split('\n')
                  .filter(Boolean)
                  .map((l) => JSON.parse(l))
          ) as Array<{ServicePropertyID: number}>
          expect(records).toHaveLength(2000)
          expect(new Set(records.map((x) => x.ServicePropertyID)).size).toBe(2000)
        }
        expect(s3.keys('exports')).toEqual(['f/x.json', 'f/x.ndjson'])
      }),
    )
  }, 60_000)

  it('lookup --input --from s3:// answers rows from the export in the bucket (a private copy, removed after): no request for them, the source names the s3:// location', async () => {
    await withStore(async (s3) => {
      const log = join(tmp(), 'requests.ndjson')
      await withSandbox({log}, async (sb) => {
        const cache = tmp()
        const env = {...storeEnv(s3, cache), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const e = await sfl(
          ['county-export', '--fips', '06067', '--out-dir', 's3://exports/2026-11', '--quiet', '--no-stats'],
          {env},
        )
        expect(e.code, e.stderr).toBe(0)
        const before = sent(log).length
        // two ids the export holds
        const ids = csvObject(s3, '2026-11/state=CA/fips=06067/data.csv')
          .slice(0, 2)
          .map((r) => r['ServicePropertyID'])
        const input = join(tmp(), 'in.csv')
        writeFileSync(input, `fips,property_id\n06067,${ids[0]}\n06067,${ids[1]}\n`)
        const out = join(tmp(), 'out.csv')
        const scratch = tmp()
        const r = await sfl(['lookup', '--input', input, '--from', 's3://exports/2026-11', '--out', out], {
          env: {...env, TMPDIR: scratch},
        })
        expect(r.code, r.stderr).toBe(0)
        expect(sent(log).length - before).toBe(0)
        expect(r.stderr).toMatch(/2 rows answered from s3:\/\/exports\/2026-11 \(1 county\)/)
        const rows = parse(readFileSync(out, 'utf8'), {columns: true, bom: true}) as Array<
          Record<string, string>
        >
        expect(
          rows.map((x) => [x['status'], (x['source'] ?? '').replace(/ .*/, ''), x['ServicePropertyID']]),
        ).toEqual([
          ['ok', 'export', ids[0]],
          ['ok', 'export', ids[1]],
        ])
        // the copy is gone: nothing of it left in the temp folder it was made in
        expect(readdirSync(scratch).filter((n) => n.startsWith('sfl-s3-export-'))).toEqual([])
      })
    })
  }, 60_000)

  it('lookup --input ... --out s3://bucket/key.csv writes every row once', async () => {
    await withStore(async (s3) =>
      withSandbox({}, async (sb) => {
        const env = {...storeEnv(s3, tmp()), SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
        const input = join(tmp(), 'in.csv')
        writeFileSync(input, 'fips,address\n06067,1 NOWHERE RD\n06067,2 NOWHERE RD\n10001,3 NOWHERE RD\n')
        const r = await sfl(['lookup', '--input', input, '--out', 's3://exports/batch/out.csv'], {env})
        expect(r.code, r.stderr).toBe(0)
        expect(s3.keys('exports')).toEqual(['batch/out.csv'])
        const rows = csvObject(s3, 'batch/out.csv')
        expect(rows.map((x) => x['address'])).toEqual(['1 NOWHERE RD', '2 NOWHERE RD', '3 NOWHERE RD'])
      }),
    )
  }, 60_000)
})
