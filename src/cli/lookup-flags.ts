import {countyFromFlags} from '../address/county-flags.js'
import {addressZip} from '../address/standardise.js'
import {UsageError} from '../errors.js'
import {marketRateFor} from './market-rate.js'
import {validateLookup, type LookupQuery} from '../api/validate.js'
import {classifyOutputName} from '../io/output-name.js'
import {
  bomProblem,
  extensionList,
  FORMATS,
  formatsWrittenBy,
  writes,
  type BatchFormat,
} from '../model/formats.js'
import type {OutputFormat} from '../render/formats.js'

/** The flags of a single lookup, checked before any request (and before the sandbox or config is touched). */
export interface LookupFlags {
  fips?: string | undefined
  county?: string | undefined
  address?: string | undefined
  apn?: string | undefined
  'property-id'?: string | undefined
  'market-rate'?: string | undefined
  explain?: boolean | undefined
}

export interface LookupRequest {
  query: LookupQuery
  /** "Sacramento County, CA (06067)", for messages; undefined when the county comes from the address's ZIP. */
  countyLabel: string | undefined
  /** No --county or --fips: the county is found from the address's ZIP (src/lookup/zip-lookup.ts). */
  byZip: boolean
  marketRate?: number | undefined
}

/**
 * Stands for the county while the query's other rules are checked, when the ZIP is to name it; the query
 * then carries no county ('') until src/lookup/zip-lookup.ts sets the ZIP's.
 */
const ANY_COUNTY = '01001'

/**
 * Pure: resolves --county / checks --fips against the counties table, then the spec's parameter rules.
 * Without either, an address that ends in a ZIP is enough (the county is found from the ZIP after these
 * checks); anything else still needs the county.
 */
export function lookupRequest(f: LookupFlags, format: string): LookupRequest {
  // a flag given with nothing in it is that flag's mistake, whatever else is missing: one line for
  // `--address ""` and `--address "  "`, with or without a county (it said "none was given" with --fips,
  // "--fips is required" without, "must not be empty" only for blanks)
  for (const [name, value] of [
    ['--address', f.address],
    ['--apn', f.apn],
    ['--property-id', f['property-id']],
  ] as const)
    if (value !== undefined && value.trim() === '') throw new UsageError(`${name} must not be empty`)
  const county = countyFromFlags({fips: f.fips, county: f.county}, {countyFlag: true})
  const byZip = !county && f.address !== undefined && addressZip(f.address) !== undefined
  if (!county && !byZip)
    throw new UsageError(
      f.address === undefined
        ? '--fips (a 5-digit county code such as 06067) or --county "Name, ST" is required'
        : '--fips (a 5-digit county code such as 06067) or --county "Name, ST" is required, unless the address ends in a ZIP code (then sfl finds the county from it)',
    )
  const query = validateLookup({
    fips: county?.fips ?? ANY_COUNTY,
    address: f.address,
    apn: f.apn,
    propertyId: f['property-id'],
  })
  if (f.explain && (format === 'table' || format === 'csv'))
    throw new UsageError('--explain applies to json and ndjson output (the table always shows the verdicts)')
  const rate = marketRateFor(f['market-rate'], format, f.explain === true)
  return {query: county ? query : {...query, fips: ''}, countyLabel: county?.label, byZip, marketRate: rate}
}

/** The flags of `lookup --input` that decide its output, checked before the input is read. */
export interface BatchFlags {
  output?: OutputFormat | undefined
  out?: string | undefined
  resume?: boolean | undefined
  restart?: boolean | undefined
  bom?: boolean | undefined
}

/**
 * The format `--out`'s name asks of a batch (src/io/output-name.ts, the one rule for output names): a
 * name sfl cannot write (.zst, .bz2, .xls...) is exit 2 before anything is read or sent, never CSV under
 * that name. A format the registry (src/model/formats.ts) does not give `lookup --input` (Parquet) is
 * refused the same way. `.gz` is gzip of the format before it.
 */
function namedFormat(out: string): BatchFormat | undefined {
  const named = classifyOutputName(out)
  if (!named.ok) throw new UsageError(`--out ${out}: ${named.reason}`)
  if (named.format !== undefined && !writes('lookup --input', named.format))
    throw new UsageError(
      `--out ${out}: lookup --input writes ${extensionList(formatsWrittenBy('lookup --input'))} (name the file so); ${FORMATS[named.format].label} is written by county-export`,
    )
  // `.csv.gz`, `.ndjson.gz`, `.json.gz`: the output gate compresses what the name asks (src/io/output.ts)
  return named.format
}

/**
 * The output format of `lookup --input` (docs/exports.md, "A list of properties"): `--output`, else the extension of
 * `--out` (.csv, .ndjson or .jsonl, .json: `namedFormat`), else CSV for an `--out` of another name; without `--out`, CSV at a terminal and JSON in a pipe (as gh and the aws CLI
 * switch to machine output when piped, and as a single lookup does), CSV with `--bom`. `--output` that contradicts the
 * extension is exit 2: a file named res.json holding CSV would fool every reader. Pure.
 */
export function batchFormat(f: BatchFlags, stdoutIsTTY: boolean): BatchFormat {
  if (f.output === 'table')
    throw new UsageError('--output table is for one property; use csv, ndjson or json with --input')
  const named = f.out === undefined ? undefined : namedFormat(f.out)
  if (f.output !== undefined && named !== undefined && f.output !== named)
    throw new UsageError(
      `--out ${f.out} names a ${named.toUpperCase()} file but --output is ${f.output}; drop --output (the extension decides) or make them agree`,
    )
  // --bom asks for CSV (a BOM is for Excel) wherever the output goes
  return f.output ?? named ?? (f.out !== undefined || stdoutIsTTY || f.bom ? 'csv' : 'json')
}

/** Every check of the batch output flags, before anything is read or sent; returns the format. */
export function batchOutput(f: BatchFlags, stdoutIsTTY: boolean): BatchFormat {
  const format = batchFormat(f, stdoutIsTTY)
  if ((f.resume || f.restart) && !f.out)
    throw new UsageError(
      `--${f.resume ? 'resume' : 'restart'} needs --out (the checkpoint lives beside the output file)`,
    )
  if (f.resume && f.restart) throw new UsageError('--resume and --restart contradict each other; pick one')
  const bom = bomProblem(format, f.bom)
  if (bom) throw new UsageError(bom)
  return format
}
