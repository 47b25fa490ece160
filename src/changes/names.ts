import {OPTION_NAMES} from '../api/spec.js'
import {Fields, Namer} from '../pipeline/fields.js'
import {nameSeed, type Lanes} from './row-digest.js'

/** What a field is to the comparison (src/changes/compare.ts): a bit each. */
export const ROLE_COMPARED = 1
export const ROLE_ID = 2
export const ROLE_APN = 4
export const ROLE_FIPS = 8
/** An option object (spec 2.2, 2.3): its members are the fields `Option.Field`. */
export const ROLE_OPTION = 16
/** A field left out of the comparison (`--ignore-fields`): a byte digest skips its value. */
export const ROLE_IGNORED = 32

const OPTIONS: ReadonlySet<string> = new Set(OPTION_NAMES)

/**
 * The field names one side's scan meets, as the record pipeline numbers them (src/pipeline/fields.ts: the
 * spec's fields first, in its order, then the unknown ones as first met, `Option.Field` for an option
 * object's members), each with its seed (src/changes/row-digest.ts) and its role here. The JSON walk names
 * members with these ids as it reads them (`namer`); a CSV header and a record object's keys are looked up
 * by text (`ofText`). Ids are per scan, never compared across sides: seeds come from the names alone.
 */
export class FieldIds {
  readonly fields = new Fields()
  readonly namer = new Namer(this.fields)
  role = new Int32Array(256)
  seeds: Lanes[] = []
  /** Ids whose role and seed are set: [0, known). */
  known = 0

  constructor(private readonly ignore: ReadonlySet<string>) {
    this.grow()
  }

  get size(): number {
    return this.fields.size
  }

  /** Roles and seeds for the ids made since the last call (the walk makes ids as it meets names). */
  grow(): void {
    const n = this.fields.size
    if (n > this.role.length) {
      const bigger = new Int32Array(Math.max(n, this.role.length * 2))
      bigger.set(this.role)
      this.role = bigger
    }
    for (let id = this.known; id < n; id++) {
      const f = this.fields.list[id]!
      const name = f.name
      this.seeds[id] = nameSeed(name)
      this.role[id] =
        f.role === 'option'
          ? ROLE_OPTION
          : (this.ignore.has(name) ? ROLE_IGNORED : ROLE_COMPARED) |
            (name === 'ServicePropertyID' ? ROLE_ID : 0) |
            (name === 'APN' ? ROLE_APN : 0) |
            (name === 'Fips' ? ROLE_FIPS : 0)
    }
    this.known = n
  }

  /**
   * The id of a flat column name (a CSV header, a key of export-reader's record): `Option.Field` is the
   * option's member, anything else a top-level field; -1 past the cap on unknown names.
   */
  ofText(name: string): number {
    let id = this.fields.idOf(name)
    if (id === undefined) {
      const dot = name.indexOf('.')
      const opt = dot > 0 ? name.slice(0, dot) : ''
      id = OPTIONS.has(opt)
        ? this.fields.member(this.fields.top(opt), name.slice(dot + 1))
        : this.fields.top(name)
    }
    if (this.fields.size > this.known) this.grow()
    return id
  }

  /** The flat column name of an id. */
  nameOf(id: number): string {
    return this.fields.list[id]!.name
  }
}
