import {csvLine as cellsLine} from '../text/csv-cell.js'
import {unknownFormat, type TextFormat} from '../model/formats.js'
import type {OutputTarget} from './output.js'

/** The formats this writer frames: the registry's text family (src/model/formats.ts). */
export type RecordFormat = TextFormat

const BOM = '\ufeff'
/**
 * One CSV record with its CRLF line end (RFC 4180 section 2), each cell quoted by src/text/csv-cell.ts;
 * cells arrive already formula-guarded by their caller.
 */
export function csvLine(cells: readonly string[]): string {
  return cellsLine(cells, false)
}

/**
 * The one writer of every long run's output: frames records as CSV (header, CRLF rows), NDJSON (a line
 * each) or JSON (one array, a record a line), on any target. The frame starts at the first record or at
 * `end()`, so a run that writes nothing to a target has not touched it.
 */
export class RecordWriter {
  private started = false
  /** Records written. */
  count = 0

  constructor(
    readonly target: OutputTarget,
    readonly format: RecordFormat,
    private readonly opts: {header?: readonly string[] | undefined; bom?: boolean | undefined} = {},
  ) {}

  private start(): void {
    if (this.started) return
    this.started = true
    const bom = this.opts.bom ? BOM : ''
    switch (this.format) {
      case 'csv':
        this.target.write(`${bom}${csvLine(this.opts.header ?? [])}`)
        return
      case 'json':
        this.target.write('[')
        return
      case 'ndjson':
        return
      default:
        unknownFormat(this.format)
    }
  }

  /** A record as one line of JSON (ndjson and json formats). Returns false: await `target.drain()`. */
  json(line: Buffer | string): boolean {
    this.start()
    const first = this.count++ === 0
    // a line and its end in one write (a change file's 4,000 rows: half the writes)
    if (this.format === 'ndjson') {
      if (typeof line === 'string') return this.target.write(`${line}\n`)
      this.target.write(line)
      return this.target.write('\n')
    }
    this.target.write(first ? '\n' : ',\n')
    return this.target.write(line)
  }

  /** NDJSON copied as whole chunks by the caller: count the records they hold. */
  ndjsonChunks(records: number): void {
    this.start()
    this.count += records
  }

  /** CSV rows copied as whole chunks by the caller (rows in this writer's column order): count them. */
  csvChunks(records: number): void {
    this.start()
    this.count += records
  }

  /** A record as CSV cells (formula guard already applied by the caller). */
  csv(cells: readonly string[]): boolean {
    this.start()
    this.count++
    return this.target.write(csvLine(cells))
  }

  /** A record as a CSV line already encoded (src/pipeline/cells.ts: cells quoted and guarded, CRLF included). */
  csvRow(line: Buffer): boolean {
    this.start()
    this.count++
    return this.target.write(line)
  }

  /** A record as a CSV line already made (cells quoted and guarded, CRLF included). */
  csvText(line: string): boolean {
    this.start()
    this.count++
    return this.target.write(line)
  }

  /** Close the frame (a JSON array ends even when empty). */
  end(): void {
    this.start()
    if (this.format === 'json') this.target.write(this.count === 0 ? ']\n' : '\n]\n')
  }

  get hasStarted(): boolean {
    return this.started
  }
}
