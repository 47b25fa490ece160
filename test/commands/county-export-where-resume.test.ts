import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import CountyExport from '../../src/commands/county-export.js'
import Lookup from '../../src/commands/lookup.js'
import {runCommand} from '../helpers/run-command.js'
import {record, startScenario, type Scenario} from '../helpers/scenario-server.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * A resumed `county-export --where` knows the ServicePropertyIDs the filter dropped before the stop (they
 * are in the checkpoint), so a record the service repeats on a later page is a duplicate after a resume as
 * it is in one run: the same rows, the same "N fetched, M kept" and the same duplicates count. The
 * sandbox never repeats a record, so the server here is scripted: four pages of four records (the odd ones
 * not FHA-eligible, so the filter drops them), page 3 repeating record 1 as it was and page 4 repeating
 * record 3 changed to pass the filter.
 */
let server: Scenario
beforeAll(async () => {
  server = await startScenario((r) => {
    const recs = [0, 1, 2, 3].map((k) => record(r.fips, (r.page - 1) * 4 + k))
    if (r.page === 3) recs.push(record(r.fips, 1))
    if (r.page === 4) recs.push({...record(r.fips, 3), FHAEligible: true})
    return {page: {records: recs, next: r.page < 4 ? r.page + 1 : undefined}}
  })
})
afterAll(() => server.close())
const env = () => ({SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'sk_test_resume_0123456789'})
const WHERE = ['--where', 'FHAEligible = true', '--no-stats', '-o', 'ndjson']

describe('a resumed county-export --where', () => {
  it('drops a repeat of a record filtered before the stop as a duplicate, as one run does', async () => {
    const dir = tempDir()
    const whole = join(dir, 'whole.ndjson')
    const one = await runCommand(CountyExport, ['--fips', '06067', '--out', whole, ...WHERE], env())
    expect(one.exitCode, one.stderr).toBe(0)
    const summary =
      '16 records fetched, 8 kept by --where, 2 duplicate records across pages dropped (the first kept)'
    expect(one.stderr).toContain(summary)

    const out = join(dir, 'resumed.ndjson')
    const args = ['--fips', '06067', '--out', out, ...WHERE]
    const stopped = await runCommand(CountyExport, [...args, '--max-requests', '2'], env())
    expect(stopped.exitCode).toBe(7)
    expect(stopped.stderr).toContain('8 records fetched, 4 kept by --where')
    // the checkpoint's page events name the ids the filter dropped (records 1, 3, 5 and 7)
    const events = readFileSync(`${out}.sfl-checkpoint`, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as {t?: string; dropped?: number[]})
    expect(events.filter((e) => e.t === 'page').flatMap((e) => e.dropped ?? [])).toEqual(
      [1, 3, 5, 7].map((i) => record('06067', i)['ServicePropertyID']),
    )
    const resumed = await runCommand(CountyExport, args, env())
    expect(resumed.exitCode, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain('continuing the run recorded in')
    expect(resumed.stderr).toContain(summary)
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(whole, 'utf8'))
  })

  it('a checkpoint whose dropped ids were edited is refused, naming --restart', async () => {
    const out = join(tempDir(), 'o.ndjson')
    const args = ['--fips', '06067', '--out', out, ...WHERE]
    expect((await runCommand(CountyExport, [...args, '--max-requests', '1'], env())).exitCode).toBe(7)
    const path = `${out}.sfl-checkpoint`
    writeFileSync(path, readFileSync(path, 'utf8').replace(/"dropped":\[\d+/, '"dropped":[-1'))
    const r = await runCommand(CountyExport, args, env())
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(
      /holds an event this version of sfl does not write \("page": dropped\.0\).*--restart/,
    )
  })
})

describe('a --where that holds the key', () => {
  // records are masked before the filter reads them, so the filter could match nothing; and the filter is
  // stored with the run (checkpoint, manifest), so a key in it would be a key in a file
  const KEY = 'sk_test_resume_0123456789'
  const holding = ['--where', `City like '%${KEY.slice(4, 14)}%'`, '--no-stats', '-o', 'ndjson']

  it.each([
    ['SFL_API_KEY', (dir: string) => ({...env(), SFL_CONFIG_DIR: dir})],
    [
      'a profile in the config file',
      (dir: string) => {
        writeFileSync(join(dir, 'config.json'), JSON.stringify({profiles: {default: {apiKey: KEY}}}), {
          mode: 0o600,
        })
        return {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: undefined, SFL_CONFIG_DIR: dir}
      },
    ],
  ])('with the key from %s: refused in one line, exit 2, no request, no checkpoint', async (_, envOf) => {
    const dir = tempDir()
    const out = join(dir, 'o.ndjson')
    const before = server.requests.length
    const r = await runCommand(CountyExport, ['--fips', '06067', '--out', out, ...holding], envOf(dir))
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/--where holds your API key \(or 8 or more of its characters\)/)
    expect(r.stderr).not.toContain(KEY.slice(4, 14))
    expect(server.requests.length).toBe(before)
    expect(existsSync(`${out}.sfl-checkpoint`)).toBe(false)
    expect(existsSync(out)).toBe(false)
  })
})

describe('lookup --input --where that holds a stored key', () => {
  it('is refused before the input is read or anything sent, the key from a config profile', async () => {
    const dir = tempDir()
    const KEY = 'sk_test_profile_0123456789'
    writeFileSync(join(dir, 'config.json'), JSON.stringify({profiles: {default: {apiKey: KEY}}}), {
      mode: 0o600,
    })
    const input = join(dir, 'in.csv')
    writeFileSync(input, 'apn,county\n001-002,06067\n')
    const before = server.requests.length
    const r = await runCommand(
      Lookup,
      ['--input', input, '-o', 'csv', '--where', `City like '%${KEY.slice(3, 12)}%'`],
      {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: undefined, SFL_CONFIG_DIR: dir},
    )
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/^Error: --where holds your API key/m)
    expect(r.stdout).toBe('')
    expect(server.requests.length).toBe(before)
  })
})
