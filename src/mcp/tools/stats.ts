import * as z from 'zod'

import {statsOfFile} from '../../jobs/file-stats.js'
import {renderStats, statsDocument} from '../../stats/render.js'
import type {ToolDef} from '../tool.js'

const input = z.strictObject({
  path: z.string().meta({
    description:
      'An export as `sfl county-export` wrote it, on this machine: a CSV, NDJSON, JSON or Parquet file, an --out-dir folder, or its manifest.json',
    minLength: 1,
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
It reads the file in bounded memory and sends no request. It will not return the records themselves (an assistant's context is no place for a county of them) nor make an export (see plan_export).`,
  input,
  output,
  annotations: {readOnlyHint: true, idempotentHint: true, openWorldHint: false},
  async run(args) {
    const byCounty = args.by_county === true
    const s = await statsOfFile(args.path, byCounty)
    const lines = renderStats(args.path, s.run)
    if (byCounty) for (const c of s.counties) lines.push(...renderStats(`county ${c.fips}`, c.report))
    const doc = statsDocument(s.run, byCounty ? s.counties : [])
    return {text: lines.join('\n'), structured: doc as unknown as Record<string, unknown>}
  },
}
