import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {COMMANDS} from '../../src/commands/index.js'
import {sfl} from '../helpers/cli.js'
import {runCommand} from '../helpers/run-command.js'

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
afterAll(async () => {
  await sb.close()
  rmSync(dir, {recursive: true, force: true})
})

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

  const check = (r: {stdout: string; stderr: string}, key: string, args: string[]) => {
    expect(r.stdout, args.join(' ')).not.toContain(key)
    expect(r.stderr, args.join(' ')).not.toContain(key)
    expect(r.stderr).toContain(`${key.slice(0, 4)}…`) // --debug shows the masked form
  }
  const name = ([key, args, how]: [string, string[], string]) =>
    `${key === VALID ? 'valid' : 'invalid'} key from ${how === 'env' ? 'SFL_API_KEY' : '--api-key'}: ${args.filter((a) => a !== '--debug' && a !== key && a !== '--api-key').join(' ')}`

  // every command, format and error path in-process (the commands' own code, as fast as a function call)
  it.each(runs.map((run) => [name(run), run] as const))('%s', async (_name, [key, args, how]) => {
    const [id, ...argv] = args[0] === 'keys' ? ['keys:check', ...args.slice(2)] : args
    const r = await runCommand(COMMANDS[id as keyof typeof COMMANDS], argv, {
      SFL_BASE_URL: sb.baseUrl,
      ...(how === 'env' ? {SFL_API_KEY: key} : {}),
    })
    check(r, key, args)
  })

  // and through the real binary, whose entry prints errors and --debug lines its own way: one run per
  // command and key source
  const spawned = runs.filter(
    ([key, args, how], i) => runs.findIndex(([k, a, h]) => k === key && h === how && a[0] === args[0]) === i,
  )
  it.each(spawned.map((run) => [name(run), run] as const))('spawned: %s', async (_name, [key, args, how]) => {
    const r = await sfl(args, {
      env: {SFL_BASE_URL: sb.baseUrl, ...(how === 'env' ? {SFL_API_KEY: key} : {})},
    })
    check(r, key, args)
  })

  it('in no output or checkpoint file the runs left', () => {
    const files = filesUnder(dir)
    expect(files.some((f) => f.endsWith('.sfl-checkpoint'))).toBe(true) // --max-requests left checkpoints
    for (const f of files) {
      const text = readFileSync(f, 'utf8')
      expect(text, f).not.toContain(VALID)
      expect(text, f).not.toContain(INVALID)
    }
    expect(existsSync(join(dir, 'valid-env.csv.sfl-checkpoint'))).toBe(true)
  })
})
