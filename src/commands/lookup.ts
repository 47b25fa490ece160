import {Flags} from '@oclif/core'

import {ServiceCommand} from '../cli/service-command.js'
import {OUTPUTS} from '../render/formats.js'
import {SchemaError, UsageError} from '../errors.js'
import {keyEchoWarning} from '../api/secrets.js'
import {fipsProblem} from '../api/validate.js'
import type {BatchSummary} from '../jobs/batch-lookup.js'
import {paragraphs} from '../cli/help-text.js'

export default class Lookup extends ServiceCommand<typeof Lookup> {
  static override summary = 'Look up one property (or a file of them) by address, APN or property ID'
  static override description = paragraphs`Exactly one of --address, --apn or --property-id, with --fips or
--county, for one property. The county is checked against the US county list before anything is sent. An address
is sent in its USPS Publication 28 standard form (--address-as-typed sends it unchanged); on a 404 sfl tries it as
typed, then without the unit: at most 2 more requests, none with --no-fallback.

Output is a table at a terminal and JSON in a pipe; --output picks json, ndjson, csv or table. The table gives a
verdict per program: the service's own flag, with its reason from the record; --explain adds them to json/ndjson
as {data, explain}. A match without the unit is said beside the record: a row of the table, {data, match} in
json/ndjson, a last column "match" in csv.

Records are checked against the spec's schema: a violation is a warning, or exit 1 with --strict. With --input,
reads a CSV or NDJSON file of lookups (see the README, "Batch lookups"); the output format comes from --out's
extension (.csv, .ndjson, .json) unless --output says otherwise, and is JSON in a pipe without --out.`

  static override examples = [
    {
      description: 'Try it on the embedded sandbox',
      command:
        '<%= config.bin %> lookup --sandbox --fips 06067 --address "3526 HIGH ST, SACRAMENTO, CA 95838"',
    },
    {
      description: 'A county by name, the verdicts priced against a 6.5% market rate',
      command:
        '<%= config.bin %> lookup --sandbox --county "Sacramento, CA" --address "1150 River Oaks Dr #114" --market-rate 6.5',
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
    {
      description: 'An Excel sheet with its own column names, back to Excel with a BOM',
      command:
        '<%= config.bin %> lookup --input sheet.csv --map address=Street,City,State,Zip --map fips=County --out enriched.csv --bom',
    },
  ]

  static override flags = {
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
    input: Flags.string({description: 'Batch mode: a CSV or NDJSON file of lookups, or - for stdin'}),
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
    'no-stats': Flags.boolean({description: 'Batch mode: no statistics table after the summary'}),
    'stats-by-county': Flags.boolean({
      description: 'Batch mode: after the run statistics, a table per county',
    }),
    'stats-json': Flags.string({
      description: 'Batch mode: also write the statistics as JSON to this file (the run and each county)',
    }),
  }

  async run(): Promise<BatchSummary | undefined> {
    const f = this.flags
    if (f.input !== undefined) return this.batch(f.input)
    for (const flag of [
      'out',
      'resume',
      'restart',
      'unit-fallback',
      'max-requests',
      'map',
      'bom',
      'no-stats',
      'stats-by-county',
      'stats-json',
    ] as const)
      if (f[flag]) throw new UsageError(`--${flag} applies to batch lookups; add --input FILE`)
    const format = this.outputFormat(f.output)
    const {lookupRequest} = await import('../cli/lookup-flags.js')
    const {query, countyLabel, marketRate} = lookupRequest(f, format)
    // start loading what runs after the request now, so the files are read while the request is made
    const after = Promise.all([import('../render/record-output.js'), import('../render/colour.js')])
    after.catch(() => undefined) // a failed import is reported by the await below, not as unhandled
    const ctx = await this.context()
    const {lookupOne} = await import('../lookup/address-lookup.js')
    const found = await lookupOne(ctx, query, {
      asTyped: f['address-as-typed'],
      fallback: f.fallback,
      county: countyLabel,
    })
    const last = found.tried.at(-1)
    if (found.status === 'matched_without_unit' && last && 'address' in last)
      this.warnAlways(
        `matched_without_unit: no property matched with the unit; this is the record at "${last.address}"`,
      )
    const [{renderRecords}, {colourEnabled}] = await after
    found.problems.forEach((problems, i) => {
      // one line per record naming the fields (src/pipeline/checks.ts); --strict fails on a violation (spec 2)
      if (problems.length === 0) return
      const id = found.records[i]!['ServicePropertyID']
      const line = `record ${typeof id === 'number' || typeof id === 'string' ? id : '(no ServicePropertyID)'} does not match the spec's rules: ${problems.join('; ')}`
      if (f.strict) throw new SchemaError(line)
      this.warnAlways(line)
    })
    const out = await renderRecords(found.records, format, {
      escapeFormulas: !f['no-escape-formulas'],
      width: process.stdout.columns ?? 100,
      marketRate,
      explain: f.explain,
      match: found,
      raw: found.raw,
      colour: format === 'table' && colourEnabled(process.stdout, process.env),
    })
    // a key inside a record is the server's echo: masked (src/pipeline/key-echo.ts), and the user must know
    if (found.keyEchoes > 0) this.warnAlways(keyEchoWarning(found.keyEchoes))
    process.stdout.write(out)
  }

  /** `--input`: check everything, then run the batch job (src/jobs/batch-lookup.ts). */
  private async batch(source: string): Promise<BatchSummary> {
    const f = this.flags
    for (const flag of ['address', 'apn', 'property-id'] as const)
      if (f[flag] !== undefined)
        throw new UsageError(`--${flag} and --input do not go together: the input file supplies the lookups`)
    // the verdicts are a single lookup's; a batch row has none, so these would be ignored: refuse them
    for (const flag of ['market-rate', 'explain'] as const)
      if (f[flag] !== undefined && f[flag] !== false)
        throw new UsageError(`--${flag} applies to one property (the verdicts); batch output has no verdicts`)
    const format = (await import('../cli/lookup-flags.js')).batchOutput(f, Boolean(process.stdout.isTTY))
    // --fips is typed by a person, not read by a spreadsheet: it stays exactly 5 digits (no padding)
    if (f.fips !== undefined) {
      const p = fipsProblem(f.fips)
      if (p) throw new UsageError(`--fips "${f.fips}" ${p}`)
    }
    const {parseMap, mapParams} = await import('../jobs/batch-map.js')
    const map = parseMap(f.map ?? [])
    const {assertWritableTarget} = await import('../io/atomic-file.js')
    if (f.out) await assertWritableTarget(f.out)
    const stats = await (await import('../cli/stats-output.js')).statsOptions(f)
    await this.maskConfiguredKeys() // an input line holding a stored key is masked in every message
    const {openBatchInput} = await import('../jobs/batch-input.js')
    const {input, inputId, cleanup} = await openBatchInput(source, f.fips, process.stdin, map)
    try {
      const ctx = await this.context({
        concurrency: f.concurrency,
        reserve: f.reserve,
        maxRequests: f['max-requests'],
      })
      const {runBatchJob} = await import('../cli/jobs.js')
      return await runBatchJob(
        this.io(),
        ctx,
        {
          input,
          inputId,
          out: f.out,
          format,
          restart: f.restart,
          unitFallback: f['unit-fallback'],
          asTyped: f['address-as-typed'],
          escapeFormulas: !f['no-escape-formulas'],
          map: mapParams(map, input.sources),
          bom: f.bom || input.bom,
          stats: stats !== undefined && (!f.quiet || stats.json !== undefined),
          strict: f.strict,
        },
        stats,
      )
    } finally {
      await cleanup()
    }
  }
}
