import type {RecordRedactor} from '../api/secrets.js'
import {
  CORE_FIELDS,
  EXTRA_FIELDS,
  FIELD_RULES,
  OPTION_NAMES,
  OPTION_RULES,
  type FieldRule,
  type OptionName,
} from '../api/spec.js'
import type {NameNode, Names} from '../json/walk.js'
import {decodeEscapes} from '../json/values.js'

/**
 * The fields of a run, each with a small integer id: the spec's first (2.1's standard fields in column
 * order, the option objects, then their members `Option.Field` in 2.2 / 2.3 order), then the unknown
 * fields as they are first seen. An id is also a column: the CSV header, the Parquet column and the
 * statistics' slots are found by id, never by comparing names per record.
 */
/**
 * `unknown`: a top-level field the spec does not name (one column; an object or array as its JSON text);
 * `optionField`: a member spec 2.2 / 2.3 names; `unknownMember`: any other member of an option object (a
 * column after the option's spec members, src/model/columns.ts).
 */
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
  /** The first field of each column name (`idOf`): a top-level field named `A.B` shares its name with member B of A. */
  private readonly byName = new Map<string, number>()
  /** Top-level fields by name, and members by their parent's id and name: a name never stands for another field. */
  private readonly tops = new Map<string, number>()
  private readonly members = new Map<string, number>()
  private unknown = 0

  constructor() {
    const rules = FIELD_RULES as Record<string, FieldRule>
    for (const name of [...CORE_FIELDS, ...EXTRA_FIELDS]) this.add(name, -1, 'standard', rules[name])
    for (const opt of OPTION_NAMES) this.add(opt, -1, 'option', undefined)
    for (const opt of OPTION_NAMES) {
      const parent = this.byName.get(opt)!
      for (const [sub, rule] of Object.entries(OPTION_RULES[opt] as Record<string, FieldRule>))
        this.add(`${opt}.${sub}`, parent, 'optionField', rule, sub)
    }
  }

  /** The id of a top-level field (registered when new), or -1 past the cap on unknown fields. */
  top(name: string): number {
    return this.tops.get(name) ?? this.fresh(name, -1, 'unknown')
  }

  /** The id of member `sub` of the top-level field `parent`. */
  member(parent: number, sub: string): number {
    const id = this.members.get(`${parent}.${sub}`)
    if (id !== undefined) return id
    return this.fresh(`${this.list[parent]!.name}.${sub}`, parent, 'unknownMember', sub)
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

  private fresh(name: string, parent: number, role: FieldRole, sub = ''): number {
    if (this.unknown >= MAX_UNKNOWN_FIELDS) return -1
    this.unknown++
    return this.add(name, parent, role, undefined, sub)
  }

  private add(name: string, parent: number, role: FieldRole, rule: FieldRule | undefined, sub = ''): number {
    const id = this.list.length
    this.list.push({id, name, parent, role, rule})
    if (parent === -1) this.tops.set(name, id)
    else this.members.set(`${parent}.${sub}`, id)
    if (!this.byName.has(name)) this.byName.set(name, id)
    return id
  }
}

/**
 * A member name met before (src/json/walk.ts NameNode), with the names that followed it: the walk
 * predicts each name from these and compares their bytes as it reads the key.
 */
class KeyNode implements NameNode {
  readonly next: KeyNode[] = []
  /** For a start node: every member name of its object seen so far, by its raw text (the miss path). */
  readonly children = new Map<string, KeyNode>()
  /** For an option member: the start node of its object's members. */
  start: KeyNode | undefined
  readonly words: Int32Array
  readonly mask: number
  constructor(
    readonly bytes: Uint8Array,
    readonly id: number,
    readonly option: boolean,
    readonly escaped: boolean,
  ) {
    // the name and its closing quote, a word at a time; the last word's bytes past them masked out
    const padded = new Uint8Array((bytes.length + 4) & ~3)
    padded.set(bytes)
    padded[bytes.length] = 0x22
    const view = new DataView(padded.buffer)
    this.words = Int32Array.from({length: padded.length >> 2}, (_, i) => view.getInt32(4 * i, true))
    const tail = (bytes.length + 1) & 3
    this.mask = tail === 0 ? -1 : (1 << (8 * tail)) - 1
  }
}

/** How many successors a name keeps, and how many names a start node remembers: a hostile stream of ever-new names costs bounded memory. */
const MAX_NEXT = 8
const MAX_CHILDREN = 10_000
const NONE = new Uint8Array(0)

/** The names of a run's records (src/json/walk.ts `Names`): field ids for the member names the walk meets. */
export class Namer implements Names {
  readonly root = new KeyNode(NONE, -1, false, false)
  /** Ids of fields first met lately, not yet seen in a record written (src/pipeline/schema.ts takes them). */
  readonly fresh: number[] = []

  constructor(
    readonly fields: Fields,
    /** The run's redactor: a name written with escapes is decoded here, so the run its escapes hid is masked here too. */
    private readonly redactor?: RecordRedactor,
  ) {}

  sub(node: NameNode): NameNode {
    const k = node as KeyNode
    return (k.start ??= new KeyNode(NONE, -1, false, false))
  }

  miss(
    b: Uint8Array,
    ks: number,
    ke: number,
    escaped: boolean,
    start: NameNode,
    prev: NameNode,
    parent: NameNode | undefined,
  ): NameNode {
    const from = start as KeyNode
    const raw = Buffer.from(b.buffer, b.byteOffset + ks, ke - ks).toString('utf8')
    let node = from.children.get(raw)
    if (!node) {
      // raw names come masked (the redactor ran over the bytes); a decoded one is masked by the same rule
      // (the records stage writes that record again masked, and its names then come to the same field)
      const name = escaped ? (this.redactor?.maskText(decodeEscapes(raw), false) ?? decodeEscapes(raw)) : raw
      const id = parent === undefined ? this.fields.top(name) : this.fields.member(parent.id, name)
      const option = id >= 0 && this.fields.list[id]!.role === 'option'
      node = new KeyNode(Uint8Array.from(b.subarray(ks, ke)), id, option, escaped)
      if (from.children.size < MAX_CHILDREN) from.children.set(raw, node)
      if (id >= 0) this.fresh.push(id)
    }
    const cands = (prev as KeyNode).next
    if (cands.length < MAX_NEXT && !cands.includes(node)) cands.push(node)
    return node
  }
}
