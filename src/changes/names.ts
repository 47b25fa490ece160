import {nameSeed} from './row-digest.js'

/** What a field is to the comparison (src/changes/compare.ts): a bit each. */
export const ROLE_COMPARED = 1
export const ROLE_ID = 2
export const ROLE_APN = 4
export const ROLE_FIPS = 8

/**
 * The field names one side's scan meets, each with a small id, its seed (src/changes/row-digest.ts) and its
 * role, found from text (a CSV header, a record object) or straight from the bytes of a JSON member name
 * (`parent` the id of the object it is in, for the flattened `Object.Field`), so a record costs one
 * table probe per member and no string. Ids are per scan, never compared across sides: seeds come from
 * the text alone.
 */
export class FieldNames {
  readonly text: string[] = []
  readonly seedA: number[] = []
  readonly seedB: number[] = []
  readonly role: number[] = []
  private readonly byText = new Map<string, number>()
  // the byte lookup: open addressing over (parent, name bytes), at most half full
  private slotId = new Int32Array(256).fill(-1)
  private slotHash = new Int32Array(256)
  private slotParent = new Int32Array(256)
  private slotBytes: Buffer[] = []
  private used = 0

  constructor(private readonly ignore: ReadonlySet<string>) {}

  get size(): number {
    return this.text.length
  }

  /** The id of a field name (created on first sight). */
  ofText(name: string): number {
    let id = this.byText.get(name)
    if (id !== undefined) return id
    id = this.text.length
    this.byText.set(name, id)
    this.text.push(name)
    const seed = nameSeed(name)
    this.seedA.push(seed.a)
    this.seedB.push(seed.b)
    this.role.push(
      (this.ignore.has(name) ? 0 : ROLE_COMPARED) |
        (name === 'ServicePropertyID' ? ROLE_ID : 0) |
        (name === 'APN' ? ROLE_APN : 0) |
        (name === 'Fips' ? ROLE_FIPS : 0),
    )
    return id
  }

  /**
   * The member name `buf[start, end)` (ASCII, no escapes: the scanner checked), inside the object whose
   * name has id `parent` (-1: the record itself), flattened as `Parent.Name`: its key, a number that
   * stays the same for the scan (`idOfKey` gives its id; `matches` checks bytes against it).
   */
  keyOf(buf: Buffer, start: number, end: number, parent: number): number {
    let h = 0x811c9dc5 ^ Math.imul(parent + 2, 0x9e3779b1)
    for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193)
    const mask = this.slotId.length - 1
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const id = this.slotId[i]!
      if (id < 0) return this.learn(i, h, buf, start, end, parent)
      if (this.slotHash[i] !== h || this.slotParent[i] !== parent) continue
      const known = this.slotBytes[i]!
      if (known.length !== end - start) continue
      let j = 0
      while (j < known.length && known[j] === buf[start + j]) j++
      if (j === known.length) return this.keyAt[i]!
    }
  }

  /** The field id of a name's key. */
  idOfKey(key: number): number {
    return this.keyId[key]!
  }

  /**
   * Whether `buf[start...]` (`view` over the same bytes) is the name of `key` and its closing quote
   * (within `end`): how a scanner confirms a guess in one pass over the name's bytes, four at a time,
   * without scanning or hashing them.
   */
  matches(key: number, buf: Buffer, view: DataView, start: number, end: number): boolean {
    const n = this.keyLength[key]!
    if (start + n >= end || buf[start + n] !== 0x22) return false
    const pool = this.pool
    const at = this.keyStart[key]!
    let j = 0
    for (; j + 4 <= n; j += 4)
      if (view.getInt32(start + j, true) !== this.poolView.getInt32(at + j, true)) return false
    for (; j < n; j++) if (pool[at + j] !== buf[start + j]) return false
    return true
  }

  /** The length in bytes of a name's key. */
  lengthOfKey(key: number): number {
    return this.keyLength[key]!
  }

  // the keys: their names' bytes one after the other in `pool`, where each starts, its length, its id
  private pool = Buffer.alloc(4096)
  private poolView = new DataView(this.pool.buffer, this.pool.byteOffset, this.pool.length)
  private poolUsed = 0
  private keyStart: number[] = []
  private keyLength: number[] = []
  private keyId: number[] = []
  private keyAt: number[] = []

  private learn(slot: number, h: number, buf: Buffer, start: number, end: number, parent: number): number {
    const local = buf.toString('latin1', start, end)
    const id = this.ofText(parent < 0 ? local : `${this.text[parent]!}.${local}`)
    const key = this.keyId.length
    if (this.poolUsed + end - start > this.pool.length) {
      const bigger = Buffer.alloc(Math.max(this.pool.length * 2, this.poolUsed + end - start))
      this.pool.copy(bigger)
      this.pool = bigger
      this.poolView = new DataView(bigger.buffer, bigger.byteOffset, bigger.length)
    }
    buf.copy(this.pool, this.poolUsed, start, end)
    this.keyStart.push(this.poolUsed)
    this.keyLength.push(end - start)
    this.keyId.push(id)
    this.poolUsed += end - start
    this.slotId[slot] = id
    this.slotHash[slot] = h
    this.slotParent[slot] = parent
    this.slotBytes[slot] = this.pool.subarray(this.keyStart[key], this.poolUsed)
    this.keyAt[slot] = key
    if (++this.used * 2 > this.slotId.length) this.grow()
    return key
  }

  private grow(): void {
    const {slotId, slotHash, slotParent, slotBytes, keyAt} = this
    const size = slotId.length * 2
    this.slotId = new Int32Array(size).fill(-1)
    this.slotHash = new Int32Array(size)
    this.slotParent = new Int32Array(size)
    this.slotBytes = []
    this.keyAt = []
    for (let i = 0; i < slotId.length; i++) {
      if (slotId[i]! < 0) continue
      let j = slotHash[i]! & (size - 1)
      while (this.slotId[j]! >= 0) j = (j + 1) & (size - 1)
      this.slotId[j] = slotId[i]!
      this.slotHash[j] = slotHash[i]!
      this.slotParent[j] = slotParent[i]!
      this.slotBytes[j] = slotBytes[i]!
      this.keyAt[j] = keyAt[i]!
    }
  }
}
