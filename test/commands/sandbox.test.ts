import {describe, expect, it} from 'vitest'

import SandboxCommand from '../../src/commands/sandbox.js'
import {runCommand} from '../helpers/run-command.js'

describe('sandbox command (in-process through oclif)', () => {
  it('prints its base URL and the demo keys, serves, and stops on SIGINT', async () => {
    const running = runCommand(SandboxCommand, ['--port', '0', '--limit', '5'])
    // wait for the server to print, then call it and stop it
    let base: string | undefined
    for (let i = 0; i < 100 && !base; i++) {
      await new Promise((r) => setTimeout(r, 20))
      const handle = process.listeners('SIGINT').length
      if (handle > 0) base = 'ready'
    }
    process.emit('SIGINT')
    const r = await running
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/^Sandbox listening: http:\/\/127\.0\.0\.1:\d+\/v1\n/)
    for (const k of [
      'sandbox-basic',
      'sandbox-assumable',
      'sandbox-condo',
      'sandbox-full',
      'sandbox-restricted',
    ])
      expect(r.stdout).toContain(k)
  })

  it('rejects a fault rate that is not a probability', async () => {
    const r = await runCommand(SandboxCommand, ['--port', '0', '--fail-rate', '1.5'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/--fail-rate must be a probability from 0 to 1/)
  })
})

describe('sandbox command: listen problems are one line', () => {
  it('a port in use is one line and exit 2, not a raw EADDRINUSE', async () => {
    const {createServer} = await import('node:net')
    const busy = createServer()
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()))
    const port = (busy.address() as {port: number}).port
    try {
      const r = await runCommand(SandboxCommand, ['--port', String(port)])
      expect(r.exitCode).toBe(2)
      expect(r.stderr).toContain(`port ${port} on 127.0.0.1 is in use: pick another with --port`)
      expect(r.stderr).not.toMatch(/listen EADDRINUSE/)
    } finally {
      await new Promise((r) => busy.close(r))
    }
  })

  it('--host 0.0.0.0 prints a loopback base URL the CLI accepts', async () => {
    const running = runCommand(SandboxCommand, ['--port', '0', '--host', '0.0.0.0'])
    for (let i = 0; i < 100 && process.listeners('SIGINT').length === 0; i++)
      await new Promise((r) => setTimeout(r, 20))
    process.emit('SIGINT')
    const r = await running
    expect(r.stdout).toMatch(/^Sandbox listening: http:\/\/127\.0\.0\.1:\d+\/v1\n/)
    expect(r.stdout).not.toContain('0.0.0.0:')
  })
})
