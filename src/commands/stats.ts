import {BaseCommand} from '../cli/base-command.js'
import {paragraphs} from '../cli/help-text.js'
import {runStats} from '../cli/local-commands.js'
import {statsArgs, statsFlags} from '../cli/local-flags.js'
import type {StatsDocument} from '../stats/render.js'

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

  // defined once with the run, for this command and the run without oclif (src/cli/local-fast.ts)
  static override args = statsArgs
  static override flags = statsFlags

  async run(): Promise<StatsDocument> {
    const {args} = await this.parse(Stats)
    const json = this.jsonEnabled()
    const deprecatedJson = !json && this.flags.output === 'json'
    const doc = await runStats(args.file, {
      byCounty: this.flags['by-county'],
      table: !json && !deprecatedJson,
    })
    // --json: oclif prints the returned document, and nothing else goes to stdout
    if (deprecatedJson) {
      this.warn((await import('../cli/json-output.js')).OUTPUT_JSON_DEPRECATED)
      process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`)
    }
    return doc
  }
}
