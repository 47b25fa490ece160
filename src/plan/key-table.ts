/**
 * A table from text keys to the numbers of the batch's lookups that have them, in typed arrays: no string
 * and no object is kept per key, so a batch of a million distinct lookups indexes in tens of megabytes
 * (a Map of strings took about 100 MB more in the batch benchmark's run, docs/performance.md). A key is
 * held as two independent 32-bit hashes of its text; two different keys of one batch share both with a
 * probability of about n²/2⁶⁵ (3·10⁻⁸ for a million keys), the same order as the 96-bit keys that
 * de-duplicate the batch's rows.
 *
 * Several lookups may share a key (two rows naming one street line with other towns): they are chained.
 */
export class KeyTable {
  private h1 = new Uint32Array(1024)
  private h2 = new Uint32Array(1024)
  /** The first lookup with the slot's key, plus one (0: the slot is empty). */
  private head = new Int32Array(1024)
  /** The next lookup with the same key, plus one, by lookup number. */
  private next = new Int32Array(1024)
  private keys = 0

  /** Add lookup number `n` (0, 1, 2, ... as the caller numbers them) under `key`. */
  add(key: string, n: number): void {
    if ((this.keys + 1) * 2 > this.head.length) this.grow()
    if (n >= this.next.length) {
      const bigger = new Int32Array(Math.max(n + 1, this.next.length * 2))
      bigger.set(this.next)
      this.next = bigger
    }
    const a = hash32(key, 0x9e3779b9)
    const b = hash32(key, 0x85ebca6b)
    const slot = this.slotOf(a, b)
    if (this.head[slot] === 0) {
      this.h1[slot] = a
      this.h2[slot] = b
      this.keys++
    }
    this.next[n] = this.head[slot]!
    this.head[slot] = n + 1
  }

  /** The first lookup with `key`, or -1; the others through `after`. */
  first(key: string): number {
    const a = hash32(key, 0x9e3779b9)
    const b = hash32(key, 0x85ebca6b)
    return this.head[this.slotOf(a, b)]! - 1
  }

  /** The lookup after `n` with the same key, or -1. */
  after(n: number): number {
    return this.next[n]! - 1
  }

  /** Bytes held (for the benchmark's note). */
  get bytes(): number {
    return this.h1.byteLength + this.h2.byteLength + this.head.byteLength + this.next.byteLength
  }

  private slotOf(a: number, b: number): number {
    const mask = this.head.length - 1
    for (let i = a & mask; ; i = (i + 1) & mask)
      if (this.head[i] === 0 || (this.h1[i] === a && this.h2[i] === b)) return i
  }

  private grow(): void {
    const {h1, h2, head} = this
    const size = head.length * 2
    this.h1 = new Uint32Array(size)
    this.h2 = new Uint32Array(size)
    this.head = new Int32Array(size)
    for (let i = 0; i < head.length; i++) {
      if (head[i] === 0) continue
      const slot = this.slotOf(h1[i]!, h2[i]!)
      this.h1[slot] = h1[i]!
      this.h2[slot] = h2[i]!
      this.head[slot] = head[i]!
    }
  }
}

/**
 * A 32-bit hash of a text's UTF-16 code units: multiply-rotate mixing per unit and a final avalanche
 * (the shape of MurmurHash3's, written here from its published description). Two seeds give two hashes
 * that behave as independent.
 */
export function hash32(s: string, seed: number): number {
  let h = seed | 0
  for (let i = 0; i < s.length; i++) {
    let k = Math.imul(s.charCodeAt(i), 0xcc9e2d51)
    k = (k << 15) | (k >>> 17)
    h ^= Math.imul(k, 0x1b873593)
    h = (h << 13) | (h >>> 19)
    h = (Math.imul(h, 5) + 0xe6546b64) | 0
  }
  h ^= s.length
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}
