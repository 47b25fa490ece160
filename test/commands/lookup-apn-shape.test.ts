import {chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import CountyExport from '../../src/commands/county-export.js'
import Lookup from '../../src/commands/lookup.js'
import {ExitCode} from '../../src/errors.js'
import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {countyRecords, startCountyServer} from '../helpers/county-server.js'
import {runCommand} from '../helpers/run-command.js'
import {answerFrom, startScenario, type Scenario} from '../helpers/scenario-server.js'

/**
 * Issue 31, the last hint: an APN that misses in a county whose APNs sfl has seen is told how they look
 * (their shape, never a number), from a file in sfl's cache folder that a lookup's answer fills. A loopback
 * server answers by the exact `fips` and `apn` it is sent.
 */
type Rec = Record<string, unknown>
const KEY = 'shape-key-0123456789'

// sfl's cache folder for these runs (SFL_CACHE_DIR), under the test run's temp folder
const cache = mkdtempSync(join(tmpdir(), 'sfl-apn-shape-'))
const file = join(cache, 'apn-shapes.json')

let answers: Map<string, Rec>
let server: Scenario
beforeAll(async () => {
  server = await startScenario(answerFrom(() => answers, 'apn'))
})
afterAll(() => {
  server.close()
  rmSync(cache, {recursive: true, force: true})
})
beforeEach(() => {
  answers = new Map()
  rmSync(file, {force: true})
})

const ds = new Dataset(1, 10)
const record = (apn: string): Rec => ({
  ...ds.record(countyByFips('06067')!, 3, {assumable: false, condo: false}),
  APN: apn,
})
const lookup = (args: string[]) =>
  runCommand(Lookup, [...args, '-o', 'json'], {
    SFL_BASE_URL: server.baseUrl,
    SFL_API_KEY: KEY,
    SFL_CACHE_DIR: cache,
  })
const flat = (s: string) => s.replace(/\s+/g, ' ')

describe('an APN miss says the shape of the APNs seen in that county', () => {
  it('after an answer with APN 078-0123-045-0001 in 06067, a miss there shows 999-9999-999-9999', async () => {
    answers.set('06067|078-0123-045-0001', record('078-0123-045-0001'))
    const hit = await lookup(['--fips', '06067', '--apn', '078-0123-045-0001'])
    expect(hit.exitCode).toBe(0)
    const miss = await lookup(['--fips', '06067', '--apn', '0780123045'])
    expect(miss.exitCode).toBe(ExitCode.notFound)
    expect(flat(miss.stderr)).toContain(
      'APNs in Sacramento County, CA (06067) look like 999-9999-999-9999 (seen in an earlier answer); this one was 0780123045: try it as printed on the tax bill',
    )
    expect(miss.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('a batch (--input) remembers the shapes of the counties it got records in', async () => {
    answers.set('06067|078-0123-045-0001', record('078-0123-045-0001'))
    const input = join(cache, 'in.csv')
    writeFileSync(input, 'fips,apn\n06067,078-0123-045-0001\n06085,1234\n')
    const run = await runCommand(
      Lookup,
      ['--input', input, '--out', join(cache, 'out.csv'), '--quiet', '--no-stats'],
      {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: KEY, SFL_CACHE_DIR: cache},
    )
    expect(run.stderr).toBe('')
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({v: 1, shapes: {'06067': '999-9999-999-9999'}})
    const miss = await lookup(['--fips', '06067', '--apn', '078 0123 045 0001'])
    expect(flat(miss.stderr)).toContain(
      'look like 999-9999-999-9999 (seen in an earlier answer); this one was 078 0123 045 0001',
    )
  })

  it('the cache file is 0600 and holds the shape, no APN digits', async () => {
    answers.set('06067|078-0123-045-0001', record('078-0123-045-0001'))
    expect((await lookup(['--fips', '06067', '--apn', '078-0123-045-0001'])).exitCode).toBe(0)
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600)
    const text = readFileSync(file, 'utf8')
    expect(JSON.parse(text)).toEqual({v: 1, shapes: {'06067': '999-9999-999-9999'}})
    // no digit but the FIPS code's and the version's: none of the APN's
    expect(text.replace('"06067"', '').replace('"v":1', '')).not.toMatch(/[0-8]/)
    expect(text).not.toContain(KEY)
  })

  it('a miss in a county never seen gets the generic words', async () => {
    answers.set('06067|078-0123-045-0001', record('078-0123-045-0001'))
    await lookup(['--fips', '06067', '--apn', '078-0123-045-0001'])
    const miss = await lookup(['--fips', '06085', '--apn', '0780123045'])
    expect(miss.exitCode).toBe(ExitCode.notFound)
    expect(flat(miss.stderr)).toContain('usually in groups with dashes')
    expect(miss.stderr).not.toContain('999')
  })

  it.each([
    ['not JSON', '{"v":1,"shapes":{"06067":"999-'],
    ['a shape with digits', '{"v":1,"shapes":{"06067":"078-0123"}}'],
    ['another version', '{"v":2,"shapes":{"06067":"999-9999"}}'],
    ['a key that is not a FIPS code', '{"v":1,"shapes":{"6067":"999-9999"}}'],
  ])('a corrupt cache file (%s) is ignored: the generic words, the same exit code', async (_, text) => {
    writeFileSync(file, text, {mode: 0o600})
    const miss = await lookup(['--fips', '06067', '--apn', '0780123045'])
    expect(miss.exitCode).toBe(ExitCode.notFound)
    expect(flat(miss.stderr)).toContain('Sacramento County writes 078-0123-045')
    expect(miss.stderr).not.toContain('look like')
  })

  it('a cache file others may write is not trusted', async () => {
    if (process.platform === 'win32') return
    writeFileSync(file, '{"v":1,"shapes":{"06067":"99-99"}}')
    chmodSync(file, 0o666)
    const miss = await lookup(['--fips', '06067', '--apn', '0780123045'])
    expect(miss.exitCode).toBe(ExitCode.notFound)
    expect(miss.stderr).not.toContain('99-99')
  })

  it('an APN typed in the shape seen gets no shape line (the shape is not the problem)', async () => {
    writeFileSync(file, '{"v":1,"shapes":{"06067":"999-9999-999"}}', {mode: 0o600})
    const miss = await lookup(['--fips', '06067', '--apn', '078-0123-046'])
    expect(miss.exitCode).toBe(ExitCode.notFound)
    expect(miss.stderr).not.toContain('look like')
  })

  it('a record whose APN has no shape (too long) leaves the file as it was', async () => {
    answers.set('06067|1', record('9'.repeat(41)))
    expect((await lookup(['--fips', '06067', '--apn', '1'])).exitCode).toBe(0)
    expect(() => statSync(file)).toThrow()
  })
})

describe("with --from DIR, the shape most of the export's records of the county have", () => {
  it("an APN that misses in the export and at the service is told the export's shape", async () => {
    const county = await startCountyServer({counties: {'06067': countyRecords('06067', 30)}})
    try {
      const env = {SFL_BASE_URL: county.baseUrl, SFL_API_KEY: KEY, SFL_CACHE_DIR: cache}
      const dir = join(cache, 'exports')
      const exported = await runCommand(
        CountyExport,
        ['--fips', '06067', '--out-dir', dir, '-o', 'ndjson', '--quiet', '--no-stats'],
        env,
      )
      expect(exported.exitCode).toBe(0)
      const miss = await runCommand(
        Lookup,
        ['--fips', '06067', '--apn', '9999999999', '--from', dir, '-o', 'json', '--quiet'],
        env,
      )
      expect(miss.exitCode).toBe(ExitCode.notFound)
      expect(flat(miss.stderr)).toContain(
        'APNs in Sacramento County, CA (06067) look like 999-9999-999 (seen in the --from export); this one was 9999999999',
      )
    } finally {
      await county.close()
    }
  })
})
