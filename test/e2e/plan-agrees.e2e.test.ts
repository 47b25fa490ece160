import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import {afterEach, describe, expect, it} from 'vitest'

import {startSandbox} from '../../src/sandbox/server.js'
import {sfl} from '../helpers/cli.js'
import {BIN} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * The plan and the run agree (issue 29): `county-export --dry-run` and the MCP `plan_export` tool read a
 * stopped run's checkpoint through the run's own decoder and header check, so what the run refuses the plan
 * refuses, with the same line. The built CLI against the sandbox (npm run build first).
 */
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function sandboxEnv(): Promise<Record<string, string>> {
  const sb = await startSandbox({port: 0, records: 400})
  cleanups.push(() => sb.close())
  return {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'}
}

/** The files of `dir` and their bytes: what must not change. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, {withFileTypes: true}))
      if (e.isDirectory()) walk(join(d, e.name), `${rel}${e.name}/`)
      else out[`${rel}${e.name}`] = readFileSync(join(d, e.name), 'latin1')
  }
  walk(dir, '')
  return out
}

describe('county-export --dry-run refuses what the run refuses', () => {
  it('after a stopped run, --strict --dry-run is exit 2 with the very line of the --strict run; nothing changes', async () => {
    const env = await sandboxEnv()
    const dir = tempDir()
    const out = join(dir, 'e.csv')
    const args = ['county-export', '--fips', '06067', '--fips', '12086', '--out', out, '--quiet']
    const stopped = await sfl([...args, '--max-requests', '1'], {env})
    expect(stopped.code).toBe(7)
    const before = snapshot(dir)
    expect(Object.keys(before)).toContain('e.csv.sfl-checkpoint')

    const plan = await sfl([...args, '--strict', '--dry-run', '--no-probe'], {env})
    const run = await sfl([...args, '--strict'], {env})
    const line = `Error: the checkpoint ${out}.sfl-checkpoint belongs to a different run (fips 06067,12086; format csv; baseUrl ${env['SFL_BASE_URL']}); rerun with those arguments to finish it, or add --restart to discard it and start over\n`
    expect({code: plan.code, stderr: plan.stderr, stdout: plan.stdout}).toEqual({
      code: 2,
      stderr: line,
      stdout: '',
    })
    expect({code: run.code, stderr: run.stderr}).toEqual({code: 2, stderr: line})
    expect(snapshot(dir)).toEqual(before)

    // the same arguments: the plan reads the checkpoint, as the run continues it
    const same = await sfl([...args, '--dry-run', '--no-probe'], {env})
    expect(same.code).toBe(0)
    expect(same.stdout).toMatch(/^Counties {3}2 asked; 1 already ended in the checkpoint; 1 to fetch$/m)
    expect(snapshot(dir)).toEqual(before)
  })
})

describe('plan_export refuses what the run refuses', () => {
  it('an --out-dir whose checkpoint a --strict run left: a tool error with the run line, nothing changed', async () => {
    const env = await sandboxEnv()
    const dir = tempDir()
    const stopped = await sfl(
      [
        'county-export',
        '--fips',
        '06067',
        '--fips',
        '12086',
        '--out-dir',
        dir,
        '--strict',
        '--quiet',
        '--max-requests',
        '1',
      ],
      {env},
    )
    expect(stopped.code).toBe(7)
    const before = snapshot(dir)
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      env: {SFL_CONFIG_DIR: '/nonexistent/sfl-mcp-test', ...env},
      stderr: 'pipe',
    })
    const client = new Client({name: 'sfl-e2e', version: '1'})
    await client.connect(transport)
    cleanups.push(() => client.close())
    const r = await client.callTool({
      name: 'plan_export',
      arguments: {counties: ['06067', '12086'], out_dir: dir},
    })
    expect(r.isError).toBe(true)
    expect((r.content as Array<{text: string}>).map((c) => c.text).join('\n')).toContain(
      `the checkpoint ${join(dir, '.sfl-checkpoint')} belongs to a different run (fips 06067,12086; format csv; baseUrl ${env['SFL_BASE_URL']}; strict true; layout out-dir); rerun with those arguments to finish it, or add --restart to discard it and start over`,
    )
    expect(snapshot(dir)).toEqual(before)
  })
})
