import type {Interfaces} from '@oclif/core'

import {SchemaError, UsageError} from '../errors.js'
import {keyEchoWarning} from '../api/secrets.js'
import type {Context} from './connection.js'
import type {lookupFlags} from './lookup-definition.js'

/** The values of `sfl lookup`'s own flags (src/cli/lookup-definition.ts), as oclif's parser returns them. */
export type LookupFlagValues = Interfaces.InferredFlags<typeof lookupFlags>

/** What a single lookup needs of the command that runs it. */
export interface SingleLookupHost {
  /** The run's connection, resolved on first use (src/cli/connection.ts). */
  context: () => Promise<Context>
  /** A `Warning:` line on stderr, shown even with --quiet. */
  warnAlways: (line: string) => void
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
    if (f[flag]) throw new UsageError(`--${flag} applies to batch lookups; add --input FILE`)
  const format = f.output ?? (process.stdout.isTTY ? 'table' : 'json')
  const {lookupRequest} = await import('./lookup-flags.js')
  const {query, countyLabel, marketRate} = lookupRequest(f, format)
  // start loading what runs after the request now, so the files are read while the request is made
  const after = Promise.all([import('../render/record-output.js'), import('../render/colour.js')])
  after.catch(() => undefined) // a failed import is reported by the await below, not as unhandled
  const ctx = await host.context()
  const {lookupOne: fetchOne} = await import('../lookup/address-lookup.js')
  const found = await fetchOne(ctx, query, {
    asTyped: f['address-as-typed'],
    fallback: f.fallback,
    county: countyLabel,
  })
  const last = found.tried.at(-1)
  if (found.status === 'matched_without_unit' && last && 'address' in last)
    host.warnAlways(
      `matched_without_unit: no property matched with the unit; this is the record at "${last.address}"`,
    )
  const [{renderRecords}, {colourEnabled}] = await after
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
    explain: f.explain,
    match: found,
    raw: found.raw,
    colour: format === 'table' && colourEnabled(process.stdout, process.env),
  })
  // a key inside a record is the server's echo: masked (src/pipeline/key-echo.ts), and the user must know
  if (found.keyEchoes > 0) host.warnAlways(keyEchoWarning(found.keyEchoes))
  process.stdout.write(out)
}
