import {BaseCommand} from '../cli/base-command.js'
import {paragraphs} from '../cli/help-text.js'
import type {ChangesDocument} from '../cli/json-output.js'
import {changesInput, runChanges} from '../cli/local-commands.js'
import {changesArgs, changesFlags} from '../cli/local-flags.js'

export default class Changes extends BaseCommand<typeof Changes> {
  static override summary = 'Compare two exports: which properties were added, updated or deleted'
  static override description = paragraphs`PREVIOUS and CURRENT are exports (CSV, NDJSON, JSON or Parquet files, or an --out-dir folder or its
manifest.json). Properties are matched by ServicePropertyID (APN when a record has none), county by county;
values are compared as text, so a CSV and an NDJSON export of the same data show no change. The change file
has one row per property added, updated (ChangedFields names what changed) or deleted, then the record's
columns (the previous record for a deleted one) and, for updated rows, the previous values. ValuationDate is
not compared unless --ignore-fields says otherwise. Every county of either export is compared, as a full
outer join would: a county only one export holds is all added or all deleted, and a notice names it;
--fips compares only the counties named. --json prints the summary as JSON on stdout (with --out: the change
file cannot share stdout). Sends no request. Exit 0 with or without changes (--exit-code: 1 when there are
changes, like git diff --exit-code).`

  static override examples = [
    {
      description: 'What changed since last month',
      command: '<%= config.bin %> changes october.csv november.csv --out changes.csv',
    },
    {
      description: 'Two --out-dir exports, as NDJSON, comparing every field',
      command:
        '<%= config.bin %> changes exports/2026-10 exports/2026-11 --output ndjson --ignore-fields none',
    },
    {
      description: "One county of last month's state folder against this month's county file",
      command: '<%= config.bin %> changes exports/2026-10 sacramento.csv --fips 06067 --out changes.csv',
    },
  ]

  static override enableJsonFlag = true

  // defined once with the run, for this command and the run without oclif (src/cli/local-fast.ts)
  static override args = changesArgs
  static override flags = changesFlags

  /**
   * SFL_CONTENT_TYPE=json (oclif's switch for --json) applies only when stdout is free, with --out;
   * --json itself without --out is refused (src/cli/changes-flags.ts `changesFlagsChecked`).
   */
  override jsonEnabled(): boolean {
    return super.jsonEnabled() && (this.argv.includes('--json') || this.flags?.out !== undefined)
  }

  async run(): Promise<ChangesDocument> {
    const {args} = await this.parse(Changes)
    return runChanges(changesInput(args, this.flags, this.jsonEnabled()), {
      notice: (line) => this.notice(line),
      debugLine: this.debugLine,
    })
  }
}
