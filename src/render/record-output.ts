import type {OutputFormat} from './formats.js'
import {columnsFor, emptyShape, flattenRow, observeShape} from '../model/columns.js'

type Rec = Record<string, unknown>

/**
 * Render the record(s) of a lookup. json keeps the record exactly as parsed (unknown fields and key order
 * kept); ndjson one line a record; csv a header and flattened rows; table the grouped view.
 */
export async function renderRecords(
  records: Rec[],
  format: OutputFormat,
  opts: {
    escapeFormulas: boolean
    width: number
    /** `--market-rate`: prices an assumable loan in the verdicts. */
    marketRate?: number | undefined
    /**
     * `--explain` (json, ndjson): each record becomes `{data, explain}`; `data` is the record exactly as
     * sent, `explain` holds the verdicts (codes and text) and anything else given here (how it matched).
     */
    explain?: Rec | undefined
  },
): Promise<string> {
  const out = opts.explain ? await explained(records, opts.explain, opts.marketRate) : records
  switch (format) {
    case 'json':
      return `${JSON.stringify(out.length === 1 ? out[0] : out, null, 2)}\n`
    case 'ndjson':
      return out.map((r) => `${JSON.stringify(r)}\n`).join('')
    case 'csv': {
      const {stringify} = await import('csv-stringify/sync')
      const shape = emptyShape()
      for (const r of records) observeShape(shape, r)
      const cols = columnsFor(shape)
      return stringify(
        [cols.map((c) => c.header), ...records.map((r) => flattenRow(r, cols, opts.escapeFormulas))],
        {
          record_delimiter: 'windows',
        },
      )
    }
    case 'table': {
      const {renderRecordTable} = await import('./table.js')
      const v = opts.marketRate === undefined ? {} : {marketRate: opts.marketRate}
      return records.map((r) => `${renderRecordTable(r, opts.width, v)}\n`).join('\n')
    }
  }
}

async function explained(records: Rec[], extra: Rec, marketRate: number | undefined): Promise<Rec[]> {
  const {verdicts} = await import('./verdicts.js')
  return records.map((data) => ({data, explain: {...extra, verdicts: verdicts(data, {marketRate})}}))
}
