import {UsageError} from '../errors.js'
import {classifyOutputName} from '../io/output-name.js'
import {bomProblem, FORMATS, reads, writes, type ExportFormat} from '../model/formats.js'

export type {ExportFormat}

/**
 * `county-export`'s format: `--output`, else what `--out`'s name asks for (src/io/output-name.ts, the one
 * rule for output names: `.csv`, `.ndjson`/`.jsonl`, `.json`, `.parquet`, `.xlsx`, any of the first three
 * + `.gz`), else CSV. A name sfl cannot write (`.zst`, `.xls`, `.csv.bz2`, `.xlsx.gz`) or one that
 * contradicts `--output` is exit 2 before any request: a file named t.ndjson.zst holding CSV fools every
 * reader. An `--out-dir` names its files itself. Pure.
 *
 * @example exportFormat(undefined, 't.ndjson.gz') // 'ndjson' (written as gzip by the output gate)
 * @example exportFormat('csv', 't.json') // UsageError: names a JSON file but --output is csv
 */
export function exportFormat(output: ExportFormat | undefined, out: string | undefined): ExportFormat {
  if (out === undefined) return output ?? 'csv'
  const named = classifyOutputName(out)
  if (!named.ok) throw new UsageError(`--out ${out}: ${named.reason}`)
  if (named.format !== undefined && !writes('county-export', named.format))
    throw new UsageError(`--out ${out}: county-export does not write ${String(named.format)}`)
  if (output !== undefined && named.format !== undefined && output !== named.format)
    throw new UsageError(
      `--out ${out} names a ${named.format.toUpperCase()} file but --output is ${output}; drop --output (the extension decides) or make them agree`,
    )
  return output ?? named.format ?? 'csv'
}

/**
 * Where `format` can go, checked before any request (the format registry, src/model/formats.ts): a format
 * read from its end (Parquet's footer, xlsx's ZIP directory) needs a file, never stdout; an `--out-dir` is
 * a dataset folder of the formats engines read as one table, so a workbook is one `--out` file;
 * `--changes-since` reads the export back, so it needs a format the comparison reads; `--bom` is CSV's. Pure.
 *
 * @example exportTargetProblem('xlsx', {}) // '--output xlsx needs a file: give --out FILE.xlsx ...'
 */
export function exportTargetProblem(
  format: ExportFormat,
  to: {
    out?: string | undefined
    outDir?: string | undefined
    changesSince?: string | undefined
    bom?: boolean | undefined
  },
): string | undefined {
  const bom = bomProblem(format, to.bom)
  if (bom) return bom
  const f = FORMATS[format]
  const ext = f.extensions[0]
  if (!f.stdout && to.out === undefined && to.outDir === undefined)
    return writes('county-export --out-dir', format)
      ? `--output ${format} needs a file: give --out FILE.${ext} or --out-dir DIR (${f.label} cannot go to stdout)`
      : `--output ${format} needs a file: give --out FILE.${ext} (${f.label} cannot go to stdout or a terminal)`
  if (to.outDir !== undefined && !writes('county-export --out-dir', format))
    return `--out-dir writes a dataset folder (CSV, NDJSON, JSON or Parquet files); an ${f.label} workbook is one file: give --out FILE.${ext}, or -o parquet with --out-dir`
  if (to.changesSince !== undefined && !reads('changes', format))
    return `--changes-since reads the export back, and sfl does not read ${f.label} exports: write .csv, .ndjson or .parquet to compare, then convert`
  return undefined
}
