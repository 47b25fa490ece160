import {PassThrough} from 'node:stream'

import {describe, expect, it} from 'vitest'

import {readKeyFromStdin, readSecret} from '../../src/keys/prompt.js'

function tty() {
  const input = new PassThrough() as PassThrough & {
    isTTY: boolean
    setRawMode: (on: boolean) => void
    raw: boolean[]
  }
  input.isTTY = true
  input.raw = []
  input.setRawMode = (on: boolean) => void input.raw.push(on)
  const out = new PassThrough()
  let shown = ''
  out.on('data', (d: Buffer) => (shown += d.toString()))
  return {input, out, shown: () => shown}
}

describe('readSecret', () => {
  it('reads a hidden line at a terminal, handling backspace, and echoes nothing of it', async () => {
    const t = tty()
    const p = readSecret(
      'API key: ',
      t.input as unknown as NodeJS.ReadStream,
      t.out as unknown as NodeJS.WriteStream,
    )
    t.input.write('sk_live_abcX\u007fd\r')
    expect(await p).toBe('sk_live_abcd')
    expect(t.shown()).toBe('API key: \n')
    expect(t.input.raw).toEqual([true, false])
  })

  it('is cancelled by Ctrl-C', async () => {
    const t = tty()
    const p = readSecret(
      'API key: ',
      t.input as unknown as NodeJS.ReadStream,
      t.out as unknown as NodeJS.WriteStream,
    )
    t.input.write('abc\u0003')
    await expect(p).rejects.toThrow('cancelled')
  })

  it('reads piped stdin whole and trims it', async () => {
    const input = new PassThrough()
    const p = readSecret('x', input as unknown as NodeJS.ReadStream)
    input.end('  key-from-vault\n')
    expect(await p).toBe('key-from-vault')
  })
})

describe('readKeyFromStdin (--api-key -)', () => {
  it('refuses a terminal and points at keys set and SFL_API_KEY', async () => {
    const {input} = tty()
    await expect(readKeyFromStdin(input as never)).rejects.toThrow(
      /stdin is a terminal.*SFL_API_KEY.*sfl keys set/,
    )
  })

  it('takes the first line, trimmed, without waiting for the pipe to close', async () => {
    const input = new PassThrough() as PassThrough & {isTTY?: boolean}
    const key = readKeyFromStdin(input as never)
    input.write('  sk_live_abc  \nmore')
    await expect(key).resolves.toBe('sk_live_abc')
  })
})
