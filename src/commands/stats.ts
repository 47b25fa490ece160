import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import type {StatsDocument} from '../stats/render.js'
import {paragraphs} from '../cli/help-text.js'

export default class Stats extends BaseCommand<typeof Stats> {
  static override summary =
    'Statistics of an existing export: eligibility shares, CRA levels, values, assumable loans'
  static override description = paragraphs`Reads an export as county-export writes it (a CSV, NDJSON, JSON or Parquet file, an --out-dir folder or
its manifest.json: what sfl changes reads) and prints the same statistics county-export prints after a run:
shares of FHA, VA, USDA, assumable and FHA-condo eligibility (of the known values), CRA levels, FinalValue
quartiles, ConfidenceScore median, and assumable loans by type with their median rate and equity gap.
Streams in bounded memory. ConfidenceScore is exact at any size; money and rate figures are exact to
1,000,000 values per metric, then come from a sketch within 1% and are marked ≈. --json prints the same
document as county-export --stats-json. Sends no request. Exit 2 when the export cannot be read.`

  static override examples = [
    {description: 'Statistics of a CSV export', command: '<%= config.bin %> stats sacramento.csv'},
    {
      description: 'Per county, as JSON for a script',
      command: '<%= config.bin %> stats all.ndjson --by-county --json',
    },
    {
      description: 'An --out-dir export, a table per county of its manifest',
      command: '<%= config.bin %> stats exports --by-county',
    },
  ]

  static override enableJsonFlag = true

  static override args = {
    file: Args.string({
      description:
        'The export: a CSV, NDJSON, JSON or Parquet file (or .csv.gz, .ndjson.gz, .json.gz), an --out-dir folder or its _sfl/manifest.json',
      required: true,
    }),
  }

  static override flags = {
    'by-county': Flags.boolean({
      description:
        "Also the statistics of each county (a folder's: its manifest's counties; a file's: by Fips)",
    }),
    output: Flags.option({
      char: 'o',
      options: ['table', 'json'] as const,
      default: 'table',
      description: 'Output format (json: deprecated, use --json)',
    })(),
  }

  async run(): Promise<StatsDocument> {
    const {args} = await this.parse(Stats)
    const byCounty = this.flags['by-county']
    const {statsOfFile} = await import('../jobs/file-stats.js')
    const {renderStats, statsDocument} = await import('../stats/render.js')
    const {forTerminal} = await import('../render/terminal.js')
    // an s3:// export is read through a private local copy (src/io/export-source.ts)
    const {withLocalExports} = await import('../io/export-source.js')
    const s = await withLocalExports([args.file], ([path]) => statsOfFile(path!, byCounty))
    const doc = statsDocument(s.run, byCounty ? s.counties : [])
    // --json: oclif prints the returned document, and nothing else goes to stdout
    if (this.jsonEnabled()) return doc
    if (this.flags.output === 'json') {
      this.warn((await import('../cli/json-output.js')).OUTPUT_JSON_DEPRECATED)
      process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`)
    } else {
      const lines = renderStats(args.file, s.run)
      if (byCounty) for (const c of s.counties) lines.push(...renderStats(`county ${c.fips}`, c.report))
      process.stdout.write(`${lines.map((l) => forTerminal(l)).join('\n')}\n`)
    }
    return doc
  }
}
