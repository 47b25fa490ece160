/**
 * The ServicePropertyIDs a county has taken (spec 2.1: the service's unique property identifier), so a
 * record the service sends twice (on two pages, or twice on one) is written once. An open-addressing
 * table of doubles (an id is a whole number below 10^11, exact in a double) with the page attempt that
 * took each: a page that fails after taking some records is retried, and what that attempt took is
 * forgotten (its slots are tombstones) rather than counted as repeats on the retry. 12 bytes a slot, at
 * most half full: 1,000,000 records cost about 24 MB, freed when the county ends.
 */
export class IdSet {
  private keys = new Float64Array(1024)
  private owners = new Int32Array(1024)
  private used = 0
  private attempt = 0
  private readonly failed = new Set<number>()

  /** A page attempt begins: what it takes is its own until `commit` or `fail`. */
  begin(): void {
    this.attempt++
  }

  /** The attempt failed: forget what it took. */
  fail(): void {
    this.failed.add(this.attempt)
  }

  /** Take `id`; false when the county already has it (from this attempt or an earlier, successful one). */
  add(id: number): boolean {
    if (this.used * 2 >= this.keys.length) this.grow()
    const mask = this.keys.length - 1
    let free = -1
    for (let i = hash(id) & mask; ; i = (i + 1) & mask) {
      const k = this.keys[i]!
      if (k === 0) {
        if (free === -1) {
          free = i
          this.used++
        }
        break
      }
      if (this.failed.has(this.owners[i]!)) {
        if (free === -1) free = i
        continue
      }
      if (k === id) return false
    }
    this.keys[free] = id
    this.owners[free] = this.attempt
    return true
  }

  get size(): number {
    return this.used
  }

  private grow(): void {
    const keys = this.keys
    const owners = this.owners
    this.keys = new Float64Array(keys.length * 2)
    this.owners = new Int32Array(keys.length * 2)
    this.used = 0
    const mask = this.keys.length - 1
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j]!
      if (k === 0 || this.failed.has(owners[j]!)) continue
      let i = hash(k) & mask
      while (this.keys[i] !== 0) i = (i + 1) & mask
      this.keys[i] = k
      this.owners[i] = owners[j]!
      this.used++
    }
  }
}

/** A 32-bit mix of a whole number below 2^53 (its low and high words through Math.imul). */
function hash(id: number): number {
  const lo = id >>> 0
  const hi = (id / 4294967296) >>> 0
  let h = Math.imul(lo ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(hi, 0xc2b2ae35)
  h ^= h >>> 15
  return Math.imul(h, 0x27d4eb2f) >>> 0
}
