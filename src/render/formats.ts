/** Output formats of `lookup` (one property or a batch). Exports add nothing to these. */
export const OUTPUTS = ['table', 'json', 'ndjson', 'csv'] as const
export type OutputFormat = (typeof OUTPUTS)[number]
