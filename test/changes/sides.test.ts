import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {compareExports} from '../../src/changes/compare.js'
import {checkSide} from '../../src/changes/sides.js'
import {scanSide} from '../../src/changes/scan.js'
import {ExportFileError} from '../../src/io/export-reader.js'
import {FileTarget} from '../../src/io/output.js'
import {ParquetColumns} from '../../src/io/parquet-reader.js'
import {writeParquet} from '../../src/io/parquet-writer.js'
import {countyFolder} from '../helpers/county-folder.js'
import {damageFirstPageHeader} from '../helpers/parquet-damage.js'

/**
 * A side is checked before a comparison starts (src/changes/sides.ts): a Parquet file by its
 * footer and first pages' headers. Whole files pass; a file whose first page is broken, or cut short, is one
 * line naming it (exit 2).
 */
const dir = mkdtempSync(join(tmpdir(), 'sfl-sides-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

async function parquet(name: string, rows = 3): Promise<string> {
  const part = join(dir, `${name}.ndjson`)
  writeFileSync(
    part,
    Array.from({length: rows}, (_, i) => i + 1)
      .map((i) => `${JSON.stringify({Fips: '06067', ServicePropertyID: i, APN: `A-${i}`})}\n`)
      .join(''),
  )
  const path = join(dir, `${name}.parquet`)
  const target = await FileTarget.create(path, () => undefined)
  await writeParquet(target, [part])
  await target.commit()
  return path
}

describe('a Parquet side checked by its first row', () => {
  it('a whole file passes', async () => {
    await expect(checkSide(await parquet('whole'))).resolves.toBeUndefined()
  })

  it('a broken first page, the footer intact: one line naming the file (ExportFileError, exit 2)', async () => {
    const path = await parquet('broken')
    const bytes = readFileSync(path)
    writeFileSync(path, Buffer.concat([bytes.subarray(0, 4), Buffer.alloc(40, 0xff), bytes.subarray(44)]))
    const check = checkSide(path)
    await expect(check).rejects.toThrow(ExportFileError)
    await expect(check).rejects.toThrow(`${path}: not a readable Parquet file`)
  })

  it('a file cut short: one line naming the file', async () => {
    const path = await parquet('cut')
    writeFileSync(path, readFileSync(path).subarray(0, 100))
    await expect(checkSide(path)).rejects.toThrow(ExportFileError)
  })
})

describe('a Parquet page damaged inside its compressed bytes (the check looks at headers only)', () => {
  it('passes the check; the scan then reads the side as records, which names the file in one line (exit 2)', async () => {
    // 500 rows: each page's Snappy block is long enough for its last bytes to be past its header
    const path = await parquet('inside', 500)
    const file = await ParquetColumns.open(path)
    // the largest column chunk's last bytes: inside its last page's Snappy block, after its header
    const m = file.metadata.row_groups[0]!.columns.map((c) => c.meta_data!).reduce((a, b) =>
      b.total_compressed_size > a.total_compressed_size ? b : a,
    )
    file.close()
    const end = Number(m.dictionary_page_offset ?? m.data_page_offset) + Number(m.total_compressed_size)
    const bytes = readFileSync(path)
    bytes.fill(0xff, end - 6, end)
    writeFileSync(path, bytes)
    await expect(checkSide(path)).resolves.toBeUndefined()
    const scratch = mkdtempSync(join(dir, 'scratch-'))
    const scan = scanSide({
      label: 'previous',
      scratch,
      files: [{path, format: 'parquet'}],
      ignore: [],
    })
    await expect(scan).rejects.toThrow(ExportFileError)
    await expect(scan).rejects.toThrow(`${path}: not a readable Parquet file`)
  })
})

describe('a damaged page in a column the comparison does not compare (ValuationDate by default)', () => {
  it('is met only when a changed row is read back: one line naming the file (exit 2), no change file', async () => {
    const side = async (name: string, value: number) => {
      const part = join(dir, `${name}.ndjson`)
      const recs = Array.from({length: 300}, (_, i) => ({
        Fips: '06067',
        ServicePropertyID: i + 1,
        FinalValue: i === 0 ? value : 1000 + i,
        ValuationDate: `2026-10-${String((i % 28) + 1).padStart(2, '0')}T00:00:00`,
      }))
      writeFileSync(part, recs.map((r) => `${JSON.stringify(r)}\n`).join(''))
      const path = join(dir, `${name}.parquet`)
      const target = await FileTarget.create(path, () => undefined)
      await writeParquet(target, [part])
      await target.commit()
      return path
    }
    const previous = await side('vd-prev', 1)
    const current = await side('vd-cur', 2)
    // ValuationDate's first page header overwritten in the previous side: the scan never decodes it
    await damageFirstPageHeader(previous, 'ValuationDate')
    const out = join(dir, 'vd-changes.ndjson')
    const run = compareExports({previous, current, ignore: ['ValuationDate'], out, format: 'ndjson'})
    await expect(run).rejects.toThrow(ExportFileError)
    await expect(run).rejects.toThrow(`${previous}: not a readable Parquet file (`)
    expect(existsSync(out)).toBe(false)
  })
})

describe('a manifest side with --fips', () => {
  it('reads only the county files asked for: another county file, damaged, passes unread', async () => {
    const m = countyFolder(join(dir, 'outdir'), 'ndjson', [
      {fips: '06067', path: 'a.ndjson', text: '{"Fips":"06067","ServicePropertyID":1}\n'},
      {fips: '48201', path: 'b.ndjson', text: 'not an export\n'},
    ])
    await expect(checkSide(m, ['06067'])).resolves.toBeUndefined()
    await expect(checkSide(m, ['48201'])).rejects.toThrow(/b\.ndjson line 1/)
    await expect(checkSide(m)).rejects.toThrow(ExportFileError)
  })
})
