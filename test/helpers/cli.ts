import {spawn} from 'node:child_process'

import {BIN} from './sandbox.js'

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Run the built CLI (`bin/run.js`) as a child process, as a user or a CI script would. The environment is
 * cleaned of SFL_* variables and points the config directory at `configDir` (or a throwaway one).
 */
export function sfl(
  args: string[],
  opts: {
    env?: Record<string, string>
    input?: string
    configDir?: string
    /**
     * Where the child's stdout (or stderr) goes instead of a pipe read here: a file descriptor of the test's
     * own (/dev/full opened for writing, a file opened read-only), or 'closed': a pipe whose reading end
     * is closed before the child writes (a reader that went away, `| head`).
     */
    stdout?: number | 'closed'
    stderr?: number
  } = {},
): Promise<CliResult> {
  const env: Record<string, string> = {}
  // colour is the test's choice (opts.env), not the shell's: a FORCE_COLOR of the developer's would colour tables
  const own = (k: string) => k.startsWith('SFL_') || k === 'FORCE_COLOR' || k === 'NO_COLOR'
  for (const [k, v] of Object.entries(process.env)) if (!own(k) && v !== undefined) env[k] = v
  env['SFL_CONFIG_DIR'] = opts.configDir ?? '/nonexistent/sfl-test-config'
  Object.assign(env, opts.env ?? {})
  return new Promise((resolve, reject) => {
    const out = typeof opts.stdout === 'number' ? opts.stdout : 'pipe'
    const child = spawn(process.execPath, [BIN, ...args], {env, stdio: ['pipe', out, opts.stderr ?? 'pipe']})
    let stdout = ''
    let stderr = ''
    if (opts.stdout === 'closed') child.stdout?.destroy()
    else child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({code, stdout, stderr}))
    child.stdin?.end(opts.input ?? '')
  })
}

/**
 * Start the CLI in the background and kill -9 it as soon as `ready()` holds (polled every 10 ms; a throw
 * counts as "not yet"), then wait for it to exit: a crash with no chance to clean up. Then wait for
 * `settled`, the server's signal that it is done with the killed run (its `idle()`: every request the run
 * left in flight answered and logged, every connection closed), before anyone counts the server's requests.
 */
export async function killWhen(
  args: string[],
  env: Record<string, string>,
  ready: () => boolean,
  settled: () => Promise<void>,
): Promise<void> {
  const child = spawn(process.execPath, [BIN, ...args], {env: {...process.env, ...env}, stdio: 'ignore'})
  const exited = new Promise((r) => child.once('exit', r))
  await new Promise<void>((resolve) => {
    const t = setInterval(() => {
      let yes = false
      try {
        yes = ready()
      } catch {
        // not written yet
      }
      if (yes || child.exitCode !== null) {
        clearInterval(t)
        child.kill('SIGKILL')
        resolve()
      }
    }, 10)
  })
  await exited
  await settled()
}
