export type ParquetRecord = Record<string, string | number | boolean | null>

const pad = (n: number, w = 2) => String(n).padStart(w, '0')

/** A DATE as spec 2.2 shapes it, YYYY-MM-DD. */
function isoDate(d: Date): string {
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
}

/** A TIMESTAMP as spec 2.1 shapes it, YYYY-MM-DDTHH:MM:SS (milliseconds only when there are some). */
function isoDateTime(d: Date): string {
  const ms = d.getUTCMilliseconds()
  return `${isoDate(d)}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${ms ? `.${pad(ms, 3)}` : ''}`
}

/**
 * The records of a Parquet file sfl wrote (`county-export --output parquet`), keyed by column header
 * (`AssumableMortgage.LoanType`), read one row group at a time so memory stays flat. DATE columns come
 * back as `YYYY-MM-DD`, TIMESTAMP columns as `YYYY-MM-DDTHH:MM:SS`, INT64 as numbers (spec 2.1
 * ServicePropertyID has 11 digits, well inside a double's exact integers).
 *
 * @example for await (const r of readParquetRecords('county.parquet')) console.log(r['FinalValue'])
 */
export async function* readParquetRecords(path: string): AsyncGenerator<ParquetRecord> {
  const {asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema} =
    await import('hyparquet')
  const file = await asyncBufferFromFile(path)
  const metadata = await parquetMetadataAsync(file)
  const dates = new Set(
    parquetSchema(metadata)
      .children.filter((c) => c.element.converted_type === 'DATE' || c.element.logical_type?.type === 'DATE')
      .map((c) => c.element.name),
  )
  let start = 0
  for (const group of metadata.row_groups) {
    const end = start + Number(group.num_rows)
    const rows = await parquetReadObjects({file, metadata, rowStart: start, rowEnd: end})
    for (const row of rows) {
      const out: ParquetRecord = {}
      for (const k in row) {
        const v: unknown = row[k]
        out[k] =
          v === undefined || v === null
            ? null
            : v instanceof Date
              ? dates.has(k)
                ? isoDate(v)
                : isoDateTime(v)
              : typeof v === 'bigint'
                ? Number(v)
                : (v as string | number | boolean)
      }
      yield out
    }
    start = end
  }
}
