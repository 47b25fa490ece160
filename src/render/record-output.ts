import type {Redacted} from '../api/secrets.js'
import type {OutputFormat} from './formats.js'
import {RawJson, toJsonText} from './json-text.js'
import {csvLine} from '../text/csv-cell.js'
import {columnsFor, emptyShape, flattenRow, observeShape} from '../model/columns.js'
import {resultNames} from '../model/result-names.js'
import type {LookupMatch} from '../lookup/address-lookup.js'

type Rec = Record<string, unknown>

export interface RenderOptions {
  escapeFormulas: boolean
  width: number
  /** `--market-rate`: prices an assumable loan in the verdicts (table, and json/ndjson with --explain). */
  marketRate?: number | undefined
  /** Today, YYYY-MM-DD, by the caller's clock: the months left on an assumable loan count from it. */
  today?: string | undefined
  /** `--explain` (json, ndjson): the verdicts, codes and text, beside each record. */
  explain?: boolean | undefined
  /** How the lookup matched: a match without the unit is said beside the record in every format. */
  match?: LookupMatch | undefined
  /** Each record's JSON text as sent (fetch-lookup.ts `recordTexts`), redacted; json/ndjson print these tokens. */
  raw?: ReadonlyArray<Redacted<string> | undefined> | undefined
  /** Each record's numbers as sent, by column (src/json/number-texts.ts): csv writes them so. */
  numberTexts?: ReadonlyArray<ReadonlyMap<string, string> | undefined> | undefined
  /** Colour the table (colour.ts decides: a terminal, NO_COLOR, FORCE_COLOR). Never used by other formats. */
  colour?: boolean | undefined
}

/**
 * Render the record(s) of a lookup. They are `Redacted` (src/api/secrets.ts): what the records stage
 * passed through the redactor, or a record the redactor went over (`RecordRedactor.parsed`); nothing else
 * can be rendered.
 *
 * json/ndjson: a clean match is the record alone, its tokens as the service sent them (json-text.ts), so
 * `jq .Fips` keeps working. When there is something to say beside it, each record becomes
 * `{"data": record, "match": {...}, "explain": {...}}`: `match` for a match without the unit (status and
 * every form tried), `explain` with --explain (match, tried and the verdicts). Scripts that want one
 * shape always pass --explain.
 *
 * csv: a header and flattened rows; a match without the unit adds a last column `match`
 * (`matched_without_unit`), after the record's, so the record's columns keep their places.
 *
 * table: the grouped view; a match without the unit is a row of the Address group.
 */
export async function renderRecords(
  records: ReadonlyArray<Redacted<Rec>>,
  format: OutputFormat,
  opts: RenderOptions,
): Promise<string> {
  switch (format) {
    case 'json':
    case 'ndjson': {
      const out = await wrapped(records, opts)
      return format === 'json'
        ? `${toJsonText(out.length === 1 ? out[0] : out, 2)}\n`
        : out.map((r) => `${toJsonText(r, 0)}\n`).join('')
    }
    case 'csv':
      return csv(records, opts)
    case 'table': {
      const {renderRecordTable} = await import('./table.js')
      const t = {marketRate: opts.marketRate, today: opts.today, match: opts.match, colour: opts.colour}
      return records.map((r) => `${renderRecordTable(r, opts.width, t)}\n`).join('\n')
    }
  }
}

const withoutUnit = (opts: RenderOptions) => opts.match?.status === 'matched_without_unit'

/** Each record as it is printed in json/ndjson: alone, or wrapped with what is said beside it. */
async function wrapped(records: ReadonlyArray<Redacted<Rec>>, opts: RenderOptions): Promise<unknown[]> {
  const verdicts = opts.explain ? (await import('./verdicts.js')).verdicts : undefined
  return records.map((r, i) => {
    const text = opts.raw?.[i]
    const data = text === undefined ? r : new RawJson(text)
    const beside: Rec = {}
    if (withoutUnit(opts) && opts.match)
      beside['match'] = {
        status: opts.match.status,
        tried: opts.match.tried,
        ...(opts.match.unit ? {unit: opts.match.unit} : {}),
      }
    if (verdicts)
      beside['explain'] = {
        match: opts.match?.status ?? 'matched',
        tried: opts.match?.tried ?? [],
        verdicts: verdicts(r, {marketRate: opts.marketRate, today: opts.today}),
      }
    return Object.keys(beside).length === 0 ? data : {data, ...beside}
  })
}

async function csv(records: ReadonlyArray<Redacted<Rec>>, opts: RenderOptions): Promise<string> {
  const shape = emptyShape()
  for (const r of records) observeShape(shape, r)
  const cols = columnsFor(shape)
  const header = cols.map((c) => c.header)
  const rows = records.map((r, i) => flattenRow(r, cols, opts.escapeFormulas, opts.numberTexts?.[i]))
  if (withoutUnit(opts)) {
    // named like the batch's columns: `sfl_match` if the record already has a `match` column
    header.push(...resultNames(header, ['match']))
    for (const row of rows) row.push('matched_without_unit')
  }
  // the one CSV cell rule (src/text/csv-cell.ts): header cells guarded like any other, the cells of the
  // rows were guarded by flattenRow already
  return csvLine(header, opts.escapeFormulas) + rows.map((row) => csvLine(row, false)).join('')
}
