import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {paragraphs} from '../cli/help-text.js'
import type {ChangesDocument} from '../cli/json-output.js'

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

  static override args = {
    previous: Args.string({
      description: 'The earlier export (file, .gz file, --out-dir folder or its _sfl/manifest.json)',
      required: true,
    }),
    current: Args.string({
      description: 'The later export (file, .gz file, --out-dir folder or its _sfl/manifest.json)',
      required: true,
    }),
  }

  static override flags = {
    out: Flags.string({description: 'Change file (written atomically); stdout when omitted'}),
    output: Flags.option({
      char: 'o',
      options: ['csv', 'ndjson', 'json'] as const,
      description: "Change file format [default: from --out's extension, else csv]",
    })(),
    'ignore-fields': Flags.string({
      description: 'Columns left out of the comparison, comma-separated, or none [default: ValuationDate]',
      delimiter: ',',
      multiple: true,
    }),
    fips: Flags.string({
      description:
        'Compare only this county (repeatable, or comma-separated) [default: every county of either export]',
      delimiter: ',',
      multiple: true,
    }),
    'exit-code': Flags.boolean({description: 'Exit 1 when there are changes (0 when there are none)'}),
  }

  /**
   * SFL_CONTENT_TYPE=json (oclif's switch for --json) applies only when stdout is free, with --out;
   * --json itself without --out is refused below.
   */
  override jsonEnabled(): boolean {
    return super.jsonEnabled() && (this.argv.includes('--json') || this.flags?.out !== undefined)
  }

  async run(): Promise<ChangesDocument> {
    const {args} = await this.parse(Changes)
    const f = this.flags
    const {changesFlagsChecked, changesRequest} = await import('../cli/changes-flags.js')
    const flags = {
      out: f.out,
      output: f.output,
      ignoreFields: f['ignore-fields'],
      fips: f.fips,
      json: this.jsonEnabled(),
    }
    // the flags first, so a mistake costs no download of an s3:// side
    await changesFlagsChecked(flags)
    // the worker thread starts now: its start overlaps the modules loaded and the sides checked below
    const {ScanWorker, scanWorkerUrl} = await import('../changes/scan-run.js')
    const worker = ScanWorker.start(scanWorkerUrl())
    try {
      const changes = await import('../changes/compare.js')
      this.debugLine(
        `sfl changes: ${worker ? 'one side on a worker thread, the other on this one' : 'both sides on the main thread'}`,
      )
      const {withCleanInterrupt} = await import('../cli/session.js')
      // an s3:// side is read through a private local copy (src/io/export-source.ts), then checked as a file
      const {withLocalExports} = await import('../io/export-source.js')
      const s = await withLocalExports([args.previous, args.current], async ([previous, current]) => {
        const req = await changesRequest({...flags, previous: previous!, current: current!})
        // a closed stdout (`| head`) ends it with OutputClosedError: exit 141, quietly (src/cli/base-command.ts)
        return withCleanInterrupt(() => changes.compareExports({...req, worker}))
      })
      this.notice(changes.changeSummaryLine(s))
      for (const line of changes.oneSidedNotices(s)) this.notice(line)
      if (f['exit-code'] && s.added + s.updated + s.deleted > 0) process.exitCode = 1
      return (await import('../cli/json-output.js')).changesDocument(s, args.previous, args.current)
    } finally {
      await worker?.end()
    }
  }
}
