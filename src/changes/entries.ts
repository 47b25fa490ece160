import {closeSync, openSync, readSync} from 'node:fs'

import {appendOnce} from '../io/private-files.js'
import {removeFileSync} from '../io/private-sync.js'

/**
 * One record of a side as the comparison keeps it (src/changes/compare.ts): six 32-bit words, 24 bytes, in
 * place of the record. Its key's two lanes, its digest's two lanes (src/changes/row-digest.ts), and where to
 * read it back: a byte offset (or, in a scratch copy, the line's offset) below 2^48 and the index of the
 * file among the side's files, in the sixth word's upper 16 bits.
 */
export const ENTRY_WORDS = 6
export const KEY_A = 0
export const KEY_B = 1
export const DIGEST_A = 2
export const DIGEST_B = 3
export const OFFSET_LO = 4
export const OFFSET_HI = 5

/**
 * A county's entries classified (src/changes/compare.ts, step 2): what its step 3 reads back and writes,
 * by entry index.
 */
export interface Classified {
  /** The previous side's entries `todo` names (all of them, or only those). */
  prev: Uint32Array
  /** The current side's entries `added` and `todoTo` name (all of them, or only those). */
  cur: Uint32Array
  /** The current entries whose key no previous entry has (added), in the current side's order. */
  added: Int32Array
  /** The previous entries that changed, in their order: each deleted (`todoTo` -1) or updated. */
  todo: Int32Array
  /** For each of `todo`, the current entry it became (updated), or -1 (deleted). */
  todoTo: Int32Array
  /** Keys met again within a side (the first counts). */
  duplicates: number
  unchanged: number
  /** The bytes the classification held: the entries, the key table, the states (the summary's figure). */
  bytes: number
}

/** Where an entry's record is: its file's index and its byte offset there. */
export function entryRef(e: Uint32Array, i: number): {file: number; offset: number} {
  const hi = e[i * ENTRY_WORDS + OFFSET_HI]!
  return {file: hi >>> 16, offset: (hi & 0xffff) * 2 ** 32 + e[i * ENTRY_WORDS + OFFSET_LO]!}
}

/** One county of a side: its entries' file, how many records, and the field names met, in order. */
export interface GroupScan {
  fips: string
  entries: string
  count: number
  /** Records with neither ServicePropertyID nor APN: counted, not compared. */
  unkeyed: number
  /** Field names of its records as the record objects would have them, first seen first. */
  names: string[]
}

/**
 * A county's entries, read back whole (24 bytes a record: the comparison's memory is per county), into
 * `into` when given (of the county's size: the kernel's memory, src/changes/kernel/parquet-kernel.ts).
 */
export function loadEntries(g: GroupScan | undefined, into?: Uint32Array): Uint32Array {
  const count = g?.count ?? 0
  const out = into ?? new Uint32Array(count * ENTRY_WORDS)
  if (out.length !== count * ENTRY_WORDS) throw new Error(`${count} entries into ${out.length} words`)
  if (!g || count === 0) return out
  const bytes = Buffer.from(out.buffer, out.byteOffset, out.byteLength)
  // straight into the array: no second copy of a county's entries
  const fd = openSync(g.entries, 'r')
  try {
    for (let at = 0; at < bytes.length;) {
      const n = readSync(fd, bytes, at, bytes.length - at, at)
      if (n === 0) throw new Error(`${g.entries}: ${at} bytes of ${bytes.length}`)
      at += n
    }
  } finally {
    closeSync(fd)
  }
  return out
}

interface Group {
  scan: GroupScan
  /** Name ids met in this county (FieldNames ids). */
  seen: Uint8Array
  nameIds: number[]
}

const BATCH = 8192
const NONE_SEEN = new Uint8Array(0)

/**
 * Where a side's scan puts its entries: one scratch file per county, appended to a batch at a time, so a
 * multi-county file is split in the same pass that reads it, and memory is one batch whatever its size.
 */
export class EntrySink {
  private readonly groups = new Map<string, Group>()
  private readonly order: Group[] = []
  private group: Group | undefined
  private readonly words = new Uint32Array(BATCH * ENTRY_WORDS)
  private readonly bytes = Buffer.from(this.words.buffer)
  private used = 0

  constructor(private readonly prefix: string) {}

  /** The county the next records belong to. */
  select(fips: string): void {
    if (this.group?.scan.fips === fips) return
    this.flush()
    let g = this.groups.get(fips)
    if (!g) {
      g = {
        scan: {fips, entries: `${this.prefix}-${this.groups.size}.bin`, count: 0, unkeyed: 0, names: []},
        seen: new Uint8Array(64),
        nameIds: [],
      }
      this.groups.set(fips, g)
      this.order.push(g)
    }
    this.group = g
  }

  /** The current county met field name `id` (first sight recorded in order; -1, a name past the cap, is not kept). */
  see(id: number): void {
    if (id < 0) return
    const g = this.group!
    if (id >= g.seen.length) {
      const bigger = new Uint8Array(Math.max(id + 1, g.seen.length * 2))
      bigger.set(g.seen)
      g.seen = bigger
    }
    if (g.seen[id] === 0) {
      g.seen[id] = 1
      g.nameIds.push(id)
    }
  }

  /**
   * The current county's names met, by id (1: met; an id past its end is not): a scanner checks a record's
   * names here and calls `see` only when one is new. Valid until the next `select` or `see`.
   */
  seenNow(): Uint8Array {
    return this.group?.seen ?? NONE_SEEN
  }

  unkeyed(): void {
    this.group!.scan.unkeyed++
  }

  add(keyA: number, keyB: number, digestA: number, digestB: number, offset: number, file: number): void {
    const w = this.words
    const at = this.used * ENTRY_WORDS
    w[at] = keyA
    w[at + 1] = keyB
    w[at + 2] = digestA
    w[at + 3] = digestB
    w[at + 4] = offset >>> 0
    w[at + 5] = (file << 16) | Math.floor(offset / 2 ** 32)
    this.group!.scan.count++
    if (++this.used === BATCH) this.flush()
  }

  /**
   * Rows [from, to) of a Parquet row group, all of the current county, in one loop: each keyed row's entry
   * (`key[r]` 0: unkeyed, counted), its key and digest lanes, at offset `first + r` of file `file`. A call of
   * `add` per row ran cold, once per record of each side (src/changes/scan-parquet.ts).
   */
  addRows(
    rows: {key: Uint8Array; keyA: Int32Array; keyB: Int32Array; sumA: Int32Array; sumB: Int32Array},
    from: number,
    to: number,
    first: number,
    file: number,
  ): void {
    const scan = this.group!.scan
    const {key, keyA, keyB, sumA, sumB} = rows
    const w = this.words
    for (let r = from; r < to; r++) {
      if (key[r] === 0) {
        scan.unkeyed++
        continue
      }
      const offset = first + r
      const at = this.used * ENTRY_WORDS
      w[at] = keyA[r]!
      w[at + 1] = keyB[r]!
      w[at + 2] = sumA[r]!
      w[at + 3] = sumB[r]!
      w[at + 4] = offset >>> 0
      w[at + 5] = (file << 16) | Math.floor(offset / 2 ** 32)
      scan.count++
      if (++this.used === BATCH) this.flush()
    }
  }

  /** Everything written; the counties in the order first met, names resolved with `nameOf`. */
  finish(nameOf: (id: number) => string): GroupScan[] {
    this.flush()
    for (const g of this.order) g.scan.names = g.nameIds.map(nameOf)
    return this.order.map((g) => g.scan)
  }

  /** Forget everything written (the side is scanned again another way). */
  discard(): void {
    for (const g of this.order) removeFileSync(g.scan.entries)
    this.groups.clear()
    this.order.length = 0
    this.group = undefined
    this.used = 0
  }

  private flush(): void {
    if (this.used === 0) return
    appendOnce(this.group!.scan.entries, this.bytes, 0, this.used * ENTRY_WORDS * 4)
    this.used = 0
  }
}
