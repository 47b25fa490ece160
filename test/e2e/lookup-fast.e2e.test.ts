import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import Lookup from '../../src/commands/lookup.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {sfl} from '../helpers/cli.js'
import {runCommand} from '../helpers/run-command.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * `sfl lookup` of one property runs without oclif's Config (src/cli/lookup-fast.ts, dist/lookup.cjs);
 * the same command run through oclif (in-process, the command class) must answer exactly alike: the
 * same stdout, stderr and exit code, for answers, errors and the usage errors the fast path hands back.
 */
let sb: Sandbox
let config: string
beforeAll(async () => {
  sb = await startSandbox({})
  // a profile with a key, in a private config folder, for the precedence cases
  config = join(tempDirOutsideTest(), 'cfg')
  mkdirSync(config, {mode: 0o700})
  writeFileSync(
    join(config, 'config.json'),
    JSON.stringify({profiles: {default: {apiKey: 'sandbox-condo', baseUrl: sb.baseUrl}}}),
    {mode: 0o600},
  )
})
afterAll(async () => sb.close())

function tempDirOutsideTest(): string {
  const {mkdtempSync} = process.getBuiltinModule('node:fs')
  const {tmpdir} = process.getBuiltinModule('node:os')
  return mkdtempSync(join(tmpdir(), 'sfl-fast-'))
}

const ID = ['--fips', '06067', '--property-id', '30000000006']
type Case = [string, string[], 'env' | 'profile' | 'none' | 'bad-key']
const CASES: Case[] = [
  ['json by property id', [...ID, '-o', 'json'], 'env'],
  [
    'table by address, explained',
    ['--county', 'Sacramento, CA', '--address', '3526 High St, Sacramento, CA 95838', '-o', 'table'],
    'env',
  ],
  ['csv', [...ID, '-o', 'csv'], 'env'],
  [
    'ndjson with --explain and a market rate',
    [...ID, '-o', 'ndjson', '--explain', '--market-rate', '6.5%'],
    'env',
  ],
  ['quiet json', [...ID, '-o', 'json', '--quiet'], 'env'],
  ['not found (exit 3)', ['--fips', '06067', '--address', '1 Nowhere Rd', '-o', 'json'], 'env'],
  // issue 31: the county from the ZIP, and a 404 in a county the ZIP does not lie in, read from dist/
  ['the county from the ZIP', ['--address', '3526 High St, Sacramento, CA 95838', '-o', 'json'], 'env'],
  [
    'a 404 in a county the ZIP is not in (exit 3)',
    ['--fips', '06113', '--address', '3526 High St, Sacramento, CA 95838', '-o', 'json', '--no-fallback'],
    'env',
  ],
  ['a county that fits several (exit 2)', ['--county', 'sac', '--address', '1 Main St'], 'env'],
  ['a fips no county has (exit 2)', ['--fips', '06999', '--apn', '1'], 'env'],
  ['a market rate under 1 (exit 2)', [...ID, '--market-rate', '0.065'], 'env'],
  ['the key from the profile', [...ID, '-o', 'json'], 'profile'],
  ['no key and no URL (exit 2)', [...ID, '-o', 'json'], 'none'],
  ['a key the service refuses (exit 4, its source named)', [...ID, '-o', 'json'], 'bad-key'],
  ['--debug (the key masked)', [...ID, '-o', 'json', '--debug'], 'env'],
]

function envOf(how: Case[2]): {env: Record<string, string>; configDir: string} {
  const base = {configDir: '/nonexistent/sfl-test-config'}
  if (how === 'env') return {...base, env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}}
  if (how === 'bad-key')
    return {...base, env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sk_live_NOT_A_KEY_123'}}
  if (how === 'profile') return {configDir: config, env: {}}
  return {...base, env: {}}
}

/** Timings and the budget left vary between the two runs: the rest must be equal. */
const steady = (text: string) =>
  text.replace(/\(\d+ ms\)/g, '(N ms)').replace(/remaining \d+/g, 'remaining N')

describe('sfl lookup without oclif answers as the command does through oclif', () => {
  it.each(CASES)('%s', async (_name, argv, how) => {
    const {env, configDir} = envOf(how)
    const fast = await sfl(['lookup', ...argv], {
      env: {...env, SFL_CACHE_DIR: tempDir('sfl-fast-cache-')},
      configDir,
    })
    const oclif = await runCommand(Lookup, argv, {...env, SFL_CONFIG_DIR: configDir})
    expect(fast.code).toBe(oclif.exitCode)
    expect(steady(fast.stdout)).toBe(steady(oclif.stdout))
    expect(steady(fast.stderr)).toBe(steady(oclif.stderr))
  })
})

/**
 * undici's HTTP parser (llhttp, WebAssembly) is read from dist/llhttp_simd.wasm, or dist/llhttp.wasm where
 * SIMD is off (UNDICI_NO_WASM_SIMD=1, ppc64 before Node 24.12), by both bundles that hold undici: the
 * lookup's (dist/lookup.cjs) and the ESM chunks (a batch, through oclif). scripts/build.mjs llhttpFiles.
 */
describe('both bundles parse the answer with the llhttp build the machine picks', () => {
  it.each([
    ['with SIMD, the lookup bundle', '0', ID],
    ['without SIMD, the lookup bundle', '1', ID],
    ['with SIMD, the ESM chunks (a batch)', '0', ['--input', '-', '--no-stats', '--quiet']],
    ['without SIMD, the ESM chunks (a batch)', '1', ['--input', '-', '--no-stats', '--quiet']],
  ])('%s', async (_name, simd, argv) => {
    const r = await sfl(['lookup', ...argv, '-o', 'json'], {
      env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full', UNDICI_NO_WASM_SIMD: simd},
      input: 'fips,property_id\n06067,30000000006\n',
    })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    // the lookup prints the record, the batch an array of rows holding it
    const out: unknown = JSON.parse(r.stdout)
    if (argv.includes('--input'))
      expect(out).toEqual([
        expect.objectContaining({status: 'ok', data: expect.objectContaining({APN: '078-0123-045'})}),
      ])
    else expect(out).toEqual(expect.objectContaining({APN: '078-0123-045'}))
  })
})
