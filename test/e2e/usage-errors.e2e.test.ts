import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {expectOneErrorLine, leakedRun} from '../hostile/expect.js'
import {startHostileServer, type HostileMode, type HostileServer} from '../hostile/server.js'

/**
 * The loan officer's usual mistakes get the help that fits (issue 22): each asserts the message, the exit
 * code, and, by counting what a loopback server received, that nothing was sent. Runs the built CLI.
 */
const KEY = 'sk_live_USAGE_0123456789abcdefXYZ'
const PROFILE_KEY = 'sk_live_PROFILE_9876543210fedcba'
let server: HostileServer
let dir: string

beforeAll(async () => {
  server = await startHostileServer()
})
afterAll(async () => server.close())
afterEach(() => {
  if (dir) rmSync(dir, {recursive: true, force: true})
})

function env(mode: HostileMode = 'ok'): Record<string, string> {
  return {SFL_BASE_URL: server.baseUrl(mode), SFL_API_KEY: KEY}
}

/** A config dir whose profile `default` holds PROFILE_KEY and points at `mode`, or holds `text` as is. */
function configDir(opts: {mode?: HostileMode; text?: string} = {}): string {
  dir = mkdtempSync(join(tmpdir(), 'sfl-usage-'))
  const cfg = join(dir, 'sfl')
  mkdirSync(cfg, {mode: 0o700})
  const text =
    opts.text ??
    JSON.stringify({profiles: {default: {apiKey: PROFILE_KEY, baseUrl: server.baseUrl(opts.mode ?? 'ok')}}})
  writeFileSync(join(cfg, 'config.json'), text, {mode: 0o600})
  return cfg
}

async function expectNothingSent<T>(run: () => Promise<T>): Promise<T> {
  const before = server.requests.length
  const r = await run()
  expect(server.requests.length - before, 'requests sent').toBe(0)
  return r
}

const LOOKUP = ['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json', '--retries', '0']

describe('arguments, flags and their hints', () => {
  it('`sfl lookup 3526 High St`: the quote hint and lookup usage, not "not a sfl command"', async () => {
    const r = await expectNothingSent(() => sfl(['lookup', '3526', 'High', 'St'], {env: env()}))
    expect(r.code).toBe(2)
    expect(r.stderr.split('\n').slice(0, 2)).toEqual([
      'Error: Unexpected arguments: 3526, High, St',
      'Hint: a value with spaces must be quoted, e.g. --address "3526 HIGH ST, SACRAMENTO, CA 95838"; the words after the first space became arguments, and sfl lookup takes no arguments',
    ])
    expect(r.stderr).toContain('Usage: sfl lookup [FLAGS]')
    expect(r.stderr).not.toContain('is not a sfl command')
  })

  it.each([
    [['--timeout', '0'], 'Error: --timeout 0: must be a whole number of at least 1 (seconds each request may take), e.g. --timeout 30'], // prettier-ignore
    [['--retries', '-1'], 'Error: --retries -1: must be a whole number of at least 0 (retries after a failure, 0 for none), e.g. --retries 3'], // prettier-ignore
  ])('a bad number %j is one line naming the fix, exit 2, nothing sent (issue 31)', async (flag, line) => {
    const r = await expectNothingSent(() => sfl([...LOOKUP.filter((a, i, all) => a !== '--retries' && all[i - 1] !== '--retries'), ...flag], {env: env()})) // prettier-ignore
    expect(r.code).toBe(2)
    expect(r.stderr.split('\n')[0]).toBe(line)
    expect(r.stderr).not.toMatch(/Parsing|›/)
  })

  it('extra words after a command with an argument name that argument', async () => {
    const r = await expectNothingSent(() => sfl(['counties', 'Orange', 'FL'], {env: env()}))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('Error: Unexpected argument: FL\n')
    expect(r.stderr).toContain('sfl counties takes one argument (SEARCH)')
    expect(r.stderr).toContain('Usage: sfl counties SEARCH [FLAGS]')
  })

  for (const args of [['lookup', '-h'], ['counties', '-h'], ['keys', 'check', '-h'], ['-h']])
    it(`\`sfl ${args.join(' ')}\` is --help`, async () => {
      const r = await expectNothingSent(() => sfl(args, {env: env()}))
      expect(r.code).toBe(0)
      expect(r.stdout).toMatch(/^USAGE$/m)
      expect(r.stderr).toBe('')
    })

  it('`sfl counties` without its argument names it: SEARCH', async () => {
    const r = await expectNothingSent(() => sfl(['counties'], {env: env()}))
    expect(r.code).toBe(2)
    expect(r.stderr.split('\n')[0]).toBe(
      'Error: missing the required argument SEARCH (Name (optionally ", ST") or the start of a FIPS code)',
    )
  })

  it('`keys set --fips 6067` suggests 06067 and never --county, which keys set does not have', async () => {
    const cfg = join(mkdtempSync(join(tmpdir(), 'sfl-usage-')), 'sfl')
    dir = join(cfg, '..')
    const r = await expectNothingSent(() =>
      sfl(['keys', 'set', '--fips', '6067'], {env: env(), input: `${KEY}\n`, configDir: cfg}),
    )
    expectOneErrorLine(
      r,
      2,
      /--fips "6067" must be exactly 5 digits .*did you mean 06067 \(Sacramento County, CA/,
    )
    expect(r.stderr).not.toContain('--county')
  })

  it('`keys check --fips sacramento` does not suggest --county either; `lookup` does', async () => {
    const check = await expectNothingSent(() => sfl(['keys', 'check', '--fips', 'sacramento'], {env: env()}))
    expectOneErrorLine(check, 2, /find a code with `sfl counties NAME`/)
    expect(check.stderr).not.toContain('--county')
    const lookup = await expectNothingSent(() =>
      sfl(['lookup', '--fips', 'sacramento', '--apn', '1'], {env: env()}),
    )
    expectOneErrorLine(lookup, 2, /to give a name, use --county "sacramento"/)
  })
})

describe('network errors name the likely fix', () => {
  it('connection refused: the base URL in use and where it came from (exit 6)', async () => {
    // a port that was just free: nothing listens there
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as {port: number}).port
        s.close(() => resolve(p))
      })
    })
    const r = await sfl(LOOKUP, {env: {SFL_BASE_URL: `http://127.0.0.1:${port}/v1`, SFL_API_KEY: KEY}})
    expectOneErrorLine(
      r,
      6,
      new RegExp(
        `ECONNREFUSED.*nothing accepts connections at that address: check the base URL, in use http://127\\.0\\.0\\.1:${port}/v1 \\(from SFL_BASE_URL; --base-url overrides it\\)$`,
      ),
    )
    expect(leakedRun(r.stderr, KEY)).toBeUndefined()
  })

  it('https:// to a plain-HTTP port says the server speaks plain HTTP, not that a certificate is untrusted', async () => {
    const base = server.baseUrl('ok').replace('http://', 'https://')
    const r = await sfl([...LOOKUP, '--base-url', base], {env: {SFL_API_KEY: KEY}})
    expectOneErrorLine(
      r,
      6,
      /answered in plain HTTP, not TLS \(ERR_SSL_[A-Z_]+\): the URL says https:\/\/ but that port speaks http:\/\/; that port speaks plain HTTP: check the base URL, in use https:\/\/127\.0\.0\.1:\d+\/ok\/v1 \(from --base-url\)/,
    )
    expect(r.stderr).not.toMatch(/certificate|NODE_EXTRA_CA_CERTS/)
  })
})

describe('a 401 or 403 says where the key came from', () => {
  it('SFL_API_KEY overriding the profile: "it is set and overrides profile default"', async () => {
    const cfg = configDir({mode: 'unauthorized'})
    const r = await sfl(LOOKUP, {env: env('unauthorized'), configDir: cfg})
    expectOneErrorLine(
      r,
      4,
      /HTTP 401\): Invalid or missing API key\. The key came from SFL_API_KEY \(it is set and overrides profile default\): fix SFL_API_KEY, or unset it to use the profile$/,
    )
  })

  it('a key from the profile names the profile and its file', async () => {
    const cfg = configDir({mode: 'unauthorized'})
    const r = await sfl(LOOKUP, {configDir: cfg})
    expectOneErrorLine(
      r,
      4,
      /The key came from profile default in .*config\.json: store a valid key with `sfl keys set --profile default`$/,
    )
    expect(leakedRun(r.stderr, PROFILE_KEY)).toBeUndefined()
  })

  it('a 403 names the key source too', async () => {
    const r = await sfl(LOOKUP, {env: env('forbidden')})
    expectOneErrorLine(r, 4, /HTTP 403\): Forbidden; the key came from SFL_API_KEY: a key with permission/)
  })
})

describe('a malformed config.json is an error only when the run needs it', () => {
  it('key and base URL from the environment (CI): one warning line, the lookup runs', async () => {
    const cfg = configDir({text: '{"profiles": {'})
    const r = await sfl(LOOKUP, {env: env('ok'), configDir: cfg})
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({Fips: '06067'})
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(
      /^Warning: the config file .*config\.json is not valid JSON .*\(not needed by this run: its key and base URL come from flags or the environment\)\n$/,
    )
  })

  it('a key that must come from the profile: exit 2 naming the file, nothing sent', async () => {
    const cfg = configDir({text: '{"profiles": {'})
    const r = await expectNothingSent(() =>
      sfl(LOOKUP, {env: {SFL_BASE_URL: server.baseUrl('ok')}, configDir: cfg}),
    )
    expectOneErrorLine(r, 2, /the config file .*config\.json is not valid JSON/)
  })

  it('a profile named explicitly needs the file even with the key in the environment', async () => {
    const cfg = configDir({text: '[]'})
    const r = await expectNothingSent(() =>
      sfl([...LOOKUP, '--profile', 'prod'], {env: env(), configDir: cfg}),
    )
    expectOneErrorLine(r, 2, /the config file .*config\.json has no "profiles" object/)
  })
})

describe('base URL', () => {
  it('ending in /v1/special-financing: drop the endpoint path (exit 2, nothing sent)', async () => {
    const base = `${server.baseUrl('ok')}/special-financing`
    const r = await expectNothingSent(() => sfl([...LOOKUP, '--base-url', base], {env: {SFL_API_KEY: KEY}}))
    expectOneErrorLine(
      r,
      2,
      /ends in the endpoint path \/special-financing, which sfl adds to every request .*drop it: use --base-url http:\/\/127\.0\.0\.1:\d+\/ok\/v1 /,
    )
    expect(r.stderr).not.toContain('version segment')
  })
})
