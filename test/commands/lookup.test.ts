import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import Lookup from '../../src/commands/lookup.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {runCommand} from '../helpers/run-command.js'
import {readLog} from '../helpers/sandbox.js'

let sb: Sandbox
let log: string
beforeAll(async () => {
  log = join(mkdtempSync(join(tmpdir(), 'sfl-cmd-')), 'log.ndjson')
  writeFileSync(log, '')
  sb = await startSandbox({log})
})
afterAll(async () => sb.close())
const env = (key = 'sandbox-full') => ({SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: key})
const ID = ['--fips', '06067', '--property-id', '30000000006']

describe('lookup command (in-process through oclif)', () => {
  it.each(['json', 'ndjson', 'csv', 'table'] as const)(
    'renders --output %s on stdout with exit 0 and a quiet stderr',
    async (o) => {
      const r = await runCommand(Lookup, [...ID, '-o', o], env())
      expect(r.exitCode).toBe(0)
      expect(r.stderr).toBe('')
      if (o === 'json') expect(JSON.parse(r.stdout).APN).toBe('078-0123-045')
      if (o === 'ndjson') expect(r.stdout.endsWith('}\n')).toBe(true)
      if (o === 'csv') expect(r.stdout.split('\r\n')[1]).toMatch(/^06067,30000000006,078-0123-045,/)
      if (o === 'table') expect(r.stdout).toMatch(/^PROPERTY\n\s+Property ID\s+30000000006\n/)
    },
  )

  it.each([
    [
      ['--fips', '06067', '--address', '1 NOWHERE RD'],
      'sandbox-full',
      3,
      /no property matches in Sacramento County, CA \(06067\) \(HTTP 404/,
    ],
    [ID, 'bad-key-123', 4, /invalid or missing \(HTTP 401\)/],
    [
      ['--fips', '48201', '--property-id', '50000000001'],
      'sandbox-restricted',
      4,
      /not permitted .*\(HTTP 403\)/,
    ],
    [['--fips', '060', '--property-id', '1'], 'sandbox-full', 2, /--fips "060" must be exactly 5 digits/],
    [['--fips', '06067'], 'sandbox-full', 2, /none was given/],
    [[...ID, '--out', 'x.csv'], 'sandbox-full', 2, /--out applies to batch lookups; add --input FILE/],
    [[...ID, '--map', 'apn=Parcel'], 'sandbox-full', 2, /--map applies to batch lookups; add --input FILE/],
    [[...ID, '--bom'], 'sandbox-full', 2, /--bom applies to batch lookups; add --input FILE/],
    [
      [...ID, '--json'],
      'sandbox-full',
      2,
      /^Error: --json applies to batch lookups; add --input FILE \(for this property as JSON: -o json\)\n$/,
    ],
  ])('%j with key %s exits %i', async (args, key, code, msg) => {
    const r = await runCommand(Lookup, args, env(key))
    expect(r.exitCode).toBe(code)
    expect(r.stderr).toMatch(msg)
    expect(r.stdout).toBe('')
  })

  it('sends no request for bad input', async () => {
    const before = readLog(log).length
    await runCommand(Lookup, ['--fips', '99999', '--apn', '1'], env())
    await runCommand(Lookup, ['--fips', '06067', '--apn', 'x'.repeat(50)], env())
    expect(readLog(log).length).toBe(before)
  })

  it('--sandbox needs no configuration', async () => {
    const r = await runCommand(Lookup, ['--sandbox', '--quiet', ...ID, '-o', 'json'])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toBe('')
    expect(JSON.parse(r.stdout).ServicePropertyID).toBe(30000000006)
  })

  it('batch mode through the same command', async () => {
    const d = mkdtempSync(join(tmpdir(), 'sfl-cmd-'))
    writeFileSync(
      join(d, 'in.ndjson'),
      '{"fips":"06067","apn":"078-0123-045","tag":"a"}\n{"fips":"06067","apn":"078-0123-045","tag":"b"}\n',
    )
    const r = await runCommand(Lookup, ['--input', join(d, 'in.ndjson'), '-o', 'ndjson'], env())
    expect(r.exitCode).toBe(0)
    const rows = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(rows.map((x) => [x.tag, x.status, x.data.APN])).toEqual([
      ['a', 'ok', '078-0123-045'],
      ['b', 'ok', '078-0123-045'],
    ])
    expect(r.stderr).toMatch(/2 rows \(2 ok\), 1 lookups saved by duplicate rows, 1 requests/)
    const bad = await runCommand(Lookup, ['--input', join(d, 'in.ndjson'), '--apn', '1'], env())
    expect(bad.exitCode).toBe(2)
    const table = await runCommand(Lookup, ['--input', join(d, 'in.ndjson'), '-o', 'table'], env())
    expect(table.stderr).toMatch(/--output table is for one property/)
  })
})

describe('rate-limit waits on a single lookup', () => {
  it('says it is waiting, then answers once the window turns', async () => {
    // the sandbox's clock is set 6.5 s before one of its minute windows ends (within the 5 minutes of
    // skew the client corrects by the Date header), so the wait is about 6 s whenever the test runs: just
    // over the 5 s from which a wait is announced (src/cli/wait-feedback.ts), not up to a whole window
    const MINUTE = 60_000
    const offset = Math.ceil((Date.now() + 8_000) / MINUTE) * MINUTE - 6_500 - Date.now()
    const tight = await startSandbox({limit: 1, windowSeconds: 60, now: () => Date.now() + offset})
    try {
      const e = {SFL_BASE_URL: tight.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const first = await runCommand(Lookup, [...ID, '-o', 'json'], e)
      expect(first.exitCode).toBe(0)
      const r = await runCommand(Lookup, [...ID, '-o', 'json', '--max-wait', '10'], e)
      expect(r.exitCode).toBe(0)
      expect(r.stderr).toMatch(
        /^sfl: (the service answered 429 \(too many requests\); retrying|the key's requests for this rate-limit window are spent; the window resets) at \d\d:\d\d:\d\d \(in \d s\)\n$/,
      )
    } finally {
      await tight.close()
    }
  }, 30_000)
})
