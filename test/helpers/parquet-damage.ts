import {readFileSync, writeFileSync} from 'node:fs'

import {ParquetColumns} from '../../src/io/parquet-reader.js'

/**
 * Overwrite the first page header of `column`'s chunk in the first row group (16 bytes of 0xff), leaving
 * the footer intact: the file opens, and the page fails only when that column is decoded.
 */
export async function damageFirstPageHeader(path: string, column: string): Promise<void> {
  const file = await ParquetColumns.open(path)
  const m = file.metadata.row_groups[0]!.columns[file.column(column)!.index]!.meta_data!
  file.close()
  const at = Number(m.dictionary_page_offset ?? m.data_page_offset)
  const bytes = readFileSync(path)
  bytes.fill(0xff, at, at + 16)
  writeFileSync(path, bytes)
}
