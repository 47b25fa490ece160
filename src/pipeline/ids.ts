/**
 * The ServicePropertyIDs a county has taken (spec 2.1: the service's unique property identifier), so a
 * record the service sends twice (on two pages, or twice on one) is written once. An open-addressing
 * table of doubles (an id is a whole number below 10^11, exact in a double), at most three quarters full:
 * 8 bytes a slot, so 1,000,000 records cost 16 MB (2^21 slots), freed when the county is finished
 * (`release`); a county not yet started costs nothing (the table is made at its first id), so a run of
 * `--all-counties` holds the tables of the counties in flight, not 3,235 of them.
 *
 * A page that fails after taking some records is retried: what that attempt took is forgotten (its slots
 * become tombstones) rather than counted as repeats on the retry. The attempt's ids are listed until the
 * next `begin` for that; a page is a few hundred records, the list is as long as the page.
 */
export class IdSet {
  private keys = new Float64Array(0)
  /** Slots that are not empty (ids and tombstones): the load probing sees. */
  private filled = 0
  private live = 0
  private pending = new Float64Array(0)
  private pendingCount = 0

  /** A page attempt begins: what it takes is its own until the next `begin` or `fail`. */
  begin(): void {
    this.pendingCount = 0
  }

  /** The attempt failed: forget what it took. */
  fail(): void {
    for (let j = 0; j < this.pendingCount; j++) {
      const i = this.slotOf(this.pending[j]!)
      if (i >= 0) {
        this.keys[i] = TOMBSTONE
        this.live--
      }
    }
    this.pendingCount = 0
  }

  /** Take `id`; false when the county already has it (from this attempt or an earlier, successful one). */
  add(id: number): boolean {
    if ((this.filled + 1) * 4 > this.keys.length * 3) this.grow()
    const mask = this.keys.length - 1
    let free = -1
    let i = hash(id) & mask
    for (; ; i = (i + 1) & mask) {
      const k = this.keys[i]!
      if (k === EMPTY) break
      if (k === id) return false
      if (k === TOMBSTONE && free === -1) free = i
    }
    if (free === -1) {
      free = i
      this.filled++
    }
    this.keys[free] = id
    this.live++
    this.remember(id)
    return true
  }

  /** The county is finished: free the table (a later `add` starts a new one). */
  release(): void {
    this.keys = new Float64Array(0)
    this.pending = new Float64Array(0)
    this.filled = this.live = this.pendingCount = 0
  }

  /** The ids held (those of failed attempts not counted). */
  get size(): number {
    return this.live
  }

  /** The slot holding `id`, or -1. */
  private slotOf(id: number): number {
    const mask = this.keys.length - 1
    for (let i = hash(id) & mask; ; i = (i + 1) & mask) {
      const k = this.keys[i]!
      if (k === id) return i
      if (k === EMPTY) return -1
    }
  }

  private remember(id: number): void {
    if (this.pendingCount === this.pending.length) {
      const more = new Float64Array(Math.max(64, this.pending.length * 2))
      more.set(this.pending)
      this.pending = more
    }
    this.pending[this.pendingCount++] = id
  }

  /** Rehash the ids, tombstones dropped: into twice the slots when over half are ids, else as many. */
  private grow(): void {
    const old = this.keys
    let size = Math.max(1024, old.length)
    if ((this.live + 1) * 2 > size) size *= 2
    this.keys = new Float64Array(size)
    this.filled = 0
    const mask = size - 1
    for (let j = 0; j < old.length; j++) {
      const k = old[j]!
      if (k === EMPTY || k === TOMBSTONE) continue
      let i = hash(k) & mask
      while (this.keys[i] !== EMPTY) i = (i + 1) & mask
      this.keys[i] = k
      this.filled++
    }
  }
}

/** An empty slot (0 is no ServicePropertyID: the callers take only ids above 0). */
const EMPTY = 0
/** A slot whose id a failed attempt took: skipped by a lookup, reused by an insert. */
const TOMBSTONE = -1

/** A 32-bit mix of a whole number below 2^53 (its low and high words through Math.imul). */
function hash(id: number): number {
  const lo = id >>> 0
  const hi = (id / 4294967296) >>> 0
  let h = Math.imul(lo ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(hi, 0xc2b2ae35)
  h ^= h >>> 15
  return Math.imul(h, 0x27d4eb2f) >>> 0
}
