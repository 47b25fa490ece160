import {NO_BYTES, type Redacted} from '../api/secrets.js'
import {decodeEscapes} from '../json/values.js'
import {ENTRY, ID, KEY_E, KEY_ESCAPED, KEY_S, KIND, KIND_MASK, PARENT, VAL_E, VAL_S} from '../json/walk.js'
import type {Fields} from './fields.js'

/**
 * One record as the stages after the scan see it: its bytes (sealed by the redactor: nothing else can be
 * viewed), its member entries (src/json/walk.ts, each named with its field id as it was read) and, per
 * field id, the entry that holds it. Reused record after record (nothing is allocated per record); a
 * stage reads it synchronously and keeps nothing of it.
 */
export class RecordView {
  bytes: Redacted<Buffer> = NO_BYTES
  /** The walk's entries (src/json/walk.ts) this record's are among. */
  entries: Int32Array = new Int32Array(0)
  first = 0
  count = 0
  /** The record has whitespace outside its strings (it was pretty-printed). */
  spaced = false
  /**
   * A member name is given twice in the record or in one of its option objects (the records stage rejects
   * such a record: which value counts is up to each reader).
   */
  repeated = false
  /** The entry of the second occurrence of the first name given twice, or -1. */
  private again = -1
  private stamp = new Int32Array(64)
  private slot = new Int32Array(64)
  private serial = 0

  constructor(readonly fields: Fields) {}

  /** The field id of entry i (src/json/walk.ts named it as it read the key), or -1. */
  id(i: number): number {
    return this.entries[i * ENTRY + ID]!
  }

  /** Point the view at a record: its members are named and indexed by field id. */
  set(bytes: Redacted<Buffer>, entries: Int32Array, first: number, count: number, spaced = false): void {
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
    let again = -1
    let unnamed = false
    for (let i = first, end = first + count; i < end; i++) {
      const id = entries[i * ENTRY + ID]!
      if (id < 0) {
        unnamed = true
        continue
      }
      // a name given twice: the last wins for `entry`, as JSON.parse has it; the records stage rejects it
      if (stamp[id] === serial && again < 0) again = i
      stamp[id] = serial
      slot[id] = i
    }
    // members past the cap on unknown fields have no id: their names are compared as text (rare)
    if (again < 0 && unnamed) again = this.unnamedAgain()
    this.again = again
    this.repeated = again >= 0
  }

  /** The name given twice (`Option.Field` for a member of an option object), when `repeated`. */
  repeatedName(): string {
    return this.again < 0 ? '' : this.nameOf(this.again)
  }

  /** The column name of entry i: its field's, or its key's text for a member without a field id. */
  private nameOf(i: number): string {
    const id = this.id(i)
    if (id >= 0) return this.fields.list[id]!.name
    const at = i * ENTRY
    const m = this.entries
    const raw = this.bytes.toString('utf8', m[at + KEY_S], m[at + KEY_E])
    const name = (m[at + KIND]! & KEY_ESCAPED) !== 0 ? decodeEscapes(raw) : raw
    const parent = m[at + PARENT]!
    return parent < 0 ? name : `${this.nameOf(this.first + parent)}.${name}`
  }

  /** The first entry whose name (within its object) came before, comparing every entry's name as text. */
  private unnamedAgain(): number {
    const seen = new Set<string>()
    for (let i = this.first, end = this.first + this.count; i < end; i++) {
      const name = `${this.entries[i * ENTRY + PARENT]!}\u0000${this.nameOf(i)}`
      if (seen.has(name)) return i
      seen.add(name)
    }
    return -1
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
