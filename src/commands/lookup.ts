import {ServiceCommand} from '../cli/service-command.js'
import {UsageError} from '../errors.js'
import {fipsProblem} from '../api/validate.js'
import type {BatchSummary} from '../jobs/batch-lookup.js'
import {paragraphs} from '../cli/help-text.js'
import {lookupFlags} from '../cli/lookup-definition.js'
import {lookupOne} from '../cli/lookup-one.js'
import {dataDirs, readZipTable} from '../address/zip-counties.js'

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
reads a file of lookups: CSV, TSV or NDJSON text (UTF-8, or UTF-16 as Excel saves "Unicode Text"), an .xlsx workbook
(its first sheet, or --sheet), or any of these gzipped and named .gz (see the README, "Batch lookups"); the output format comes from --out's
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

  static override flags = lookupFlags

  /** `--where` of a batch, read (and refused when bad) before the input is opened. */
  private where: import('../model/where.js').Where | undefined

  async run(): Promise<BatchSummary | undefined> {
    const f = this.flags
    if (f.input !== undefined) return this.batch(f.input)
    await lookupOne(f, {
      context: () => this.context(),
      warnAlways: (line) => this.warnAlways(line),
      notice: (line) => this.notice(line),
      zipTable: () => readZipTable(dataDirs(import.meta.url)),
      cacheDir: this.config.cacheDir,
      fromExport: async (...args) => (await import('../cli/lookup-from-flag.js')).fromExport(...args),
    })
    return undefined
  }

  /** `--input FILE --dry-run`: the plan, after at most one probe (src/jobs/batch-dry-run.ts); nothing looked up. */
  private async dryRun(
    input: import('../jobs/batch-input.js').BatchInput,
    from: import('../jobs/batch-from.js').FromExport | undefined,
  ): Promise<undefined> {
    const f = this.flags
    const {batchDryRun} = await import('../jobs/batch-dry-run.js')
    const {countyByFips, describeCounty} = await import('../address/counties.js')
    const plan = await batchDryRun({
      input,
      plan: f.plan ?? 'auto',
      unitFallback: f['unit-fallback'],
      asTyped: f['address-as-typed'],
      from,
      reserve: f.reserve,
      maxRequests: f['max-requests'],
      // the one probe: no retries and no waiting for a reset, so it stays one request
      probe: () => this.context({retries: 0, maxWaitMs: 0, concurrency: 1}),
      signal: new AbortController().signal,
      names: (fips) => {
        const c = countyByFips(fips)
        return c ? describeCounty(c) : fips
      },
    })
    process.exitCode = plan.exitCode
    process.stdout.write(f.json ? `${JSON.stringify(plan.json, null, 2)}\n` : plan.text)
    return undefined
  }

  /** `--from DIR` and `--max-age`, checked before anything is read or sent. */
  private async fromFlags(): Promise<import('../jobs/batch-from.js').FromExport | undefined> {
    const f = this.flags
    if (f['max-age'] !== undefined && f.from === undefined)
      throw new UsageError('--max-age applies to --from DIR (the export on disk whose counties it ages)')
    if (f.from === undefined) return undefined
    const {parseDuration} = await import('../jobs/plan.js')
    const maxAgeMs = f['max-age'] === undefined ? undefined : parseDuration(f['max-age'])
    return {dir: f.from, maxAgeMs, maxAge: f['max-age']}
  }

  /** `--input`: check everything, then run the batch job (src/jobs/batch-lookup.ts). */
  private async batch(source: string): Promise<BatchSummary | undefined> {
    const f = this.flags
    if (f.json && !f['dry-run'])
      throw new UsageError(
        '--json prints the plan of --dry-run; a batch writes its rows (--output picks their format)',
      )
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
    const {parseMap} = await import('../jobs/batch-map.js')
    const map = parseMap(f.map ?? [])
    // stored keys first: an input line holding one is masked in every message, and a --where holding one is
    // refused (src/model/where.ts)
    await this.maskConfiguredKeys()
    // --where read before the input is opened or anything sent (exit 2 with the place and the fix)
    this.where = f.where === undefined ? undefined : (await import('../model/where.js')).parseWhere(f.where)
    const from = await this.fromFlags()
    const {assertWritableTarget} = await import('../io/atomic-file.js')
    if (f.out) await assertWritableTarget(f.out)
    const stats = await (await import('../cli/stats-output.js')).statsOptions(f)
    const {openBatchInput} = await import('../jobs/batch-input.js')
    const {input, inputId, cleanup} = await openBatchInput(source, f.fips, process.stdin, map, {
      sheet: f.sheet,
    })
    try {
      // an s3:// export (issue 34) is read from a private local copy made before anything is sent, removed
      // when the batch ends; the checkpoint does not name the folder, so a rerun's new copy continues it
      const {isObjectUrl} = await import('../text/object-url.js')
      if (from && isObjectUrl(from.dir)) {
        const {withLocalExports} = await import('../io/export-source.js')
        return await withLocalExports([from.dir], ([dir]) =>
          this.runBatch(input, inputId, format, map, stats, {...from, dir: dir!, shown: from.dir}),
        )
      }
      return await this.runBatch(input, inputId, format, map, stats, from)
    } finally {
      await cleanup()
    }
  }

  /** The batch itself (or its plan with --dry-run), once every input and flag is checked. */
  private async runBatch(
    input: import('../jobs/batch-input.js').BatchInput,
    inputId: string,
    format: import('../model/formats.js').BatchFormat,
    map: import('../jobs/batch-map.js').ColumnMap,
    stats: Awaited<ReturnType<typeof import('../cli/stats-output.js').statsOptions>>,
    from: import('../jobs/batch-from.js').FromExport | undefined,
  ): Promise<BatchSummary | undefined> {
    const f = this.flags
    const {mapParams} = await import('../jobs/batch-map.js')
    if (f['dry-run']) return await this.dryRun(input, from)
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
        plan: f.plan ?? 'auto',
        several: f.several ?? 'first',
        from,
        where: this.where,
      },
      stats,
    )
  }
}
