import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import {afterEach, describe, expect, it} from 'vitest'

import {startSandbox, type SandboxOptions} from '../../src/sandbox/server.js'
import {sfl} from '../helpers/cli.js'
import {startHangingServer} from '../helpers/hanging-server.js'
import {BIN} from '../helpers/sandbox.js'

/**
 * `sfl mcp` as an assistant runs it: the built CLI spawned by the MCP SDK's own client over stdio, its key
 * and base URL from sfl's configuration (a profile, the environment, --sandbox). Every result and every
 * stderr line is searched for the key, whole and in any 8-character run.
 */
const KEY = 'sandbox-full'
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

interface Session {
  client: Client
  /** Every result the server sent, as JSON text. */
  seen: string[]
  stderr: () => string
  /** Errors the client met reading stdout (a line that is not the protocol). */
  clientErrors: Error[]
  call: (
    name: string,
    args: Record<string, unknown>,
  ) => Promise<{text: string; isError: boolean; structured: Record<string, unknown>}>
}

async function sandbox(options: SandboxOptions = {}): Promise<string> {
  const sb = await startSandbox({port: 0, ...options})
  cleanups.push(() => sb.close())
  return sb.baseUrl
}

/** A config folder with profile `default` holding the key and base URL, as `sfl keys set` writes it. */
function profileWith(baseUrl: string, key: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-mcp-config-'))
  cleanups.push(() => rmSync(dir, {recursive: true, force: true}))
  writeFileSync(join(dir, 'config.json'), JSON.stringify({profiles: {default: {baseUrl, apiKey: key}}}), {
    mode: 0o600,
  })
  return dir
}

async function connect(args: string[], env: Record<string, string>): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    // the SDK passes only HOME, PATH and a few more of the test's environment, and these
    env: {SFL_CONFIG_DIR: '/nonexistent/sfl-mcp-test', ...env},
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  const client = new Client({name: 'sfl-e2e', version: '1'})
  const clientErrors: Error[] = []
  client.onerror = (e) => clientErrors.push(e)
  await client.connect(transport)
  cleanups.push(() => client.close())
  const seen: string[] = []
  const call: Session['call'] = async (name, a) => {
    const r = await client.callTool({name, arguments: a})
    seen.push(JSON.stringify(r))
    return {
      text: (r.content as Array<{text: string}>).map((c) => c.text).join('\n'),
      isError: r.isError === true,
      structured: r.structuredContent as Record<string, unknown>,
    }
  }
  return {client, seen, stderr: () => stderr, clientErrors, call}
}

/** The key, whole or any 8 consecutive characters of it, in any case. */
function expectNoKey(text: string, key: string): void {
  const lower = text.toLowerCase()
  for (let i = 0; i + 8 <= key.length; i++) expect(lower).not.toContain(key.slice(i, i + 8).toLowerCase())
}

describe('sfl mcp over stdio', () => {
  it('serves every tool with the key from a profile, and the key is in no result and no stderr line', async () => {
    const baseUrl = await sandbox()
    const s = await connect(['--debug'], {SFL_CONFIG_DIR: profileWith(baseUrl, KEY), SFL_PROFILE: 'default'})
    const {tools} = await s.client.listTools()
    s.seen.push(JSON.stringify(tools))
    expect(tools.map((t) => t.name).sort()).toEqual([
      'check_key',
      'export_statistics',
      'find_counties',
      'lookup_property',
      'plan_export',
    ])
    for (const t of tools) expect(Object.keys(t.inputSchema.properties ?? {}).length).toBeGreaterThan(0)

    const found = await s.call('lookup_property', {
      county: '06067',
      address: '3526 High St, Sacramento, CA 95838',
    })
    expect(found.isError).toBe(false)
    expect((found.structured['record'] as {ServicePropertyID: number}).ServicePropertyID).toBe(30000000006)
    expect((found.structured['verdicts'] as Array<{program: string; outcome: string}>)[0]).toMatchObject({
      program: 'FHA',
      outcome: 'eligible',
    })
    expect(found.text).toContain(
      "FHA: Yes: the value $532,000 is within the county's FHA loan limit of $667,000",
    )

    expect((await s.call('find_counties', {query: 'Sacramento, CA'})).structured['matches']).toEqual([
      {fips: '06067', state: 'CA', name: 'Sacramento County'},
    ])
    const key = await s.call('check_key', {counties: ['06067']})
    expect(key.structured).toMatchObject({valid: true, counties: {'06067': 'permitted'}})
    expect(key.structured['keyFrom']).toMatch(/^profile default in .*config\.json$/)
    const plan = await s.call('plan_export', {states: ['CA']})
    expect(plan.structured).toMatchObject({
      counties: 58,
      probeRequests: 1,
      command: 'sfl county-export --state CA --out-dir exports',
    })

    const dir = mkdtempSync(join(tmpdir(), 'sfl-mcp-e2e-'))
    cleanups.push(() => rmSync(dir, {recursive: true, force: true}))
    const out = join(dir, 'sac.csv')
    const exported = await sfl(['county-export', '--fips', '06067', '--out', out, '--quiet'], {
      env: {SFL_BASE_URL: baseUrl, SFL_API_KEY: KEY},
    })
    expect(exported.code).toBe(0)
    const stats = await s.call('export_statistics', {path: out})
    expect(stats.isError).toBe(false)
    expect((stats.structured['run'] as {records: number}).records).toBeGreaterThan(0)

    expect(s.clientErrors).toEqual([])
    // --debug logs each request on stderr, the key masked to its first 4 characters
    expect(s.stderr()).toContain('[debug]')
    for (const text of [...s.seen, s.stderr()]) expectNoKey(text, KEY)
  })

  it('bad inputs are tool errors with the CLI message, and the server goes on serving', async () => {
    const baseUrl = await sandbox()
    const s = await connect([], {SFL_BASE_URL: baseUrl, SFL_API_KEY: KEY})
    const cli = await sfl(['lookup', '--fips', '6067', '--address', '3526 High St'], {
      env: {SFL_BASE_URL: baseUrl, SFL_API_KEY: KEY},
    })
    expect(cli.code).toBe(2)
    const fips = await s.call('lookup_property', {county: '6067', address: '3526 High St'})
    expect(fips.isError).toBe(true)
    // the CLI's sentence, naming the tool's parameter where the CLI names its flag
    expect(`Error: ${fips.text.replace(/^county /, '--fips ')}\n`).toBe(cli.stderr)

    const several = await s.call('lookup_property', {county: 'Washington', address: '1 Main St'})
    expect(several.isError).toBe(true)
    expect(several.text).toMatch(/^county "Washington": "Washington" names \d+ counties; say which/)
    const none = await s.call('lookup_property', {county: '06067'})
    expect(none).toMatchObject({
      isError: true,
      text: 'give exactly one of address, apn or property_id; none was given',
    })
    const unknown = await s.call('lookup_property', {
      county: '06067',
      apn: '1',
      base_url: 'http://evil.example/v1',
    })
    expect(unknown.isError).toBe(true)
    expect(unknown.text).toContain('Unrecognized key: "base_url"')

    const ok = await s.call('lookup_property', {county: 'Sacramento, CA', property_id: '30000000006'})
    expect(ok.isError).toBe(false)
    expect(s.clientErrors).toEqual([])
  })

  it('a spent budget is a tool error that says when it returns, at once', async () => {
    // one request a day, the day counted from now (so it cannot turn mid-test at midnight): the first
    // lookup spends it, and the budget returns a day later
    const origin = Math.floor(Date.now() / 1000) * 1000
    const baseUrl = await sandbox({limit: 1, windowSeconds: 86_400, windowOrigin: origin})
    const s = await connect([], {SFL_BASE_URL: baseUrl, SFL_API_KEY: KEY})
    expect((await s.call('lookup_property', {county: '06067', property_id: '30000000006'})).isError).toBe(
      false,
    )
    const spent = await s.call('lookup_property', {county: '06067', property_id: '30000000007'})
    expect(spent.isError).toBe(true)
    expect(spent.text).toMatch(
      /^rate limit: the key's budget returns in \d+ s, longer than this server waits \(10 s\); the budget returns at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    )
    const at = Date.parse(/returns at (\S+)$/.exec(spent.text)![1]!)
    expect(Math.abs(at - (origin + 86_400_000))).toBeLessThanOrEqual(2000)
    const key = await s.call('check_key', {counties: ['06067']})
    expect(key.structured).toMatchObject({valid: true, windowSpent: true})
    for (const text of [...s.seen, s.stderr()]) expectNoKey(text, KEY)
  })

  it('an invalid key from the environment is reported, never shown', async () => {
    const bad = 'sk_live_MCPLEAKCHECK_7f3e91'
    const baseUrl = await sandbox()
    const s = await connect([], {SFL_BASE_URL: baseUrl, SFL_API_KEY: bad})
    const key = await s.call('check_key', {counties: ['06067']})
    expect(key.structured).toMatchObject({valid: false, keyFrom: 'SFL_API_KEY'})
    const lookup = await s.call('lookup_property', {county: '06067', property_id: '30000000006'})
    expect(lookup.isError).toBe(true)
    expect(lookup.text).toContain(
      'It came from SFL_API_KEY: the person must set a valid key (SFL_API_KEY, or `sfl keys set`) and restart the server',
    )
    expect(lookup.text).not.toContain('--')
    for (const text of [...s.seen, s.stderr()]) expectNoKey(text, bad)
  })

  it('--sandbox serves the embedded sandbox, its key masked in the notice', async () => {
    const s = await connect(['--sandbox'], {})
    const r = await s.call('lookup_property', {
      county: '06067',
      address: '3526 High St, Sacramento, CA 95838',
    })
    expect((r.structured['record'] as {ServicePropertyID: number}).ServicePropertyID).toBe(30000000006)
    expect(s.stderr()).toMatch(/using the embedded sandbox at http:\/\/127\.0\.0\.1:\d+\/v1/)
    for (const text of [...s.seen, s.stderr()]) expectNoKey(text, KEY)
  })

  it('writes only protocol lines on stdout and exits 0 when stdin ends', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', '--sandbox'], {
      env: {...process.env, SFL_CONFIG_DIR: '/nonexistent/sfl-mcp-test'},
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.resume()
    const lines = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: 'raw', version: '1'}},
      },
      {jsonrpc: '2.0', method: 'notifications/initialized'},
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {name: 'find_counties', arguments: {query: 'Yolo'}},
      },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: {name: 'lookup_property', arguments: {county: '06067'}},
      },
    ]
    const answered = new Promise<void>((resolve) =>
      child.stdout.on('data', () => stdout.includes('"id":2') && stdout.includes('"id":3') && resolve()),
    )
    child.stdin.write(lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
    await answered
    child.stdin.end()
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    expect(code).toBe(0)
    const messages = stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as {jsonrpc: string; id: number})
    // the two calls run at once: their answers may come in either order
    expect(messages.map((m) => [m.jsonrpc, m.id]).sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual([
      ['2.0', 1],
      ['2.0', 2],
      ['2.0', 3],
    ])
  })

  it('refuses --api-key - (stdin is the protocol) with exit 2', async () => {
    const r = await sfl(['mcp', '--api-key', '-', '--base-url', 'http://127.0.0.1:9/v1'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain(
      'sfl mcp reads the MCP protocol on stdin, so --api-key - cannot read a key from it',
    )
  })

  // the request timeout is 60 s, the call's deadline 45 s, and the test allows 15: only the end of stdin
  // can end the process in time
  it('a client that closes stdin mid-call: the call is dropped and the process is gone, exit 0', async () => {
    const server = await startHangingServer()
    cleanups.push(() => server.close())
    const child = spawn(process.execPath, [BIN, 'mcp', '--timeout', '60'], {
      env: {
        ...process.env,
        SFL_CONFIG_DIR: '/nonexistent/sfl-mcp-test',
        SFL_BASE_URL: server.baseUrl,
        SFL_API_KEY: KEY,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    child.stdout.resume()
    child.stderr.resume()
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`)
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: 'raw', version: '1'}},
    })
    send({jsonrpc: '2.0', method: 'notifications/initialized'})
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {name: 'lookup_property', arguments: {county: '06067', apn: '1'}},
    })
    await server.arrived(1)
    child.stdin.end()
    expect(await exited).toBe(0)
    await server.closed(1)
    expect(server.requests).toHaveLength(1)
  }, 15_000)

  it('without a configuration it starts, says once on stderr what to set, and find_counties works', async () => {
    const s = await connect([], {})
    const counties = await s.call('find_counties', {query: 'Yolo, CA'})
    expect(counties).toMatchObject({isError: false, text: 'Yolo County, CA (06113)'})
    const lookup = await s.call('lookup_property', {county: '06067', apn: '1'})
    expect(lookup.isError).toBe(true)
    expect(lookup.text).toBe(
      'sfl is not configured to call the Special Financing Lookup Service (no service base URL). The person must set SFL_BASE_URL and SFL_API_KEY in the environment sfl mcp is started with, or store both with `sfl keys set` (profile "default"; SFL_PROFILE picks another), then restart the server. find_counties works without it',
    )
    expect((await s.call('check_key', {})).text).toBe(lookup.text)
    const said = s
      .stderr()
      .split('\n')
      .filter((l) => l.includes('is not configured'))
    expect(said).toHaveLength(1)
    expect(said[0]).toMatch(/^Warning: sfl mcp: serving on stdio without the service: sfl is not configured/)
    expect(s.clientErrors).toEqual([])
  })

  it('--help gives the defaults the tools use: 10 s of waiting, 45 s a call', async () => {
    const r = await sfl(['mcp', '--help'])
    expect(r.code).toBe(0)
    const help = r.stdout.replace(/\s+/g, ' ')
    expect(help).toContain('before the tool says when the budget returns instead [default: 10]')
    expect(help).toContain('[default: 30; a tool call ends within 45 s in all]')
    expect(help).toContain('Every tool call ends within 45 s (below the 60 s MCP clients wait)')
    expect(help).not.toContain('[default: 60')
  })
})
