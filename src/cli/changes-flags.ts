import {classifyOutputName} from '../io/output-name.js'
import {assertWritableTarget} from '../io/atomic-file.js'
import {checkSide} from '../changes/sides.js'
import {fipsProblem} from '../api/validate.js'
import {DEFAULT_IGNORED, type ChangeRequest} from '../changes/compare.js'
import {UsageError} from '../errors.js'
import type {RecordFormat} from '../io/record-writer.js'
import {extensionList, formatsWrittenBy, writes} from '../model/formats.js'
import {canonicalField} from '../model/field-names.js'

/**
 * The flags of a comparison (`sfl changes`, `county-export --changes-since`) as the comparison takes
 * them (src/changes/compare.ts `ChangeRequest`): each checked before anything is read or sent, a bad one
 * a usage error (exit 2) naming it.
 */

/** `--fips` as given (repeatable, comma-separated): the counties to compare, each checked; undefined: all. */
export function countyList(flag: readonly string[] | undefined): string[] | undefined {
  if (flag === undefined) return undefined
  const out: string[] = []
  for (const raw of flag) {
    const fips = raw.trim()
    const problem = fipsProblem(fips)
    if (problem) throw new UsageError(`--fips "${fips}" ${problem}`)
    if (!out.includes(fips)) out.push(fips)
  }
  return out
}

/**
 * `--ignore-fields` as given (comma-separated, repeatable) to the list left out of the comparison:
 * spec names matched case-insensitively; `none` compares every field; absent: DEFAULT_IGNORED.
 */
export function ignoreList(flag: readonly string[] | undefined): string[] {
  if (flag === undefined) return [...DEFAULT_IGNORED]
  const names = flag.map((s) => s.trim()).filter((s) => s !== '')
  if (names.length === 1 && names[0]!.toLowerCase() === 'none') return []
  return names.map((name) => {
    const known = canonicalField(name)
    if (known === undefined)
      throw new UsageError(
        `--ignore-fields: unknown column "${name}"; use spec names such as ValuationDate or AssumableMortgage.LoanType, or none`,
      )
    return known
  })
}

/**
 * The change file's format: --output, else what --out's name asks for (src/io/output-name.ts, the one rule
 * for output names: `.csv`, `.ndjson`/`.jsonl`, `.json`, each with `.gz` for gzip), else `fallback`. A name
 * sfl cannot write (`.zst`, `.parquet`, `.xlsx`, ...) is exit 2 before anything is read.
 */
export function changeFormat(
  flag: RecordFormat | undefined,
  out: string | undefined,
  fallback: RecordFormat = 'csv',
): RecordFormat {
  if (out === undefined) return flag ?? fallback
  const named = classifyOutputName(out)
  if (!named.ok) throw new UsageError(`--out ${out}: ${named.reason}`)
  if (named.format !== undefined && !writes('changes', named.format))
    throw new UsageError(
      `--out ${out}: a change file is CSV, NDJSON or JSON (name it ${extensionList(formatsWrittenBy('changes'))})`,
    )
  return flag ?? named.format ?? fallback
}

/** county-export's default change file, beside its output: `nov.csv` -> `nov.changes.csv` (`.csv.gz` too). */
export function changesOutFor(out: string, format: RecordFormat): string {
  const m = /^(.*[^/\\])\.(csv|ndjson|jsonl|json)(\.gz)?$/i.exec(out)
  return m ? `${m[1]}.changes.${m[2]}${m[3] ?? ''}` : `${out}.changes.${format}`
}

/** `sfl changes`' arguments and flags as oclif parsed them. */
export interface ChangesFlags {
  previous: string
  current: string
  out?: string | undefined
  output?: RecordFormat | undefined
  ignoreFields?: string[] | undefined
  fips?: string[] | undefined
  /** --json (the summary on stdout): needs --out for the change file. */
  json: boolean
}

/**
 * `sfl changes`' request, every flag checked and both sides found readable (their first record read)
 * before the long part, so a mistake costs no scan; nothing is written. The worker thread is the caller's
 * to add (src/changes/scan-run.ts `scanWorkerUrl`).
 */
export async function changesRequest(f: ChangesFlags): Promise<ChangeRequest> {
  const flags = await changesFlagsChecked(f)
  await checkSide(f.previous, flags.counties)
  await checkSide(f.current, flags.counties)
  return {previous: f.previous, current: f.current, ...flags}
}

/**
 * The flags alone, checked, with nothing read: what `changesRequest` checks before the sides. For an
 * `s3://` side, the command checks these before the side is copied, so a mistake costs no download.
 */
export async function changesFlagsChecked(
  f: Omit<ChangesFlags, 'previous' | 'current'>,
): Promise<Omit<ChangeRequest, 'previous' | 'current'>> {
  if (f.json && f.out === undefined)
    throw new UsageError(
      '--json prints the summary on stdout: give --out FILE for the change file; nothing was read',
    )
  const ignore = ignoreList(f.ignoreFields)
  const counties = countyList(f.fips)
  // an s3:// --out: a probe write (src/io/object-store.ts), once per process
  if (f.out) await assertWritableTarget(f.out)
  return {counties, ignore, out: f.out, format: changeFormat(f.output, f.out)}
}
