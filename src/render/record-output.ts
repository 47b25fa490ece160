import type {OutputFormat} from './formats.js'
import {columnsFor, emptyShape, flattenRow, observeShape} from './columns.js'

type Rec = Record<string, unknown>

/**
 * Render the record(s) of a lookup. json keeps the record exactly as parsed (unknown fields and key order
 * kept); ndjson one line a record; csv a header and flattened rows; table the grouped view.
 */
export async function renderRecords(
  records: Rec[],
  format: OutputFormat,
  opts: {escapeFormulas: boolean; width: number},
): Promise<string> {
  switch (format) {
    case 'json':
      return `${JSON.stringify(records.length === 1 ? records[0] : records, null, 2)}\n`
    case 'ndjson':
      return records.map((r) => `${JSON.stringify(r)}\n`).join('')
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
      return records.map((r) => `${renderRecordTable(r, opts.width)}\n`).join('\n')
    }
  }
}
