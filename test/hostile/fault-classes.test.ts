import {spawn, spawnSync} from 'node:child_process'
import {readdirSync, writeFileSync} from 'node:fs'
import {createServer, type Server, type Socket} from 'node:net'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {BIN, withSandbox} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'
import {expectOneErrorLine} from './expect.js'

/**
 * Every fault has its class on every path (README "Exit codes"): a body cut mid-chunk is a network failure
 * (retried, then exit 6), a config folder that cannot be made is exit 8 naming it, the machine's limits
 * are one line with exit 8, and a reset sent in milliseconds is read as one. Each against a loopback
 * server written here, on the built CLI (npm run build first).
 */
const KEY = 'sk_live_FAULTS_0123456789abcdef'
const LOOKUP = ['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json']

/** A raw HTTP/1.1 server: each request gets `answer(socket)`; the requests are counted. */
interface RawServer {
  baseUrl: string
  requests: number
  close(): Promise<void>
}
const servers: RawServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close()
})

async function rawServer(answer: (socket: Socket) => void): Promise<RawServer> {
  const sockets = new Set<Socket>()
  const state = {requests: 0}
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
    let head = ''
    socket.on('data', (d: Buffer) => {
      head += d.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      head = ''
      state.requests++
      answer(socket)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  const s: RawServer = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests
    },
    close: () =>
      new Promise<void>((r) => {
        for (const k of sockets) k.destroy()
        server.close(() => r())
      }),
  }
  servers.push(s)
  return s
}

/**
 * A 200 with a chunked body whose first chunk announces 200 more bytes than it sends; the connection is
 * then destroyed, mid-chunk. With `Connection: close`, undici's parser reports "Invalid EOF state".
 */
function cutMidChunk(body: string): (socket: Socket) => void {
  return (socket) => {
    socket.write(
      'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n' +
        'x-ratelimit-limit: 1000\r\nx-ratelimit-remaining: 900\r\n\r\n',
    )
    socket.write(`${(body.length + 200).toString(16)}\r\n${body}`, () => socket.destroy())
  }
}

describe('a chunked body cut mid-chunk is a network failure: retried, then exit 6', () => {
  it('lookup: two requests with --retries 1, one line, nothing on stdout', async () => {
    const server = await rawServer(cutMidChunk('{"status":"success","data":{"ServicePropertyID":3000'))
    const r = await sfl([...LOOKUP, '--retries', '1'], {
      env: {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: KEY},
    })
    expectOneErrorLine(
      r,
      6,
      /^Error: network failure: the connection to 127\.0\.0\.1:\d+ closed in the middle of the response body \(a chunk was cut short\) \(gave up after 1 retries\)$/,
    )
    expect(r.stdout).toBe('')
    expect(server.requests).toBe(2)
  }, 30_000)

  it('county-export: the county fails as a network failure after its retry, exit 6; no output file, the checkpoint kept', async () => {
    const server = await rawServer(cutMidChunk('{"status":"success","data":[{"ServicePropertyID":3000'))
    const dir = tempDir()
    const out = join(dir, 'e.csv')
    const r = await sfl(['county-export', '--fips', '06067', '--out', out, '--retries', '1'], {
      env: {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: KEY},
    })
    expect(r.code).toBe(6)
    expect(r.stderr).toMatch(
      /\n {2}failed 06067: network failure: the connection to 127\.0\.0\.1:\d+ closed in the middle of the response body \(a chunk was cut short\) \(gave up after 1 retries\)\n/,
    )
    expect(r.stderr).not.toMatch(/unexpected|HTTP\/1\.1 protocol|\n\s+at /)
    expect(r.stdout).toBe('')
    expect(server.requests).toBe(2)
    expect(readdirSync(dir).sort()).toEqual(['e.csv.sfl-checkpoint', 'e.csv.sfl-parts'])
  }, 30_000)
})

describe("an answer undici's parser refuses is a broken answer: exit 6, one line, not retried", () => {
  it.each([
    [
      'a status line that is not one',
      'HTTP/1.1 2x0 OK\r\ncontent-length: 2\r\n\r\n{}',
      /sent an HTTP answer sfl cannot read \(Invalid status code\)/,
    ],
    [
      'a chunk size that is not hexadecimal',
      'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      /sent a response body sfl cannot read \(Invalid character in chunk size\)/,
    ],
  ])('%s', async (_name, answer, message) => {
    const server = await rawServer((socket) => socket.end(answer))
    const r = await sfl([...LOOKUP, '--retries', '1'], {
      env: {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: KEY},
    })
    expectOneErrorLine(r, 6, message)
    expect(r.stdout).toBe('')
    expect(server.requests).toBe(1)
  })
})

describe('a config folder that cannot be made is exit 8, naming the folder', () => {
  it('a missing home folder is not created: exit 8, nothing made', async () => {
    const base = tempDir()
    const home = join(base, 'gone', 'home')
    const env = {HOME: home, XDG_CONFIG_HOME: ''}
    const r = await sfl(['keys', 'set', '--base-url', 'https://api.example.com/v1'], {
      env,
      input: `${KEY}\n`,
      configDir: '',
    })
    expectOneErrorLine(
      r,
      8,
      new RegExp(
        `^Error: cannot save the config: the folder ${home} does not exist \\(sfl makes the config folder and the one holding it, never a home folder\\); create it, or set SFL_CONFIG_DIR to a folder of yours$`,
      ),
    )
    expect(r.stderr).not.toContain(KEY)
    expect(readdirSync(base)).toEqual([])
  })

  it('a home folder on a read-only file system: exit 8 with EROFS and the folder, not ENOENT', async (ctx) => {
    const home = tempDir()
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k', 'tmpfs', home]).status !== 0)
      return ctx.skip('needs root to mount a read-only tmpfs')
    try {
      const r = await sfl(['keys', 'set', '--base-url', 'https://api.example.com/v1'], {
        env: {HOME: home, XDG_CONFIG_HOME: ''},
        input: `${KEY}\n`,
        configDir: '',
      })
      expectOneErrorLine(
        r,
        8,
        new RegExp(
          `^Error: read-only file system \\(EROFS\\) while creating the folder that holds the config folder ${home}/\\.config; write to a writable folder \\(SFL_CONFIG_DIR sets where sfl keeps its config\\)$`,
        ),
      )
      expect(readdirSync(home)).toEqual([])
    } finally {
      spawnSync('umount', [home])
    }
  })
})

describe('the machine limits are one line with exit 8, never a stack trace', () => {
  /**
   * Run the built CLI under `ulimit -n <fds>` (a shell sets the limit for the process it execs); not with
   * spawnSync, which would block the in-process sandbox the export asks.
   */
  const limited = (fds: number, args: string[], env: Record<string, string> = {}) =>
    new Promise<{code: number | null; stdout: string; stderr: string}>((resolve, reject) => {
      const child = spawn(
        'sh',
        ['-c', `ulimit -n ${fds} && exec "$0" "$@"`, process.execPath, BIN, ...args],
        {
          env: {...process.env, SFL_CONFIG_DIR: '/nonexistent/sfl-test-config', ...env},
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
      child.on('error', reject)
      child.on('close', (code) => resolve({code, stdout, stderr}))
    })
  const EMFILE =
    /^Error: too many open files \(EMFILE\) while opening \S+; raise the limit of open files \(`ulimit -n 1024`\) and run again$/
  const EMFILE_ANYWHERE =
    /^Error: too many open files \(EMFILE\) while [^;]+; raise the limit of open files \(`ulimit -n 1024`\) and run again$/

  // Which module load meets the limit first depends on the limit (sfl's entry, then oclif's loading of a
  // command, then the command's own chunks, then a file the run opens): each limit below fails in one of
  // those places or succeeds, and every failure must be the one line. Node 22 and later cannot start with
  // fewer than 22 descriptors at all (its own threads fail: a segmentation fault before any of sfl runs),
  // so there the limits start at 22
  const NODE_20 = Number(process.versions.node.split('.')[0]) < 22
  const limits = (from20: number[]) => (NODE_20 ? from20 : from20.filter((n) => n >= 22))
  it('sfl stats with 20 to 28 file descriptors: exit 8 and one line, or the statistics; nothing else', async () => {
    const dir = tempDir()
    const file = join(dir, 'e.csv')
    writeFileSync(file, 'ServicePropertyID,Fips\n30000000006,06067\n')
    const failed: number[] = []
    for (const fds of limits([20, 22, 24, 26, 28])) {
      const r = await limited(fds, ['stats', file, '--json'])
      if (r.code === 0) {
        expect(JSON.parse(r.stdout).run.records).toBe(1)
        continue
      }
      failed.push(fds)
      expectOneErrorLine(r, 8, EMFILE)
      expect(r.stdout).toBe('')
    }
    // Node 20 loads more chunks at once than 20 descriptors allow (later versions, fewer)
    if (NODE_20) expect(failed).toContain(20)
    expect(readdirSync(dir)).toEqual(['e.csv'])
  })

  it('county-export with 20 to 36 file descriptors: exit 8 with one error line and no output written, or the export', async () => {
    await withSandbox({records: 50}, async (sb) => {
      const failed: number[] = []
      for (const fds of limits([20, 22, 24, 26, 32, 36])) {
        const dir = tempDir()
        const out = join(dir, 'e.csv')
        const r = await limited(fds, ['county-export', '--fips', '06067', '--out', out, '--quiet'], {
          SFL_BASE_URL: sb.baseUrl,
          SFL_API_KEY: 'sandbox-basic',
        })
        if (r.code === 0) {
          expect(readdirSync(dir)).toEqual(['e.csv'])
          continue
        }
        failed.push(fds)
        // at start-up (Node 20) one line and nothing made; later (Node 24: importing undici, writing a part
        // file) the run stops as on a full disk: the summary, the one error line, the checkpoint kept
        expect(r.code, r.stderr).toBe(8)
        expect(r.stderr).not.toMatch(/\n\s+at |node:internal|Unhandled|unexpected failure/)
        const errors = r.stderr.split('\n').filter((l) => l.startsWith('Error: '))
        expect(errors, r.stderr).toHaveLength(1)
        expect(errors[0]).toMatch(EMFILE_ANYWHERE)
        expect(readdirSync(dir).filter((f) => !/^e\.csv\.sfl-(checkpoint|parts)$/.test(f))).toEqual([])
      }
      expect(failed.length).toBeGreaterThan(0)
    })
  }, 60_000)
})

describe('a reset the service sends in milliseconds', () => {
  /** A 429 whose X-RateLimit-Reset is `reset` (as sent) with no Retry-After. */
  const limitedBy = (reset: string) => (socket: Socket) => {
    const body = '{"status":"error","code":429,"message":"Rate limit exceeded."}'
    socket.end(
      `HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n` +
        `x-ratelimit-limit: 1000\r\nx-ratelimit-remaining: 0\r\nx-ratelimit-reset: ${reset}\r\nconnection: close\r\n\r\n${body}`,
    )
  }

  it('two hours ahead in milliseconds is read as two hours (beyond --max-wait 60: exit 5 at once)', async () => {
    const server = await rawServer(limitedBy(String(Date.now() + 2 * 3600_000)))
    const r = await sfl(LOOKUP, {env: {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: KEY}})
    expectOneErrorLine(r, 5, /the key's budget returns in 7[12]\d\d s, longer than --max-wait 60 s/)
    expect(server.requests).toBe(1)
  })

  it('neither seconds nor milliseconds within 400 days: never announced as a wait; the 429 is backed off instead', async () => {
    const server = await rawServer(limitedBy('1793893735937999'))
    // --max-wait 0: the first backoff (a second) is already too long, so one request tells the decision
    const r = await sfl([...LOOKUP, '--max-wait', '0'], {
      env: {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: KEY},
    })
    expectOneErrorLine(
      r,
      5,
      // the backoff's seconds and the clock time they end (issue 31's next step), never the 1.8e15 sent
      /the key's budget returns in \d s, longer than --max-wait 0 s \(the service answered 429\): at \d\d:\d\d:\d\d on this machine's clock; run again then, or allow the wait with --max-wait \d+$/,
    )
    expect(r.stderr).not.toMatch(/1793893735937|\d{7,} s/)
    expect(server.requests).toBe(1)
  })
})
