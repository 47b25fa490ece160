import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {checkSide} from '../../src/changes/sides.js'
import {ExportFileError} from '../../src/io/export-reader.js'
import {FileTarget} from '../../src/io/output.js'
import {writeParquet} from '../../src/io/parquet-writer.js'

/**
 * A side is checked before a comparison starts (src/changes/sides.ts): a Parquet file by its first row
 * alone. Whole files pass; a file whose first page is broken, or cut short, is one line naming it (exit 2).
 */
const dir = mkdtempSync(join(tmpdir(), 'sfl-sides-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

async function parquet(name: string): Promise<string> {
  const part = join(dir, `${name}.ndjson`)
  writeFileSync(
    part,
    [1, 2, 3]
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
