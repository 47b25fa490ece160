import {FIELD_RULES} from '../api/spec.js'

/**
 * The ServicePropertyIDs a county has taken (spec 2.1: the service's unique property identifier), so a
 * record the service sends twice (on two pages, or twice on one) is written once. An open-addressing
 * table of doubles, at most three quarters full: 8 bytes a slot, so 1,000,000 records cost 16 MB (2^21
 * slots), freed when the county is finished (`release`); a county not yet started costs nothing (the
 * table is made at its first id), so a run of `--all-counties` holds the tables of the counties in
 * flight, not 3,235 of them.
 *
 * A page that fails after taking some records is retried: what that attempt took is forgotten (its slots
 * become tombstones) rather than counted as repeats on the retry. A slot says which attempt took its id:
 * it holds `id * ATTEMPTS + attempt` (an id is a whole number below 10^11, so this stays below 2^53, exact
 * in a double), and a failure clears the slots of its attempt in one pass over the table. Failures are
 * rare; a list of each attempt's ids (as before) cost 8 MB more at the peak of a county sent as one page
 * of 1,000,000 records (npm run bench).
 */
export class IdSet {
  /** The largest ServicePropertyID (spec 2.1: a bigint of size 11); the table takes 1 to MAX_ID. */
  static readonly MAX_ID = FIELD_RULES.ServicePropertyID.max

  private keys = new Float64Array(0)
  /** Slots that are not empty (ids and tombstones): the load probing sees. */
  private filled = 0
  private live = 0
  /** The attempt now, 1 to ATTEMPTS - 1 (0: a slot of an attempt that is over). */
  private attempt = 1
  /** Ids the attempt now took (a failure with none needs no pass). */
  private taken = 0

  /** A page attempt begins: what it takes is its own until the next `begin` or `fail`. */
  begin(): void {
    this.taken = 0
    if (++this.attempt === ATTEMPTS) this.renumber()
  }

  /** The attempt failed: forget what it took. */
  fail(): void {
    if (this.taken > 0) {
      const keys = this.keys
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!
        if (k > 0 && k % ATTEMPTS === this.attempt) {
          keys[i] = TOMBSTONE
          this.live--
        }
      }
    }
    this.taken = 0
  }

  /** Take `id`; false when the county already has it (from this attempt or an earlier, successful one). */
  add(id: number): boolean {
    // past MAX_ID a slot's `id * ATTEMPTS + attempt` would no longer be exact: the callers take no such id
    if (!(id >= 1 && id <= IdSet.MAX_ID && Number.isInteger(id)))
      throw new RangeError(`not a ServicePropertyID: ${id}`)
    if ((this.filled + 1) * 4 > this.keys.length * 3) this.grow()
    const keys = this.keys
    const mask = keys.length - 1
    const low = id * ATTEMPTS
    let free = -1
    let i = hash(id) & mask
    for (; ; i = (i + 1) & mask) {
      const k = keys[i]!
      if (k === EMPTY) break
      // the slot holds this id, whichever attempt took it
      if (k >= low && k < low + ATTEMPTS) return false
      if (k === TOMBSTONE && free === -1) free = i
    }
    if (free === -1) {
      free = i
      this.filled++
    }
    keys[free] = low + this.attempt
    this.live++
    this.taken++
    return true
  }

  /** The county is finished: free the table (a later `add` starts a new one). */
  release(): void {
    this.keys = new Float64Array(0)
    this.filled = this.live = this.taken = 0
  }

  /** The ids held (those of failed attempts not counted). */
  get size(): number {
    return this.live
  }

  /** Attempts are numbered within ATTEMPTS: at the last, every slot becomes an earlier attempt's (0). */
  private renumber(): void {
    const keys = this.keys
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!
      if (k > 0) keys[i] = k - (k % ATTEMPTS)
    }
    this.attempt = 1
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
      let i = hash(Math.floor(k / ATTEMPTS)) & mask
      while (this.keys[i] !== EMPTY) i = (i + 1) & mask
      this.keys[i] = k
      this.filled++
    }
  }
}

/** Attempts a slot tells apart (the factor of `id * ATTEMPTS + attempt`). */
const ATTEMPTS = 65536
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
