import {describe, expect, it} from 'vitest'

import {ENTRY_WORDS} from '../../src/changes/entries.js'
import {EMPTY, IdTable} from '../../src/changes/id-table.js'

/** Entries with the given keys (the other words do not matter to the table). */
function entries(keys: Array<[number, number]>): Uint32Array {
  const e = new Uint32Array(keys.length * ENTRY_WORDS)
  keys.forEach(([a, b], i) => {
    e[i * ENTRY_WORDS] = a
    e[i * ENTRY_WORDS + 1] = b
  })
  return e
}

describe('IdTable', () => {
  it('finds previous and current entries by their 64-bit key, apart even when the first lanes agree', () => {
    // every key lands on the same first slot (same low bits): probing must compare both lanes
    const prev = entries([
      [0x10000, 1],
      [0x10000, 2],
      [0x20000, 1],
    ])
    const cur = entries([
      [0x10000, 3],
      [0x10000, 2],
    ])
    const t = new IdTable(prev, cur, 5)
    for (let i = 0; i < 3; i++) {
      expect(t.get(prev[i * ENTRY_WORDS]!, prev[i * ENTRY_WORDS + 1]!)).toBe(EMPTY)
      t.put(i)
    }
    expect(t.get(0x10000, 3)).toBe(EMPTY)
    t.put(-2) // current entry 0 (j as -j - 2)
    expect(t.get(0x10000, 2)).toBe(1)
    expect(t.get(0x20000, 1)).toBe(2)
    expect(t.get(0x10000, 3)).toBe(-2)
    expect(t.get(0x30000, 3)).toBe(EMPTY)
    // unsigned lanes: a key past 2^31 is found as it was stored
    const big = entries([[0xfffffff0, 0x80000001]])
    const u = new IdTable(big, new Uint32Array(0), 1)
    expect(u.get(0xfffffff0, 0x80000001)).toBe(EMPTY)
    u.put(0)
    expect(u.get(0xfffffff0, 0x80000001)).toBe(0)
  })

  it('is sized for twice its keys, a power of two, at least 1,024 slots of 4 bytes', () => {
    expect(new IdTable(new Uint32Array(0), new Uint32Array(0), 3).bytes).toBe(1024 * 4)
    expect(new IdTable(new Uint32Array(0), new Uint32Array(0), 40_000).bytes).toBe(131_072 * 4)
  })
})
