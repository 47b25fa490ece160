import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

/**
 * The arguments and flags of `sfl stats` and `sfl changes` for oclif (their commands, src/commands/stats.ts
 * and changes.ts: help, usage errors). The run without oclif (src/cli/local-fast.ts) parses the usual lines
 * by the plain tables beside the runs (src/cli/local-commands.ts `statsTable`, `changesTable`), which say
 * the same facts without loading oclif: test/cli/plain-parse.test.ts holds the two equal, flag by flag.
 */

export const statsArgs = {
  file: Args.string({
    description:
      'The export: a CSV, NDJSON, JSON or Parquet file (or .csv.gz, .ndjson.gz, .json.gz), an --out-dir folder or its _sfl/manifest.json',
    required: true,
  }),
}

export const statsFlags = {
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

export const changesArgs = {
  previous: Args.string({
    description: 'The earlier export (file, .gz file, --out-dir folder or its _sfl/manifest.json)',
    required: true,
  }),
  current: Args.string({
    description: 'The later export (file, .gz file, --out-dir folder or its _sfl/manifest.json)',
    required: true,
  }),
}

export const changesFlags = {
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
