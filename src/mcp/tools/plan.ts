import {join} from 'node:path'

import * as z from 'zod'

import {UsageError} from '../../errors.js'
import {outDirProblem} from '../../io/export-source.js'
import {MANIFEST_PLACES} from '../../io/out-dir-layout.js'
import {outDirJournalPaths} from '../../jobs/journal.js'
import {parseDuration} from '../../jobs/plan.js'
import {dryRun} from '../../lib/dry-run.js'
import {countyListOf, shellLine} from '../inputs.js'
import {serviceCore, type ToolDef} from '../tool.js'
import {mcpMessage} from '../words.js'
import {isObjectUrl} from '../../text/object-url.js'
import {parseWhere} from '../../model/where.js'
import {formatsWrittenBy, type WrittenBy} from '../../model/formats.js'

// the formats of a plan for any number of counties: many go to an --out-dir (src/model/formats.ts)
const FORMATS = formatsWrittenBy('county-export --out-dir') as [
  WrittenBy<'county-export --out-dir'>,
  ...Array<WrittenBy<'county-export --out-dir'>>,
]

const input = z.strictObject({
  counties: z
    .array(z.string())
    .optional()
    .meta({description: 'Counties by code ("06067") or name ("Sacramento, CA")'}),
  states: z
    .array(z.string())
    .optional()
    .meta({description: 'Every county of these states, by two-letter code ("CA")'}),
  all_counties: z
    .boolean()
    .optional()
    .meta({description: 'Every county of the US county list (about 3,200)'}),
  out_dir: z.string().optional().meta({
    description:
      'The folder the export would go to: an earlier run there (_sfl/manifest.json, a checkpoint) is taken into account. Only read',
  }),
  max_age: z.string().optional().meta({
    description: 'With out_dir: counties exported less than this long ago are skipped ("30d", "12h")',
  }),
  format: z.enum(FORMATS).optional().meta({description: 'The export format (default csv)'}),
  where: z.string().max(2000).optional().meta({
    description:
      'A row filter, as county-export --where takes it ("FHAEligible = true and FinalValue < 500000"). Rows are filtered after fetching: it changes no request of the plan',
  }),
})

const output = z.object({
  counties: z.number(),
  toFetch: z.array(z.string()),
  requests: z.number().meta({description: 'The fewest requests the run can take'}),
  requestsExact: z.boolean(),
  requestsEstimate: z.number().nullable(),
  budget: z.record(z.string(), z.unknown()),
  waitSeconds: z
    .number()
    .nullable()
    .meta({description: 'For the fewest requests: the wait for later windows'}),
  waitSecondsEstimate: z.number().nullable(),
  probeRequests: z.number().meta({description: 'Requests this plan sent (the one probe)'}),
  command: z.string().meta({description: 'The command line that runs the export, for the person to run'}),
  plan: z.record(z.string(), z.unknown()).meta({description: '`sfl county-export --dry-run --json` in full'}),
})

export const planTool: ToolDef<typeof input> = {
  name: 'plan_export',
  title: 'Plan a county export',
  description: `The plan of a bulk export of whole counties, as \`sfl county-export --dry-run\` makes it: the counties, the requests they take, and the time at the API key's rate limit (learned from ONE probe request, which it spends, to the county likely to hold the most records; the others are scaled from it by their housing units), plus the command line that runs the export.
It does NOT export: an assistant's context is no place for a county of records (tens of thousands), and a run of hours belongs in the CLI, which writes files atomically, keeps a checkpoint and continues after an interruption. Give the person the command line it returns, e.g. \`sfl county-export --state CA --out-dir exports\`; export_statistics then summarises the result.`,
  input,
  output,
  annotations: {readOnlyHint: true, idempotentHint: false, openWorldHint: true},
  needsService: true,
  async run(args, deps, call) {
    const fips = countyListOf({counties: args.counties, states: args.states, all: args.all_counties})
    const format = args.format ?? 'csv'
    if (args.max_age !== undefined && args.out_dir === undefined)
      throw new UsageError('max_age needs out_dir (freshness is read from its _sfl/manifest.json)')
    const maxAgeMs = args.max_age === undefined ? undefined : parseDuration(args.max_age, 'max_age')
    // checked as the CLI checks it, before the probe is sent; the plan says it changes no request
    const where = args.where === undefined ? undefined : checkedWhere(args.where)
    // the folder is only read (its manifest and checkpoint): a file there, or a FIFO or device in
    // their place, is refused before anything of it is opened (src/io/export-source.ts)
    if (args.out_dir !== undefined) {
      // an s3:// folder would be read with the person's AWS credentials at a caller's word: local only
      if (isObjectUrl(args.out_dir))
        throw new UsageError(
          `out_dir ${args.out_dir}: sfl mcp plans local export folders only, never an s3:// location; plan that one with sfl county-export in a terminal`,
        )
      const {journal} = outDirJournalPaths(args.out_dir)
      const manifests = MANIFEST_PLACES.map((rel) => join(args.out_dir!, rel))
      const problem = await outDirProblem(args.out_dir, [...manifests, journal])
      if (problem) throw new UsageError(`out_dir ${problem}`)
    }
    const plan = await dryRun({
      fips,
      outDir: args.out_dir,
      format,
      maxAgeMs,
      maxAge: args.max_age,
      restart: false,
      where,
      // the run of the command line it returns: no --fields, no --strict, this server's base URL
      baseUrl: serviceCore(deps).baseUrl,
      reserve: 0,
      probe: deps.probe,
      now: deps.now,
      signal: call.signal,
      words: (e) => mcpMessage(e, {keyFrom: deps.keyFrom}),
    })
    const command = shellLine(exportCommand(args, fips.length))
    const doc = plan.json
    return {
      text: `${plan.text.trimEnd()}\nRun it with: ${command}`,
      structured: {
        counties: doc.counties,
        toFetch: doc.toFetch,
        requests: doc.requests,
        requestsExact: doc.requestsExact,
        requestsEstimate: doc.requestsEstimate,
        budget: doc.budget,
        waitSeconds: doc.waitSeconds,
        waitSecondsEstimate: doc.waitSecondsEstimate,
        probeRequests: doc.probeRequests,
        command,
        plan: doc,
      },
    }
  },
}

/**
 * `sfl county-export` with the same choice of counties: codes as --fips, names as --county, --state,
 * --all-counties; --out-dir as given, else `exports` for many counties and `--out <fips>.csv` for one.
 */
function exportCommand(args: z.infer<typeof input>, count: number): string[] {
  const words = ['sfl', 'county-export']
  for (const c of args.counties ?? []) words.push(/^\s*\d+\s*$/.test(c) ? '--fips' : '--county', c.trim())
  for (const s of args.states ?? []) words.push('--state', s.trim().toUpperCase())
  if (args.all_counties) words.push('--all-counties')
  const ext = args.format ?? 'csv'
  if (args.out_dir !== undefined) words.push('--out-dir', args.out_dir)
  else if (count === 1) words.push('--out', `export.${ext}`)
  else words.push('--out-dir', 'exports')
  if (args.max_age !== undefined) words.push('--max-age', args.max_age)
  if (ext !== 'csv') words.push('--output', ext)
  if (args.where !== undefined) words.push('--where', args.where.trim())
  return words
}

/** The filter read by the CLI's own reader; its error named after this tool's parameter, not the flag. */
function checkedWhere(text: string): string {
  try {
    parseWhere(text)
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(error.message.replace(/^--where: /, 'where: '))
    throw error
  }
  return text.trim()
}
