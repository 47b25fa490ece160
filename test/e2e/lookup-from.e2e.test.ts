import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {readLog, withSandbox} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * `sfl lookup --from DIR` for one property (issue 33): an `--out-dir` export on disk answers when its county
 * is there (fresh enough with --max-age) and a record matches exactly, with no request, said on stderr with
 * the date the county was fetched; otherwise the service is asked, and that is said too. The answer equals
 * the service's for the same property.
 */
const KEY = 'sandbox-full'
const sent = (log: string) => (existsSync(log) ? readLog(log) : [])

async function withExport(
  fn: (x: {dir: string; env: Record<string, string>; log: string}) => Promise<void>,
): Promise<void> {
  const log = join(tempDir('sfl-from-log-'), 'requests.ndjson')
  const dir = join(tempDir('sfl-from-'), 'exports')
  await withSandbox({log}, async (sb) => {
    const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: KEY}
    const r = await sfl(['county-export', '--fips', '06067', '--out-dir', dir, '--quiet', '--no-stats'], {
      env,
    })
    expect(r.code, r.stderr).toBe(0)
    await fn({dir, env, log})
  })
}

describe('lookup --from an export on disk, one property', () => {
  it('a property id and an address the export holds are answered from it, no request, the same record as the service gives', async () => {
    await withExport(async ({dir, env, log}) => {
      for (const by of [
        ['--property-id', '30000000006'],
        ['--address', '3526 High St, Sacramento, CA 95838'],
      ]) {
        const before = sent(log).length
        const r = await sfl(['lookup', '--fips', '06067', ...by, '--from', dir, '-o', 'json'], {env})
        expect(r.code, r.stderr).toBe(0)
        expect(sent(log).length - before).toBe(0)
        expect(r.stderr).toMatch(
          new RegExp(
            `^answered from ${dir.replace(/[/.]/g, '\\$&')} \\(county 06067 fetched \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); no request sent\\n$`,
          ),
        )
        const online = await sfl(['lookup', '--fips', '06067', ...by, '-o', 'json'], {env})
        expect(online.code).toBe(0)
        expect(JSON.parse(r.stdout)).toEqual(JSON.parse(online.stdout))
      }
    })
  }, 60_000)

  it('no exact match in the export, or a county older than --max-age: the service is asked, and that is said', async () => {
    await withExport(async ({dir, env, log}) => {
      let before = sent(log).length
      const miss = await sfl(['lookup', '--fips', '06067', '--apn', '999-999', '--from', dir, '-o', 'json'], {
        env,
      })
      expect(miss.code).toBe(3)
      expect(miss.stderr).toMatch(
        /^--from .*: no record of county 06067 matches exactly; asking the service\n/,
      )
      expect(sent(log).length - before).toBe(1)
      // the county as fetched long ago: the manifest says so (the rule reads only its finishedAt)
      const manifest = join(dir, '_sfl', 'manifest.json')
      const m = JSON.parse(readFileSync(manifest, 'utf8')) as {counties: Array<{finishedAt: string}>}
      m.counties[0]!.finishedAt = '2020-01-01T00:00:00.000Z'
      writeFileSync(manifest, JSON.stringify(m))
      before = sent(log).length
      const stale = await sfl(
        [
          'lookup',
          '--fips',
          '06067',
          '--property-id',
          '30000000006',
          '--from',
          dir,
          '--max-age',
          '30d',
          '-o',
          'json',
        ],
        {env},
      )
      expect(stale.stderr).toMatch(/matches exactly within --max-age 30d; asking the service/)
      expect(sent(log).length - before).toBe(1)
      expect(stale.code).toBe(0)
    })
  }, 60_000)

  it('a folder that is no export is exit 2 naming it, before any request', async () => {
    await withExport(async ({env, log}) => {
      const empty = tempDir('sfl-from-empty-')
      const before = sent(log).length
      const r = await sfl(['lookup', '--fips', '06067', '--property-id', '30000000006', '--from', empty], {
        env,
      })
      expect(r.code).toBe(2)
      expect(r.stderr).toBe(
        `Error: --from ${empty}: no manifest there (_sfl/manifest.json); give the folder of a county-export --out-dir run\n`,
      )
      expect(sent(log).length - before).toBe(0)
    })
  }, 60_000)
})
