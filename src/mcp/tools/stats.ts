import * as z from 'zod'

import {UNTRUSTED_LIMITS, withLocalExports} from '../../io/export-source.js'
import {statsOfFile} from '../../jobs/file-stats.js'
import {renderStats, statsDocument} from '../../stats/render.js'
import type {ToolDef} from '../tool.js'

const input = z.strictObject({
  path: z.string().meta({
    description:
      'An export as `sfl county-export` wrote it, on this machine: a CSV, NDJSON, JSON or Parquet file (or .csv.gz, .ndjson.gz, .json.gz), the folder of a county-export run (with its _sfl/manifest.json), or that manifest',
    minLength: 1,
    maxLength: 4096,
  }),
  by_county: z.boolean().optional().meta({description: 'Also the statistics of each county'}),
})

/** `sfl stats --json`'s document, version 1 (src/stats/render.ts). */
const output = z.object({
  version: z.number(),
  relativeError: z.number(),
  exactBound: z.number(),
  run: z.record(z.string(), z.unknown()).meta({description: 'The statistics of the whole export'}),
  counties: z
    .array(z.record(z.string(), z.unknown()))
    .meta({description: 'With by_county: the statistics of each county, in order; else empty'}),
})

export const statsTool: ToolDef<typeof input> = {
  name: 'export_statistics',
  title: 'Statistics of an export',
  description: `Statistics of an export that already exists on this machine (what \`sfl stats PATH\` prints): records, the shares of FHA, VA, USDA, assumable and FHA-condo eligibility, CRA levels, value quartiles, median confidence, and assumable loans by type with their median rate and equity gap.
It reads sfl's exports only: the folder of a county-export run with its _sfl/manifest.json, or a regular file whose CSV header or first record (NDJSON, JSON, Parquet) is an sfl export's, at most 2 GiB with lines of at most 1 MiB (a .gz export is expanded into a private copy first, up to the same 2 GiB). Anything else (another file, a FIFO, a device, /proc) is refused before its content is read, and an error never quotes a file's text. Counts and figures only: CRA levels and loan types as the spec lists them (any other value counts as "(other)"), counties by 5-digit code. It sends no request, works without sfl's configuration, and will not return the records themselves nor make an export (see plan_export).`,
  input,
  output,
  annotations: {readOnlyHint: true, idempotentHint: true, openWorldHint: false},
  needsService: false,
  async run(args, _deps, call) {
    const byCounty = args.by_county === true
    // the one gate for export paths, with an untrusted caller's limits (src/io/export-source.ts); a .gz
    // export through the same private copy `sfl stats` reads, capped and stopped by the call's signal
    const limits = {...UNTRUSTED_LIMITS, signal: call.signal}
    const s = await withLocalExports([args.path], ([path]) => statsOfFile(path!, byCounty, limits), limits)
    const lines = renderStats(args.path, s.run)
    if (byCounty) for (const c of s.counties) lines.push(...renderStats(`county ${c.fips}`, c.report))
    const doc = statsDocument(s.run, byCounty ? s.counties : [])
    return {text: lines.join('\n'), structured: doc as unknown as Record<string, unknown>}
  },
}
