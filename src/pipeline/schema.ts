import {OPTION_NAMES} from '../api/spec.js'
import {columnsFor, emptyShape} from '../model/columns.js'
import type {Fields} from './fields.js'
import type {RecordView} from './view.js'

/**
 * The columns of one run, the same in every file it writes (every county of an `--out-dir`, every format):
 * the one column rule (src/model/columns.ts `columnsFor`) over every field seen anywhere in the run. A
 * column that appears late makes the files written before it out of date; the run rewrites them at its
 * end (src/jobs/export-outputs.ts). `--fields` fixes the columns instead.
 */
export class RunSchema {
  private seen = new Uint8Array(256)
  private order: number[] = []
  private cached: Int32Array | undefined
  private readonly fixed: Int32Array | undefined

  constructor(
    readonly fields: Fields,
    selected?: readonly string[],
  ) {
    this.fixed = selected?.length
      ? Int32Array.from(selected, (name) => {
          const dot = name.indexOf('.')
          return dot === -1
            ? fields.top(name)
            : fields.member(fields.top(name.slice(0, dot)), name.slice(dot + 1))
        })
      : undefined
  }

  /** The option objects the run has seen (the key includes them), by name. */
  get options(): string[] {
    return OPTION_NAMES.filter((o) => this.has(this.fields.optionId(o)))
  }

  /**
   * Note the fields of a record written; true when a column appeared. Only the fields first met lately
   * (`fresh`: the names the walk had not met before) can be new, so the usual record costs one length test.
   */
  observe(view: RecordView, fresh: number[]): boolean {
    if (fresh.length === 0) return false
    let grew = false
    // in the order they were met: the columns of unknown fields come in first-seen order
    let kept = 0
    for (let k = 0; k < fresh.length; k++) {
      const id = fresh[k]!
      if (this.has(id)) continue
      if (view.entry(id) >= 0) grew = this.mark(id) || grew
      else fresh[kept++] = id
    }
    fresh.length = kept
    return grew
  }

  /** Note columns already known (a resumed run's layouts, an earlier file's header). */
  know(names: readonly string[]): void {
    for (const name of names) {
      const dot = name.indexOf('.')
      const top = this.fields.top(dot === -1 ? name : name.slice(0, dot))
      if (top >= 0) this.mark(top)
      if (dot !== -1 && top >= 0 && this.fields.list[top]!.role === 'option') {
        const sub = this.fields.member(top, name.slice(dot + 1))
        if (sub >= 0) this.mark(sub)
      }
    }
  }

  /** The run's columns now, as field ids in output order (the same array until a column appears). */
  columns(): Int32Array {
    if (this.fixed) return this.fixed
    if (this.cached) return this.cached
    // the one column rule (src/model/columns.ts), over the fields seen in first-seen order
    const list = this.fields.list
    const shape = emptyShape()
    for (const id of this.order) {
      const f = list[id]!
      if (f.parent === -1) shape.top.push(f.name)
      else if (f.role === 'unknownMember') {
        const opt = list[f.parent]!.name
        const subs = shape.nested.get(opt) ?? []
        shape.nested.set(opt, [...subs, f.name.slice(opt.length + 1)])
      }
    }
    this.cached = Int32Array.from(columnsFor(shape), (c) => this.fields.idOf(c.header)!)
    return this.cached
  }

  /** Column names (headers) of `columns`. */
  names(columns: Int32Array = this.columns()): string[] {
    return Array.from(columns, (id) => this.fields.list[id]!.name)
  }

  private has(id: number): boolean {
    return id < this.seen.length && this.seen[id] === 1
  }

  private mark(id: number): boolean {
    if (id >= this.seen.length) {
      const grown = new Uint8Array(Math.max(id + 1, this.seen.length * 2))
      grown.set(this.seen)
      this.seen = grown
    }
    if (this.seen[id] === 1) return false
    this.seen[id] = 1
    this.order.push(id)
    const f = this.fields.list[id]!
    // an option's members become columns with the option; a known member is no new column by itself
    const grows = f.role === 'unknown' || f.role === 'option' || f.role === 'unknownMember'
    if (grows) this.cached = undefined
    return grows && this.fixed === undefined
  }
}
