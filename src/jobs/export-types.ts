import type {HttpClient} from '../api/client.js'
import type {SflError} from '../errors.js'
import type {ParquetOptions} from '../io/parquet-codecs.js'
import type {CountyUnit} from '../pipeline/county.js'
import type {ExportFormat} from '../model/formats.js'
import type {Scheduler} from '../schedule/scheduler.js'
import type {ExportStatsResult} from './export-stats.js'
import type {Outcome} from './outcome.js'
import type {JobDeps} from './run.js'

/** The types of a county export: what it is asked (ExportRequest), what it needs, and what it reports. */
export type {ExportFormat}

export interface ExportRequest {
  fips: string[]
  out?: string | undefined
  format: ExportFormat
  fields?: string[] | undefined
  restart: boolean
  bom: boolean
  escapeFormulas: boolean
  /** `--strict`: records that break the spec's rules are rejected (listed, not written), exit 7. */
  strict?: boolean | undefined
  /** Poison-record cap: a record larger than this is skipped into the rejects list. */
  maxRecordBytes?: number | undefined
  /** `--out-dir`: each county to its own file, recorded in DIR/manifest.json; the checkpoint and lock live in DIR. */
  outDir?: string | undefined
  /** `--max-age` (with outDir): counties whose manifest entry is younger are skipped as fresh. */
  maxAgeMs?: number | undefined
  /** The clock of manifest times (tests). */
  now?: (() => number) | undefined
  /** Gather the run statistics (default true). */
  stats?: boolean | undefined
  /**
   * `--where` (src/model/where.ts), as given, trimmed: rows are filtered after fetching (the requests are
   * the same); the files, the stream and the statistics hold the rows it keeps. Part of the checkpoint's
   * request: a resume with another filter is refused.
   */
  where?: string | undefined
  /**
   * format parquet: `--parquet-compression` and `--parquet-row-group-size` (src/io/parquet-codecs.ts
   * DEFAULT_PARQUET when absent). Part of what the checkpoint records (src/jobs/events.ts exportHeader).
   */
  parquet?: ParquetOptions | undefined
}

export interface ExportDeps extends JobDeps {
  client: HttpClient
  scheduler: Scheduler
  baseUrl: string
  /** The key, masked wherever an answer echoes it (spec 5.5). */
  apiKey?: string | undefined
  onProgress?: (p: {
    countiesDone: number
    counties: number
    records: number
    expected?: number | undefined
  }) => void
}

export interface CountyReport {
  fips: string
  /** Undefined when the run stopped before the county ended. */
  outcome?: Outcome
  records: number
  pages: number
}

export interface ExportSummary {
  counties: CountyReport[]
  written: number
  resumedUnits: number
  stopped?: SflError | undefined
  /** The checkpoint kept for a rerun, when some county is not final. */
  checkpoint?: string | undefined
  /** Whether the output (file or stdout) received the finished counties. */
  wrote: boolean
  /** Records skipped (broken, over a cap, or breaking the spec with --strict), with where they were. */
  rejected: Array<{fips: string; page: number; record: number; reason: string}>
  /** The file listing them, beside --out (in --out-dir). */
  rejectsFile?: string | undefined
  /** Records dropped as repeats of a ServicePropertyID their county already had (the first kept). */
  duplicates: number
  /** Records fetched that `--where` did not keep (0 without it). */
  filtered: number
  /** Records written although they break the spec's rules, by field (without --strict). */
  violations: Array<{field: string; records: number}>
  /** Places where the service echoed the API key in its answers (masked in the output). */
  keyEchoes: number
  /** The run's columns (every file has them) and the option objects the key includes. */
  columns: string[]
  options: string[]
  /** --out-dir: the asked counties skipped as fresh (--max-age), in the order asked. */
  fresh: string[]
  /** --out-dir: county files written by this run. */
  filesWritten: number
  /** --out-dir: county files rewritten at the end with the run's final columns. */
  filesRewritten: number
  /** The statistics of the counties that ended (absent with stats off). */
  stats?: ExportStatsResult | undefined
  /** Parquet, xlsx: values of another type than the spec's, by column (written as the registry's `unfitAs`). */
  unfit?: Array<{column: string; count: number}> | undefined
  /** xlsx: texts longer than Excel's 32,767 characters a cell, cut to that many, by column (spec 2.1 sets no length). */
  cut?: Array<{column: string; count: number}> | undefined
  exitCode: number
}

export interface Unit extends CountyUnit {
  index: number
  outcome?: Outcome | undefined
  /** Pages already copied to a streaming stdout. */
  flushed: number
  /** --out-dir: the county's file and manifest entry are written (its part files are gone), in these columns (a schema key; '' unknown). */
  written?: string | undefined
}
