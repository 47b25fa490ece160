import {ExportFileError, readExport, type FlatRecord} from '../io/export-reader.js'
import {exportFiles, type ExportFiles} from '../io/export-files.js'
import type {ColumnValues, ParquetColumns} from '../io/parquet-reader.js'
import {emptyFacts, FLAG_FIELDS, StatsAccumulator, type StatsReport} from '../stats/accumulator.js'
import {factsOfFlat} from '../stats/facts.js'
import {GroupedStats} from '../stats/grouped.js'

export interface FileStats {
  run: StatsReport
  counties: Array<{fips: string; report: StatsReport}>
}

/**
 * `sfl stats PATH`: the run statistics of an existing export, from the same inputs `sfl changes` reads
 * (src/io/export-files.ts): an export file (CSV, NDJSON, JSON or Parquet), an `--out-dir` folder or its
 * manifest.json.
 */
export async function statsOfFile(path: string, byCounty = true): Promise<FileStats> {
  return statsOfExport(await exportFiles(path), byCounty)
}

/**
 * The statistics of an export's files, already resolved (src/io/export-files.ts `exportFiles`, or a
 * caller's own checked list): each read as a stream, so memory stays bounded whatever the size
 * (src/stats/grouped.ts). CSV, NDJSON and JSON through src/io/export-reader.ts's records; Parquet column by
 * column (src/io/parquet-reader.ts: only the columns the statistics read, a row group at a time; a layout
 * that reader does not take goes through the records too). By county: a folder's counties are the
 * manifest's (every one listed, an empty county with 0 records), in its order; a file's are grouped by the
 * Fips field (exports hold each county together, but nothing here relies on it). Without `byCounty` only
 * the whole is kept (half the memory and sorting of a one-county file).
 */
export async function statsOfExport(exp: ExportFiles, byCounty = true): Promise<FileStats> {
  const groups = byCounty ? new GroupedStats() : undefined
  const all = groups?.all ?? new StatsAccumulator()
  const facts = emptyFacts()
  const add = (rec: FlatRecord, county: string | undefined) => {
    if (!groups) return all.add(factsOfFlat(rec, facts))
    const fips = county ?? rec['Fips']
    groups.add(fips === null || fips === undefined ? '(none)' : String(fips), factsOfFlat(rec, facts))
  }
  for (const file of exp.files) {
    const county = file.fips
    if (county !== undefined) groups?.open(county)
    try {
      if (file.format === 'parquet' || (file.format === undefined && /\.parquet$/i.test(file.path))) {
        const pq = await openColumns(file.path)
        if (pq) {
          try {
            await parquetRecords(pq, (rec) => add(rec, county))
          } finally {
            pq.close()
          }
          continue
        }
      }
      for await (const rec of readExport(file.path, file.format)) add(rec, county)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (typeof code === 'string' && !(error instanceof ExportFileError))
        throw new ExportFileError(`${file.path}: cannot be read (${code})`)
      throw error
    }
  }
  const counties = groups?.reports().map(({key, report}) => ({fips: key, report})) ?? []
  return {run: all.report(), counties}
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
/** The loan columns the statistics read for their values; the others only say a loan is there. */
const LOAN_VALUES = new Set([`${LOAN}LoanType`, `${LOAN}EstimatedInterestRate`, `${LOAN}EstimatedEquity`])
const READ = new Set<string>([...FLAG_FIELDS, 'CRAEligible', 'FinalValue', 'ConfidenceScore', 'Fips'])

/**
 * The facts' fields of every row, as a record src/stats/facts.ts reads (`factsOfFlat`): only the columns
 * it reads are decoded, into one record object reused row after row. A loan column whose value the facts
 * do not read stands as `true` when it holds a value ('' when an empty text), null when not: all
 * `factsOfFlat` asks of it is whether the record carries a loan.
 */
async function parquetRecords(pq: ParquetColumns, take: (rec: FlatRecord) => void): Promise<void> {
  const {cellOf} = await import('../io/parquet-reader.js')
  const columns = pq.columns.filter((c) => READ.has(c.name) || c.name.startsWith(LOAN))
  const rec: FlatRecord = {}
  for (let g = 0; g < pq.groups.length; g++) {
    const values = pq.readGroup(g, columns)
    // a dictionary's values are decoded once for all the rows that use them
    const texts = values.map((v) => new Array<string | number | boolean | null | undefined>(v.size))
    const valueOf = (v: ColumnValues, i: number, slot: number) => {
      const known = texts[i]![slot]
      return known !== undefined ? known : (texts[i]![slot] = cellOf(v, slot))
    }
    for (let r = 0; r < pq.groups[g]!.rows; r++) {
      for (let i = 0; i < values.length; i++) {
        const v = values[i]!
        const slot = v.slot[r]!
        const name = v.column.name
        if (slot < 0) rec[name] = null
        else if (!name.startsWith(LOAN) || LOAN_VALUES.has(name)) rec[name] = valueOf(v, i, slot)
        else rec[name] = v.column.kind === 'string' && v.start[slot] === v.end[slot] ? '' : true
      }
      take(rec)
    }
    // a row group at a time: Ctrl-C gets in between
    await new Promise((resolve) => setImmediate(resolve))
  }
}
