import {describe, expect, it} from 'vitest'

import {GatheredTarget} from '../../src/io/gathered-target.js'
import {MemoryTarget} from './memory-target.js'

/** Short lines gathered into writes of 64 KiB, with the target's rules (backpressure, commit, abort) kept. */

const line = (i: number) => `row ${i},${'x'.repeat(90)}\r\n`

describe('GatheredTarget', () => {
  it('passes 4,000 short lines on in a few writes of about 64 KiB, in order, byte for byte', async () => {
    const inner = new MemoryTarget()
    const t = new GatheredTarget(inner)
    const lines = Array.from({length: 4000}, (_, i) => line(i))
    for (const l of lines) expect(t.write(l)).toBe(true)
    expect(inner.chunks.length).toBeLessThan(lines.length / 100)
    for (const c of inner.chunks) expect(c.length).toBeGreaterThanOrEqual(64 * 1024)
    await t.commit()
    expect(inner.committed).toBe(true)
    expect(inner.bytes.toString('utf8')).toBe(lines.join(''))
  })

  it('writes what it holds before a Buffer, so texts and bytes keep their order', async () => {
    const inner = new MemoryTarget()
    const t = new GatheredTarget(inner)
    t.write('a,b\r\n')
    t.write(Buffer.from('c,d\r\n'))
    t.write('é,f\r\n')
    await t.commit()
    expect(inner.bytes.toString('utf8')).toBe('a,b\r\nc,d\r\né,f\r\n')
  })

  it('answers false when the inner target asks to drain, and a drained run writes every line', async () => {
    const inner = new MemoryTarget(100 * 1024)
    const t = new GatheredTarget(inner)
    const lines = Array.from({length: 6000}, (_, i) => line(i))
    let falses = 0
    for (const l of lines)
      if (!t.write(l)) {
        falses++
        await t.drain()
      }
    await t.commit()
    expect(falses).toBeGreaterThan(0)
    expect(inner.drains).toBe(falses)
    expect(inner.bytes.toString('utf8')).toBe(lines.join(''))
  })

  it('drops what it holds on abort and aborts the inner target, which gets nothing of it', async () => {
    const inner = new MemoryTarget()
    const t = new GatheredTarget(inner)
    t.write('held,row\r\n')
    await t.abort()
    expect(inner.aborted).toBe(true)
    expect(inner.committed).toBe(false)
    expect(inner.chunks).toEqual([])
  })
})
