import {ARRAY, ESCAPED, FALSE, NULL, NUMBER, OBJECT, STRING, TRUE} from '../json/walk.js'
import {compactJson, hasLayout, numberValue, stringValue} from '../json/values.js'
import type {Column} from '../model/columns.js'
import {keeps, whereColumns, type ValueOf, type Where} from '../model/where.js'
import type {Fields} from './fields.js'
import type {RecordView} from './view.js'

/**
 * The `--where` stage (src/model/where.ts): does the record in a view pass the filter? Its values are read
 * where the walk found them, only for the columns the filter names (each column's field id looked up once,
 * not per record), with the meaning the exported row gives them: a string as its text, a number as its
 * value, true/false, null (and an absent field) as SQL NULL, an object or a list as its compact JSON text
 * (the CSV cell's). Nothing else of the record is read, and no object is built for it.
 */
export class WhereFilter {
  private readonly ids = new Map<Column, number>()
  private view: RecordView | undefined
  private readonly value: ValueOf = (c) => this.read(this.ids.get(c) ?? -1)

  constructor(
    readonly where: Where,
    fields: Fields,
  ) {
    // a filter names only the spec's fields (parseWhere refuses others), all of which have ids up front
    for (const c of whereColumns(where)) this.ids.set(c, fields.idOf(c.header) ?? -1)
  }

  /** Whether the record in `view` is kept: the filter is true for it (unknown drops it, as SQL's WHERE does). */
  keeps(view: RecordView): boolean {
    this.view = view
    try {
      return keeps(this.where, this.value)
    } finally {
      this.view = undefined
    }
  }

  private read(id: number): unknown {
    const view = this.view!
    const e = view.entry(id)
    if (e < 0) return undefined
    const b = view.bytes
    const s = view.start(e)
    const t = view.end(e)
    switch (view.kind(e)) {
      case STRING:
        return stringValue(b, s, t, (view.flags(e) & ESCAPED) !== 0)
      case NUMBER:
        return numberValue(b, s, t)
      case TRUE:
        return true
      case FALSE:
        return false
      case NULL:
        return null
      case OBJECT:
      case ARRAY:
        return view.spaced && hasLayout(b, s, t)
          ? compactJson(b.subarray(s, t)).toString('utf8')
          : b.toString('utf8', s, t)
      default:
        return undefined
    }
  }
}
