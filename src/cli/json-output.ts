import type {ChangeCounts, ChangeSummary} from '../changes/compare.js'

/**
 * `--json` (oclif's `enableJsonFlag`): a command returns its document from `run()` and oclif prints it, the
 * one thing on stdout. These are the pieces the commands share: the notice for the old `--output json`
 * spelling, and the documents that are not a module's own result type.
 */

/**
 * The old spelling, still accepted: oclif's wording for a deprecated flag (`The "x" flag has been
 * deprecated. Use "y" instead.`), said of the value, since `--output table` is not deprecated.
 */
export const OUTPUT_JSON_DEPRECATED = 'The "--output json" form has been deprecated. Use "--json" instead.'

/** `sfl changes --json`: the summary, with both sides as given and where the change file went. */
export interface ChangesDocument extends ChangeCounts {
  previous: string
  current: string
  /** The change file (`--json` needs `--out`: stdout carries this document). */
  out: string | null
  counties: number
  /** Counties only the previous export holds (every record deleted), with their rows; likewise current. */
  onlyPrevious: Array<{fips: string; rows: number}>
  onlyCurrent: Array<{fips: string; rows: number}>
  /** Counties asked for with --fips that neither export holds. */
  inNeither: string[]
}

export function changesDocument(s: ChangeSummary, previous: string, current: string): ChangesDocument {
  return {
    previous,
    current,
    out: s.out ?? null,
    counties: s.counties,
    added: s.added,
    updated: s.updated,
    deleted: s.deleted,
    unchanged: s.unchanged,
    unkeyed: s.unkeyed,
    duplicates: s.duplicates,
    onlyPrevious: s.onlyPrevious,
    onlyCurrent: s.onlyCurrent,
    inNeither: s.inNeither,
  }
}
