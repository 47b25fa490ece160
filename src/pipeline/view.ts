import {ENTRY, ID, KIND, KIND_MASK, VAL_E, VAL_S} from '../json/walk.js'
import type {Fields} from './fields.js'

/**
 * One record as the stages after the scan see it: its bytes, its member entries (src/json/walk.ts, each
 * named with its field id as it was read) and, per field id, the entry that holds it. Reused record after record (nothing is allocated per record); a
 * stage reads it synchronously and keeps nothing of it.
 */
export class RecordView {
  bytes: Buffer = Buffer.alloc(0)
  /** The walk's entries (src/json/walk.ts) this record's are among. */
  entries: Int32Array = new Int32Array(0)
  first = 0
  count = 0
  /** The record has whitespace outside its strings (it was pretty-printed). */
  spaced = false
  /** A field of the record is given twice (the checks stage counts it as a problem). */
  repeated = false
  private stamp = new Int32Array(64)
  private slot = new Int32Array(64)
  private serial = 0

  constructor(readonly fields: Fields) {}

  /** The field id of entry i (src/json/walk.ts named it as it read the key), or -1. */
  id(i: number): number {
    return this.entries[i * ENTRY + ID]!
  }

  /** Point the view at a record: its members are named and indexed by field id. */
  set(bytes: Buffer, entries: Int32Array, first: number, count: number, spaced = false): void {
    this.spaced = spaced
    this.bytes = bytes
    this.entries = entries
    this.first = first
    this.count = count
    const size = this.fields.size
    if (this.stamp.length < size) {
      const n = Math.max(size, this.stamp.length * 2)
      this.stamp = new Int32Array(n)
      this.slot = new Int32Array(n)
      this.serial = 0
    }
    const serial = ++this.serial
    const stamp = this.stamp
    const slot = this.slot
    let repeated = false
    for (let i = first, end = first + count; i < end; i++) {
      const id = entries[i * ENTRY + ID]!
      if (id < 0) continue
      // a name given twice: the last wins, as JSON.parse has it (the checks stage counts it)
      if (stamp[id] === serial) repeated = true
      stamp[id] = serial
      slot[id] = i
    }
    this.repeated = repeated
  }

  /** The entry holding field `id` in this record, or -1. */
  entry(id: number): number {
    return id >= 0 && id < this.stamp.length && this.stamp[id] === this.serial ? this.slot[id]! : -1
  }

  kind(entry: number): number {
    return this.entries[entry * ENTRY + KIND]! & KIND_MASK
  }

  flags(entry: number): number {
    return this.entries[entry * ENTRY + KIND]!
  }

  start(entry: number): number {
    return this.entries[entry * ENTRY + VAL_S]!
  }

  end(entry: number): number {
    return this.entries[entry * ENTRY + VAL_E]!
  }
}
