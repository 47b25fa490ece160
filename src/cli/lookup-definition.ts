import * as Flags from '@oclif/core/flags'

import {OUTPUTS} from '../render/formats.js'

/**
 * The flags of `sfl lookup`, defined once: the command (src/commands/lookup.ts, its help and its usage
 * errors) and the lookup fast path (src/cli/lookup-fast.ts, which parses them with oclif's parser alone)
 * both use this table. The builders come from oclif's flags module, not @oclif/core's index, so the fast
 * path loads no more of oclif than its parser.
 */
export const lookupFlags = {
  fips: Flags.string({
    description: 'Five-digit county code (state + county), e.g. 06067; checked against the US county list',
  }),
  county: Flags.string({
    description: 'The county by name instead of --fips, e.g. "Sacramento, CA" (see `sfl counties`)',
  }),
  address: Flags.string({description: 'Full street address, e.g. "3526 HIGH ST, SACRAMENTO, CA 95838"'}),
  apn: Flags.string({description: "Assessor's parcel number (at most 45 characters)"}),
  'property-id': Flags.string({description: "The service's own property ID (a positive integer)"}),
  output: Flags.option({
    char: 'o',
    options: OUTPUTS,
    description:
      "Output format [default: table at a terminal, else json; with --input: from --out's extension, else csv at a terminal, json in a pipe]",
  })(),
  explain: Flags.boolean({
    description:
      'json/ndjson: print {data, explain}: the record as sent, and the verdicts per program with reason codes',
  }),
  'market-rate': Flags.string({
    description:
      'Percent rate of a new loan today, 6.5 or 6.5%: the verdicts price an assumable loan against it (the table, or json/ndjson with --explain)',
  }),
  strict: Flags.boolean({description: 'Fail (exit 1) when a record does not match the spec schema'}),
  'no-escape-formulas': Flags.boolean({description: 'Do not neutralise CSV cells that start with = + - @'}),
  input: Flags.string({
    description:
      'Batch mode: a file of lookups (CSV, TSV, NDJSON, an .xlsx workbook, UTF-8 or UTF-16, .gz read by name), or - for stdin',
  }),
  sheet: Flags.string({
    description:
      'Batch mode: the sheet of an .xlsx --input to read, by name [default: the first visible sheet]',
  }),
  out: Flags.string({
    description:
      'Batch mode: write results to this file (atomically) instead of stdout; .csv, .ndjson or .json sets the format',
  }),
  restart: Flags.boolean({description: 'Batch mode: discard the checkpoint beside --out and start over'}),
  resume: Flags.boolean({
    description: 'Batch mode: continue from the checkpoint beside --out (the default whenever one exists)',
    hidden: true,
  }),
  concurrency: Flags.integer({
    description: 'Batch mode: requests in flight at once',
    default: 4,
    min: 1,
    max: 64,
  }),
  reserve: Flags.integer({
    description: 'Batch mode: requests of each window to leave for others sharing the key',
    default: 0,
    min: 0,
  }),
  'max-requests': Flags.integer({description: 'Batch mode: most requests this run may send', min: 1}),
  'address-as-typed': Flags.boolean({
    description: 'Send --address exactly as typed instead of its USPS-standardised form',
  }),
  fallback: Flags.boolean({
    description:
      'On a 404 for an address, try it as typed and then without the unit (at most 2 more requests); --no-fallback sends one request',
    allowNo: true,
    default: true,
  }),
  'unit-fallback': Flags.boolean({
    description: 'Batch mode: when an address with a unit is not found, try it without the unit',
  }),
  map: Flags.string({
    description:
      'Batch mode: read a lookup field from columns of your own, FIELD=COLUMN (address, apn, property_id or fips); address=street,city,state,zip joins several into "street, city, state zip"; repeatable, names match ignoring case',
    multiple: true,
  }),
  bom: Flags.boolean({
    description:
      'Batch mode: start the CSV output with a UTF-8 byte-order mark (for Excel); kept without it when the input has one',
  }),
  plan: Flags.option({
    options: ['auto', 'lookups', 'scan'] as const,
    description:
      "Batch mode: per county, a lookup per row or a scan of the county's records, whichever costs fewer requests (auto), or forced; rows the scan cannot answer exactly are looked up [default: auto]",
  })(),
  several: Flags.option({
    options: ['first', 'rows'] as const,
    description:
      "Batch mode: a row answered by several records gives one output row, the first record with the count and the others' ids (first), or a row per record (rows) [default: first]",
  })(),
  where: Flags.string({
    description:
      'Batch mode: keep only the records this filter is true for, e.g. "FHAEligible = true" (the grammar of county-export --where); a row none of whose records pass keeps its place with status filtered',
  }),
  from: Flags.string({
    description:
      'Answer from an --out-dir export (DIR with its _sfl/manifest.json, or an s3:// prefix) before asking the service: one property when a record matches it exactly; a batch sends only the rows the export cannot answer',
  }),
  'max-age': Flags.string({
    description: 'With --from: use only counties fetched less than this long ago, e.g. 7d, 12h, 90m',
  }),
  'dry-run': Flags.boolean({
    description:
      "Batch mode: print the plan (per county: rows, lookups or a scan and its requests, the time at the key's limit) after at most one probe request; nothing is looked up",
  }),
  json: Flags.boolean({description: 'With --input --dry-run: print the plan as one JSON document'}),
  'no-stats': Flags.boolean({description: 'Batch mode: no statistics table after the summary'}),
  'stats-by-county': Flags.boolean({
    description: 'Batch mode: after the run statistics, a table per county',
  }),
  'stats-json': Flags.string({
    description: 'Batch mode: also write the statistics as JSON to this file (the run and each county)',
  }),
}
