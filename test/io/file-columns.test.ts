import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {fileColumns, headerName} from '../../src/io/file-columns.js'
import {FileTarget} from '../../src/io/output.js'
import {writeParquet} from '../../src/io/parquet-writer.js'

const dir = mkdtempSync(join(tmpdir(), 'sfl-file-columns-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('the columns of a county file sfl wrote (an --out-dir file widened at the end of a run)', () => {
  it('a CSV header gives its names with the BOM and the formula guard taken off', async () => {
    const path = join(dir, 'a.csv')
    writeFileSync(path, "\ufeffFips,'=Odd,Zip\r\n06067,x,95838\r\n")
    expect(await fileColumns(path, 'csv')).toEqual(['Fips', '=Odd', 'Zip'])
  })

  it('a guard quote is taken off only before a formula character, never from a name that starts with one', () => {
    expect(headerName("'+Plus")).toBe('+Plus')
    expect(headerName("'Quoted")).toBe("'Quoted")
    expect(headerName('Plain')).toBe('Plain')
  })

  it('an empty CSV has no columns; a missing or unreadable file has nothing to keep', async () => {
    const empty = join(dir, 'empty.csv')
    writeFileSync(empty, '')
    expect(await fileColumns(empty, 'csv')).toEqual([])
    expect(await fileColumns(join(dir, 'gone.csv'), 'csv')).toBeUndefined()
    const notParquet = join(dir, 'text.parquet')
    writeFileSync(notParquet, 'Fips,Zip\n')
    expect(await fileColumns(notParquet, 'parquet')).toBeUndefined()
  })

  it("a Parquet file's schema gives the run's columns in order", async () => {
    const part = join(dir, 'part.ndjson')
    writeFileSync(part, `${JSON.stringify({Fips: '06067', ServicePropertyID: 7, Zip: '95838'})}\n`)
    const path = join(dir, 'a.parquet')
    const target = await FileTarget.create(path, () => undefined)
    await writeParquet(target, [part], {columns: ['Fips', 'ServicePropertyID', 'Zip']})
    await target.commit()
    expect(await fileColumns(path, 'parquet')).toEqual(['Fips', 'ServicePropertyID', 'Zip'])
  })
})
