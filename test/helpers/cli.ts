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
  opts: {env?: Record<string, string>; input?: string; configDir?: string} = {},
): Promise<CliResult> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SFL_') && v !== undefined) env[k] = v
  env['SFL_CONFIG_DIR'] = opts.configDir ?? '/nonexistent/sfl-test-config'
  Object.assign(env, opts.env ?? {})
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {env, stdio: ['pipe', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({code, stdout, stderr}))
    child.stdin.end(opts.input ?? '')
  })
}
