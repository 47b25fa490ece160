import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it, onTestFinished} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {expectOneErrorLine, leakedRun} from '../hostile/expect.js'
import {startHostileServer, type HostileServer} from '../hostile/server.js'

/**
 * The key is never read from a place that may be echoed (issue 22): not taken from stdin when stdin is
 * also the batch input, and not quoted by a batch input's error message even when a line of the file is the
 * key. Runs the built CLI against a loopback server that records every request.
 */
const KEY = 'sk_live_ECHOED_0123456789abcdefXYZ'
let server: HostileServer
beforeAll(async () => {
  server = await startHostileServer()
})
afterAll(async () => server.close())

function tmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-key-input-'))
  onTestFinished(() => rmSync(dir, {recursive: true, force: true}))
  return dir
}

describe('the key and the batch input never share a source', () => {
  it('`echo KEY | sfl lookup --input - --api-key -` is exit 2 before stdin is read: nothing quoted, nothing sent', async () => {
    const before = server.requests.length
    const r = await sfl(['lookup', '--input', '-', '--api-key', '-', '--fips', '06067'], {
      env: {SFL_BASE_URL: server.baseUrl('ok')},
      input: `${KEY}\n`,
    })
    expectOneErrorLine(
      r,
      2,
      /^Error: --api-key - and --input - both read stdin; pass the key with SFL_API_KEY or `sfl keys set` instead\. Nothing was read$/,
    )
    expect(server.requests.length - before).toBe(0)
    expect(leakedRun(r.stdout + r.stderr, KEY)).toBeUndefined()
  })

  it('the order of the flags does not matter', async () => {
    const r = await sfl(['lookup', '--api-key', '-', '--input', '-'], {
      env: {SFL_BASE_URL: server.baseUrl('ok')},
      input: `${KEY}\n`,
    })
    expect(r.code).toBe(2)
    expect(leakedRun(r.stdout + r.stderr, KEY)).toBeUndefined()
  })
})

describe('a batch input error never quotes a cell that could be the key', () => {
  const cases: Array<[string, (cfg: string) => Record<string, string>]> = [
    ['the key of the config profile', () => ({})],
    ['SFL_API_KEY', () => ({SFL_API_KEY: KEY})],
  ]
  for (const [source, extraEnv] of cases)
    it(`an input whose header line is ${source}: "found:" masks it`, async () => {
      const dir = tmp()
      const cfg = join(dir, 'sfl')
      mkdirSync(cfg, {mode: 0o700})
      writeFileSync(
        join(cfg, 'config.json'),
        JSON.stringify({profiles: {default: {apiKey: KEY, baseUrl: server.baseUrl('ok')}}}),
        {mode: 0o600},
      )
      // a pasted key where the header belongs, and a cut copy of it (the first 14 characters)
      writeFileSync(join(dir, 'in.csv'), `${KEY},${KEY.slice(0, 14)}\n06067,1\n`)
      const before = server.requests.length
      const r = await sfl(['lookup', '--input', join(dir, 'in.csv'), '--fips', '06067'], {
        configDir: cfg,
        env: extraEnv(cfg),
      })
      expectOneErrorLine(
        r,
        2,
        /line 1: no lookup column; expected one of address, apn, property_id \(found: sk_l…, \[redacted\]\)/,
      )
      expect(leakedRun(r.stdout + r.stderr, KEY)).toBeUndefined()
      expect(server.requests.length - before).toBe(0)
    })
})
