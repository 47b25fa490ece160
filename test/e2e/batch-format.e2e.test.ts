import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {readLog} from '../helpers/sandbox.js'
import type {Sandbox} from '../../src/sandbox/server.js'
import {startSandbox} from '../../src/sandbox/server.js'

/**
 * `lookup --input` writes the format its --out names (issue 22), JSON when piped, and its problem lines
 * with --quiet too. Against the sandbox, whose request log proves what was (not) sent.
 */
let sb: Sandbox
let dir: string
let log: string
const INPUT = 'fips,property_id,address\n06067,30000000006,\n06067,,\n'
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sfl-batch-format-'))
  log = join(dir, 'log.ndjson')
  writeFileSync(log, '')
  writeFileSync(join(dir, 'in.csv'), INPUT)
  sb = await startSandbox({port: 0, log})
})
afterAll(async () => {
  await sb.close()
  rmSync(dir, {recursive: true, force: true})
})
const env = () => ({SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'})
const run = (extra: string[], input?: string) =>
  sfl(['lookup', '--input', input === undefined ? join(dir, 'in.csv') : '-', ...extra], {
    env: env(),
    ...(input === undefined ? {} : {input}),
  })

describe("the format from --out's extension", () => {
  it('--out res.json writes a JSON array', async () => {
    const out = join(dir, 'res.json')
    const r = await run(['--out', out, '-q'])
    expect(r.code).toBe(7) // the row without a lookup is invalid
    const rows = JSON.parse(readFileSync(out, 'utf8')) as Array<{status: string}>
    expect(rows.map((x) => x.status)).toEqual(['ok', 'invalid'])
  })

  it('--out res.ndjson writes one JSON object a line', async () => {
    const out = join(dir, 'res.ndjson')
    await run(['--out', out, '-q'])
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n')
    expect(lines.map((l) => (JSON.parse(l) as {status: string}).status)).toEqual(['ok', 'invalid'])
  })

  it('--out res.csv writes CSV', async () => {
    const out = join(dir, 'res.csv')
    await run(['--out', out, '-q'])
    expect(readFileSync(out, 'utf8').split('\r\n')[0]).toMatch(
      /^fips,property_id,address,sfl_row,status,error,note,source,records,other_ids,sfl_Fips,/,
    )
  })

  it('--out res.json -o csv is exit 2 before anything is read or sent', async () => {
    const before = readLog(log).length
    const out = join(dir, 'clash.json')
    const r = await run(['--out', out, '-o', 'csv'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(
      `Error: --out ${out} names a JSON file but --output is csv; drop --output (the extension decides) or make them agree\n`,
    )
    expect(readLog(log).length - before).toBe(0)
  })
})

describe('stdout and --quiet', () => {
  it('`... | sfl lookup --input -` writes JSON when stdout is not a terminal, as the help says', async () => {
    const r = await run(['-q'], INPUT)
    const rows = JSON.parse(r.stdout) as Array<{status: string; fips: string}>
    expect(rows.map((x) => [x.fips, x.status])).toEqual([
      ['06067', 'ok'],
      ['06067', 'invalid'],
    ])
  })

  it('`-q` still prints the problem lines behind exit 7 (only progress and notices go)', async () => {
    const r = await run(['-q', '-o', 'ndjson'])
    expect(r.code).toBe(7)
    expect(r.stderr).toBe(
      '  1 row invalid: a lookup rule is broken, so nothing was sent for them; see the status and error columns of the output\n',
    )
  })

  it('without -q the same line follows the summary', async () => {
    const r = await run(['-o', 'ndjson', '--no-stats'])
    expect(r.stderr).toMatch(/2 rows \(1 ok, 1 invalid\).*\n {2}1 row invalid: a lookup rule is broken/)
  })
})
