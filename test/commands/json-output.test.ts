import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import Changes from '../../src/commands/changes.js'
import Counties from '../../src/commands/counties.js'
import CountyExport from '../../src/commands/county-export.js'
import KeysCheck from '../../src/commands/keys/check.js'
import Stats from '../../src/commands/stats.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {runCommand, type Captured} from '../helpers/run-command.js'
import {readLog} from '../helpers/sandbox.js'

/**
 * `--json` (oclif's enableJsonFlag) on every command that has it: stdout is exactly one JSON document
 * (JSON.parse of the whole of it succeeds), an error is `{"error": {name, message, exitCode}}` on stdout
 * with its line still on stderr, and the exit codes are those without --json.
 */
let dir: string
let sb: Sandbox
let log: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sfl-json-'))
  log = join(dir, 'requests.ndjson')
  writeFileSync(log, '')
  sb = await startSandbox({pageSize: 500, log})
})
afterAll(async () => {
  await sb.close()
  rmSync(dir, {recursive: true, force: true})
})
const sent = () => readLog(log).length

function file(name: string, text: string): string {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

/** The whole of stdout as one JSON document: it throws when anything else was written there. */
function onlyJson(r: Captured): Record<string, unknown> {
  expect(r.stdout.endsWith('}\n')).toBe(true)
  return JSON.parse(r.stdout) as Record<string, unknown>
}

const env = () => ({SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'})

describe('sfl stats --json', () => {
  it('prints the statistics document and nothing else; the table without it', async () => {
    const csv = file(
      's.csv',
      'Fips,ServicePropertyID,FinalValue,FHAEligible\r\n06067,1,100,true\r\n06067,2,300,false\r\n',
    )
    const r = await runCommand(Stats, [csv, '--json'])
    expect(r.exitCode).toBe(0)
    const doc = onlyJson(r)
    expect(doc).toMatchObject({version: 1, run: {records: 2}, counties: []})
    const table = await runCommand(Stats, [csv])
    expect(table.stdout).toContain(`${csv}: 2 records\n`)
    expect(() => JSON.parse(table.stdout)).toThrow()
  })

  it('an unreadable file: the error document on stdout, its line on stderr, exit 2 as without --json', async () => {
    const missing = join(dir, 'nope.csv')
    const plain = await runCommand(Stats, [missing])
    const r = await runCommand(Stats, [missing, '--json'])
    expect(plain.exitCode).toBe(2)
    expect(r.exitCode).toBe(2)
    expect(onlyJson(r)).toEqual({
      error: {name: 'ExportFileError', message: `${missing}: no such file or folder`, exitCode: 2},
    })
    expect(r.stderr).toBe(plain.stderr)
  })
})

describe('sfl counties --json', () => {
  it('the matches as a document, exit 0', async () => {
    const r = await runCommand(Counties, ['Sacramento, CA', '--json'])
    expect(r.exitCode).toBe(0)
    expect(onlyJson(r)).toEqual({
      matches: [{fips: '06067', state: 'CA', name: 'Sacramento County'}],
      didYouMean: [],
    })
    expect(r.stderr).toBe('')
  })

  it('nothing found is still the document (its near misses), exit 3 as without --json', async () => {
    const r = await runCommand(Counties, ['Sacremento', '--json'])
    expect(r.exitCode).toBe(3)
    expect(onlyJson(r)).toEqual({
      matches: [],
      didYouMean: [{fips: '06067', state: 'CA', name: 'Sacramento County'}],
    })
    expect(r.stderr).toBe('Error: no county name contains "Sacremento"\n')
    expect((await runCommand(Counties, ['Sacremento', '-o', 'table'])).exitCode).toBe(3)
  })
})

describe('sfl keys check --json', () => {
  it('the report, one request, exit 0', async () => {
    const before = sent()
    const r = await runCommand(KeysCheck, ['--fips', '06067', '--json'], env())
    expect(r.exitCode).toBe(0)
    expect(onlyJson(r)).toMatchObject({valid: true, counties: {'06067': 'permitted'}, requestsUsed: 1})
    expect(sent() - before).toBe(1)
    // a keys check never reports the plan's page facts
    expect(onlyJson(r)).not.toHaveProperty('firstPage')
  })

  it('a county the key may not use: the report, exit 4; an invalid key: the report, exit 4', async () => {
    const restricted = await runCommand(KeysCheck, ['--fips', '48201', '--json'], {
      ...env(),
      SFL_API_KEY: 'sandbox-restricted',
    })
    expect(restricted.exitCode).toBe(4)
    expect(onlyJson(restricted)).toMatchObject({valid: true, counties: {'48201': 'not permitted'}})
    const invalid = await runCommand(KeysCheck, ['--fips', '06067', '--json'], {
      ...env(),
      SFL_API_KEY: 'not-a-demo-key',
    })
    expect(invalid.exitCode).toBe(4)
    expect(onlyJson(invalid)).toMatchObject({valid: false})
  })

  it('a usage error: the error document, exit 2, nothing sent', async () => {
    const before = sent()
    const r = await runCommand(KeysCheck, ['--fips', '06999', '--json'], env())
    expect(r.exitCode).toBe(2)
    expect(onlyJson(r)).toMatchObject({error: {name: 'UsageError', exitCode: 2}})
    expect(sent()).toBe(before)
  })
})

describe('sfl changes --json', () => {
  const prev = () => file('oct.csv', 'Fips,ServicePropertyID,FinalValue\r\n06067,1,100\r\n06067,2,200\r\n')
  const cur = () =>
    file(
      'nov.ndjson',
      '{"Fips":"06067","ServicePropertyID":2,"FinalValue":250}\n{"Fips":"06067","ServicePropertyID":3,"FinalValue":300}\n',
    )

  it('the summary as a document, the change file in --out; --exit-code still 1 with changes', async () => {
    const out = join(dir, 'delta.csv')
    const [p, c] = [prev(), cur()]
    const r = await runCommand(Changes, [p, c, '--out', out, '--json', '--exit-code'])
    expect(r.exitCode).toBe(1)
    expect(onlyJson(r)).toEqual({
      previous: p,
      current: c,
      out,
      counties: 1,
      added: 1,
      updated: 1,
      deleted: 1,
      unchanged: 0,
      unkeyed: 0,
      duplicates: 0,
      onlyPrevious: [],
      onlyCurrent: [],
      inNeither: [],
    })
    expect(readFileSync(out, 'utf8').split('\r\n')[0]).toMatch(/^Change,ServicePropertyID,/)
    expect(r.stderr).toBe(`sfl changes: 1 added, 1 updated, 1 deleted, 0 unchanged in 1 county -> ${out}\n`)
  })

  it('the counties only one export holds, and a --fips county neither holds, in the document', async () => {
    const out = join(dir, 'delta2.csv')
    const other = file('tx.ndjson', '{"Fips":"48201","ServicePropertyID":9,"FinalValue":1}\n')
    const r = await runCommand(Changes, [
      prev(),
      other,
      '--out',
      out,
      '--json',
      '--fips',
      '06067,48201,01001',
    ])
    expect(onlyJson(r)).toMatchObject({
      counties: 3,
      added: 1,
      deleted: 2,
      onlyPrevious: [{fips: '06067', rows: 2}],
      onlyCurrent: [{fips: '48201', rows: 1}],
      inNeither: ['01001'],
    })
  })

  it('--json without --out is refused (the change file would share stdout): exit 2, nothing read', async () => {
    const r = await runCommand(Changes, [prev(), join(dir, 'missing.csv'), '--json'])
    expect(r.exitCode).toBe(2)
    expect(onlyJson(r)).toEqual({
      error: {
        name: 'UsageError',
        message: '--json prints the summary on stdout: give --out FILE for the change file; nothing was read',
        exitCode: 2,
      },
    })
  })
})

describe('sfl county-export --dry-run --json', () => {
  it('independent of the export format: -o parquet --out-dir DIR --dry-run --json prints the plan', async () => {
    const out = join(dir, 'pq')
    const before = sent()
    const r = await runCommand(
      CountyExport,
      ['--fips', '06067', '--fips', '12086', '--out-dir', out, '-o', 'parquet', '--dry-run', '--json'],
      env(),
    )
    expect(r.exitCode).toBe(0)
    // 12086 (the most homes): 4 pages of 500 (X-Total-Count 2,000); 06067 scaled by its homes, 3 pages
    expect(onlyJson(r)).toMatchObject({
      counties: 2,
      requests: 5,
      requestsEstimate: 7,
      probe: {fips: '12086', answer: 'records', next: true, total: 2000, pageRecords: 500},
      probeChosenBy: 'housing units',
      probeRequests: 1,
    })
    expect(sent() - before).toBe(1)
    expect(existsSync(out)).toBe(false)
  })

  it('the text plan without --json, with the same figures', async () => {
    const r = await runCommand(CountyExport, ['--fips', '06067', '--fips', '12086', '--dry-run'], env())
    expect(r.exitCode).toBe(0)
    expect(r.stdout.split('\n')[0]).toMatch(
      /^2 counties, about 7 requests \(at least 5\): within the current window/,
    )
  })

  it('an invalid key on the probe: the plan document still, exit 4 as without --json', async () => {
    const r = await runCommand(CountyExport, ['--fips', '06067', '--dry-run', '--json'], {
      ...env(),
      SFL_API_KEY: 'not-a-demo-key',
    })
    expect(r.exitCode).toBe(4)
    expect(onlyJson(r)).toMatchObject({
      probe: {fips: '06067', answer: 'none'},
      budget: {source: 'default'},
    })
  })

  it('--json without --dry-run is refused before anything is sent (exit 2, the error document)', async () => {
    const before = sent()
    const r = await runCommand(CountyExport, ['--fips', '06067', '--json'], env())
    expect(r.exitCode).toBe(2)
    expect(onlyJson(r)).toMatchObject({error: {name: 'UsageError', exitCode: 2}})
    expect(sent()).toBe(before)
  })

  it("SFL_CONTENT_TYPE=json (oclif's switch) turns on the plan's JSON but not a run's: records stay on stdout", async () => {
    const plan = await runCommand(CountyExport, ['--fips', '06067', '--dry-run', '--no-probe'], {
      SFL_CONTENT_TYPE: 'json',
    })
    expect(onlyJson(plan)).toMatchObject({counties: 1, probeRequests: 0})
    const run = await runCommand(CountyExport, ['--fips', '06067', '-o', 'ndjson', '--quiet'], {
      ...env(),
      SFL_CONTENT_TYPE: 'json',
    })
    expect(run.exitCode).toBe(0)
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(2000)
  })
})
