import {UsageError} from '../errors.js'
import {classifyOutputName} from '../io/output-name.js'

export type ExportFormat = 'csv' | 'ndjson' | 'json' | 'parquet'

/**
 * `county-export`'s format: `--output`, else what `--out`'s name asks for (src/io/output-name.ts, the one
 * rule for output names: `.csv`, `.ndjson`/`.jsonl`, `.json`, `.parquet`, any of the first three + `.gz`),
 * else CSV. A name sfl cannot write (`.zst`, `.xls`, `.csv.bz2`, `.xlsx` for now) or one that contradicts
 * `--output` is exit 2 before any request: a file named t.ndjson.zst holding CSV fools every reader. An
 * `--out-dir` names its files itself. Pure.
 *
 * @example exportFormat(undefined, 't.ndjson.gz') // 'ndjson' (written as gzip by the output gate)
 * @example exportFormat('csv', 't.json') // UsageError: names a JSON file but --output is csv
 */
export function exportFormat(output: ExportFormat | undefined, out: string | undefined): ExportFormat {
  if (out === undefined) return output ?? 'csv'
  const named = classifyOutputName(out)
  if (!named.ok) throw new UsageError(`--out ${out}: ${named.reason}`)
  if (named.format === 'xlsx')
    throw new UsageError(
      `--out ${out}: county-export does not write xlsx yet; name the file .csv (Excel opens it; add --bom) or .parquet`,
    )
  if (output !== undefined && named.format !== undefined && output !== named.format)
    throw new UsageError(
      `--out ${out} names a ${named.format.toUpperCase()} file but --output is ${output}; drop --output (the extension decides) or make them agree`,
    )
  return output ?? named.format ?? 'csv'
}
