import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import ExcelJS from 'exceljs'
import {describe, expect, it} from 'vitest'

import {writeFile, type FileOptions} from '../../src/pipeline/sinks.js'
import type {PagePart} from '../../src/pipeline/spool.js'
import {MemoryTarget} from '../io/memory-target.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * The export's file writer (src/pipeline/sinks.ts writeFile) with xlsx, the path `county-export --out
 * t.xlsx` takes: the spooled NDJSON pages of every county into one workbook. The sheet's row limit is
 * injected small (ECMA-376 holds 1,048,576 rows, header included): past it the rows go on in "data 2",
 * each sheet with the header, every record once and in order (docs/exports.md, "xlsx files").
 */

function pages(dir: string, counts: readonly number[]): PagePart[] {
  let id = 0
  return counts.map((count, n) => {
    const file = `06067-${String(n).padStart(5, '0')}.ndjson`
    const lines = Array.from({length: count}, () => {
      id++
      return `${JSON.stringify({Fips: '06067', ServicePropertyID: 30000000000 + id, Zip: '02134', FinalValue: id})}\n`
    })
    writeFileSync(join(dir, file), lines.join(''))
    return {n, records: count, file}
  })
}

function options(target: MemoryTarget, rowsPerSheet: number, unfit: Map<string, number>): FileOptions {
  return {
    columns: ['Fips', 'ServicePropertyID', 'Zip', 'FinalValue'],
    layouts: [],
    escapeFormulas: true,
    bom: false,
    commit: () => target.commit(),
    onUnfit: (c, n) => unfit.set(c, (unfit.get(c) ?? 0) + n),
    xlsx: {rowsPerSheet},
  }
}

async function sheets(bytes: Buffer): Promise<Array<{name: string; rows: unknown[][]}>> {
  const wb = new ExcelJS.Workbook()
  await wb.xlsx.load(bytes as unknown as ExcelJS.Buffer)
  return wb.worksheets.map((ws) => {
    const rows: unknown[][] = []
    ws.eachRow((r) => rows.push((r.values as unknown[]).slice(1)))
    return {name: ws.name, rows}
  })
}

describe('an export written as xlsx', () => {
  it('past the injected sheet limit the rows go on in "data 2" and "data 3", each with the header, every record once in order', async () => {
    const dir = tempDir('sfl-sinks-xlsx-')
    const target = new MemoryTarget()
    const unfit = new Map<string, number>()
    // 7 records over pages of 3, 0 and 4, at 3 data rows a sheet: 3 + 3 + 1
    const n = await writeFile(dir, pages(dir, [3, 0, 4]), target, 'xlsx', options(target, 3, unfit))
    expect(n).toBe(7)
    expect(target.committed).toBe(true)
    const got = await sheets(Buffer.concat(target.chunks))
    expect(got.map((s) => s.name)).toEqual(['data', 'data 2', 'data 3'])
    const header = ['Fips', 'ServicePropertyID', 'Zip', 'FinalValue']
    for (const s of got) expect(s.rows[0]).toEqual(header)
    const ids = got.flatMap((s) => s.rows.slice(1).map((r) => r[3]))
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(got.map((s) => s.rows.length - 1)).toEqual([3, 3, 1])
    expect(got[2]!.rows[1]).toEqual(['06067', 30000000007, '02134', 7])
    expect(unfit.size).toBe(0)
  })

  it('exactly a sheet full stays one sheet', async () => {
    const dir = tempDir('sfl-sinks-xlsx-')
    const target = new MemoryTarget()
    const n = await writeFile(dir, pages(dir, [2, 1]), target, 'xlsx', options(target, 3, new Map()))
    expect(n).toBe(3)
    expect((await sheets(Buffer.concat(target.chunks))).map((s) => [s.name, s.rows.length])).toEqual([
      ['data', 4],
    ])
  })

  it('a value of another type than its field is written as text and counted as unfit', async () => {
    const dir = tempDir('sfl-sinks-xlsx-')
    writeFileSync(join(dir, 'p.ndjson'), `${JSON.stringify({Fips: '06067', FinalValue: 'abc'})}\n`)
    const target = new MemoryTarget()
    const unfit = new Map<string, number>()
    await writeFile(dir, [{n: 0, records: 1, file: 'p.ndjson'}], target, 'xlsx', options(target, 10, unfit))
    expect([...unfit]).toEqual([['FinalValue', 1]])
    const [s] = await sheets(Buffer.concat(target.chunks))
    expect(s!.rows[1]![3]).toBe('abc')
  })

  it('a damaged part file aborts the target: nothing half written is committed', async () => {
    const dir = tempDir('sfl-sinks-xlsx-')
    writeFileSync(join(dir, 'p.ndjson'), `{"Fips":"06067"}\n{"Fips":"060`)
    const target = new MemoryTarget()
    await expect(
      writeFile(dir, [{n: 0, records: 2, file: 'p.ndjson'}], target, 'xlsx', options(target, 10, new Map())),
    ).rejects.toThrow(/ends mid-record/)
    expect(target.committed).toBe(false)
    expect(target.aborted).toBe(true)
  })
})
