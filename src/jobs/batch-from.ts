import {UsageError} from '../errors.js'
import type {FlatRecord, FlatValue} from '../io/export-reader.js'
import {openExportSource, TRUSTED_LIMITS, type ExportSource, type SourceFile} from '../io/export-source.js'
import {readManifest, type ManifestEntry} from '../io/manifest.js'
import {apnHash, type CountyIndex, type Hit, type PageHit} from '../plan/county-index.js'
import {recordFromFlat} from '../plan/export-record.js'
import type {RecordKeys} from '../plan/match-keys.js'

/**
 * `lookup --input FILE --from DIR` (issue 33): rows answered from an `--out-dir` export on disk, with no
 * request. The export's manifest (src/io/manifest.ts) says which counties it holds, when each was fetched
 * and how many pages it took; a county fetched less than `--max-age` ago (any age without it) is read
 * whole, and each row that matches its records exactly (src/plan/match-keys.ts) is answered by them, its
 * source the export and that date. The other rows of such a county are looked up (never scanned: the export
 * was the scan). A county the export holds but that is too old is not read; the pages it took then are
 * what the planner knows of its length.
 *
 * The folder and its county files are opened through the one gate for export paths (src/io/export-source.ts:
 * a FIFO, a device or a file that is no export is refused before it is read), as `sfl stats` and `sfl
 * changes` open theirs. The file is read twice (count the matches, then gather the records of the rows they answer), so only
 * the records of rows being answered are held, not the county.
 */
export interface FromExport {
  /** The export folder read (a private local copy of an `s3://` export: `shown` is then its location). */
  dir: string
  /** Where the export is, as messages and the summary say it (the `s3://` location of a copy). */
  shown?: string | undefined
  /** `--max-age`: counties fetched longer ago than this are not used. */
  maxAgeMs?: number | undefined
  /** `--max-age` as typed, for the summary. */
  maxAge?: string | undefined
  now?: (() => number) | undefined
}

export interface FromReport {
  dir: string
  counties: Array<{fips: string; finishedAt: string; used: boolean; answered: number}>
}

export interface FromResult {
  /** The pages each county of the export took when it was fetched (the planner's known length). */
  pages: Map<string, number>
  /** Counties read from the export: their other rows are looked up, not scanned. */
  covered: Set<string>
  report: FromReport
}

export async function answerFromExport(
  from: FromExport,
  counties: ReadonlyMap<string, CountyIndex>,
  settle: (key: string, records: Array<Record<string, unknown>>, at: string) => void,
  /** Sees every record of the counties read, matched or not (the APN shapes of `lookup --from`). */
  observe?: (flat: FlatRecord) => void,
): Promise<FromResult> {
  const manifest = await readManifest(from.dir)
  if (!manifest)
    throw new UsageError(
      `--from ${from.shown ?? from.dir}: no manifest there (_sfl/manifest.json); give the folder of a county-export --out-dir run`,
    )
  const source = await openExportSource(from.dir, TRUSTED_LIMITS)
  const files = new Map(source.files.map((f) => [f.fips, f]))
  const now = (from.now ?? Date.now)()
  const out: FromResult = {
    pages: new Map(),
    covered: new Set(),
    report: {dir: from.shown ?? from.dir, counties: []},
  }
  for (const entry of manifest.counties) {
    const ix = counties.get(entry.fips)
    if (!ix) continue
    out.pages.set(entry.fips, entry.pages)
    const at = Date.parse(entry.finishedAt)
    const used = from.maxAgeMs === undefined || (now - at < from.maxAgeMs && at <= now)
    let answered = 0
    const file = files.get(entry.fips)
    if (used && file) {
      answered = await answerCounty(source, file, entry, ix, settle, observe)
      out.covered.add(entry.fips)
    }
    out.report.counties.push({fips: entry.fips, finishedAt: entry.finishedAt, used, answered})
  }
  return out
}

/** One county's file: count the matches, then settle each row they answer. Returns the rows answered. */
async function answerCounty(
  source: ExportSource,
  file: SourceFile,
  entry: ManifestEntry,
  ix: CountyIndex,
  settle: (key: string, records: Array<Record<string, unknown>>, at: string) => void,
  observe?: (flat: FlatRecord) => void,
): Promise<number> {
  const fmt = file.format
  const found: Hit[] = []
  for await (const flat of source.records(file)) {
    observe?.(flat)
    const keys = keysOf(flat)
    found.length = 0
    if (ix.match(keys, found) === 0) continue
    const id = idOf(flat['ServicePropertyID'])
    const apn = apnHash(keys.apn)
    ix.count(found.map((h): PageHit => ({...h, id, apn})))
  }
  const gathering = new Map<number, Array<Record<string, unknown>>>()
  let answered = 0
  for await (const flat of source.records(file)) {
    const keys = keysOf(flat)
    found.length = 0
    if (ix.match(keys, found) === 0) continue
    let record: Record<string, unknown> | undefined
    for (const h of found) {
      const tier = ix.answer(h.lookup, true)
      if (tier === 'none' || (tier === 'exact') !== h.exact) continue
      record ??= recordFromFlat(flat, fmt === 'csv' || fmt === 'parquet')
      const records = gathering.get(h.lookup) ?? []
      // a record the service sent twice counts once (as when it was counted above)
      const rid = idOf(flat['ServicePropertyID'])
      if (rid !== 0 && records.some((r) => idOf(r['ServicePropertyID'] as FlatValue) === rid)) continue
      records.push(record)
      if (records.length < ix.answerCount(h.lookup, true)) {
        gathering.set(h.lookup, records)
        continue
      }
      gathering.delete(h.lookup)
      settle(ix.keyOf(h.lookup), records, entry.finishedAt)
      ix.markDone(h.lookup)
      answered++
    }
  }
  return answered
}

/** What the match reads of a flat record, values as text. */
function keysOf(flat: FlatRecord): RecordKeys {
  const text = (v: FlatValue | undefined) => (v === null || v === undefined ? undefined : String(v))
  const id = idOf(flat['ServicePropertyID'])
  return {
    id: id === 0 ? undefined : String(id),
    apn: text(flat['APN']),
    street: text(flat['StandardizeStreetAddress']),
    city: text(flat['City']),
    zip: text(flat['Zip']),
  }
}

/** A ServicePropertyID as a whole number (a CSV cell is text), or 0. */
function idOf(v: FlatValue | undefined): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+(\.0+)?$/.test(v) ? Number(v) : NaN
  return Number.isSafeInteger(n) && n > 0 ? n : 0
}
