import type {Interfaces} from '@oclif/core'

import {NotFoundError, SchemaError, UsageError} from '../errors.js'
import {keyEchoWarning} from '../api/secrets.js'
import {localDate} from '../render/format.js'
import type {Context} from './connection.js'
import type {lookupFlags} from './lookup-definition.js'
import type {LookupMatch, LookupOutcome} from '../lookup/address-lookup.js'
import type {LookupQuery} from '../api/validate.js'
import type {ZipCounties} from '../address/zip-counties.js'

/** The values of `sfl lookup`'s own flags (src/cli/lookup-definition.ts), as oclif's parser returns them. */
export type LookupFlagValues = Interfaces.InferredFlags<typeof lookupFlags>

/** What a single lookup needs of the command that runs it. */
export interface SingleLookupHost {
  /** The run's connection, resolved on first use (src/cli/connection.ts). */
  context: () => Promise<Context>
  /** A `Warning:` line on stderr, shown even with --quiet. */
  warnAlways: (line: string) => void
  /** A notice line on stderr, unless --quiet. */
  notice?: (line: string) => void
  /**
   * The ZIP-to-county table (src/address/zip-counties.ts readZipTable), from the folder the running code
   * knows it in: dist/ for the command and the fast path, src/address/ in tests.
   */
  zipTable: () => ZipCounties
  /**
   * `--from`: the lookup answered by an export on disk (src/cli/lookup-from-flag.ts), given by the command
   * only, so that the lookup fast path's bundle holds none of the export readers (it hands --from to oclif).
   */
  fromExport?: (
    f: LookupFlagValues,
    query: LookupQuery,
    ctx: Context,
    host: SingleLookupHost,
    /** Told the shape most of the county's APNs have in the export (issue 31). */
    onShape?: (shape: string) => void,
  ) => Promise<LookupOutcome | undefined>
  /**
   * sfl's cache folder (oclif's cacheDir: src/cli/cli-config.ts): the APN shapes seen in earlier answers
   * live there (src/cli/apn-shapes.ts). Undefined: none remembered, none read.
   */
  cacheDir?: string
}

// flags that only a batch (--input) reads: refused on a single lookup rather than ignored
const BATCH_ONLY = [
  'out',
  'resume',
  'restart',
  'unit-fallback',
  'max-requests',
  'map',
  'sheet',
  'bom',
  'no-stats',
  'stats-by-county',
  'stats-json',
  'plan',
  'several',
  'where',
  'dry-run',
  'json',
] as const

/**
 * `sfl lookup` for one property (no --input): the flags checked, one request (and at most 2 more on a 404
 * for an address: src/lookup/address-lookup.ts), the record checked and rendered to stdout. The command
 * (src/commands/lookup.ts) and the fast path (src/cli/lookup-fast.ts) both run this, so the two cannot
 * drift apart. Modules past the flag checks load with import(), started early enough to overlap the request.
 */
export async function lookupOne(f: LookupFlagValues, host: SingleLookupHost): Promise<void> {
  for (const flag of BATCH_ONLY)
    if (f[flag])
      // issue 31: `lookup --json` is most often a request for the record as JSON, which is -o json here
      throw new UsageError(
        `--${flag} applies to batch lookups; add --input FILE${flag === 'json' ? ' (for this property as JSON: -o json)' : ''}`,
      )
  const format = f.output ?? (process.stdout.isTTY ? 'table' : 'json')
  const {lookupRequest} = await import('./lookup-flags.js')
  const {query, countyLabel, byZip, marketRate} = lookupRequest(f, format)
  // start loading what runs after the request now, so the files are read while the request is made
  const after = Promise.all([import('../render/record-output.js'), import('../render/colour.js')])
  after.catch(() => undefined) // a failed import is reported by the await below, not as unhandled
  const ctx = await host.context()
  // --from DIR: the export on disk answers first when it matches exactly (no request); else the service
  // (the fast path hands --from to oclif, whose command gives `fromExport`: src/cli/lookup-fast.ts)
  if (f.from !== undefined && byZip)
    throw new UsageError('--from needs the county (--fips or --county): the export is read by county')
  let exportShape: string | undefined
  const offline =
    f.from === undefined
      ? undefined
      : await host.fromExport?.(f, query, ctx, host, (shape) => {
          exportShape = shape
        })
  const shapes = import('./apn-shapes.js')
  shapes.catch(() => undefined)
  let found: LookupOutcome
  try {
    found =
      offline ??
      (await fetchAnswer(ctx, query, host, {
        asTyped: f['address-as-typed'],
        fallback: f.fallback,
        county: countyLabel,
        byZip,
      }))
  } catch (error) {
    throw await withSeenShape(error, query.fips, host.cacheDir, shapes, exportShape)
  }
  // the county's APN shape (never the APN) in the service's answer, for the hint of a later miss there
  // (issue 31); an export's records say theirs at the miss itself (withSeenShape)
  const county = (found as {county?: {fips?: unknown}}).county?.fips
  if (!offline)
    (await shapes).rememberShape(
      host.cacheDir,
      typeof county === 'string' ? county : query.fips,
      found.records,
    )
  const [{renderRecords}, {colourEnabled}] = await after
  // a record that is not the unit asked for is said on stderr too, in words (the code is for scripts)
  const unit = await unitWarning(found)
  if (unit !== undefined) host.warnAlways(unit)
  found.problems.forEach((problems, i) => {
    // one line per record naming the fields (src/pipeline/checks.ts); --strict fails on a violation (spec 2)
    if (problems.length === 0) return
    const id = found.records[i]!['ServicePropertyID']
    const line = `record ${typeof id === 'number' || typeof id === 'string' ? id : '(no ServicePropertyID)'} does not match the spec's rules: ${problems.join('; ')}`
    if (f.strict) throw new SchemaError(line)
    host.warnAlways(line)
  })
  const out = await renderRecords(found.records, format, {
    escapeFormulas: !f['no-escape-formulas'],
    width: process.stdout.columns ?? 100,
    marketRate,
    today: localDate(new Date()),
    explain: f.explain,
    match: found,
    raw: found.raw,
    // numbers as sent (docs/exports.md "Number text"), as an export's CSV writes them
    numberTexts:
      format === 'csv' ? found.raw.map((await import('../json/number-texts.js')).numberTexts) : undefined,
    colour: format === 'table' && colourEnabled(process.stdout, process.env),
  })
  // a key (or part of it) inside a record is the server's echo: masked (src/api/secrets.ts
  // RecordRedactor), and the user must know
  if (found.keyEchoes > 0) host.warnAlways(keyEchoWarning(found.keyEchoes))
  process.stdout.write(out)
}

/**
 * An APN's 404 with the shape of the county's APNs, for the hint's words (src/cli/error-words.ts): the
 * most common in the --from export read for this lookup, else the one seen in an earlier answer
 * (src/cli/apn-shapes.ts); any other error as it was.
 */
async function withSeenShape(
  error: unknown,
  fips: string,
  cacheDir: string | undefined,
  shapes: Promise<typeof import('./apn-shapes.js')>,
  exportShape: string | undefined,
): Promise<unknown> {
  const facts = error instanceof NotFoundError ? error.facts : undefined
  if (facts?.topic !== 'not-found' || facts.by !== 'apn' || facts.seen) return error
  const earlier = exportShape === undefined ? (await shapes).readShapes(cacheDir).get(fips) : undefined
  const shape = exportShape ?? earlier
  if (shape === undefined) return error
  return new NotFoundError((error as NotFoundError).message, 404, {
    facts: {...facts, seen: {shape, source: exportShape !== undefined ? 'export' : 'earlier answer'}},
  })
}

/** The stderr line for a match that is not the unit asked for (the table's "Matched" row, in words). */
async function unitWarning(found: LookupMatch): Promise<string | undefined> {
  if (found.status !== 'matched_without_unit') return undefined
  const {withoutUnitText} = await import('../render/verdicts.js')
  return withoutUnitText(found)
}

/**
 * The lookup itself: in the county given, or in the ZIP's (said on stderr, and in the table). A 404 in a
 * county the user named gets a word on the ZIP's county when the address's ZIP lies elsewhere.
 */
async function fetchAnswer(
  ctx: Context,
  query: LookupQuery,
  host: SingleLookupHost,
  opts: {asTyped: boolean; fallback: boolean; county: string | undefined; byZip: boolean},
): Promise<LookupOutcome> {
  if (opts.byZip) {
    const {lookupByZip} = await import('../lookup/zip-lookup.js')
    const found = await lookupByZip(ctx, query, host.zipTable(), opts)
    const {county: c} = found
    host.notice?.(
      `county ${c.label}, from ZIP ${c.zip}${c.of > 1 ? ` (${c.of} counties share it; this one ${c.rank === 1 ? 'holds most of its addresses' : `is its ${c.rank === 2 ? 'second' : 'third'} by share of addresses`})` : ''}`,
    )
    return found
  }
  const {lookupOne: fetchOne} = await import('../lookup/address-lookup.js')
  try {
    return await fetchOne(ctx, query, {
      asTyped: opts.asTyped,
      fallback: opts.fallback,
      ...(opts.county === undefined ? {} : {county: opts.county}),
    })
  } catch (error) {
    if (!(error instanceof NotFoundError) || query.by.kind !== 'address') throw error
    const {wrongCountyHint} = await import('../lookup/zip-lookup.js')
    const hint = wrongCountyHint(query.by.value, query.fips, host.zipTable())
    if (hint === undefined) throw error
    throw new NotFoundError(`${error.message}. ${hint}`, 404)
  }
}
