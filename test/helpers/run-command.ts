import {Config} from '@oclif/core'
import {vi} from 'vitest'

import {ROOT} from './sandbox.js'

let config: Config | undefined

export interface Captured {
  stdout: string
  stderr: string
  exitCode: number
  /** What the command's run returned (its typed result: a summary, a document); undefined when it threw. */
  result?: unknown
}

/**
 * Run a command class in-process through oclif's Command.run (the command imported from src, so coverage
 * sees it), capturing stdout, stderr and the exit code the command set.
 */
export async function runCommand(
  cmd: {run(argv?: string[], opts?: Config): Promise<unknown>},
  argv: string[],
  env: Record<string, string | undefined> = {},
): Promise<Captured> {
  const loaded = (config ??= await Config.load({root: ROOT}))
  return captureRun(
    () => cmd.run(argv, loaded),
    env,
    (error) => {
      const e = error as {oclif?: {exit?: number}; message: string}
      process.exitCode = e.oclif?.exit ?? 1
      return `${e.message}\n`
    },
  )
}

/**
 * Run `fn` in-process with `env` as the only SFL_* variables (SFL_CONFIG_DIR a folder that does not exist
 * unless given), capturing stdout, stderr, the exit code it set and what it returned. A throw is `thrown`'s
 * to turn into stderr text and an exit code (default: rethrown).
 */
export async function captureRun(
  fn: () => Promise<unknown>,
  env: Record<string, string | undefined> = {},
  thrown: (error: unknown) => string = (error) => {
    throw error
  },
): Promise<Captured> {
  const saved: Record<string, string | undefined> = {}
  for (const k of Object.keys(process.env)) if (k.startsWith('SFL_')) saved[k] = process.env[k]
  for (const k of Object.keys(saved)) delete process.env[k]
  for (const [k, v] of Object.entries({SFL_CONFIG_DIR: '/nonexistent/sfl-test-config', ...env}))
    if (v !== undefined) process.env[k] = v
  let stdout = ''
  let stderr = ''
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += chunk.toString()
    return true
  })
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += chunk.toString()
    return true
  })
  process.exitCode = undefined
  let result: unknown
  try {
    result = await fn()
  } catch (error) {
    stderr += thrown(error)
  } finally {
    out.mockRestore()
    err.mockRestore()
    for (const k of Object.keys(process.env)) if (k.startsWith('SFL_')) delete process.env[k]
    Object.assign(process.env, saved)
  }
  const exitCode = Number(process.exitCode ?? 0)
  process.exitCode = undefined
  return {stdout, stderr, exitCode, result}
}
