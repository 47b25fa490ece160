import {existsSync, mkdtempSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {sfl} from '../helpers/cli.js'

/**
 * The key is a secret (spec 5.5): across every command, output format, error path and --debug, its full
 * text must not appear in stdout, stderr, output files or checkpoint files. The sandbox's demo keys act as
 * the secret here (they are the only keys it accepts), plus an unknown key for the 401 paths.
 */
let sb: Sandbox
const VALID = 'sandbox-full'
const INVALID = 'sk_live_LEAKCHECK_9f3a77c0'
const dir = mkdtempSync(join(tmpdir(), 'sfl-leak-'))
beforeAll(async () => {
  sb = await startSandbox({pageSize: 500})
})
afterAll(async () => sb.close())

function filesUnder(d: string): string[] {
  return readdirSync(d).flatMap((n) => {
    const p = join(d, n)
    return statSync(p).isDirectory() ? filesUnder(p) : [p]
  })
}

describe('the API key never leaks', () => {
  const runs: Array<[string, string[], string]> = []
  for (const key of [VALID, INVALID])
    for (const how of ['env', 'flag'] as const) {
      const lookups = ['table', 'json', 'ndjson', 'csv'].flatMap((o) => [
        ['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', o],
        ['lookup', '--fips', '06067', '--address', '1 NOWHERE RD', '-o', o],
      ])
      const exports = ['csv', 'ndjson', 'json'].map((f) => [
        'county-export',
        '--fips',
        '06067',
        '--fips',
        '12086',
        '--output',
        f,
        '--out',
        join(dir, `${key === VALID ? 'valid' : 'invalid'}-${how}.${f}`),
        '--max-requests',
        '3',
      ])
      for (const args of [
        ...lookups,
        ...exports,
        ['keys', 'check', '--fips', '06067', '--json'],
        ['keys', 'check', '--fips', '48201', '-o', 'table'],
      ])
        runs.push([key, [...args, '--debug', ...(how === 'flag' ? ['--api-key', key] : [])], how])
    }

  it(`in ${runs.length} runs covering every command, format, error path and --debug`, async () => {
    for (const [key, args, how] of runs) {
      const r = await sfl(args, {
        env: {SFL_BASE_URL: sb.baseUrl, ...(how === 'env' ? {SFL_API_KEY: key} : {})},
      })
      expect(r.stdout, args.join(' ')).not.toContain(key)
      expect(r.stderr, args.join(' ')).not.toContain(key)
      expect(r.stderr).toContain(`${key.slice(0, 4)}…`) // --debug shows the masked form
    }
    const files = filesUnder(dir)
    expect(files.some((f) => f.endsWith('.sfl-checkpoint'))).toBe(true) // --max-requests left checkpoints
    for (const f of files) {
      const text = readFileSync(f, 'utf8')
      expect(text, f).not.toContain(VALID)
      expect(text, f).not.toContain(INVALID)
    }
    expect(existsSync(join(dir, 'valid-env.csv.sfl-checkpoint'))).toBe(true)
  }, 240_000)
})
