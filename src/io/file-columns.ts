import {readCsv} from './csv-reader.js'

/**
 * The column names of a file sfl wrote (an `--out-dir` county file): a CSV's header row, with the BOM and
 * the formula guard's quote taken off (the cells are the names as written: `'=X` was the column `=X`), or
 * a Parquet file's schema. Undefined when the file is gone or cannot be read: there is nothing to keep.
 */
export async function fileColumns(path: string, format: 'csv' | 'parquet'): Promise<string[] | undefined> {
  try {
    if (format === 'parquet') {
      const {asyncBufferFromFile, parquetMetadataAsync, parquetSchema} = await import('hyparquet')
      const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
      return parquetSchema(metadata).children.map((c) => c.element.name)
    }
    for await (const {fields} of readCsv(path)) return fields.map(headerName)
    return [] // an empty file: no header
  } catch {
    return undefined
  }
}

/** A CSV header cell back to its column name (src/pipeline/sinks.ts headerCells wrote it). */
export function headerName(cell: string): string {
  return cell.replace(/^\ufeff/, '').replace(/^'(?=[=+\-@\t\r])/, '')
}
