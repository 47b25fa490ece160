import {ENTRY_WORDS, KEY_A, KEY_B} from './entries.js'

/** An empty slot. */
export const EMPTY = -1

/**
 * One county's keys (src/changes/compare.ts), open addressing in one Int32Array at most half full: a slot
 * holds where the key's entry is, the previous county's entry `i` as `i`, the current one's `j` as
 * `-j - 2`, and the key itself is read from that entry (src/changes/entries.ts), so a key costs 8-16
 * bytes here beside its 24-byte entry, and no object. Keys are 64-bit fingerprints of the id (src/jobs/
 * row-digest.ts): two distinct ids of one county share one with odds of about n²/2⁶⁵ (3 in a million for
 * ten million records), the same bargain src/jobs/batch-input.ts `KeySet` makes.
 */
export class IdTable {
  private readonly slots: Int32Array
  private readonly mask: number
  private probe = 0

  /** For at most `keys` keys from `prev` and `cur` (entry arrays). */
  constructor(
    private readonly prev: Uint32Array,
    private readonly cur: Uint32Array,
    keys: number,
  ) {
    let size = 1024
    while (size < keys * 2) size *= 2
    this.slots = new Int32Array(size).fill(EMPTY)
    this.mask = size - 1
  }

  /** The slot value of key (a, b) (unsigned lanes), or EMPTY; `put` then fills the slot it stopped at. */
  get(a: number, b: number): number {
    const {slots, mask, prev, cur} = this
    for (let i = a & mask; ; i = (i + 1) & mask) {
      const v = slots[i]!
      if (v === EMPTY) {
        this.probe = i
        return EMPTY
      }
      const at = v >= 0 ? v * ENTRY_WORDS : (-v - 2) * ENTRY_WORDS
      const e = v >= 0 ? prev : cur
      if (e[at + KEY_A] === a && e[at + KEY_B] === b) return v
    }
  }

  /** Put `value` where the last `get` found no key. */
  put(value: number): void {
    this.slots[this.probe] = value
  }

  /** Bytes held, for the summary's memory figure. */
  get bytes(): number {
    return this.slots.byteLength
  }
}
