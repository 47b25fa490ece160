import {normalizeAddress} from '../api/address.js'
import {SflError, UsageError} from '../api/errors.js'
import {validateLookup, type LookupQuery} from '../api/validate.js'

/** The batch input file cannot be used at all (exit 2, with the line number). */
export class InputError extends UsageError {}

export interface InputRow {
  /** 1-based line of the row in the input (the header is line 1 for CSV). */
  line: number
  /** All input columns, carried through to the output in their order. */
  values: Record<string, string>
  query?: LookupQuery
  /** Why the row is invalid (validated with the same rules as a single lookup); no request is sent. */
  invalid?: string
  /** Identity for de-duplication: rows with the same key are looked up once. */
  key?: string
}

export interface ParsedInput {
  columns: string[]
  rows: InputRow[]
}

const LOOKUP_COLUMNS = ['address', 'apn', 'property_id'] as const
const COLUMN_NAMES = {fips: 'fips', address: 'address', apn: 'apn', propertyId: 'property_id'}

/**
 * Parse a batch input: CSV with a header (a real parser: quoted commas, doubled quotes, CRLF or LF, a
 * UTF-8 BOM) or NDJSON. Structural problems stop the run with the line number; a row that breaks a lookup
 * rule becomes an `invalid` row.
 */
export async function parseInput(
  bytes: Buffer,
  name: string,
  defaultFips: string | undefined,
): Promise<ParsedInput> {
  const nul = bytes.indexOf(0)
  if (nul !== -1)
    throw new InputError(
      `${name}: not a text file (a NUL byte at offset ${nul}); expected CSV with a header, or NDJSON`,
    )
  let text: string
  try {
    text = new TextDecoder('utf-8', {fatal: true}).decode(bytes)
  } catch {
    throw new InputError(`${name}: not UTF-8 text; save the file as UTF-8 CSV or NDJSON`)
  }
  if (text.replace(/^\ufeff/, '').trim() === '')
    throw new InputError(`${name}: the input is empty; expected a header line such as "fips,address"`)
  const first = text.replace(/^\ufeff/, '').trimStart()
  const parsed = first.startsWith('{') ? parseNdjson(text, name) : await parseCsv(text, name)
  const cols = new Set(parsed.columns)
  if (!LOOKUP_COLUMNS.some((c) => cols.has(c)))
    throw new InputError(
      `${name} line 1: no lookup column; expected one of address, apn, property_id (found: ${parsed.columns.join(', ') || 'none'})`,
    )
  if (!cols.has('fips') && defaultFips === undefined)
    throw new InputError(`${name} line 1: no fips column; add one or give a default county with --fips`)
  const rows = parsed.rows.map(({line, values}) => toRow(line, values, defaultFips))
  return {columns: parsed.columns, rows}
}

function toRow(line: number, values: Record<string, string>, defaultFips: string | undefined): InputRow {
  const row: InputRow = {line, values}
  const pick = (k: string) => {
    const v = values[k]
    return v === undefined || v.trim() === '' ? undefined : v.trim()
  }
  try {
    const q = validateLookup(
      {
        fips: pick('fips') ?? defaultFips,
        address: pick('address'),
        apn: pick('apn'),
        propertyId: pick('property_id'),
      },
      COLUMN_NAMES,
    )
    row.query = q
    row.key = dedupeKey(q)
  } catch (error) {
    if (!(error instanceof SflError)) throw error
    row.invalid = `line ${line}: ${error.message}`
  }
  return row
}

/** Rows that name the same property the same way are one lookup; addresses compare as normalised. */
export function dedupeKey(q: LookupQuery): string {
  if (q.by.kind !== 'address') return `${q.fips}|${q.by.kind}|${q.by.value}`
  const n = normalizeAddress(q.by.value)
  const rest = q.by.value
    .split(',')
    .slice(1)
    .join(',')
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, ' ')
    .trim()
  return n
    ? `${q.fips}|address|${n.number} ${n.street}${n.unit ? ` #${n.unit}` : ''}|${rest}`
    : `${q.fips}|address|${q.by.value.toUpperCase().trim()}`
}

async function parseCsv(
  text: string,
  name: string,
): Promise<{columns: string[]; rows: Array<{line: number; values: Record<string, string>}>}> {
  const {parse} = await import('csv-parse/sync')
  let records: Array<{record: string[]; info: {lines: number}}>
  try {
    records = parse(text, {bom: true, info: true, skip_empty_lines: true}) as unknown as Array<{
      record: string[]
      info: {lines: number}
    }>
  } catch (error) {
    const e = error as {lines?: number; message: string}
    throw new InputError(
      `${name} line ${e.lines ?? '?'}: ${e.message.replace(/ on line \d+$/, '').replace(/ at line \d+$/, '')}`,
    )
  }
  const header = records[0]!.record.map((h) => h.trim())
  const canon = header.map((h) => h.toLowerCase().replace(/[\s-]+/g, '_'))
  const dup = canon.find((h, i) => h !== '' && canon.indexOf(h) !== i)
  if (dup) throw new InputError(`${name} line 1: the column "${dup}" appears twice in the header`)
  const columns = canon.map((c, i) => (['fips', ...LOOKUP_COLUMNS].includes(c as never) ? c : header[i]!))
  return {
    columns,
    rows: records.slice(1).map(({record, info}) => ({
      line: info.lines,
      values: Object.fromEntries(columns.map((c, i) => [c, record[i] ?? ''])),
    })),
  }
}

function parseNdjson(
  text: string,
  name: string,
): {columns: string[]; rows: Array<{line: number; values: Record<string, string>}>} {
  const columns: string[] = []
  const rows: Array<{line: number; values: Record<string, string>}> = []
  text
    .replace(/^\ufeff/, '')
    .split(/\r?\n/)
    .forEach((raw, i) => {
      if (raw.trim() === '') return
      let obj: unknown
      try {
        obj = JSON.parse(raw)
      } catch (error) {
        throw new InputError(`${name} line ${i + 1}: not valid JSON (${(error as Error).message})`)
      }
      if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
        throw new InputError(`${name} line ${i + 1}: expected a JSON object per line`)
      const values: Record<string, string> = {}
      for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
        if (!columns.includes(k)) columns.push(k)
        values[k] = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)
      }
      rows.push({line: i + 1, values})
    })
  return {columns, rows}
}
