import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {sfl} from '../helpers/cli.js'

/**
 * The built CLI: `--json` against the old `--output json` spelling (kept, with oclif's deprecation
 * notice), and the connection flags only on the commands that send requests.
 */
let dir: string
let sb: Sandbox
let csv: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sfl-e2e-json-'))
  csv = join(dir, 'x.csv')
  writeFileSync(csv, 'Fips,ServicePropertyID,FinalValue\r\n06067,1,100\r\n06067,2,300\r\n')
  sb = await startSandbox({})
})
afterAll(async () => {
  await sb.close()
  rmSync(dir, {recursive: true, force: true})
})

const NOTICE = /Warning: The "--output json" form has been deprecated\. Use "--json"\s+(›\s+)?instead\./

describe('--output json, the old spelling of --json', () => {
  const env = () => ({SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'})
  it.each([
    ['stats', () => ['stats', csv]],
    ['counties', () => ['counties', 'Sacramento, CA']],
    ['keys check', () => ['keys', 'check', '--fips', '06067']],
    ['county-export --dry-run', () => ['county-export', '--fips', '06067', '--dry-run', '--no-probe']],
  ])('%s: the same document as --json, and the deprecation notice on stderr', async (_name, args) => {
    const old = await sfl([...args(), '--output', 'json'], {env: env()})
    const json = await sfl([...args(), '--json'], {env: env()})
    expect(old.code).toBe(0)
    expect(json.code).toBe(0)
    expect(old.stderr).toMatch(NOTICE)
    expect(json.stderr).not.toMatch(/deprecated/)
    // the figures that change between two runs (the window's remaining count and reset) aside
    const strip = (s: string) =>
      JSON.stringify(JSON.parse(s), (k, v) => (/^(remaining|reset|resetAt)$/.test(k) ? 0 : v))
    expect(strip(old.stdout)).toBe(strip(json.stdout))
  })

  it('-o parquet --dry-run --json: the export format and the plan format are two flags now', async () => {
    const r = await sfl(
      [
        'county-export',
        '--fips',
        '06067',
        '--out-dir',
        join(dir, 'pq'),
        '-o',
        'parquet',
        '--dry-run',
        '--json',
      ],
      {env: env()},
    )
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({counties: 1, probeRequests: 1})
    expect(r.stderr).toBe('')
  })

  it('a flag mistake with --json: the error document on stdout, the usage lines on stderr, exit 2', async () => {
    const r = await sfl(['stats', csv, '--json', '--by-county=maybe'])
    expect(r.code).toBe(2)
    expect(JSON.parse(r.stdout)).toMatchObject({error: {exitCode: 2}})
    expect(r.stderr).toMatch(/^Error: /)
  })

  it.each([
    ['a missing argument', ['changes', 'a.csv', '--json'], 'missing the required argument CURRENT'],
    ['an unknown flag', ['stats', 'F', '--json', '--bogus'], 'Nonexistent flag: --bogus'],
    ['a number flag out of range', ['keys', 'check', '--timeout', '0', '--json'], '--timeout 0: must be'],
    [
      'a number flag not a number',
      ['county-export', '--fips', '06067', '--retries', 'x', '--json'],
      '--retries x:',
    ],
  ])(
    '%s with --json: the document says the one line stderr shows, with exit code 2',
    async (_what, args, start) => {
      const r = await sfl(args)
      expect(r.code).toBe(2)
      const doc = JSON.parse(r.stdout) as {error: {message: string; exitCode: number}}
      expect(doc.error.exitCode).toBe(2)
      expect(doc.error.message.startsWith(start)).toBe(true)
      // oclif's own text runs to several lines (the missing argument listed below, a note on flags that
      // take several values, "See more help"): a script reads what a person reads
      expect(doc.error.message).not.toContain('\n')
      expect(`Error: ${doc.error.message}`).toBe(r.stderr.split('\n')[0])
    },
  )
})

describe('connection flags only on the commands that send requests', () => {
  const CONNECTION = [
    '--base-url',
    '--api-key',
    '--sandbox',
    '--timeout',
    '--retries',
    '--max-wait',
    '--profile',
  ]

  it.each([['stats'], ['changes'], ['counties']])('sfl %s --help lists none of them', async (cmd) => {
    const r = await sfl([cmd, '--help'])
    expect(r.code).toBe(0)
    for (const flag of CONNECTION) expect(r.stdout).not.toContain(flag)
    expect(r.stdout).toContain('--quiet')
  })

  it.each([['lookup'], ['county-export'], ['keys check']])('sfl %s --help lists them all', async (cmd) => {
    const r = await sfl([...cmd.split(' '), '--help'])
    expect(r.code).toBe(0)
    for (const flag of CONNECTION) expect(r.stdout).toContain(flag)
  })

  it.each([
    [['stats', 'F', '--base-url', 'http://x/v1'], '--base-url'],
    [['changes', 'A', 'B', '--sandbox'], '--sandbox'],
    [['counties', '06', '--api-key', 'k'], '--api-key'],
    [['stats', 'F', '--timeout', '5'], '--timeout'],
  ])('%j: exit 2, "Nonexistent flag", nothing read', async (args, flag) => {
    const r = await sfl(args)
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.split('\n')[0]).toBe(`Error: Nonexistent flag: ${flag}`)
  })

  it('keys set keeps --profile and --base-url (it stores them) and refuses --api-key with its reason', async () => {
    const help = await sfl(['keys', 'set', '--help'])
    expect(help.stdout).toContain('--profile')
    expect(help.stdout).toContain('--base-url')
    expect(help.stdout).not.toContain('--sandbox')
    const r = await sfl(['keys', 'set', '--api-key', 'k-123456'], {configDir: dir})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('never from --api-key')
  })
})
