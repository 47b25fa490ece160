import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {classify, classifyHere} from '../../src/changes/compare.js'
import {ENTRY_WORDS, type Classified, type GroupScan} from '../../src/changes/entries.js'
import {ParquetKernel} from '../../src/changes/kernel/parquet-kernel.js'

/** Entries of (key, digest) pairs, six words each (src/changes/entries.ts), each one's offset its index. */
function entries(records: ReadonlyArray<readonly [number, number]>): Uint32Array {
  const out = new Uint32Array(records.length * ENTRY_WORDS)
  records.forEach(([key, digest], i) => {
    // two lanes each, the second derived so that equal numbers mean equal keys and digests
    out.set([key, key ^ 0x5bd1e995, digest, digest ^ 0x01000193, i, 0], i * ENTRY_WORDS)
  })
  return out
}

/**
 * A classification as plain lists of the entries it names, each by its offset (its index in the test's
 * side): the kernel names them among the few it copies out, JavaScript among all.
 */
const plain = (c: Classified) => {
  const at = (e: Uint32Array, i: number) => (i < 0 ? -1 : e[i * ENTRY_WORDS + 4]!)
  return {
    added: [...c.added].map((j) => at(c.cur, j)),
    todo: [...c.todo].map((i) => at(c.prev, i)),
    todoTo: [...c.todoTo].map((j) => at(c.cur, j)),
    duplicates: c.duplicates,
    unchanged: c.unchanged,
  }
}

function both(prev: ReadonlyArray<readonly [number, number]>, cur: ReadonlyArray<readonly [number, number]>) {
  const P = entries(prev)
  const C = entries(cur)
  const kernel = ParquetKernel.get()!.classify(prev.length, cur.length, (p, c) => {
    p.set(P)
    c.set(C)
  })
  const here = classifyHere(P.slice(), C.slice(), prev.length, cur.length)
  return {kernel: kernel && plain(kernel), here: plain(here), raw: kernel!}
}

// a few keys and digests, so that keys repeat (within a side and across) and digests agree or not
const pair = fc.tuple(fc.integer({min: 0, max: 40}), fc.integer({min: 0, max: 3}))
const side = fc.array(pair, {maxLength: 300})

describe('a county classified', () => {
  it('by hand: added, deleted, updated, unchanged and repeated keys on both sides', () => {
    // keys 1-4, digests 10-99
    const prev = [
      [1, 10],
      [2, 20],
      [1, 99], // key 1 again: a duplicate, the first counts
      [3, 30],
    ] as const
    const cur = [
      [2, 21], // updated
      [4, 40], // added
      [3, 30], // unchanged
      [4, 41], // key 4 again: a duplicate
    ] as const
    const {kernel, here} = both(prev, cur)
    const want = {added: [1], todo: [0, 1], todoTo: [-1, 0], duplicates: 2, unchanged: 1}
    expect(here).toEqual(want)
    expect(kernel).toEqual(want)
  })

  it('the kernel classifies as the rules in JavaScript do, any entries', () => {
    fc.assert(
      fc.property(side, side, fc.boolean(), (prev, cur, sameOrder) => {
        // exports of a county list their properties in one order: often the current side is the previous
        // one with a few changed (the kernel's guess of the next match), sometimes any order
        const current = sameOrder
          ? [...prev.map(([k, d], i) => [k, i % 7 === 0 ? d + 1 : d] as const), ...cur]
          : cur
        const {kernel, here} = both(prev, current)
        expect(kernel).toEqual(here)
      }),
      {numRuns: 400},
    )
  })

  it('the kernel copies out only the entries read back: the changed ones of each side', () => {
    const prev = Array.from({length: 50}, (_, i) => [i, i % 3 === 0 ? 1 : 0] as const)
    const cur = Array.from({length: 60}, (_, i) => [i, 0] as const)
    const {raw, here} = both(prev, cur)
    // 17 updated (0, 3, ... 48), 10 added (50-59), none deleted
    expect(raw.prev.length).toBe(17 * ENTRY_WORDS)
    expect(raw.cur.length).toBe(27 * ENTRY_WORDS)
    expect(plain(raw)).toEqual(here)
    expect(here.added).toEqual([50, 51, 52, 53, 54, 55, 56, 57, 58, 59])
  })

  it('a county of 4,096 entries or more goes through the kernel, and gives what JavaScript gives', () => {
    const prev = Array.from({length: 3000}, (_, i) => [(i * 7919) % 5000, i % 5] as const)
    const cur = Array.from({length: 3000}, (_, i) => [(i * 7919 + 13) % 5000, i % 4] as const)
    const dir = mkdtempSync(join(tmpdir(), 'sfl-classify-'))
    const scan = (name: string, side: ReadonlyArray<readonly [number, number]>): GroupScan => {
      const path = join(dir, name)
      writeFileSync(path, entries(side))
      return {fips: '06067', entries: path, count: side.length, unkeyed: 0, names: []}
    }
    const kernel = ParquetKernel.get()!
    const original = kernel.classify.bind(kernel)
    let calls = 0
    kernel.classify = (...args) => {
      calls++
      return original(...args)
    }
    try {
      const got = plain(classify(scan('p', prev), scan('c', cur)))
      expect(calls).toBe(1)
      expect(got).toEqual(plain(classifyHere(entries(prev), entries(cur), 3000, 3000)))
      expect(got.added.length + got.todo.length).toBeGreaterThan(1000)
      // a small county stays in JavaScript
      const small = plain(classify(scan('p10', prev.slice(0, 10)), scan('c10', cur.slice(0, 10))))
      expect(calls).toBe(1)
      expect(small).toEqual(
        plain(classifyHere(entries(prev.slice(0, 10)), entries(cur.slice(0, 10)), 10, 10)),
      )
    } finally {
      kernel.classify = original
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
