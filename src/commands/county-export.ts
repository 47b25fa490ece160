import {readFile} from 'node:fs/promises'

import {Flags} from '@oclif/core'

import {BaseCommand} from '../base-command.js'
import {UsageError} from '../api/errors.js'
import {fipsProblem} from '../api/validate.js'
import {canonicalField} from '../render/field-names.js'

export default class CountyExport extends BaseCommand<typeof CountyExport> {
  static override summary =
    'Export whole counties to CSV, NDJSON or JSON: streamed, rate-limit aware, resumable'
  static override description = `Each county is fetched with the county-wide form of the endpoint (fips only), as one array or
page by page (RFC 8288 Link rel="next"), streamed to disk in constant memory, and written atomically to --out.
An interrupted or partly failed run leaves a checkpoint beside --out; --resume continues it without
fetching finished counties or pages again.`

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
      command: '<%= config.bin %> county-export --fips-file counties.txt --format ndjson > all.ndjson',
    },
    {
      description: 'Continue an interrupted export',
      command: '<%= config.bin %> county-export --fips-file counties.txt --out all.csv --resume',
    },
    {
      description: 'How many requests would this take?',
      command: '<%= config.bin %> county-export --fips-file counties.txt --dry-run',
    },
  ]

  static override flags = {
    fips: Flags.string({description: 'County code to export (repeatable)', multiple: true}),
    'fips-file': Flags.string({description: 'File of county codes, one per line (# comments allowed)'}),
    out: Flags.string({
      description: 'Output file (written to a temp file and renamed when complete); stdout when omitted',
    }),
    format: Flags.option({
      options: ['csv', 'ndjson', 'json'] as const,
      default: 'csv',
      description: 'Output format',
    })(),
    fields: Flags.string({
      description: 'Comma-separated columns to keep, in order (CSV header names)',
      delimiter: ',',
      multiple: true,
    }),
    resume: Flags.boolean({description: 'Continue from the checkpoint beside --out'}),
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
  }

  protected static override defaultMaxWait = 3600

  async run(): Promise<void> {
    const f = this.flags
    const fips = await this.countyList()
    if (f.resume && !f.out)
      throw new UsageError('--resume needs --out (the checkpoint lives beside the output file)')
    if (f.out) await (await import('../export/atomic-file.js')).assertWritableTarget(f.out)
    const fields = checkFields(f.fields?.map((s) => s.trim()).filter((s) => s !== ''))
    if (f['dry-run']) {
      process.stdout.write(
        `${fips.length} ${fips.length === 1 ? 'county' : 'counties'}: at least ${fips.length} requests (one per county when the service sends whole counties; one per page when it paginates). Nothing was sent.\n`,
      )
      return
    }
    const {runExportCommand} = await import('../export/export-command.js')
    await runExportCommand(this, {
      fips,
      out: f.out,
      format: f.format,
      fields,
      resume: f.resume,
      bom: f.bom,
      escapeFormulas: !f['no-escape-formulas'],
      concurrency: f.concurrency,
      reserve: f.reserve,
      maxRequests: f['max-requests'],
    })
  }

  /** --fips and --fips-file, validated before anything is sent; duplicates removed, order kept. */
  private async countyList(): Promise<string[]> {
    const f = this.flags
    const list: Array<{value: string; where: string}> = (f.fips ?? []).map((v) => ({
      value: v.trim(),
      where: `--fips ${v}`,
    }))
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
      throw new UsageError('give at least one county: --fips 06067 (repeatable) or --fips-file FILE')
    for (const {value, where} of list) {
      const problem = fipsProblem(value)
      if (problem) throw new UsageError(`${where}: "${value}" ${problem}`)
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
