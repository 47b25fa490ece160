import {CORE_FIELDS, EXTRA_FIELDS, OPTION_NAMES, OPTIONS} from '../api/spec.js'
import {guardCell} from '../text/csv-cell.js'

/**
 * The one column rule of every flattened output (an export's files, a batch's CSV, a single lookup's CSV,
 * what `sfl stats` and `sfl changes` read back): spec 2.1's standard fields, all of them, in its order;
 * then the unknown top-level fields seen, in first-seen order, one column each (an object or a list as
 * its JSON text); then each option object the key includes (spec 2.2 rule 2 / 2.3 rule 1: present, null or
 * not, exactly when the key has the option) flattened to `Option.Field` in the spec's order, followed by
 * its unknown members in first-seen order. src/pipeline/schema.ts applies it to the run's field ids.
 */
export interface Shape {
  /** Top-level fields, first-seen order. */
  top: string[]
  /** Members of the option objects seen, first-seen order (other objects are one column). */
  nested: Map<string, string[]>
}

export function emptyShape(): Shape {
  return {top: [], nested: new Map()}
}

/** Tracks a Shape with sets so observing a record costs one pass over its keys (the per-record hot path). */
export class ShapeTracker {
  readonly shape: Shape
  private readonly seen = new Set<string>()
  private readonly seenNested = new Map<string, Set<string>>()

  constructor(initial: Shape = emptyShape()) {
    this.shape = {top: [...initial.top], nested: new Map([...initial.nested].map(([k, v]) => [k, [...v]]))}
    for (const k of this.shape.top) this.seen.add(k)
    for (const [k, v] of this.shape.nested) this.seenNested.set(k, new Set(v))
  }

  observe(record: Record<string, unknown>): void {
    for (const k in record) {
      if (!this.seen.has(k)) {
        this.seen.add(k)
        this.shape.top.push(k)
      }
      const v = record[k]
      if (OPTION.has(k) && v !== null && typeof v === 'object' && !Array.isArray(v)) {
        let set = this.seenNested.get(k)
        if (!set) {
          this.seenNested.set(k, (set = new Set()))
          this.shape.nested.set(k, [])
        }
        for (const s in v as Record<string, unknown>)
          if (!set.has(s)) {
            set.add(s)
            this.shape.nested.get(k)!.push(s)
          }
      }
    }
  }
}

/** Record which fields a record carries (first-seen order). */
export function observeShape(shape: Shape, record: Record<string, unknown>): void {
  const t = new ShapeTracker(shape)
  t.observe(record)
  shape.top = t.shape.top
  shape.nested = t.shape.nested
}

export interface Column {
  header: string
  key: string
  sub?: string
}

const CORE = new Set<string>(CORE_FIELDS)
const EXTRA = new Set<string>(EXTRA_FIELDS)
const OPTION = new Set<string>(OPTION_NAMES)

export function columnsFor(shape: Shape): Column[] {
  const cols: Column[] = [...CORE_FIELDS, ...EXTRA_FIELDS].map((k) => ({header: k, key: k}))
  for (const k of shape.top)
    if (!CORE.has(k) && !EXTRA.has(k) && !OPTION.has(k)) cols.push({header: k, key: k})
  // spec 2.2 rule 2 / 2.3 rule 1: an option's columns exist exactly when the key includes it (field present)
  for (const opt of OPTION_NAMES) {
    if (!shape.top.includes(opt)) continue
    const specFields: readonly string[] = OPTIONS[opt]
    const subs = [...specFields, ...(shape.nested.get(opt) ?? []).filter((s) => !specFields.includes(s))]
    for (const s of subs) cols.push({header: `${opt}.${s}`, key: opt, sub: s})
  }
  return cols
}

/** A column from its header name (the inverse of how columns are named: `K`, or `Option.Field`). */
export function columnOf(header: string): Column {
  const dot = header.indexOf('.')
  return dot === -1 ? {header, key: header} : {header, key: header.slice(0, dot), sub: header.slice(dot + 1)}
}

/** Select and order columns by `--fields` (names as in the header); unknown names are a usage error upstream. */
export function selectColumns(all: Column[], fields: readonly string[] | undefined): Column[] {
  if (!fields || fields.length === 0) return all
  return fields.map(
    (f) =>
      all.find((c) => c.header === f) ?? {
        header: f,
        key: f.split('.')[0]!,
        ...(f.includes('.') ? {sub: f.split('.').slice(1).join('.')} : {}),
      },
  )
}

/**
 * One CSV cell: null/absent as an empty cell, booleans true/false, numbers and dates as sent, strings
 * neutralised against formula injection unless `escapeFormulas` is false.
 */
export function cell(value: unknown, escapeFormulas: boolean): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return guardCell(value, escapeFormulas)
  if (typeof value === 'boolean' || typeof value === 'number') return String(value)
  return JSON.stringify(value)
}

/**
 * A record's cells in the columns' order. `sent`: the record's numbers as the service sent them, by column
 * (src/json/number-texts.ts): a number is written as sent (`148800.0`), as an export's CSV writes it.
 */
export function flattenRow(
  record: Record<string, unknown>,
  cols: readonly Column[],
  escapeFormulas: boolean,
  sent?: ReadonlyMap<string, string>,
): string[] {
  return cols.map((c) => {
    const top = record[c.key]
    const v =
      c.sub === undefined
        ? top
        : top !== null && typeof top === 'object'
          ? (top as Record<string, unknown>)[c.sub]
          : undefined
    return typeof v === 'number' && sent?.has(c.header) ? sent.get(c.header)! : cell(v, escapeFormulas)
  })
}
