import {
  CORE_FIELDS,
  EXTRA_FIELDS,
  FIELD_RULES,
  OPTION_NAMES,
  OPTION_RULES,
  type FieldRule,
  type OptionName,
} from '../api/spec.js'
import {ENTRY, KEY_E, KEY_ESCAPED, KEY_S, KIND, PARENT} from '../json/walk.js'
import {decodeEscapes} from '../json/values.js'

/**
 * The fields of a run, each with a small integer id: the spec's first (2.1's standard fields in column
 * order, the option objects, then their members `Option.Field` in 2.2 / 2.3 order), then the unknown
 * fields as they are first seen. An id is also a column: the CSV header, the Parquet column and the
 * statistics' slots are found by id, never by comparing names per record.
 */
/** `unknown`: a top-level field the spec does not name (one column; an object or array as its JSON text). */
export type FieldRole = 'standard' | 'option' | 'optionField' | 'unknown' | 'unknownMember'

export interface Field {
  id: number
  /** The column name: `K`, or `K.S` for a member of an option object. */
  name: string
  /** The top-level field's id for a member of an object, else -1. */
  parent: number
  role: FieldRole
  rule: FieldRule | undefined
}

/** Unknown fields a run gives columns to: a hostile stream of ever-new names costs bounded memory. */
export const MAX_UNKNOWN_FIELDS = 1_000

export class Fields {
  readonly list: Field[] = []
  private readonly byName = new Map<string, number>()
  private unknown = 0

  constructor() {
    const rules = FIELD_RULES as Record<string, FieldRule>
    for (const name of [...CORE_FIELDS, ...EXTRA_FIELDS]) this.add(name, -1, 'standard', rules[name])
    for (const opt of OPTION_NAMES) this.add(opt, -1, 'option', undefined)
    for (const opt of OPTION_NAMES) {
      const parent = this.byName.get(opt)!
      for (const [sub, rule] of Object.entries(OPTION_RULES[opt] as Record<string, FieldRule>))
        this.add(`${opt}.${sub}`, parent, 'optionField', rule)
    }
  }

  /** The id of a top-level field (registered when new), or -1 past the cap on unknown fields. */
  top(name: string): number {
    const id = this.byName.get(name)
    if (id !== undefined && this.list[id]!.parent === -1) return id
    return this.fresh(name, -1, 'unknown')
  }

  /** The id of member `sub` of the top-level field `parent`. */
  member(parent: number, sub: string): number {
    const name = `${this.list[parent]!.name}.${sub}`
    const id = this.byName.get(name)
    if (id !== undefined) return id
    return this.fresh(name, parent, 'unknownMember')
  }

  get size(): number {
    return this.list.length
  }

  /** The option objects as ids (the order of `OPTION_NAMES`). */
  optionId(name: OptionName): number {
    return this.byName.get(name)!
  }

  idOf(name: string): number | undefined {
    return this.byName.get(name)
  }

  private fresh(name: string, parent: number, role: FieldRole): number {
    if (this.unknown >= MAX_UNKNOWN_FIELDS) return -1
    this.unknown++
    return this.add(name, parent, role, undefined)
  }

  private add(name: string, parent: number, role: FieldRole, rule: FieldRule | undefined): number {
    const id = this.list.length
    this.list.push({id, name, parent, role, rule})
    this.byName.set(name, id)
    return id
  }
}

/**
 * A member name met before, with the names that followed it (a small transition tree, as V8's hidden
 * classes): the records of one answer share a few shapes, so the next member is nearly always one of
 * `next`, found by comparing its bytes in place, four at a time; no name is decoded or hashed per record.
 */
class KeyNode {
  readonly next: KeyNode[] = []
  /** For a start node: every member name of its object seen so far, by its raw text (the miss path). */
  readonly children = new Map<string, KeyNode>()
  /** For a top-level member: the start node of its object's members. */
  sub: KeyNode | undefined
  readonly length: number
  /** The name's bytes as little-endian 32-bit words, then the bytes after the last whole word. */
  readonly words: Int32Array
  readonly tail: Uint8Array
  constructor(
    bytes: Uint8Array,
    readonly id: number,
    /** The member's value is an option object (spec 2.2, 2.3), whose members are columns of their own. */
    readonly option: boolean,
  ) {
    this.length = bytes.length
    const whole = bytes.length >> 2
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
    this.words = Int32Array.from({length: whole}, (_, w) => view.getInt32(4 * w, true))
    this.tail = Uint8Array.from(bytes.subarray(whole * 4))
  }
}

const MAX_NEXT = 8
const MAX_CHILDREN = 10_000
const NONE = new Uint8Array(0)

/** Names the members of records (the walk's entries) with field ids. */
export class Namer {
  private readonly root = new KeyNode(NONE, -1, false)
  /** Per entry of the records named lately: its field id (-1: not a column of its own). */
  ids = new Int32Array(256)

  constructor(readonly fields: Fields) {}

  /**
   * Name the `count` entries from `first` of one record (in `bytes`), into `ids` at the same indexes.
   * A member name is read four bytes at a time through a DataView: a key is followed at least by `":` and
   * a value in the record, so a word read never passes its end.
   */
  name(bytes: Buffer, entries: Int32Array, first: number, count: number): void {
    if (first + count > this.ids.length) {
      const grown = new Int32Array(Math.max(this.ids.length * 2, first + count))
      grown.set(this.ids)
      this.ids = grown
    }
    const ids = this.ids
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
    const end = first + count
    let prev = this.root
    for (let i = first; i < end;) {
      const node = this.find(this.root, prev, bytes, dv, entries, i, -1)
      ids[i++] = node.id
      prev = node
      if (!node.option) {
        // an unknown object is one column of JSON text: its members are none
        while (i < end && entries[i * ENTRY + PARENT] !== -1) ids[i++] = -1
        continue
      }
      const start = (node.sub ??= new KeyNode(NONE, -1, false))
      let sp = start
      while (i < end && entries[i * ENTRY + PARENT] !== -1) {
        const sn = this.find(start, sp, bytes, dv, entries, i, node.id)
        ids[i++] = sn.id
        sp = sn
      }
    }
  }

  private find(
    start: KeyNode,
    prev: KeyNode,
    bytes: Buffer,
    dv: DataView,
    entries: Int32Array,
    i: number,
    parent: number,
  ): KeyNode {
    const at = i * ENTRY
    const ks = entries[at + KEY_S]!
    const ke = entries[at + KEY_E]!
    const len = ke - ks
    const cands = prev.next
    next: for (let c = 0; c < cands.length; c++) {
      const cand = cands[c]!
      if (cand.length !== len) continue
      const words = cand.words
      let p = ks
      for (let w = 0; w < words.length; w++, p += 4) if (dv.getInt32(p, true) !== words[w]) continue next
      const tail = cand.tail
      for (let k = 0; k < tail.length; k++) if (bytes[p + k] !== tail[k]) continue next
      return cand
    }
    return this.miss(start, cands, bytes, entries, at, parent)
  }

  /** A name not among the usual successors: looked up by its text, and remembered. */
  private miss(
    start: KeyNode,
    cands: KeyNode[],
    bytes: Buffer,
    entries: Int32Array,
    at: number,
    parent: number,
  ): KeyNode {
    const ks = entries[at + KEY_S]!
    const ke = entries[at + KEY_E]!
    const raw = bytes.toString('utf8', ks, ke)
    let node = start.children.get(raw)
    if (!node) {
      const name = (entries[at + KIND]! & KEY_ESCAPED) === 0 ? raw : decodeEscapes(raw)
      const id = parent === -1 ? this.fields.top(name) : this.fields.member(parent, name)
      node = new KeyNode(bytes.subarray(ks, ke), id, id >= 0 && this.fields.list[id]!.role === 'option')
      if (start.children.size < MAX_CHILDREN) start.children.set(raw, node)
    }
    if (cands.length < MAX_NEXT) cands.push(node)
    return node
  }
}
