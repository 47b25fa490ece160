import {hash32, KeyTable} from './key-table.js'
import {recordKeys, type RecordKeys, type RowMatch} from './match-keys.js'

/**
 * The index of one county's lookups in a batch, and what the county's records matched of it. Records are
 * fed one at a time (`match`) and kept by nobody here: a scan of millions of records holds only this index
 * of the batch's keys and, for the page being read, the few records that matched (src/jobs/batch-scan.ts).
 * A page's hits are counted (`count`) only once the page is whole, so a page whose read fails leaves no
 * trace and is read again whole.
 *
 * A lookup is answered locally (`answer`) only by records it matched exactly (src/plan/match-keys.ts): one
 * record, or several that all match it at the same tier (the service would answer with several too:
 * `several_records`). Until the county was read whole, only a property id's hit is final: the id is unique
 * in a county (spec 2.1), while another record with the same APN or address may still come.
 */
const ID = 1
const APN = 2
const ADDRESS = 3
const HAS_CITY = 1
const HAS_ZIP = 2
const HAS_UNIT = 4

/** One record matched one lookup: at the exact tier (the APN as typed, an id, an address) or a variant's. */
export interface Hit {
  lookup: number
  exact: boolean
}

/**
 * A hit of a whole page, as counted: with the record's ServicePropertyID (0 when it has none; a record
 * the service sends twice counts once for a lookup, also across a resumed run) and the hash of its APN as
 * written (`apnHash`).
 */
export interface PageHit extends Hit {
  id: number
  apn: number
}

/** Which of a lookup's hits answer it: none (a lookup is sent), those at the exact tier, or the variants'. */
export type Answering = 'none' | 'exact' | 'loose'

export class CountyIndex {
  private readonly table = new KeyTable()
  private kind = new Uint8Array(256)
  private flags = new Uint8Array(256)
  private exactApn = new Uint32Array(256)
  private city = new Uint32Array(256)
  private zip = new Int32Array(256)
  private keyBytes = Buffer.alloc(12 * 256)
  private done = new Uint8Array(256)
  /** What records matched, per lookup: made at the first hit counted (a county never scanned needs none). */
  private hits: HitState | undefined
  private doneCount = 0
  /** Distinct lookups of the county this run may send (indexed or not). */
  size = 0
  /** Of them, lookups of an address with a unit (the ladder may take a second request for them). */
  withUnit = 0
  /** Of them, lookups a record can answer (a key to match). */
  indexed = 0
  /** Indexed lookups not answered yet. */
  private indexedOpen = 0
  /** Lookups whose hit is final before the county was read whole (a property id found). */
  certain = 0

  constructor(readonly fips: string) {}

  /**
   * Add a distinct lookup (its 12-byte key as 16 base64url characters), numbered in the order of the
   * input (the same numbers in every run of the same input); `done` when it is answered already (the
   * checkpoint): it is matched no more and no scan is for it. Returns its number.
   */
  add(key: string, m: RowMatch | undefined, hasUnit: boolean, done = false): number {
    const n = this.size++
    if (n >= this.kind.length) this.grow()
    Buffer.from(key, 'base64url').copy(this.keyBytes, n * 12)
    if (hasUnit) {
      this.flags[n] = HAS_UNIT
      this.withUnit++
    }
    if (!m) {
      if (done) this.markDone(n)
      return n
    }
    this.indexed++
    this.indexedOpen++
    this.table.add(m.key, n)
    if (m.kind === 'id') this.kind[n] = ID
    else if (m.kind === 'apn') {
      this.kind[n] = APN
      this.exactApn[n] = hash32(m.exact, 1)
    } else {
      this.kind[n] = ADDRESS
      let f = this.flags[n]!
      if (m.city !== undefined) {
        f |= HAS_CITY
        this.city[n] = hash32(m.city, 2)
      }
      if (m.zip !== undefined) {
        f |= HAS_ZIP
        this.zip[n] = Number(m.zip)
      }
      this.flags[n] = f
    }
    if (done) this.markDone(n)
    return n
  }

  /** The batch's key of lookup `n` (16 base64url characters). */
  keyOf(n: number): string {
    return this.keyBytes.toString('base64url', n * 12, n * 12 + 12)
  }

  /** Lookup `n` is answered (the checkpoint, an export on disk): no record is matched to it any more. */
  markDone(n: number): void {
    if (this.done[n] === 1) return
    this.done[n] = 1
    this.doneCount++
    if (this.kind[n] !== 0) this.indexedOpen--
    if ((this.flags[n]! & HAS_UNIT) !== 0) this.withUnit--
    if (this.kind[n] === ID && this.exactOf(n) > 0) this.certain--
  }

  isDone(n: number): boolean {
    return this.done[n] === 1
  }

  /** The lookups `record` matches, appended to `out`; returns how many. Reads, counts nothing. */
  match(record: RecordKeys, out: Hit[]): number {
    const r = recordKeys(record)
    let found = 0
    if (r.id !== undefined)
      for (let n = this.table.first(r.id); n >= 0; n = this.table.after(n))
        if (this.kind[n] === ID && this.done[n] === 0) found += push(out, n, true)
    if (r.apnLoose !== undefined) {
      const exact = hash32(r.apnExact!, 1)
      for (let n = this.table.first(r.apnLoose); n >= 0; n = this.table.after(n))
        if (this.kind[n] === APN && this.done[n] === 0) found += push(out, n, this.exactApn[n] === exact)
    }
    if (r.street !== undefined) {
      const city = r.city === undefined ? undefined : hash32(r.city, 2)
      const zip = r.zip === undefined ? undefined : Number(r.zip)
      for (let n = this.table.first(r.street); n >= 0; n = this.table.after(n)) {
        if (this.kind[n] !== ADDRESS || this.done[n] === 1) continue
        const f = this.flags[n]!
        if ((f & HAS_CITY) !== 0 && this.city[n] !== city) continue
        if ((f & HAS_ZIP) !== 0 && this.zip[n] !== zip) continue
        found += push(out, n, true)
      }
    }
    return found
  }

  /**
   * Count a whole page's hits. A record whose ServicePropertyID already hit the lookup is the service
   * repeating itself (design.md: each id once per county) and counts once. Variants of an APN count
   * only while they all write it the same way (`apn`, the hash of the record's APN as written).
   * Returns the hits counted (repeats left out), in order.
   */
  count(hits: readonly PageHit[]): PageHit[] {
    const counted: PageHit[] = []
    if (hits.length === 0) return counted
    const st = (this.hits ??= new HitState(this.kind.length))
    for (const h of hits) {
      const n = h.lookup
      if (this.done[n] === 1 || st.repeat(n, h.id)) continue
      counted.push(h)
      if (h.exact) {
        if (st.exact[n] === 0 && this.kind[n] === ID) this.certain++
        st.exact[n]! += 1
        continue
      }
      if (st.loose[n] === 0) st.looseApn[n] = h.apn
      else if (st.looseApn[n] !== h.apn) st.looseOther[n] = 1
      st.loose[n]! += 1
    }
    return counted
  }

  private exactOf(n: number): number {
    return this.hits?.exact[n] ?? 0
  }

  /** Which hits answer lookup `n`: `whole` when every page of the county was read. */
  answer(n: number, whole: boolean): Answering {
    const st = this.hits
    if (!st) return 'none'
    if (!whole) return this.kind[n] === ID && st.exact[n]! > 0 ? 'exact' : 'none'
    if (st.exact[n]! > 0) return 'exact'
    if (st.loose[n]! > 0 && st.looseOther[n] === 0) return 'loose'
    return 'none'
  }

  /** The records that answer lookup `n` (its hits at the answering tier). */
  answerCount(n: number, whole: boolean): number {
    const a = this.answer(n, whole)
    return a === 'exact' ? this.hits!.exact[n]! : a === 'loose' ? this.hits!.loose[n]! : 0
  }

  /**
   * The lookups a scan can still replace: those with a key a record can match, not answered yet, less
   * those a property id already answered (final before the scan ends).
   */
  get replaceable(): number {
    return this.indexedOpen - this.certain
  }

  /** The county's lookups not answered yet (before any scan). */
  get open(): number {
    return this.size - this.doneCount
  }

  private grow(): void {
    const size = this.kind.length * 2
    const u8 = (a: Uint8Array) => copy(new Uint8Array(size), a)
    this.kind = u8(this.kind)
    this.flags = u8(this.flags)
    this.done = u8(this.done)
    this.exactApn = copy(new Uint32Array(size), this.exactApn)
    this.city = copy(new Uint32Array(size), this.city)
    this.zip = copy(new Int32Array(size), this.zip)
    this.hits?.grow(size)
    const keys = Buffer.alloc(12 * size)
    this.keyBytes.copy(keys)
    this.keyBytes = keys
  }
}

/** The hits counted per lookup (exact tier, variants' tier and how they write the APN, the records' ids). */
class HitState {
  exact: Int32Array
  loose: Int32Array
  looseApn: Uint32Array
  looseOther: Uint8Array
  /** The ServicePropertyID of each lookup's first hit (0: none), and of any further ones (rare). */
  firstId: Float64Array
  private readonly moreIds = new Map<number, Set<number>>()

  constructor(size: number) {
    this.exact = new Int32Array(size)
    this.loose = new Int32Array(size)
    this.looseApn = new Uint32Array(size)
    this.looseOther = new Uint8Array(size)
    this.firstId = new Float64Array(size)
  }

  grow(size: number): void {
    this.exact = copy(new Int32Array(size), this.exact)
    this.loose = copy(new Int32Array(size), this.loose)
    this.looseApn = copy(new Uint32Array(size), this.looseApn)
    this.looseOther = copy(new Uint8Array(size), this.looseOther)
    this.firstId = copy(new Float64Array(size), this.firstId)
  }

  /** Has record `id` hit lookup `n` before? (Notes it when not.) */
  repeat(n: number, id: number): boolean {
    if (id === 0) return false
    const first = this.firstId[n]!
    if (first === 0) {
      this.firstId[n] = id
      return false
    }
    if (first === id) return true
    let more = this.moreIds.get(n)
    if (!more) this.moreIds.set(n, (more = new Set()))
    if (more.has(id)) return true
    more.add(id)
    return false
  }
}

/** The hash a page's hit records its record's APN with (see `count`). */
export function apnHash(apn: string | undefined): number {
  return apn === undefined ? 0 : hash32(apn.trim().toUpperCase(), 1)
}

function push(out: Hit[], lookup: number, exact: boolean): number {
  out.push({lookup, exact})
  return 1
}

function copy<T extends {set(from: ArrayLike<number>): void}>(to: T, from: ArrayLike<number>): T {
  to.set(from)
  return to
}
