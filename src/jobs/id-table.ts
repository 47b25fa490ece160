/** What the comparison knows of one previous record (src/jobs/changes.ts). */
export const SlotState = {
  empty: 0,
  /** In the previous export, not (yet) met in the current one. */
  previous: 1,
  /** Met in the current one with the same digest. */
  unchanged: 2,
  /** Met with another digest; the slot's value is now the current record's offset in the spool. */
  updated: 3,
  /** Only in the current export (kept so a repeated id is seen as a duplicate). */
  added: 4,
  /** Written to the change file by the second pass over the previous county. */
  done: 5,
} as const
export type SlotStateValue = (typeof SlotState)[keyof typeof SlotState]

/**
 * One county's property ids, each with an 8-byte value, in Buffers (open addressing, at most half full):
 * 17 bytes a slot, so 34-68 bytes per record and no object per record, where a Map of strings takes
 * several times that. Ids are stored as 8-byte hashes (SHA-1 prefixes, so their first bytes are a good
 * hash): two distinct ids of one county share one with odds of about n²/2⁶⁵ (3 in a million for ten
 * million records), the same bargain src/jobs/batch-input.ts `KeySet` makes.
 */
export class IdTable {
  private keys = Buffer.alloc(8 * 1024)
  private values = Buffer.alloc(8 * 1024)
  private states = new Uint8Array(1024)
  private used = 0

  get size(): number {
    return this.used
  }

  /** The slot of `key` (8 bytes), or -1. */
  find(key: Buffer): number {
    const mask = this.states.length - 1
    for (let i = key.readUInt32LE(0) & mask; ; i = (i + 1) & mask) {
      if (this.states[i] === SlotState.empty) return -1
      if (this.keys.compare(key, 0, 8, i * 8, i * 8 + 8) === 0) return i
    }
  }

  /** Add `key` with its value and state; returns its slot, or -1 when the key was there already. */
  insert(key: Buffer, value: Buffer, state: SlotStateValue): number {
    if ((this.used + 1) * 2 > this.states.length) this.grow()
    const slot = this.place(key)
    if (this.states[slot] !== SlotState.empty) return -1
    key.copy(this.keys, slot * 8, 0, 8)
    value.copy(this.values, slot * 8, 0, 8)
    this.states[slot] = state
    this.used++
    return slot
  }

  state(slot: number): SlotStateValue {
    return this.states[slot] as SlotStateValue
  }

  setState(slot: number, state: SlotStateValue): void {
    this.states[slot] = state
  }

  /** Whether the slot's 8-byte value equals `value`. */
  valueEquals(slot: number, value: Buffer): boolean {
    return this.values.compare(value, 0, 8, slot * 8, slot * 8 + 8) === 0
  }

  /** The slot's value read as a number (a spool offset, below 2^53). */
  valueNumber(slot: number): number {
    return Number(this.values.readBigUInt64LE(slot * 8))
  }

  setValueNumber(slot: number, n: number): void {
    this.values.writeBigUInt64LE(BigInt(n), slot * 8)
  }

  /** Bytes held, for the notes' memory figures. */
  get bytes(): number {
    return this.keys.length + this.values.length + this.states.length
  }

  private place(key: Buffer): number {
    const mask = this.states.length - 1
    for (let i = key.readUInt32LE(0) & mask; ; i = (i + 1) & mask)
      if (this.states[i] === SlotState.empty || this.keys.compare(key, 0, 8, i * 8, i * 8 + 8) === 0) return i
  }

  private grow(): void {
    const {keys, values, states} = this
    this.keys = Buffer.alloc(keys.length * 2)
    this.values = Buffer.alloc(values.length * 2)
    this.states = new Uint8Array(states.length * 2)
    for (let i = 0; i < states.length; i++) {
      if (states[i] === SlotState.empty) continue
      const slot = this.place(keys.subarray(i * 8, i * 8 + 8))
      keys.copy(this.keys, slot * 8, i * 8, i * 8 + 8)
      values.copy(this.values, slot * 8, i * 8, i * 8 + 8)
      this.states[slot] = states[i]!
    }
  }
}
