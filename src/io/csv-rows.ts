import type {Column, ShapeTracker} from '../model/columns.js'
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
  /**
   * The last record's member names and, for the current `order`, each one's output position (-1: not an
   * output column). Records of one export nearly always repeat a shape (the tokenizer hands back the same
   * name strings), so a record that does costs one identity compare per member instead of a Set lookup
   * (`take`) and a Map lookup (`line`) per cell: a profile of `npm run bench` had `line` at 12% of the CSV
   * export's CPU.
   */
  private shapeNames: string[] = []
  private positions: Int32Array | undefined
  private readonly out: string[] = []

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
    // the last record's shape, already observed: every name was seen with it
    if (this.sameShape() && (shape === undefined || this.shapeObserved)) return false
    this.shapeNames = this.flat.names.slice(0, this.flat.length)
    this.positions = undefined
    this.shapeObserved = shape !== undefined
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
    const {index} = this.order
    let positions = this.positions
    if (positions === undefined || this.positionsFor !== cols) {
      positions = new Int32Array(this.shapeNames.length)
      this.shapeNames.forEach((name, i) => (positions![i] = index.get(name) ?? -1))
      this.positions = positions
      this.positionsFor = cols
    }
    const out = this.out
    out.length = cols.length
    out.fill('')
    const cells = this.flat.cells
    for (let i = 0; i < positions.length; i++) {
      const at = positions[i]!
      if (at >= 0) out[at] = cells[i]!
    }
    return `${out.join(',')}\r\n`
  }

  private positionsFor: readonly Column[] | undefined
  private shapeObserved = false

  /** Does the record just taken have the last shape's members, in the same order? */
  private sameShape(): boolean {
    const {names, length} = this.flat
    const last = this.shapeNames
    if (length !== last.length) return false
    for (let i = 0; i < length; i++) if (names[i] !== last[i]) return false
    return true
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
