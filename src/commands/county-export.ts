import {existsSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {dirname, resolve} from 'node:path'

import {Flags} from '@oclif/core'

import {ServiceCommand} from '../cli/service-command.js'
import {cliMessage} from '../cli/error-words.js'
import {exportFormat, exportTargetProblem} from '../cli/export-format.js'
import {parquetFlags, parquetOptions} from '../cli/parquet-flags.js'
import {UsageError} from '../errors.js'
import {fipsProblem} from '../api/validate.js'
import {canonicalField} from '../model/field-names.js'
import {formatsWrittenBy, isTextFormat} from '../model/formats.js'
import type {ExportSummary} from '../jobs/county-export.js'
import type {ChangesPlan} from '../cli/jobs.js'
import {paragraphs} from '../cli/help-text.js'
import type {PlanDocument} from '../jobs/plan.js'
import {count} from '../text/count.js'

export default class CountyExport extends ServiceCommand<typeof CountyExport> {
  static override summary =
    'Export whole counties to CSV, NDJSON, JSON, Parquet or xlsx: streamed, rate-limit aware, resumable'
  static override description = paragraphs`Each county is fetched with the county-wide form of the endpoint (fips only), as one array or
page by page (RFC 8288 Link rel="next"), streamed to disk (memory bounded per county: its ids only). --out receives exactly the
counties that finished, whole and in order, atomically. A run that did not end every county keeps a
checkpoint beside --out; running the same command again continues it (--restart starts over).

For a state or the whole country, --out-dir DIR writes one file per county as it finishes
(DIR/state=CA/fips=06067/data.csv) and DIR/_sfl/manifest.json; with --max-age 30d, counties exported less than
30 days ago are skipped. --dry-run prints the plan: counties, requests (measured by one probe request on the
county likely to hold the most records, the rest scaled by their housing units and said so), and the time at
the key's limit; --json prints it as JSON.`

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
      description: 'Parquet with gzip pages (any reader), in row groups of 65,536 rows',
      command:
        '<%= config.bin %> county-export --fips 06067 --out sacramento.parquet --parquet-compression gzip --parquet-row-group-size 65536',
    },
    {
      description: 'Nightly in cron: the same line continues an unfinished run or starts a new one',
      command: '<%= config.bin %> county-export --fips-file counties.txt --out all.csv',
    },
    {
      description: "This month's export and what changed since last month (nov.changes.csv)",
      command:
        '<%= config.bin %> county-export --fips-file counties.txt --out nov.csv --changes-since oct.csv',
    },
    {
      description: 'How many requests would this take?',
      command: '<%= config.bin %> county-export --fips-file counties.txt --dry-run',
    },
    {
      description: 'California, one file per county; a rerun within a month fetches only what is missing',
      command: '<%= config.bin %> county-export --state CA --out-dir exports --max-age 30d',
    },
    {
      description: 'The whole country: the plan first (one probe request), then the run',
      command: '<%= config.bin %> county-export --all-counties --out-dir exports --dry-run',
    },
    {
      description: 'The plan of a Parquet run, as JSON for a script',
      command: '<%= config.bin %> county-export --state CA --out-dir exports -o parquet --dry-run --json',
    },
  ]

  static override enableJsonFlag = true

  static override flags = {
    fips: Flags.string({description: 'County code to export (repeatable)', multiple: true}),
    county: Flags.string({
      description: 'County to export by name, e.g. "Sacramento, CA" (repeatable)',
      multiple: true,
    }),
    'fips-file': Flags.string({description: 'File of county codes, one per line (# comments allowed)'}),
    state: Flags.string({
      description:
        'Every county of this state, by two-letter code (repeatable; from the shipped county list)',
      multiple: true,
    }),
    'all-counties': Flags.boolean({
      description: 'Every county of the shipped county list (about 3,200): use with --out-dir',
    }),
    out: Flags.string({
      description: 'Output file (written to a temp file and renamed when complete); stdout when omitted',
    }),
    'out-dir': Flags.string({
      description:
        'Folder for one file per county (state=CA/fips=06067/data.csv), each written when its county finishes, and _sfl/manifest.json',
    }),
    'max-age': Flags.string({
      description:
        'With --out-dir: skip counties the manifest says were exported less than this long ago (e.g. 30d, 12h; units s m h d)',
    }),
    output: Flags.option({
      char: 'o',
      options: formatsWrittenBy('county-export'),
      description:
        "Output format (parquet and xlsx need --out) [default: --out's extension (.csv, .ndjson, .json, .parquet, .xlsx; .gz after csv, ndjson or json compresses), else csv]",
      aliases: ['format'],
      deprecateAliases: true,
    })(),
    ...parquetFlags,
    fields: Flags.string({
      description: 'Comma-separated columns to keep, in order (CSV header names)',
      delimiter: ',',
      multiple: true,
    }),
    where: Flags.string({
      description:
        'Keep only the rows this filter is true for, e.g. "FHAEligible = true and FinalValue < 500000" (SQL\'s WHERE: = != < <= > >=, in, like, is null, and/or/not; docs/exports.md "Filters"). Rows are filtered after fetching: the requests are the same',
    }),
    restart: Flags.boolean({
      description: 'Discard the checkpoint (beside --out, in --out-dir) and start over',
    }),
    resume: Flags.boolean({
      description: 'Continue from the checkpoint (the default whenever one exists)',
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
    'dry-run': Flags.boolean({
      description:
        "Print the plan (counties, requests, time at the key's limit; JSON with --json) after one probe request; nothing is exported",
    }),
    // oclif's --json (enableJsonFlag), described for this command: it is the plan's, not the export's
    json: Flags.boolean({
      description: 'With --dry-run: print the plan as one JSON document (the export format is --output)',
      helpGroup: 'GLOBAL',
    }),
    'no-probe': Flags.boolean({
      description: 'With --dry-run: send nothing, and plan with the default 1,000 requests/hour (spec 8.2)',
    }),
    'changes-since': Flags.string({
      description:
        'After the export, compare it with this earlier export (file, .gz file, --out-dir folder or its _sfl/manifest.json) and write a change file; needs --out or --out-dir',
    }),
    'changes-out': Flags.string({
      description:
        'Change file of --changes-since [default: <out>.changes.<ext> beside --out, or DIR/_sfl/changes.<ext>]',
    }),
    'ignore-fields': Flags.string({
      description:
        'Columns --changes-since leaves out of the comparison, comma-separated, or none [default: ValuationDate]',
      delimiter: ',',
      multiple: true,
    }),
    strict: Flags.boolean({
      description:
        "Skip (and list in the rejects file) records that break the spec's rules instead of writing them with a warning; the run then exits 7",
    }),
    'max-record-bytes': Flags.integer({
      description: 'Skip (and list) any record larger than this many bytes instead of holding it in memory',
      default: 16 * 1024 * 1024,
      min: 1024,
    }),
    'no-stats': Flags.boolean({
      description:
        'Gather no statistics (no table after the summary; saves reading the members of each NDJSON/JSON record)',
    }),
    'stats-by-county': Flags.boolean({description: 'After the run statistics, a table per county'}),
    'stats-json': Flags.string({
      description: 'Also write the statistics as JSON to this file (the run and each county; version 1)',
    }),
  }

  protected static override defaultMaxWait = 3600
  // a county sent as one array can be hundreds of MB: the whole-request deadline has to allow for it
  protected static override defaultTimeout = 900

  /**
   * --json is the plan's (with --dry-run); SFL_CONTENT_TYPE=json (oclif's switch for it) applies only to
   * a plan, since a run's stdout may carry records. --json without --dry-run is refused in run().
   */
  override jsonEnabled(): boolean {
    return super.jsonEnabled() && (this.argv.includes('--json') || this.argv.includes('--dry-run'))
  }

  async run(): Promise<ExportSummary | PlanDocument | undefined> {
    const f = this.flags
    if (this.jsonEnabled() && !f['dry-run'])
      throw new UsageError(
        '--json prints the plan of --dry-run; a run writes records (--output picks their format) and --stats-json FILE its statistics',
      )
    // the format --out's name asks for, or --output; a contradiction or a name sfl cannot write is exit 2
    f.output = exportFormat(f.output, f.out)
    // Parquet and xlsx are read from their end (no stdout); a workbook is no dataset folder (src/model/formats.ts);
    // checked before any folder is made or file read
    const targetProblem = exportTargetProblem(f.output, {
      out: f.out,
      outDir: f['out-dir'],
      changesSince: f['changes-since'],
      bom: f.bom,
    })
    if (targetProblem) throw new UsageError(targetProblem)
    // codec and row groups: only with Parquet, zstd only on a Node that has it (docs/exports.md "Parquet");
    // checked before the targets, so a refused run leaves no --out-dir folder behind
    const parquet = parquetOptions(f, f.output)
    const fips = await this.countyList()
    const {outDir, maxAgeMs} = await this.checkTargets()
    const stats = await (await import('../cli/stats-output.js')).statsOptions(f)
    const fields = checkFields(f.fields?.map((s) => s.trim()).filter((s) => s !== ''))
    const where = await checkWhere(f.where, f['changes-since'])
    const changes = await this.changesPlan()
    if (f['dry-run']) {
      const {dryRun} = await import('../lib/dry-run.js')
      const plan = await dryRun({
        fips,
        out: f.out,
        outDir,
        stateRoot: this.config.cacheDir,
        format: f.output,
        maxAgeMs,
        maxAge: f['max-age'],
        restart: f.restart,
        // the checkpoint is checked against the run these flags would make (it refuses what the run would)
        fields,
        strict: f.strict,
        where,
        parquet,
        baseUrl: f.sandbox ? undefined : await this.baseUrlInUse(),
        reserve: f.reserve,
        maxRequests: f['max-requests'],
        // the one probe: no retries and no waiting for a reset, so it stays one request
        probe: f['no-probe'] ? undefined : () => this.context({retries: 0, maxWaitMs: 0, concurrency: 1}),
        words: cliMessage,
      })
      process.exitCode = plan.exitCode
      // --json: oclif prints the returned plan, the one thing on stdout
      if (this.jsonEnabled()) return plan.json
      // the old spelling: --output json named the plan's format too (it is the export's format)
      const old = f.output === 'json'
      if (old) this.warn((await import('../cli/json-output.js')).OUTPUT_JSON_DEPRECATED)
      process.stdout.write(old ? `${JSON.stringify(plan.json, null, 2)}\n` : plan.text)
      return plan.json
    }
    // one file of thousands of counties is written only when the run ends (README "Nationwide runs")
    if (fips.length >= 100 && !outDir)
      this.notice(
        `sfl: ${count(fips.length)} counties into one output: nothing is written until the run ends; --out-dir DIR writes each county as it finishes`,
      )
    const ctx = await this.context({
      concurrency: f.concurrency,
      reserve: f.reserve,
      maxRequests: f['max-requests'],
    })
    const {runExportJob} = await import('../cli/jobs.js')
    return runExportJob(
      this.io(),
      ctx,
      {
        fips,
        out: f.out,
        outDir,
        maxAgeMs,
        format: f.output,
        fields,
        restart: f.restart,
        bom: f.bom,
        escapeFormulas: !f['no-escape-formulas'],
        parquet,
        maxRecordBytes: f['max-record-bytes'],
        strict: f.strict,
        where,
        // gathered when something will show them: the table (not --quiet) or --stats-json
        stats: stats !== undefined && (!f.quiet || stats.json !== undefined),
      },
      stats,
      changes,
    )
  }

  /** --changes-since checked before any request: --out given, the previous export readable, --changes-out writable. */
  private async changesPlan(): Promise<ChangesPlan | undefined> {
    const f = this.flags
    const since = f['changes-since']
    if (since === undefined) {
      for (const flag of ['changes-out', 'ignore-fields'] as const)
        if (f[flag] !== undefined) throw new UsageError(`--${flag} needs --changes-since PREVIOUS`)
      return undefined
    }
    const target = f.out ?? f['out-dir']
    if (target === undefined)
      throw new UsageError(
        '--changes-since needs --out FILE or --out-dir DIR (the export is compared once it is written); nothing was sent',
      )
    const {changeFormat, changesOutFor, ignoreList} = await import('../cli/changes-flags.js')
    const ignore = ignoreList(f['ignore-fields'])
    // a change file is text (src/model/formats.ts): a Parquet export's changes are NDJSON (typed, with Previous)
    const format = exportFormat(f.output, f.out)
    const kind = isTextFormat(format) ? format : 'ndjson'
    const {outPath} = await import('../io/export-dir.js')
    const layout = await import('../io/out-dir-layout.js')
    // DIR/_sfl/changes.<ext>: under a name dataset readers skip (src/io/out-dir-layout.ts)
    const out =
      f['changes-out'] ?? (f.out ? changesOutFor(f.out, kind) : outPath(target, layout.changesFile(kind)))
    if (resolve(out) === resolve(target))
      throw new UsageError(`--changes-out ${out} is the export's own output; give another file`)
    // the export replaces its output before the comparison reads PREVIOUS: the same file would be gone
    const sinceAt = layout.isManifestName(since) ? resolve(layout.exportFolderOf(since)) : resolve(since)
    if (sinceAt === resolve(target))
      throw new UsageError(
        f.out
          ? `--changes-since ${since} is the file this export replaces; copy it aside first (cp ${since} previous.${format}) and compare with the copy`
          : `--changes-since ${since} is the folder this export rewrites; copy it aside first (cp -r ${target} previous) and compare with the copy`,
      )
    if (resolve(since) === resolve(out))
      throw new UsageError(`--changes-out ${out} would replace the previous export; give another file`)
    // DIR/_sfl/ is made by the run before its first write: the default there is checked now only if it is
    if (f['changes-out'] !== undefined || f.out || existsSync(dirname(out)))
      await (await import('../io/atomic-file.js')).assertWritableTarget(out)
    const source = await import('../io/export-source.js')
    // an s3:// export is checked where it is (there, whole); it is copied to be read after the run
    if (source.isObjectExport(since)) await source.checkObjectExport(since, '--changes-since')
    else {
      // a .gz previous export is read through its expansion (src/io/gzip-export.ts), as after the run
      const {checkSide} = await import('../changes/sides.js')
      await source.withLocalExports([since], ([local]) => checkSide(local!))
    }
    return {since, out, format: changeFormat(undefined, out, kind), ignore}
  }

  /** --out / --out-dir and the flags that need one, checked before anything is sent. */
  private async checkTargets(): Promise<{outDir: string | undefined; maxAgeMs: number | undefined}> {
    const f = this.flags
    const outDir = f['out-dir']
    if (f.out && outDir)
      throw new UsageError(
        '--out and --out-dir contradict each other: --out writes one file, --out-dir one file per county; pick one',
      )
    if ((f.resume || f.restart) && !f.out && !outDir)
      throw new UsageError(
        `--${f.resume ? 'resume' : 'restart'} needs --out or --out-dir (where the checkpoint lives)`,
      )
    if (f.resume && f.restart) throw new UsageError('--resume and --restart contradict each other; pick one')
    if (f['max-age'] !== undefined && !outDir)
      throw new UsageError('--max-age needs --out-dir (freshness is read from DIR/_sfl/manifest.json)')
    if (f['no-probe'] && !f['dry-run']) throw new UsageError('--no-probe only applies to --dry-run')
    const {parseDuration} = await import('../jobs/plan.js')
    const maxAgeMs = f['max-age'] === undefined ? undefined : parseDuration(f['max-age'])
    const io = await import('../io/atomic-file.js')
    if (f.out) await io.assertWritableTarget(f.out)
    if (outDir) await io.prepareOutDir(outDir, !f['dry-run'])
    return {outDir, maxAgeMs}
  }

  /**
   * --fips, --county, --fips-file, --state and --all-counties, validated before anything is sent;
   * duplicates removed, order kept.
   */
  private async countyList(): Promise<string[]> {
    const f = this.flags
    const list: Array<{value: string; where: string}> = (f.fips ?? []).map((v) => ({
      value: v.trim(),
      where: `--fips ${v}`,
    }))
    const {countyFromFlags} = await import('../address/county-flags.js')
    // a name resolves to its code here, with did-you-mean when it does not (nothing is sent)
    for (const name of f.county ?? [])
      list.push({value: countyFromFlags({county: name}, {countyFlag: true})!.fips, where: `--county ${name}`})
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
    if (list.length === 0 && !f.state?.length && !f['all-counties'])
      throw new UsageError(
        'give at least one county: --fips 06067 or --county "Sacramento, CA" (repeatable), --fips-file FILE, --state CA or --all-counties',
      )
    for (const {value, where} of list) {
      const problem = fipsProblem(value)
      if (problem) throw new UsageError(`${where}: "${value}" ${problem}`)
      // a code no county has is refused before sending (the shipped FHFA county table)
      try {
        countyFromFlags({fips: value}, {countyFlag: true})
      } catch (error) {
        throw new UsageError(`${where}: ${(error as Error).message.replace(/^--fips /, '')}`)
      }
    }
    const {selectCounties} = await import('../address/county-select.js')
    return selectCounties({
      named: list.map((l) => l.value),
      states: f.state ?? [],
      all: f['all-counties'],
    })
  }
}

/**
 * --where read before anything is sent (src/model/where.ts: an unknown field with did-you-mean, a literal
 * of the wrong type, a syntax error: exit 2); returned trimmed, as the checkpoint and the manifest record it.
 */
async function checkWhere(where: string | undefined, since: string | undefined): Promise<string | undefined> {
  if (where === undefined) return undefined
  // a filtered export compared with an earlier one would report every row the filter left out as removed
  if (since !== undefined)
    throw new UsageError(
      '--where and --changes-since do not go together (rows the filter leaves out would read as removed); export without --where, or compare two exports filtered alike with sfl changes',
    )
  const {parseWhere} = await import('../model/where.js')
  parseWhere(where)
  return where.trim()
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
