import {readFile} from 'node:fs/promises'

import {Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {UsageError} from '../api/errors.js'
import {fipsProblem} from '../api/validate.js'
import {canonicalField} from '../render/field-names.js'
import type {ExportSummary} from '../jobs/county-export.js'

export default class CountyExport extends BaseCommand<typeof CountyExport> {
  static override summary =
    'Export whole counties to CSV, NDJSON, JSON or Parquet: streamed, rate-limit aware, resumable'
  static override description = `Each county is fetched with the county-wide form of the endpoint (fips only), as one array or
page by page (RFC 8288 Link rel="next"), streamed to disk in constant memory. --out receives exactly the
counties that finished, whole and in order, atomically. A run that did not end every county keeps a
checkpoint beside --out; running the same command again continues it (--restart starts over).`

  static override examples = [
    {
      description: 'One county to CSV on the sandbox',
      command: '<%= config.bin %> county-export --sandbox --fips 06067 --out sacramento.csv',
    },
    {
      description: 'Several counties, Excel-friendly',
      command: '<%= config.bin %> county-export --fips 06067 --fips 48201 --out counties.csv --bom',
    },
    {
      description: 'Counties listed in a file, as NDJSON on stdout',
      command: '<%= config.bin %> county-export --fips-file counties.txt --output ndjson > all.ndjson',
    },
    {
      description: 'Typed, compressed columns for DuckDB, pandas or Spark',
      command: '<%= config.bin %> county-export --fips 06067 --output parquet --out sacramento.parquet',
    },
    {
      description: 'Nightly in cron: the same line continues an unfinished run or starts a new one',
      command: '<%= config.bin %> county-export --fips-file counties.txt --out all.csv',
    },
    {
      description: 'How many requests would this take?',
      command: '<%= config.bin %> county-export --fips-file counties.txt --dry-run',
    },
  ]

  static override flags = {
    fips: Flags.string({description: 'County code to export (repeatable)', multiple: true}),
    county: Flags.string({
      description: 'County to export by name, e.g. "Sacramento, CA" (repeatable)',
      multiple: true,
    }),
    'fips-file': Flags.string({description: 'File of county codes, one per line (# comments allowed)'}),
    out: Flags.string({
      description: 'Output file (written to a temp file and renamed when complete); stdout when omitted',
    }),
    output: Flags.option({
      char: 'o',
      options: ['csv', 'ndjson', 'json', 'parquet'] as const,
      default: 'csv',
      description: 'Output format (parquet needs --out)',
      aliases: ['format'],
      deprecateAliases: true,
    })(),
    fields: Flags.string({
      description: 'Comma-separated columns to keep, in order (CSV header names)',
      delimiter: ',',
      multiple: true,
    }),
    restart: Flags.boolean({description: 'Discard the checkpoint beside --out and start over'}),
    resume: Flags.boolean({
      description: 'Continue from the checkpoint beside --out (the default whenever one exists)',
      hidden: true,
    }),
    concurrency: Flags.integer({description: 'Requests in flight at once', default: 4, min: 1, max: 64}),
    bom: Flags.boolean({description: 'Start the CSV with a UTF-8 byte-order mark (for Excel)'}),
    'no-escape-formulas': Flags.boolean({
      description: 'Do not neutralise CSV cells that start with = + - @ tab or CR',
    }),
    reserve: Flags.integer({
      description: 'Requests of each window to leave for others sharing the key',
      default: 0,
      min: 0,
    }),
    'max-requests': Flags.integer({description: 'Most requests this run may send', min: 1}),
    'dry-run': Flags.boolean({description: 'Print how many requests the run needs and send none'}),
    'max-record-bytes': Flags.integer({
      description: 'Skip (and list) any record larger than this many bytes instead of holding it in memory',
      default: 16 * 1024 * 1024,
      min: 1024,
    }),
  }

  protected static override defaultMaxWait = 3600
  // a county sent as one array can be hundreds of MB: the whole-request deadline has to allow for it
  protected static override defaultTimeout = 900

  async run(): Promise<ExportSummary | undefined> {
    const f = this.flags
    const fips = await this.countyList()
    if ((f.resume || f.restart) && !f.out)
      throw new UsageError(
        `--${f.resume ? 'resume' : 'restart'} needs --out (the checkpoint lives beside the output file)`,
      )
    // a Parquet file ends with its footer and is read by seeking to it: it cannot be streamed to stdout
    if (f.output === 'parquet' && !f.out)
      throw new UsageError(
        '--output parquet needs a file: give --out FILE.parquet (Parquet cannot go to stdout)',
      )
    if (f.resume && f.restart) throw new UsageError('--resume and --restart contradict each other; pick one')
    if (f.out) await (await import('../io/atomic-file.js')).assertWritableTarget(f.out)
    const fields = checkFields(f.fields?.map((s) => s.trim()).filter((s) => s !== ''))
    if (f['dry-run']) {
      process.stdout.write(
        `${fips.length} ${fips.length === 1 ? 'county' : 'counties'}: at least ${fips.length} requests (one per county when the service sends whole counties; one per page when it paginates). Nothing was sent.\n`,
      )
      return undefined
    }
    const ctx = await this.context({
      concurrency: f.concurrency,
      reserve: f.reserve,
      maxRequests: f['max-requests'],
    })
    const {runExportJob} = await import('../cli/jobs.js')
    return runExportJob(this.io(), ctx, {
      fips,
      out: f.out,
      format: f.output,
      fields,
      restart: f.restart,
      bom: f.bom,
      escapeFormulas: !f['no-escape-formulas'],
      maxRecordBytes: f['max-record-bytes'],
    })
  }

  /** --fips and --fips-file, validated before anything is sent; duplicates removed, order kept. */
  private async countyList(): Promise<string[]> {
    const f = this.flags
    const list: Array<{value: string; where: string}> = (f.fips ?? []).map((v) => ({
      value: v.trim(),
      where: `--fips ${v}`,
    }))
    const {countyFromFlags} = await import('../address/county-flags.js')
    // a name resolves to its code here, with did-you-mean when it does not (nothing is sent)
    for (const name of f.county ?? [])
      list.push({value: countyFromFlags({county: name})!.fips, where: `--county ${name}`})
    if (f['fips-file']) {
      let text: string
      try {
        text = await readFile(f['fips-file'], 'utf8')
      } catch (error) {
        throw new UsageError(`cannot read --fips-file ${f['fips-file']}: ${(error as Error).message}`)
      }
      text.split(/\r?\n|\r/).forEach((line, i) => {
        const v = line.replace(/#.*/, '').trim()
        if (v !== '') list.push({value: v, where: `${f['fips-file']} line ${i + 1}`})
      })
    }
    if (list.length === 0)
      throw new UsageError(
        'give at least one county: --fips 06067 or --county "Sacramento, CA" (repeatable), or --fips-file FILE',
      )
    for (const {value, where} of list) {
      const problem = fipsProblem(value)
      if (problem) throw new UsageError(`${where}: "${value}" ${problem}`)
      // a code no county has is refused before sending (the shipped FHFA county table)
      try {
        countyFromFlags({fips: value})
      } catch (error) {
        throw new UsageError(`${where}: ${(error as Error).message.replace(/^--fips /, '')}`)
      }
    }
    return [...new Set(list.map((l) => l.value))]
  }
}

/** Spec names, matched case-insensitively (`--fields apn` selects APN); returns the spec spelling. */
function checkFields(fields: string[] | undefined): string[] | undefined {
  return fields?.map((name) => {
    const known = canonicalField(name)
    if (known === undefined)
      throw new UsageError(
        `--fields: unknown column "${name}"; use spec names such as Fips, FinalValue or AssumableMortgage.LoanType`,
      )
    return known
  })
}
