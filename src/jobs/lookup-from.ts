import {derived, RecordRedactor, type Redacted} from '../api/secrets.js'
import type {LookupQuery} from '../api/validate.js'
import {CountyIndex} from '../plan/county-index.js'
import {rowMatch} from '../plan/match-keys.js'
import {ShapeTally} from '../text/apn-shape.js'
import {answerFromExport, type FromExport} from './batch-from.js'

/** One property answered from an export on disk, with no request (issue 33). */
export interface OfflineAnswer {
  /** The records the export holds for it, redacted as a lookup's are (src/api/secrets.ts). */
  records: Array<Redacted<Record<string, unknown>>>
  /** Each record's JSON text (the export's values, typed as the spec says: src/plan/export-record.ts). */
  raw: Array<Redacted<string>>
  /** When the county was fetched (the manifest's finishedAt). */
  at: string
  /** The export as the user named it (an s3:// location for a copy). */
  from: string
  /** Places where a record held the key, whole or in part (masked). */
  keyEchoes: number
}

// the one lookup's key in the county index: any 12 bytes (16 base64url characters) will do
const ONE = 'AAAAAAAAAAAAAAAA'

/**
 * One lookup answered from an `--out-dir` export (`sfl lookup --from DIR`, the library's `from`), by the
 * batch's own rules (src/jobs/batch-from.ts, src/plan/match-keys.ts): the county must be in the export's
 * manifest and fresh enough (`maxAgeMs`), and the lookup must match its records exactly (property id, APN
 * and its typed variants, the Pub 28 street line with the city or ZIP and the unit). Undefined otherwise:
 * the caller then asks the service, whose matching is looser. The folder and its county file pass the
 * export-path gate (src/io/export-source.ts) as a batch's do. The records were checked by the spec's rules
 * when they were exported; they pass the redactor here, as every record sfl shows does.
 */
export async function lookupFromExport(
  from: FromExport,
  query: LookupQuery,
  apiKey: string | undefined,
  /**
   * Told the shape most of the county's APNs have in the export (src/text/apn-shape.ts), when the county
   * was read and one has a shape: the hint of an APN that then misses at the service (issue 31).
   */
  onShape?: (shape: string) => void,
): Promise<OfflineAnswer | undefined> {
  const {match, hasUnit} = rowMatch(query)
  if (!match) return undefined
  const index = new CountyIndex(query.fips)
  index.add(ONE, match, hasUnit)
  let found: {records: Array<Record<string, unknown>>; at: string} | undefined
  const shapes = onShape ? new ShapeTally() : undefined
  await answerFromExport(
    from,
    new Map([[query.fips, index]]),
    (_key, records, at) => {
      found = {records, at}
    },
    shapes && ((flat) => shapes.add(flat['APN'])),
  )
  const common = shapes?.common()
  if (common !== undefined) onShape?.(common)
  if (!found) return undefined
  const redactor = new RecordRedactor(apiKey)
  const records = found.records.map((r) => redactor.parsed(r))
  return {
    records,
    raw: records.map((r) => derived(r, (x) => JSON.stringify(x))),
    at: found.at,
    from: from.shown ?? from.dir,
    keyEchoes: redactor.occurrences,
  }
}
