import {nameSeed} from './row-digest.js'

/** What a field is to the comparison (src/jobs/changes.ts): a bit each. */
export const ROLE_COMPARED = 1
export const ROLE_ID = 2
export const ROLE_APN = 4
export const ROLE_FIPS = 8

/**
 * The field names one side's scan meets, each with a small id, its seed (src/jobs/row-digest.ts) and its
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
   * The id of the member name `buf[start, end)` (ASCII, no escapes: the scanner checked), inside the
   * object whose name has id `parent` (-1: the record itself), flattened as `Parent.Name`.
   */
  ofBytes(buf: Buffer, start: number, end: number, parent: number): number {
    let h = 0x811c9dc5 ^ Math.imul(parent + 2, 0x9e3779b1)
    for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193)
    const mask = this.slotId.length - 1
    const len = end - start
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const id = this.slotId[i]!
      if (id < 0) return this.learn(i, h, buf, start, end, parent)
      if (this.slotHash[i] !== h || this.slotParent[i] !== parent) continue
      const known = this.slotBytes[i]!
      if (known.length !== len) continue
      let j = 0
      while (j < len && known[j] === buf[start + j]) j++
      if (j === len) return id
    }
  }

  private learn(slot: number, h: number, buf: Buffer, start: number, end: number, parent: number): number {
    const local = buf.toString('latin1', start, end)
    const id = this.ofText(parent < 0 ? local : `${this.text[parent]!}.${local}`)
    this.slotId[slot] = id
    this.slotHash[slot] = h
    this.slotParent[slot] = parent
    this.slotBytes[slot] = Buffer.from(buf.subarray(start, end))
    if (++this.used * 2 > this.slotId.length) this.grow()
    return id
  }

  private grow(): void {
    const {slotId, slotHash, slotParent, slotBytes} = this
    const size = slotId.length * 2
    this.slotId = new Int32Array(size).fill(-1)
    this.slotHash = new Int32Array(size)
    this.slotParent = new Int32Array(size)
    this.slotBytes = []
    for (let i = 0; i < slotId.length; i++) {
      if (slotId[i]! < 0) continue
      let j = slotHash[i]! & (size - 1)
      while (this.slotId[j]! >= 0) j = (j + 1) & (size - 1)
      this.slotId[j] = slotId[i]!
      this.slotHash[j] = slotHash[i]!
      this.slotParent[j] = slotParent[i]!
      this.slotBytes[j] = slotBytes[i]!
    }
  }
}
