import {Flags} from '@oclif/core'

import {BaseCommand, OUTPUTS} from '../base-command.js'
import {SchemaError, UsageError} from '../api/errors.js'
import {validateLookup} from '../api/validate.js'

export default class Lookup extends BaseCommand<typeof Lookup> {
  static override summary = 'Look up one property (or a file of them) by address, APN or property ID'
  static override description = `Exactly one of --address, --apn or --property-id, with --fips, for one property.
Output is a table at a terminal and JSON in a pipe; --output picks json, ndjson, csv or table.
Records are checked against the spec's schema: a violation is a warning, or exit 1 with --strict.
With --input, reads a CSV or NDJSON file of lookups (see the README, "Batch lookups").`

  static override examples = [
    {
      description: 'Try it on the embedded sandbox',
      command:
        '<%= config.bin %> lookup --sandbox --fips 06067 --address "3526 HIGH ST, SACRAMENTO, CA 95838"',
    },
    {
      description: 'By parcel number, as JSON for a script',
      command: '<%= config.bin %> lookup --fips 06067 --apn 078-0123-045 --output json',
    },
    {
      description: 'By the service property ID, flattened to CSV',
      command: '<%= config.bin %> lookup --fips 06067 --property-id 30000000006 --output csv',
    },
    {
      description: 'A list of addresses, enriched to CSV',
      command: '<%= config.bin %> lookup --input prospects.csv --fips 06067 --out enriched.csv',
    },
  ]

  static override flags = {
    fips: Flags.string({description: 'Five-digit county code (state + county), e.g. 06067'}),
    address: Flags.string({description: 'Full street address, e.g. "3526 HIGH ST, SACRAMENTO, CA 95838"'}),
    apn: Flags.string({description: "Assessor's parcel number (at most 45 characters)"}),
    'property-id': Flags.string({description: "The service's own property ID (a positive integer)"}),
    output: Flags.option({
      char: 'o',
      options: OUTPUTS,
      description: 'Output format [default: table at a terminal, else json]',
    })(),
    strict: Flags.boolean({description: 'Fail (exit 1) when a record does not match the spec schema'}),
    'no-escape-formulas': Flags.boolean({description: 'Do not neutralise CSV cells that start with = + - @'}),
    input: Flags.string({description: 'Batch mode: a CSV or NDJSON file of lookups, or - for stdin'}),
    out: Flags.string({description: 'Batch mode: write results to this file (atomically) instead of stdout'}),
    resume: Flags.boolean({description: 'Batch mode: continue an interrupted run from its checkpoint'}),
    concurrency: Flags.integer({
      description: 'Batch mode: requests in flight at once',
      default: 4,
      min: 1,
      max: 64,
    }),
    'unit-fallback': Flags.boolean({
      description: 'Batch mode: when an address with a unit is not found, try it without the unit',
    }),
  }

  async run(): Promise<void> {
    const f = this.flags
    if (f.input !== undefined) {
      const {runBatchCommand} = await import('../export/batch-command.js')
      return runBatchCommand(this)
    }
    for (const flag of ['out', 'resume', 'unit-fallback'] as const)
      if (f[flag]) throw new UsageError(`--${flag} applies to batch lookups; add --input FILE`)
    // validate before any request (and before the sandbox or config is touched)
    const query = validateLookup({fips: f.fips, address: f.address, apn: f.apn, propertyId: f['property-id']})
    const format = this.outputFormat(f.output)
    // start loading what runs after the request now, so the files are read while the request is made
    const after = Promise.all([import('../api/schema.js'), import('../render/record-output.js')])
    after.catch(() => undefined) // a failed import is reported by the await below, not as unhandled
    const ctx = await this.context()
    const {fetchLookup} = await import('../api/lookup.js')
    const records = await fetchLookup(ctx, query)
    const [{checkRecord}, {renderRecords}] = await after
    for (const r of records) {
      const problems = checkRecord(r)
      if (problems.length === 0) continue
      const text = `the record does not match the spec's schema: ${problems.join('; ')}`
      if (f.strict) throw new SchemaError(text)
      this.warnAlways(text)
    }
    process.stdout.write(
      await renderRecords(records, format, {
        escapeFormulas: !f['no-escape-formulas'],
        width: process.stdout.columns ?? 100,
      }),
    )
  }
}
