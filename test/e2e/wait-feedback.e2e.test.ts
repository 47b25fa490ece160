import {spawn, spawnSync} from 'node:child_process'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {BIN} from '../helpers/sandbox.js'
import {expectOneErrorLine} from '../hostile/expect.js'
import {startHostileServer, type HostileServer} from '../hostile/server.js'

/**
 * The built CLI against a server that hangs: at a pseudo-terminal (util-linux `script` gives the child a
 * real TTY) the status line says what it waits for and how much of --timeout is left; in a pipe nothing but
 * the one error line. The behaviour line by line, on a virtual clock, is test/cli/wait-feedback.test.ts;
 * this checks the wiring (stderr.isTTY, --quiet) with a --timeout of 3 s, the least that shows the line.
 */
const KEY = 'sk_live_WAITING_0123456789abcdef'
const hasScript = spawnSync('script', ['--version']).status === 0
let server: HostileServer
beforeAll(async () => {
  server = await startHostileServer()
})
afterAll(async () => server.close())

const ARGS = ['lookup', '--fips', '06067', '--apn', '1', '--retries', '0', '-o', 'json']

/** Run the CLI at a pseudo-terminal; everything it wrote to the terminal, and its exit code. */
function atTerminal(args: string[]): Promise<{code: number | null; screen: string}> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
  const command = [process.execPath, BIN, ...args].map(quote).join(' ')
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: {
        ...process.env,
        SFL_BASE_URL: server.baseUrl('hang'),
        SFL_API_KEY: KEY,
        SFL_CONFIG_DIR: '/nonexistent/sfl',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let screen = ''
    child.stdout.on('data', (d: Buffer) => (screen += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({code, screen}))
  })
}

describe('a hung service, from the outside', () => {
  it.skipIf(!hasScript)(
    'at a terminal: the status line with the time left of --timeout, then the one error',
    async () => {
      const r = await atTerminal([...ARGS, '--timeout', '3'])
      expect(r.code).toBe(6)
      expect(r.screen).toMatch(
        /sfl: waiting for 127\.0\.0\.1:\d+ to answer \(2 s; 1 s left of --timeout 3 s\)/,
      )
      // the status line is erased before the error, which stands on a line of its own
      const erased = r.screen.lastIndexOf('\r\x1b[2K')
      expect(r.screen.slice(erased + 5)).toMatch(
        /^Error: network failure: no complete answer from 127\.0\.0\.1:\d+ within --timeout 3 s/,
      )
    },
    20_000,
  )

  it.skipIf(!hasScript)(
    'at a terminal with --quiet: only the error',
    async () => {
      const r = await atTerminal([...ARGS, '--timeout', '3', '-q'])
      expect(r.code).toBe(6)
      expect(r.screen).not.toContain('waiting for')
      expect(r.screen).toContain('Error: network failure: no complete answer')
    },
    20_000,
  )

  it('in a pipe: nothing but the one error line', async () => {
    const r = await sfl([...ARGS, '--timeout', '3'], {
      env: {SFL_BASE_URL: server.baseUrl('hang'), SFL_API_KEY: KEY},
    })
    expectOneErrorLine(r, 6, /no complete answer from 127\.0\.0\.1:\d+ within --timeout 3 s/)
  }, 20_000)
})
