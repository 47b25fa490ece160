import {openExportSource, TRUSTED_LIMITS, type SourceLimits} from '../io/export-source.js'
import {ExportFileError, parquetReadError, type FlatRecord, type FlatValue} from '../io/export-reader.js'
import type {ParquetKernel} from '../changes/kernel/parquet-kernel.js'
import type {ColumnValues, ParquetColumn, ParquetColumns, RowPresence} from '../io/parquet-reader.js'
import {
  emptyFacts,
  FLAG_FIELDS,
  StatsAccumulator,
  type RecordFacts,
  type StatsReport,
} from '../stats/accumulator.js'
import {boolOf, factsOfFlat, numberOf, textOf} from '../stats/facts.js'
import {GroupedStats} from '../stats/grouped.js'

export interface FileStats {
  run: StatsReport
  counties: Array<{fips: string; report: StatsReport}>
}

/**
 * `sfl stats PATH` and `export_statistics`: the run statistics of an existing export, from the same inputs
 * `sfl changes` reads: an export file (CSV, NDJSON, JSON or Parquet), an `--out-dir` folder or its
 * manifest.json, each checked by the one gate for export paths (src/io/export-source.ts) before it is read.
 * Each file is read as a stream, so memory stays bounded whatever the size (src/stats/grouped.ts): CSV,
 * NDJSON and JSON through the gate's records; Parquet, for the CLI's own user, column by column
 * (src/io/parquet-reader.ts: only the columns the statistics read, a row group at a time; a layout that
 * reader does not take goes through the records too). An untrusted caller's Parquet goes through the gate's
 * records, which reduce free text to the spec's values. By county: a folder's counties are the manifest's
 * (every one listed, an empty county with 0 records), in its order; a file's are grouped by the Fips field
 * (exports hold each county together, but nothing here relies on it). Without `byCounty` only the whole is
 * kept (half the memory and sorting of a one-county file).
 */
export async function statsOfFile(
  path: string,
  byCounty = true,
  /** The gate's limits (src/io/export-source.ts): the CLI's, or `sfl mcp`'s for an untrusted caller. */
  limits: SourceLimits = TRUSTED_LIMITS,
): Promise<FileStats> {
  const source = await openExportSource(path, limits)
  const groups = byCounty ? new GroupedStats() : undefined
  const all = groups?.all ?? new StatsAccumulator()
  const facts = emptyFacts()
  const add = (rec: FlatRecord, county: string | undefined) => {
    if (!groups) return all.add(factsOfFlat(rec, facts))
    const fips = county ?? rec['Fips']
    groups.add(fips === null || fips === undefined ? '(none)' : String(fips), factsOfFlat(rec, facts))
  }
  for (const file of source.files) {
    const county = file.fips
    if (county !== undefined) groups?.open(county)
    try {
      if (file.format === 'parquet' && !limits.untrusted) {
        // the file the gate checked (its real path): the column reader opens it itself
        const pq = await openColumns(file.real)
        if (pq) {
          try {
            await parquetFacts(pq, (f, fips) => {
              if (!groups) all.add(f)
              else groups.add(county ?? fips ?? '(none)', f)
            })
          } catch (error) {
            // a page damaged after the footer read well: one line naming the file, as the record reader says it
            throw parquetReadError(file.path, error)
          } finally {
            pq.close()
          }
          continue
        }
      }
      for await (const rec of source.records(file)) add(rec, county)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (typeof code === 'string' && !(error instanceof ExportFileError))
        throw new ExportFileError(`${file.path}: cannot be read (${code})`)
      throw error
    }
  }
  const reports = groups?.reports() ?? []
  const counties = reports.map(({key, report}) => ({fips: key, report}))
  return {run: groups ? groups.runReport(reports) : all.report(), counties}
}

/** The file open for reading by column, or undefined when its layout is for the record reader. */
async function openColumns(path: string): Promise<ParquetColumns | undefined> {
  const {ParquetColumns, ParquetLayoutError} = await import('../io/parquet-reader.js')
  try {
    return await ParquetColumns.open(path)
  } catch (error) {
    if (error instanceof ParquetLayoutError) return undefined
    throw error
  }
}

const LOAN = 'AssumableMortgage.'

type CellOf = (v: ColumnValues, slot: number) => FlatValue

/** `read` of each slot's value. */
function readEach<T>(v: ColumnValues, cellOf: CellOf, read: (x: FlatValue) => T): T[] {
  const out = new Array<T>(v.size)
  for (let s = 0; s < v.size; s++) out[s] = read(cellOf(v, s))
  return out
}

/** `boolOf` of each slot's value; a BOOLEAN column's straight from its 0 and 1 (a slot a row, most often). */
function flagsOf(v: ColumnValues, cellOf: CellOf): Array<boolean | null> {
  if (v.column.kind !== 'boolean') return readEach(v, cellOf, (x) => boolOf(x))
  const out = new Array<boolean>(v.size)
  for (let s = 0; s < v.size; s++) out[s] = v.num[s] === 1
  return out
}

/** `numberOf` of each slot's value, NaN for none. */
function numbersOf(v: ColumnValues, cellOf: CellOf): Float64Array {
  const out = new Float64Array(v.size)
  for (let s = 0; s < v.size; s++) out[s] = numberOf(cellOf(v, s)) ?? NaN
  return out
}

/**
 * `columns` of row group `g` as parquet-reader.ts readGroup gives them (the `present` ones marked in its
 * mask only), each chunk through the Parquet kernel (src/changes/kernel/), which decodes at full speed
 * where the JavaScript decoder runs cold (issue 32: 50-75 ms of a 200,000-record file's 0.34 s went to
 * decoding, measured), and through readGroup for a chunk the kernel gives back, which names what is
 * wrong with it.
 */
function readGroupFast(
  kernel: ParquetKernel | undefined,
  pq: ParquetColumns,
  g: number,
  columns: readonly ParquetColumn[],
  present: RowPresence,
): ColumnValues[] {
  if (!kernel) return pq.readGroup(g, columns, undefined, present)
  const rows = pq.groups[g]!.rows
  const out = pq.chunks(g, columns).map((c) => {
    const onlyPresence = present.columns.has(c.column.index)
    const v = kernel.slots(c, rows, !onlyPresence)
    if (v && onlyPresence) for (let r = 0; r < rows; r++) if (v.slot[r]! >= 0) present.mask[r] = 1
    return v
  })
  const rest = columns.filter((_, i) => out[i] === undefined)
  if (rest.length) {
    const read = pq.readGroup(g, rest, undefined, present)
    rest.forEach((c, j) => (out[columns.indexOf(c)] = read[j]))
  }
  return out as ColumnValues[]
}

/** A column's slots in a row group and the reading of each slot's value. */
interface Reading<T> {
  slot: Int32Array
  of: ArrayLike<T>
}

/** The readings of one row group's columns (`parquetFacts`); undefined: the file has no such column. */
interface GroupReadings {
  rows: number
  /** 1 where the row carries a loan. */
  loan: Uint8Array
  flags: Array<Reading<boolean | null> | undefined>
  cra: Reading<string | null> | undefined
  fips: Reading<string | undefined> | undefined
  loanType: Reading<string | null> | undefined
  finalValue: Reading<number> | undefined
  confidence: Reading<number> | undefined
  rate: Reading<number> | undefined
  equity: Reading<number> | undefined
}

/** Row `r`'s reading; undefined for a null (or no column). */
function at<T>(x: Reading<T> | undefined, r: number): T | undefined {
  if (!x) return undefined
  const s = x.slot[r]!
  return s < 0 ? undefined : x.of[s]
}

/** Row `r`'s number; undefined for a null or a value that is none (NaN). */
function numberAt(x: Reading<number> | undefined, r: number): number | undefined {
  const v = at(x, r)
  return v === undefined || Number.isNaN(v) ? undefined : v
}

/**
 * Each row's facts to `take`, from its group's readings. A function of its own, apart from the group's
 * decoding: inside parquetFacts this loop was optimised and thrown back 7 times a run (V8's --trace-deopt:
 * "wrong map" as the facts object's number fields took their first numbers), each time with the whole
 * function recompiled (issue 32).
 */
function takeRows(
  g: GroupReadings,
  facts: RecordFacts,
  take: (f: RecordFacts, fips: string | undefined) => void,
): void {
  const flags = g.flags
  for (let r = 0; r < g.rows; r++) {
    for (let i = 0; i < flags.length; i++) facts.flags[i] = at(flags[i], r) ?? null
    facts.cra = at(g.cra, r) ?? null
    facts.finalValue = numberAt(g.finalValue, r)
    facts.confidence = numberAt(g.confidence, r)
    facts.loan = g.loan[r] === 1
    facts.loanType = facts.loan ? (at(g.loanType, r) ?? null) : null
    facts.rate = facts.loan ? numberAt(g.rate, r) : undefined
    facts.equity = facts.loan ? numberAt(g.equity, r) : undefined
    take(facts, at(g.fips, r))
  }
}

/**
 * The facts of every row (src/stats/facts.ts, the meaning `factsOfFlat` gives a record), column by column:
 * only the columns the statistics read are decoded; each distinct value of a column chunk is read once by
 * the facts' own readers (`boolOf`, `textOf`, `numberOf`), then each row takes its slots' readings, and
 * a row carries a loan when any AssumableMortgage column holds a value that is not an empty text. `take`
 * gets one facts object, reused row after row, and the row's Fips (asText) for grouping by county.
 */
async function parquetFacts(
  pq: ParquetColumns,
  take: (f: RecordFacts, fips: string | undefined) => void,
): Promise<void> {
  const {cellOf} = await import('../io/parquet-reader.js')
  const {ParquetKernel} = await import('../changes/kernel/parquet-kernel.js')
  const kernel = ParquetKernel.get()
  const named = (name: string) => pq.column(name)
  const flags = FLAG_FIELDS.map(named)
  const [cra, value, confidence, fips, loanType, rate, equity] = [
    'CRAEligible',
    'FinalValue',
    'ConfidenceScore',
    'Fips',
    `${LOAN}LoanType`,
    `${LOAN}EstimatedInterestRate`,
    `${LOAN}EstimatedEquity`,
  ].map(named)
  const loans = pq.columns.filter((c) => c.name.startsWith(LOAN))
  const valued = [...flags, cra, value, confidence, fips, loanType, rate, equity]
  // a loan column that is not text and not read for its values: only whether each row holds a value
  // (src/io/parquet-reader.ts RowPresence: its values are never decoded); a text's value must be read,
  // as an empty text is no loan
  const presenceOnly = loans.filter((c) => c.kind !== 'string' && !valued.includes(c))
  const wanted = [...new Set([...valued, ...loans])]
  const columns = wanted.filter((c): c is ParquetColumn => c !== undefined)
  const presence = new Set(presenceOnly.map((c) => c.index))
  const facts = emptyFacts()
  for (let g = 0; g < pq.groups.length; g++) {
    const rows = pq.groups[g]!.rows
    const loan = new Uint8Array(rows)
    const values = readGroupFast(kernel, pq, g, columns, {columns: presence, mask: loan})
    const of = (c: ParquetColumn | undefined) => (c ? values[columns.indexOf(c)] : undefined)
    const flagV = flags.map(of)
    const [craV, valueV, confidenceV, fipsV, typeV, rateV, equityV] = [
      cra,
      value,
      confidence,
      fips,
      loanType,
      rate,
      equity,
    ].map(of)
    // each distinct value read once, by the facts' own readers
    const reading = <T>(v: ColumnValues | undefined, of: (v: ColumnValues) => ArrayLike<T>) =>
      v && {slot: v.slot, of: of(v)}
    const text = (v: ColumnValues) => readEach(v, cellOf, textOf)
    const numbers = (v: ColumnValues) => numbersOf(v, cellOf)
    for (const c of loans) {
      if (presence.has(c.index)) continue
      const v = of(c)!
      for (let r = 0; r < rows; r++) {
        const slot = v.slot[r]!
        // factsOfFlat: a loan field that is not null and not an empty text
        if (slot >= 0 && (c.kind !== 'string' || v.end[slot]! > v.start[slot]!)) loan[r] = 1
      }
    }
    takeRows(
      {
        rows,
        loan,
        flags: flagV.map((v) => reading(v, (x) => flagsOf(x, cellOf))),
        cra: reading(craV, text),
        fips: reading(fipsV, (x) => readEach(x, cellOf, (y) => (y === null ? undefined : String(y)))),
        loanType: reading(typeV, text),
        finalValue: reading(valueV, numbers),
        confidence: reading(confidenceV, numbers),
        rate: reading(rateV, numbers),
        equity: reading(equityV, numbers),
      },
      facts,
      take,
    )
    // a row group at a time: Ctrl-C gets in between
    await new Promise((resolve) => setImmediate(resolve))
  }
}
