import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {killWhen, sfl} from '../helpers/cli.js'
import {readLog, withSandbox} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

const tmp = () => tempDir('sfl-e2e-outdir-')

describe('sfl county-export: state and nationwide selection, plans and --out-dir (built CLI)', () => {
  it('--state CA --dry-run --no-probe plans 58 counties and sends nothing (no key needed)', async () => {
    const r = await sfl(['county-export', '--state', 'ca', '--dry-run', '--no-probe'])
    expect(r.code).toBe(0)
    expect(r.stdout.split('\n')[0]).toBe(
      '58 counties, at least 58 requests (page counts unknown): the current window holds 58 (the default 1,000/hour, window assumed full); more windows if the counties take more pages',
    )
    expect(r.stdout).toContain('Sent       0 requests; nothing was exported')
  })

  it('--all-counties with a named county and a state: every county of the table once, 4 windows at 1,000/hour', async () => {
    const r = await sfl([
      'county-export',
      '--fips',
      '06067',
      '--state',
      'DE',
      '--all-counties',
      '--dry-run',
      '--no-probe',
      '--json',
    ])
    expect(r.code).toBe(0)
    const plan = JSON.parse(r.stdout) as {
      counties: number
      toFetch: string[]
      requests: number
      waitSeconds: number
    }
    expect(plan.counties).toBe(3235)
    expect(plan.toFetch.slice(0, 4)).toEqual(['06067', '10001', '10003', '10005'])
    expect(plan.requests).toBe(3235)
    // 1,000 now, then three more windows; the last opens three hours after the start
    expect(plan.waitSeconds).toBe(3 * 3600)
  })

  it('--dry-run with the probe sends exactly one request to the service', async () => {
    const log = join(tmp(), 'requests.ndjson')
    await withSandbox({log}, async (sb) => {
      const r = await sfl(['county-export', '--state', 'DE', '--fips', '06067', '--dry-run'], {
        env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
      })
      expect(r.code).toBe(0)
      expect(r.stdout).toMatch(
        /^4 counties, at least 4 requests \(likely 4: see Requests\): within the current window \(now 999 of 1,000 left, resets \d\d:\d\d(:\d\d)? UTC\)/,
      )
      expect(r.stdout).toContain('(from one probe request to 06067)')
      expect(readLog(log).map((l) => l.query['fips'])).toEqual(['06067'])
    })
  })

  it('--out-dir writes each county and the manifest; nothing else is left in the folder', async () => {
    await withSandbox({}, async (sb) => {
      const dir = join(tmp(), 'out')
      const r = await sfl(
        ['county-export', '--fips', '06067', '--fips', '12086', '--out-dir', dir, '-o', 'json'],
        {
          env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'},
        },
      )
      expect(r.code).toBe(0)
      expect(readdirSync(dir).sort()).toEqual(['_sfl', 'state=CA', 'state=FL'])
      expect(JSON.parse(readFileSync(join(dir, 'state=CA/fips=06067/data.json'), 'utf8'))).toHaveLength(2000)
      expect(JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8'))).toMatchObject({
        version: 1,
        format: 'json',
        counties: [
          {fips: '06067', records: 2000, pages: 1},
          {fips: '12086', records: 2000, pages: 1},
        ],
      })
    })
  })

  it('killed (-9) after its first county finished: the rerun keeps that county and does not fetch it again', async () => {
    const log = join(tmp(), 'requests.ndjson')
    // slow pages, so the kill lands while the second county is still being fetched
    await withSandbox({log, pageSize: 400, latencyMs: 100}, async (sb) => {
      const dir = join(tmp(), 'out')
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
      const args = [
        'county-export',
        '--fips',
        '12086',
        '--fips',
        '06037',
        '--out-dir',
        dir,
        '--concurrency',
        '1',
      ]
      await killWhen(args, env, () => existsSync(join(dir, 'state=FL/fips=12086/data.csv')), sb.idle)
      expect(existsSync(join(dir, '.sfl-checkpoint'))).toBe(true)
      expect(existsSync(join(dir, 'state=CA'))).toBe(false)
      const before = readLog(log).length
      const r = await sfl(args, {env})
      expect(r.code).toBe(0)
      expect(r.stderr).toMatch(/continuing the run recorded in .*\.sfl-checkpoint/)
      const after = readLog(log)
        .slice(before)
        .map((l) => l.query['fips'])
      expect(after.length).toBeGreaterThan(0)
      expect(after.filter((f) => f !== '06037')).toEqual([])
      const m = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as {
        counties: Array<{fips: string; records: number}>
      }
      expect(m.counties.map((c) => [c.fips, c.records])).toEqual([
        ['06037', 3000],
        ['12086', 2000],
      ])
      expect(
        readFileSync(join(dir, 'state=CA/fips=06037/data.csv'), 'utf8').trimEnd().split('\r\n'),
      ).toHaveLength(3001)
      expect(readdirSync(dir).sort()).toEqual(['_sfl', 'state=CA', 'state=FL'])
    })
  })
})
