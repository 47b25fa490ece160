import type {Column, ShapeTracker} from '../render/columns.js'
import {flattenRecord, newFlatRow, type FlatRow} from './row-format.js'

/**
 * CSV rows for exports, one tokenizer pass per record (src/io/row-format.ts): `take` reads a record's
 * bytes (and proves them JSON), notes any column not seen before in the run's shape, and `line` lays the
 * record's cells out in the output's column order. Cells arrive already CSV-quoted and formula-guarded.
 */
export class CsvRows {
  private readonly flat: FlatRow
  private readonly seen = new Set<string>()
  private order: {cols: readonly Column[]; index: Map<string, number>} | undefined

  /** `tagOf`: tags the row's entries for a reader of a few columns (src/io/row-format.ts newFlatRow). */
  constructor(
    private readonly escapeFormulas: boolean,
    tagOf?: (name: string) => number,
  ) {
    this.flat = newFlatRow(tagOf)
  }

  /** Flatten one record; with `shape`, record the columns it brings. True when it brought a new one. */
  take(bytes: Buffer, shape?: ShapeTracker): boolean {
    flattenRecord(bytes, this.flat, {escapeFormulas: this.escapeFormulas})
    if (!shape) return false
    let grew = false
    const names = this.flat.names
    for (let i = 0; i < this.flat.length; i++) {
      const name = names[i]!
      if (this.seen.has(name)) continue
      this.seen.add(name)
      observeColumn(shape, name)
      grew = true
    }
    return grew
  }

  /** The last record taken, as names and CSV cells (read by the run statistics, src/jobs/export-stats.ts). */
  get row(): FlatRow {
    return this.flat
  }

  /** Columns already known (a resumed run's layouts): `take` does not report them as new. */
  know(shape: ShapeTracker, names: readonly string[]): void {
    for (const name of names)
      if (!this.seen.has(name)) {
        this.seen.add(name)
        observeColumn(shape, name)
      }
  }

  /** The last record taken, as one CSV line in `cols` order (a missing column is an empty cell). */
  line(cols: readonly Column[]): string {
    if (this.order?.cols !== cols)
      this.order = {
        cols,
        index: new Map(cols.map((c, i) => [c.sub === undefined ? c.key : `${c.key}.${c.sub}`, i])),
      }
    const out = new Array<string>(cols.length).fill('')
    const {index} = this.order
    for (let i = 0; i < this.flat.length; i++) {
      const at = index.get(this.flat.names[i]!)
      if (at !== undefined) out[at] = this.flat.cells[i]!
    }
    return `${out.join(',')}\r\n`
  }
}

/** `K.S` is a member of the object K (one level, as the columns are named); `K` a value or a null object. */
function observeColumn(shape: ShapeTracker, name: string): void {
  const dot = name.indexOf('.')
  shape.observe(dot === -1 ? {[name]: 0} : {[name.slice(0, dot)]: {[name.slice(dot + 1)]: 0}})
}

/** A column from its header name (the inverse of how columns are named). */
export function columnOf(header: string): Column {
  const dot = header.indexOf('.')
  return dot === -1 ? {header, key: header} : {header, key: header.slice(0, dot), sub: header.slice(dot + 1)}
}
