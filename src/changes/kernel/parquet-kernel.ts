import {readFileSync} from 'node:fs'

import {
  numberValueOf,
  type ColumnValues,
  type ParquetCell,
  type ParquetColumn,
  type RawChunk,
} from '../../io/parquet-reader.js'
import type {Classified} from '../entries.js'
import type {Lanes} from '../row-digest.js'
import {KERNEL_FILE} from './parquet-kernel-file.js'

/**
 * The Parquet comparison's kernel (parquet-kernel.c, WebAssembly) with its work space, at full speed from
 * the first page where the JavaScript decoder runs cold (a comparison spent most of its time in V8 warming
 * that decoder up: docs/performance.md, issue 32). For the scan, a row group's column chunks, each
 * fingerprinted and added into the group's row sums as src/changes/scan-parquet.ts does (`begin`, `add`,
 * `copyInto`); for the read-back, one chunk's values at a few rows as parquet-reader.ts `readRows` gives
 * them (`pick`); for `sfl stats` (src/jobs/file-stats.ts), a chunk's slots as `readGroup` gives them
 * (`slots`). A chunk it gives back (a codec other than Snappy or none, a number only JavaScript reads,
 * damage) has added nothing, and the caller decodes it in JavaScript, which names what is wrong. One a
 * thread (`get`), made at first use.
 */
export class ParquetKernel {
  private static made: ParquetKernel | null | undefined

  /** This thread's kernel; undefined where WebAssembly cannot be instantiated (the caller decodes in JavaScript). */
  static get(): ParquetKernel | undefined {
    if (ParquetKernel.made === undefined) {
      try {
        ParquetKernel.made = new ParquetKernel()
      } catch {
        ParquetKernel.made = null
      }
    }
    return ParquetKernel.made ?? undefined
  }

  private readonly memory = new wasm.Memory({initial: 16})
  private readonly sumChunk: (...args: number[]) => number
  private readonly pickChunk: (...args: number[]) => number
  private readonly slotChunk: (...args: number[]) => number
  private readonly classifyEntries: (...args: number[]) => number
  private readonly base: number
  private rows = 0
  private at = {
    sumsA: 0,
    sumsB: 0,
    partA: 0,
    partB: 0,
    levels: 0,
    idx: 0,
    la: 0,
    lb: 0,
    scratch: 0,
    chunk: 0,
    keyA: 0,
    keyB: 0,
    key: 0,
    has: 0,
    dictEmpty: 0,
  }
  private cap = {scratch: 0, chunk: 0, dict: 0}

  private constructor() {
    const module = new wasm.Module(readFileSync(KERNEL_FILE))
    const instance = new wasm.Instance(module, {env: {memory: this.memory}})
    const exports = instance.exports as unknown as {
      sum_chunk: (...args: number[]) => number
      pick_chunk: (...args: number[]) => number
      slot_chunk: (...args: number[]) => number
      classify: (...args: number[]) => number
      heap_base: () => number
    }
    this.sumChunk = exports.sum_chunk
    this.pickChunk = exports.pick_chunk
    this.slotChunk = exports.slot_chunk
    this.classifyEntries = exports.classify
    this.base = (exports.heap_base() + 15) & ~15
  }

  /**
   * Start a row group of `rows` rows whose chunks are at most `chunkBytes` long and decompress to at most
   * `pageBytes` a page: its sums zeroed, the memory laid out (grown when it must). False when the room
   * would pass `MAX_BYTES` (a file whose metadata claims chunks of gigabytes): the JavaScript decoder reads
   * that group, and refuses what the file does not hold.
   */
  begin(rows: number, chunkBytes: number, pageBytes: number): boolean {
    // sizes from a file's metadata: whole numbers, or the JavaScript decoder says what is wrong
    if (![rows, chunkBytes, pageBytes].every((x) => Number.isSafeInteger(x) && x >= 0)) return false
    const dict = Math.max(rows, 1 << 16)
    const words = 8 * rows + 2 * dict
    const need = this.base + 4 * words + 2 * rows + dict + pageBytes + chunkBytes + 128
    if (need > MAX_BYTES) return false
    if (!this.room(need)) return false
    this.rows = rows
    this.at = this.layout({
      sumsA: 4 * rows,
      sumsB: 4 * rows,
      partA: 4 * rows,
      partB: 4 * rows,
      levels: 4 * rows,
      idx: 4 * rows,
      la: 4 * dict,
      lb: 4 * dict,
      scratch: pageBytes,
      chunk: chunkBytes,
      keyA: 4 * rows,
      keyB: 4 * rows,
      key: rows,
      has: rows,
      dictEmpty: dict,
    })
    this.cap = {scratch: pageBytes, chunk: chunkBytes, dict}
    new Int32Array(this.memory.buffer, this.at.sumsA, rows).fill(0)
    new Int32Array(this.memory.buffer, this.at.sumsB, rows).fill(0)
    new Uint8Array(this.memory.buffer, this.at.key, rows).fill(0)
    return true
  }

  /**
   * Add one chunk of the group begun: into the sums when `compared`, into the keys when it is one (`rank` 2
   * the property id, 1 the APN, 0 none: a row's non-empty value is its key unless one of the same or a
   * higher rank is there). False when given back (nothing added).
   */
  add(chunk: RawChunk, seed: Lanes, role: {compared: boolean; rank: number} = EVERY_ROW): boolean {
    const {column, meta, bytes} = chunk
    const codec = CODECS[meta.codec]
    const kind = KINDS[column.kind]
    if (codec === undefined || kind === undefined || bytes.length > this.cap.chunk) return false
    new Uint8Array(this.memory.buffer, this.at.chunk, bytes.length).set(bytes)
    const a = this.at
    try {
      return (
        this.sumChunk(
          a.chunk,
          bytes.length,
          this.rows,
          PHYSICAL[column.physical],
          kind,
          column.optional ? 1 : 0,
          codec,
          seed.a,
          seed.b,
          column.msPerUnit,
          a.sumsA,
          a.sumsB,
          a.partA,
          a.partB,
          a.scratch,
          this.cap.scratch,
          a.levels,
          a.idx,
          a.la,
          a.lb,
          this.cap.dict,
          role.compared ? 1 : 0,
          role.rank,
          a.has,
          a.dictEmpty,
          a.key,
          a.keyA,
          a.keyB,
        ) === 0
      )
    } catch {
      // a trap (the kernel checks its bounds, so none is expected): the chunk goes to JavaScript
      return false
    }
  }

  /**
   * The values of one column chunk (of a group of `rows` rows) at the rows `want` (group-relative,
   * ascending), as parquet-reader.ts readRows gives them; undefined when given back (the caller reads the
   * chunk in JavaScript). Its own layout of the memory, which a scan's group no longer needs.
   */
  pick(chunk: RawChunk, rows: number, want: Int32Array): PickedValues | undefined {
    const {column, meta, bytes} = chunk
    const codec = CODECS[meta.codec]
    const size = Number(meta.total_uncompressed_size)
    const n = want.length
    if (codec === undefined || !Number.isSafeInteger(size) || size < 0) return undefined
    const values = Math.max(rows, 1 << 16)
    const a = this.layout({
      num: 8 * n,
      want: 4 * n,
      start: 4 * n,
      len: 4 * n,
      tag: n,
      idx: 4 * rows,
      dstart: 4 * values,
      dlen: 4 * values,
      arena: size,
      scratch: size,
      dict: size,
      chunk: bytes.length,
    })
    if (a.end > MAX_BYTES || !this.room(a.end)) return undefined
    const buffer = this.memory.buffer
    new Uint8Array(buffer, a.chunk, bytes.length).set(bytes)
    new Int32Array(buffer, a.want, n).set(want)
    let answer: number
    try {
      answer = this.pickChunk(
        a.chunk,
        bytes.length,
        rows,
        PHYSICAL[column.physical],
        column.optional ? 1 : 0,
        codec,
        a.want,
        n,
        a.tag,
        a.num,
        a.start,
        a.len,
        a.arena,
        size,
        a.scratch,
        size,
        a.dict,
        size,
        a.idx,
        a.dstart,
        a.dlen,
        values,
      )
    } catch {
      return undefined
    }
    if (answer !== 0) return undefined
    const out = {
      column,
      tag: new Uint8Array(buffer, a.tag, n),
      num: new Float64Array(buffer, a.num, n),
      start: new Uint32Array(buffer, a.start, n),
      len: new Uint32Array(buffer, a.len, n),
      text: Buffer.from(buffer),
      base: 0,
      arena: a.arena,
      size,
    }
    // a few rows of the group: their values made now, the memory's next use overwrites this; many (a
    // month of revaluations reads back every row): copied out of the memory and made as each row is read,
    // so a group's values are not held as texts that outlive the collector's young space (issue 32)
    return n * 4 < rows ? PickedValues.of(madeNow(out)) : PickedValues.copied(out)
  }

  /**
   * One chunk's values (a group of `rows` rows) as parquet-reader.ts `readGroup` gives them, each row's slot
   * into a table of values (`ColumnValues`, in arrays of its own); with `values` false, only whether each
   * row holds one (slot 0 or -1, as readGroup's RowPresence reads them). Undefined when given back: the
   * caller decodes the chunk in JavaScript, which names what is wrong with it.
   */
  slots(chunk: RawChunk, rows: number, values = true): ColumnValues | undefined {
    const {column, meta, bytes} = chunk
    const codec = CODECS[meta.codec]
    const size = Number(meta.total_uncompressed_size)
    // sizes from a file's metadata: whole numbers, or the JavaScript decoder says what is wrong
    if (codec === undefined || ![size, rows].every((x) => Number.isSafeInteger(x) && x >= 0)) return undefined
    const text = column.physical === 'BYTE_ARRAY'
    const cap = rows + Math.max(rows, 1 << 16)
    const a = this.layout({
      slot: 4 * rows,
      out: 8,
      num: 8 * cap,
      start: text ? 4 * cap : 0,
      len: text ? 4 * cap : 0,
      bytes: text ? size : 0,
      scratch: size,
      levels: 4 * rows,
      idx: 4 * rows,
      chunk: bytes.length,
    })
    if (a.end > MAX_BYTES || !this.room(a.end)) return undefined
    const buffer = this.memory.buffer
    new Uint8Array(buffer, a.chunk, bytes.length).set(bytes)
    try {
      const answer = this.slotChunk(
        a.chunk,
        bytes.length,
        rows,
        PHYSICAL[column.physical],
        column.optional ? 1 : 0,
        codec,
        values ? 1 : 0,
        a.slot,
        a.out,
        a.num,
        a.start,
        a.len,
        cap,
        a.bytes,
        text ? size : 0,
        a.scratch,
        size,
        a.levels,
        a.idx,
      )
      if (answer !== 0) return undefined
    } catch {
      return undefined
    }
    const [used, textBytes] = new Uint32Array(buffer, a.out, 2)
    const start = new Int32Array(text ? used! : 0)
    const end = new Int32Array(start.length)
    const at = new Uint32Array(buffer, a.start, start.length)
    const len = new Uint32Array(buffer, a.len, start.length)
    for (let i = 0; i < start.length; i++) end[i] = (start[i] = at[i]!) + len[i]!
    return {
      column,
      rows,
      slot: new Int32Array(buffer, a.slot, rows).slice(),
      size: used!,
      bytes: new Uint8Array(buffer, a.bytes, text ? textBytes! : 0).slice(),
      start,
      end,
      num: new Float64Array(buffer, a.num, text ? 0 : used!).slice(),
    }
  }

  /**
   * A county's entries classified as src/changes/compare.ts `classifyHere` classifies them: the previous
   * side's `np` entries and the current side's `nc` (six words each: src/changes/entries.ts), which `load`
   * reads straight into the kernel's memory (`P`, `C`). Only the entries read back are copied out (their
   * lists name them among those: `Classified` `prev`, `cur`). Undefined, before `load` is called, when the
   * memory cannot hold them (the caller classifies in JavaScript).
   */
  classify(np: number, nc: number, load: (P: Uint32Array, C: Uint32Array) => void): Classified | undefined {
    let size = 1024
    while (size < (np + nc) * 2) size *= 2
    const a = this.layout({
      p: 4 * ENTRY * np,
      c: 4 * ENTRY * nc,
      slots: 4 * size,
      state: np,
      to: 4 * np,
      map: 4 * nc,
      added: 4 * nc,
      todo: 4 * np,
      todoTo: 4 * np,
      out: 20,
    })
    if (a.end > MAX_BYTES || !this.room(a.end)) return undefined
    let buffer = this.memory.buffer
    load(new Uint32Array(buffer, a.p, ENTRY * np), new Uint32Array(buffer, a.c, ENTRY * nc))
    try {
      const answer = this.classifyEntries(
        a.p,
        np,
        a.c,
        nc,
        a.slots,
        size - 1,
        a.state,
        a.to,
        a.map,
        a.added,
        a.todo,
        a.todoTo,
        a.out,
      )
      if (answer !== 0) return undefined
    } catch {
      return undefined
    }
    buffer = this.memory.buffer
    const [duplicates, unchanged, added, todo, kept] = new Uint32Array(buffer, a.out, 5)
    return {
      prev: new Uint32Array(buffer, a.p, ENTRY * todo!).slice(),
      cur: new Uint32Array(buffer, a.c, ENTRY * kept!).slice(),
      added: new Int32Array(buffer, a.added, added).slice(),
      todo: new Int32Array(buffer, a.todo, todo).slice(),
      todoTo: new Int32Array(buffer, a.todoTo, todo).slice(),
      duplicates: duplicates!,
      unchanged: unchanged!,
      bytes: a.end - a.p,
    }
  }

  /** Places for buffers of these sizes from the kernel's heap on, each on 8 bytes, and where they `end`. */
  private layout<K extends string>(sizes: Record<K, number>): Record<K | 'end', number> {
    let p = this.base
    const at = {} as Record<K | 'end', number>
    for (const k in sizes) {
      at[k] = p
      p += (sizes[k] + 7) & ~7
    }
    at.end = p
    return at
  }

  /** The memory grown to `bytes` at least; false when it cannot be (the caller decodes in JavaScript). */
  private room(bytes: number): boolean {
    const have = this.memory.buffer.byteLength
    if (bytes <= have) return true
    try {
      this.memory.grow(Math.ceil((bytes - have) / 65536))
      return true
    } catch {
      return false
    }
  }

  /** The group's sums and keys so far, copied into the caller's arrays (their first `rows` rows). */
  copyInto(
    sumA: Int32Array,
    sumB: Int32Array,
    keys?: {key: Uint8Array; keyA: Int32Array; keyB: Int32Array},
  ): void {
    const buffer = this.memory.buffer
    sumA.set(new Int32Array(buffer, this.at.sumsA, this.rows))
    sumB.set(new Int32Array(buffer, this.at.sumsB, this.rows))
    if (!keys) return
    keys.key.set(new Uint8Array(buffer, this.at.key, this.rows))
    keys.keyA.set(new Int32Array(buffer, this.at.keyA, this.rows))
    keys.keyB.set(new Int32Array(buffer, this.at.keyB, this.rows))
  }
}

/**
 * The WebAssembly API, as far as this file uses it (the project's TypeScript library is ES2023 without the
 * DOM's, where its types live).
 */
interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Memory: new (d: {initial: number}) => WasmMemory
      Module: new (bytes: Uint8Array) => object
      Instance: new (m: object, imports: object) => {exports: object}
    }
  }
).WebAssembly

/** An entry's words (src/changes/entries.ts ENTRY_WORDS, which parquet-kernel.c's EW is too). */
const ENTRY = 6

/** A column only compared (no key). */
const EVERY_ROW = {compared: true, rank: 0}

/** The kernel's memory at most: 1 GiB (a group of 16,384 rows takes about 2 MB besides its chunks). */
const MAX_BYTES = 1 << 30

// parquet-kernel.c's codes
const PHYSICAL: Record<ParquetColumn['physical'], number> = {
  BOOLEAN: 0,
  INT32: 1,
  INT64: 2,
  FLOAT: 4,
  DOUBLE: 5,
  BYTE_ARRAY: 6,
}
const KINDS: Partial<Record<ParquetColumn['kind'], number>> = {
  string: 0,
  number: 1,
  boolean: 2,
  date: 3,
  timestamp: 4,
}
const CODECS: Partial<Record<string, number>> = {UNCOMPRESSED: 0, SNAPPY: 1}

/** Where the texts picked lie in the kernel's memory: [lo, hi), empty when there are none. */
function textSpan(p: Picked): {lo: number; hi: number} {
  const {tag, start, len} = p
  let lo = Infinity
  let hi = 0
  for (let i = 0; i < tag.length; i++) {
    if (tag[i] !== 2) continue
    const at = start[i]!
    if (at < lo) lo = at
    if (at + len[i]! > hi) hi = at + len[i]!
  }
  return lo > hi ? {lo: 0, hi: 0} : {lo, hi}
}

const NO_NUMBERS = new Float64Array(0)
const NO_PLACES = new Uint32Array(0)

/** A chunk's picked values as the kernel left them in its memory (`ParquetKernel.pick`), until its next use. */
interface Picked {
  column: ParquetColumn
  tag: Uint8Array
  num: Float64Array
  start: Uint32Array
  len: Uint32Array
  /** The whole memory (from `base`): a text's bytes lie in the arena, the dictionary's buffer or the chunk's. */
  text: Buffer
  base: number
  arena: number
  size: number
}

/**
 * Every picked value made at once. A dictionary's text (its bytes outside the arena) is decoded once a
 * call, as readRows makes each dictionary value a cell once: the rows of a county share a few cities,
 * loan types, dates.
 */
function madeNow(p: Picked): ParquetCell[] {
  const {column, tag, num, start, len, text} = p
  const arenaEnd = p.arena + p.size
  // a text outside the arena is a dictionary's (or, uncompressed, the chunk's own bytes): made once
  const dictText = new Map<number, string>()
  const out = new Array<ParquetCell>(tag.length)
  for (let i = 0; i < tag.length; i++) {
    const t = tag[i]!
    if (t !== 2) {
      out[i] = t === 0 ? null : numberValueOf(column, num[i]!)
      continue
    }
    const at = start[i]!
    if (at >= p.arena && at < arenaEnd) {
      out[i] = text.toString('utf8', at, at + len[i]!)
      continue
    }
    let known = dictText.get(at)
    if (known === undefined) dictText.set(at, (known = text.toString('utf8', at, at + len[i]!)))
    out[i] = known
  }
  return out
}

/**
 * One column chunk's values at the rows a read-back wants, by their place among those rows (`at`): made
 * all at once (`of`: a few rows, or what the JavaScript decoder gave), or kept as the kernel's tags,
 * numbers and text bytes, copied out of its memory, and each made when asked (`copied`).
 */
export class PickedValues {
  private constructor(
    /** The values, when made all at once (a reader takes them straight from here). */
    readonly made: ParquetCell[] | undefined,
    private readonly raw: Picked | undefined,
    private readonly dictText: Map<number, string> | undefined,
  ) {}

  static of(values: ParquetCell[]): PickedValues {
    return new PickedValues(values, undefined, undefined)
  }

  static copied(p: Picked): PickedValues {
    const texts = p.column.physical === 'BYTE_ARRAY'
    // the bytes of the texts wanted, wherever they lie (the arena, the dictionary's buffer, or the chunk's
    // own bytes when its pages are not compressed): their span, copied once; places kept as they were
    const {lo, hi} = texts ? textSpan(p) : {lo: 0, hi: 0}
    const text = Buffer.from(p.text.subarray(lo, hi))
    return new PickedValues(
      undefined,
      {
        ...p,
        tag: p.tag.slice(),
        // a text column's values are texts (its nulls aside), any other's numbers: only what it uses is
        // kept (a DuckDB file's row group of 122,880 rows, all read back: 17 bytes a value instead of 9)
        num: texts ? NO_NUMBERS : p.num.slice(),
        start: texts ? p.start.slice() : NO_PLACES,
        len: texts ? p.len.slice() : NO_PLACES,
        text,
        base: lo,
      },
      new Map(),
    )
  }

  /** How many rows were wanted. */
  get length(): number {
    return this.made ? this.made.length : this.raw!.tag.length
  }

  /** The value at the i-th wanted row. */
  at(i: number): ParquetCell {
    if (this.made) return this.made[i]!
    const p = this.raw!
    const t = p.tag[i]!
    if (t !== 2) return t === 0 ? null : numberValueOf(p.column, p.num[i]!)
    const at = p.start[i]!
    const from = at - p.base
    if (at >= p.arena && at < p.arena + p.size) return p.text.toString('utf8', from, from + p.len[i]!)
    let known = this.dictText!.get(at)
    if (known === undefined) this.dictText!.set(at, (known = p.text.toString('utf8', from, from + p.len[i]!)))
    return known
  }
}
