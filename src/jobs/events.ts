import * as z from 'zod/mini'

import {FIELD_RULES} from '../api/spec.js'
import {CheckpointError} from '../errors.js'
import {DEFAULT_PARQUET, type ParquetOptions} from '../io/parquet-codecs.js'
import {PART_NAME} from '../pipeline/spool.js'
import type {JournalHeader} from './journal.js'

/**
 * Every event a long run writes to its checkpoint journal (src/jobs/journal.ts), typed, with the one
 * decoder that reads them back, and the header a county export's journal starts with. Everything that
 * reads a checkpoint reads it through `readJournal` (the header check) and `decodeEvent`: the run that
 * continues it and the plan of `--dry-run` and `plan_export` (src/lib/dry-run.ts), so the plan refuses
 * what the run refuses, with the same message. An event the decoder does not know, or one whose values
 * are not what this version writes (a part file named with a folder or `..`, a negative count), is
 * refused: the checkpoint was edited or written by another version, and the run says so (exit 2, naming
 * --restart) rather than act on it. A part file is only ever a plain name inside the run's own parts
 * folder.
 */
const fips = z.string().check(z.regex(/^\d{5}$/))
const count = z.int().check(z.nonnegative())
const serviceId = z.int().check(z.positive(), z.lte(FIELD_RULES.ServicePropertyID.max))
const partName = z.string().check(z.regex(PART_NAME, 'a part file name'))
const rejected = z.array(z.object({index: count, reason: z.string()}))

const outcome = z.object({
  kind: z.enum(['done', 'empty', 'forbidden', 'malformed', 'failed']),
  records: count,
  error: z.optional(z.string()),
  exitCode: z.int(),
  skipped: z.optional(count),
})

export const exportEvent = z.discriminatedUnion('t', [
  z.object({t: z.literal('layout'), id: count, cols: z.array(z.string())}),
  z.object({
    t: z.literal('page'),
    u: fips,
    n: z.int().check(z.positive()),
    records: count,
    file: partName,
    segs: z.optional(z.array(z.object({file: partName, layout: count, records: count}))),
    next: z.nullable(z.string()),
    rejected: z.optional(rejected),
    dups: z.optional(count),
    /** Records --where did not keep. */
    filtered: z.optional(count),
    /** Their ServicePropertyIDs (spec 2.1), so a resumed county drops a later repeat as one run does. */
    dropped: z.optional(z.array(serviceId)),
    violations: z.optional(z.record(z.string(), count)),
    url: z.optional(z.string()),
  }),
  z.object({t: z.literal('end'), u: fips, outcome}),
  // --out-dir: the county's file is in place; `schema` names the columns it was written with
  z.object({t: z.literal('written'), u: fips, schema: z.optional(z.string())}),
  z.object({t: z.literal('reset'), u: fips}),
  // the rate-limit window the run spent (spec 8.3): a rerun before its reset waits instead of sending a 429
  z.object({t: z.literal('window'), resetAt: z.number(), limit: z.optional(count)}),
])
export type ExportEvent = z.infer<typeof exportEvent>

const record = z.record(z.string(), z.unknown())
/** A batch's lookup key (src/jobs/batch-input.ts compactKey): 12 bytes as 16 base64url characters. */
const lookupKey = z.string().check(z.regex(/^[A-Za-z0-9_-]{16}$/, 'a lookup key'))

export const batchEvent = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('row'),
    k: lookupKey,
    s: z.enum(['ok', 'matched_without_unit', 'not_found', 'invalid', 'forbidden', 'malformed', 'error']),
    e: z.nullable(z.string()),
    /** The record(s) of the answer: one, or a list when the service answered with several. */
    r: z.nullable(z.union([record, z.array(record)])),
    /**
     * Where the answer came from when not from the row's own lookup: `scan` (the county-wide form this run
     * read, src/jobs/batch-scan.ts) or `export` (an --out-dir export on disk, `--from`, fetched at `at`).
     */
    via: z.optional(z.enum(['scan', 'export'])),
    at: z.optional(z.string()),
  }),
  z.object({t: z.literal('window'), resetAt: z.number(), limit: z.optional(count)}),
  // one whole page of a county's scan: where it continues, and the records it matched to lookups (n: the
  // lookup's number in the county's index, k: its key, x: matched at the exact tier)
  z.object({
    t: z.literal('scan'),
    u: fips,
    n: z.int().check(z.positive()),
    next: z.nullable(z.string()),
    url: z.optional(z.string()),
    /** The county's pages, when the first page told (X-Total-Count, or no next page). */
    pages: z.optional(z.int().check(z.positive())),
    hits: z.array(z.object({n: count, k: lookupKey, x: z.boolean(), r: record})),
  }),
  // the scan of a county ended: `whole` when every page was read (its answers were journaled before this)
  z.object({t: z.literal('scanned'), u: fips, whole: z.boolean(), error: z.optional(z.string())}),
])
export type BatchEvent = z.infer<typeof batchEvent>

/** What a county export was asked for: continuing its checkpoint needs the same (src/jobs/journal.ts). */
export interface ExportRun {
  fips: string[]
  format: string
  fields?: string[] | undefined
  strict?: boolean | undefined
  outDir?: string | undefined
  /** `--where` as given (trimmed): the part files hold only the rows it keeps. */
  where?: string | undefined
  parquet?: ParquetOptions | undefined
}

/**
 * The first line of a county export's journal. Version 4: typed events, the run's one schema, duplicates
 * and checks per page.
 */
export function exportHeader(run: ExportRun, baseUrl: string): JournalHeader {
  return {
    v: 4,
    kind: 'county-export',
    params: {
      fips: run.fips,
      format: run.format,
      fields: run.fields ?? null,
      baseUrl,
      strict: run.strict === true,
      ...(run.outDir ? {layout: 'out-dir'} : {}),
      // only when given: a checkpoint of a run without one (or of an earlier version) still matches
      ...(run.where !== undefined ? {where: run.where} : {}),
      ...parquetParams(run),
    },
  }
}

/**
 * The Parquet options a run other than the defaults asked for, as the checkpoint records them: a resumed
 * run with another compression or row-group size is refused like one with other counties, since its
 * files would mix them. The defaults add nothing, so a checkpoint of a Parquet run from before these
 * flags (which wrote exactly the defaults) is still continued.
 */
function parquetParams(run: ExportRun): Record<string, string | number> {
  const p = run.format === 'parquet' ? run.parquet : undefined
  return {
    ...(p && p.compression !== DEFAULT_PARQUET.compression ? {parquetCompression: p.compression} : {}),
    ...(p && p.rowGroupRows !== DEFAULT_PARQUET.rowGroupRows ? {parquetRowGroupSize: p.rowGroupRows} : {}),
  }
}

/** Decode one journal line's event with `schema`, or refuse the checkpoint. */
export function decodeEvent<T>(schema: z.ZodMiniType<T>, raw: unknown, journal: string): T {
  const r = schema.safeParse(raw)
  if (r.success) return r.data
  const t = raw !== null && typeof raw === 'object' ? (raw as {t?: unknown}).t : undefined
  throw new CheckpointError(
    `the checkpoint ${journal} holds an event this version of sfl does not write (${typeof t === 'string' ? `"${t.slice(0, 20)}": ` : ''}${r.error.issues[0]?.path.join('.') || 'its shape'}); it was edited or comes from another version. Add --restart to discard it and start over`,
  )
}
