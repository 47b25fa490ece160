import {spawn, type ChildProcess} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {startSandbox, type Sandbox, type SandboxOptions} from '../../src/sandbox/server.js'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const BIN = join(ROOT, 'bin', 'run.js')

/** GET over real HTTP with global fetch (not the CLI's client, so the sandbox is tested on its own). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read into arbitrary JSON bodies
type Json = any

export async function get(
  base: string,
  query: string,
  key?: string,
): Promise<{status: number; headers: Headers; body: Json}> {
  const res = await fetch(`${base}/special-financing${query ? `?${query}` : ''}`, {
    headers: key ? {'x-api-key': key} : {},
  })
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // leave as text
  }
  return {status: res.status, headers: res.headers, body}
}

export async function withSandbox<T>(options: SandboxOptions, fn: (s: Sandbox) => Promise<T>): Promise<T> {
  const s = await startSandbox(options)
  try {
    return await fn(s)
  } finally {
    await s.close()
  }
}

/** Start `sfl sandbox` as a child process on a free port; resolves with its base URL. */
export async function spawnSandbox(
  args: string[],
): Promise<{baseUrl: string; child: ChildProcess; stop: () => Promise<void>}> {
  const child = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /Sandbox listening: (\S+)/.exec(out)
      if (m) resolve(m[1]!)
    })
    child.on('exit', (code) => reject(new Error(`sandbox exited with ${code}: ${out}`)))
  })
  return {
    baseUrl,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGINT')
      }),
  }
}

/** Parse a sandbox --log file. */
export function readLog(
  path: string,
): Array<{status: number; fault: string | null; key: string | null; query: Record<string, string>}> {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l))
}
