import {CountyIndex} from '../plan/county-index.js'
import {rowMatch} from '../plan/match-keys.js'
import {KeySet, RowKeys, type BatchInput} from './batch-input.js'

/**
 * The index pass of a planned batch (`lookup --input` with a plan, and its --dry-run): one pass over the
 * input that numbers every row's lookup (as the send pass of a batch of lookups does) and indexes each
 * county's distinct lookups by the keys a record can match (src/plan/county-index.ts). Nothing is sent.
 */
export interface IndexedBatch {
  rows: number
  /** Rows that repeat an earlier row's lookup. */
  saved: number
  /** Every row's lookup key, by row. */
  keys: RowKeys
  counties: Map<string, CountyIndex>
  /** Valid rows of each county (duplicates included). */
  rowsPerCounty: Map<string, number>
}

export async function indexBatch(
  input: BatchInput,
  opts: {
    /** --address-as-typed: addresses are for the service to read as typed, never answered locally. */
    asTyped: boolean
    /** Lookups answered already (the checkpoint). */
    answered?: ((key: string) => boolean) | undefined
  },
): Promise<IndexedBatch> {
  const asked = new KeySet()
  const keys = new RowKeys()
  const counties = new Map<string, CountyIndex>()
  const rowsPerCounty = new Map<string, number>()
  let rows = 0
  let saved = 0
  for await (const row of input.rows()) {
    rows++
    keys.push(row.query ? row.key : undefined)
    if (!row.key || !row.query) continue
    const fips = row.query.fips
    rowsPerCounty.set(fips, (rowsPerCounty.get(fips) ?? 0) + 1)
    if (!asked.add(row.key)) {
      saved++
      continue
    }
    let county = counties.get(fips)
    if (!county) counties.set(fips, (county = new CountyIndex(fips)))
    const m = rowMatch(row.query, row.std)
    const match = opts.asTyped && row.query.by.kind === 'address' ? undefined : m.match
    county.add(row.key, match, m.hasUnit, opts.answered?.(row.key) === true)
  }
  return {rows, saved, keys, counties, rowsPerCounty}
}
