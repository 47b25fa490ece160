import {existsSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import ExcelJS from 'exceljs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {XlsxWorkbook} from '../../src/io/xlsx-reader.js'
import {ZipArchive} from '../../src/io/zip-reader.js'
import {sfl} from '../helpers/cli.js'
import {countyRecord, startCountyServer, type CountyServer, type Rec} from '../helpers/county-server.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * xlsx outputs (issue 32, docs/exports.md "xlsx files"): `county-export --out t.xlsx` (or `-o xlsx`) and
 * `lookup --input ... --out r.xlsx` write a workbook through the output gate, read back here by sfl's own
 * reader and by exceljs (a second, independent reader): codes and identifiers text with their zeros,
 * numbers numbers, dates dates, booleans booleans, no formula anywhere. A workbook never goes to stdout
 * nor into an --out-dir, and an export compared with --changes-since must be one sfl reads: each refused
 * with one line, exit 2, before any request, with nothing made.
 */

const {ValueType} = ExcelJS

/** Records a spreadsheet would spoil: ZIP and APN with leading zeros, an APN that reads as 1E5. */
function records(): Rec[] {
  const a = {...countyRecord('06067', 0), Zip: '02134', APN: '00012345', FinalValue: 148800}
  const b = {...countyRecord('06067', 1), APN: '1E5', Assumable: true, FHAEligible: false}
  const c = {...countyRecord('06067', 2), CompleteStreetAddress: '=HYPERLINK("http://x","y")'}
  return [a, b, c]
}

let server: CountyServer
beforeAll(async () => {
  server = await startCountyServer({counties: {'06067': records()}})
})
afterAll(async () => {
  await server.close()
})

function env(): Record<string, string> {
  return {SFL_BASE_URL: server.baseUrl, SFL_API_KEY: 'sk_test_xlsx_0123456789'}
}

async function load(path: string): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook()
  await wb.xlsx.readFile(path)
  return wb
}

/** A row's cells by header name: [type, value] as exceljs reads them. */
function byHeader(ws: ExcelJS.Worksheet, row: number): Map<string, [ExcelJS.ValueType, unknown]> {
  const header = ws.getRow(1)
  const out = new Map<string, [ExcelJS.ValueType, unknown]>()
  header.eachCell((h, col) => {
    const c = ws.getRow(row).getCell(col)
    out.set(String(h.value), [c.type, c.value])
  })
  return out
}

/** Every part of the package as text; the sheets' XML must hold no formula element. */
async function parts(path: string): Promise<Map<string, string>> {
  const zip = await ZipArchive.open(path)
  const out = new Map<string, string>()
  for (const name of zip.entries.keys()) {
    const chunks: Buffer[] = []
    for await (const b of zip.read(name)) chunks.push(b)
    out.set(name, Buffer.concat(chunks).toString('utf8'))
  }
  return out
}

/** sfl's own reader: the first sheet's rows as the text a person sees. */
async function ownRows(path: string): Promise<string[][]> {
  const wb = await XlsxWorkbook.open(path)
  const rows: string[][] = []
  for await (const r of wb.rows(wb.pick())) rows.push(r.cells)
  return rows
}

describe('county-export to xlsx', () => {
  it('--out t.xlsx: codes stay text, values numbers, ValuationDate a date, booleans booleans, no formula; sfl and exceljs read the same', async () => {
    const dir = tempDir('sfl-xlsx-')
    const out = join(dir, 't.xlsx')
    const r = await sfl(['county-export', '--fips', '06067', '--out', out, '--quiet', '--no-stats'], {
      env: env(),
    })
    expect(r.code, r.stderr).toBe(0)
    expect(readdirSync(dir)).toEqual(['t.xlsx']) // written whole through the gate: no temp or part left
    const wb = await load(out)
    expect(wb.worksheets.map((w) => w.name)).toEqual(['data'])
    const ws = wb.worksheets[0]!
    expect(ws.rowCount).toBe(4)
    expect(ws.views[0]).toMatchObject({state: 'frozen', ySplit: 1})
    const a = byHeader(ws, 2)
    expect(a.get('Fips')).toEqual([ValueType.String, '06067'])
    expect(a.get('Zip')).toEqual([ValueType.String, '02134'])
    expect(a.get('APN')).toEqual([ValueType.String, '00012345'])
    expect(a.get('FinalValue')).toEqual([ValueType.Number, 148800])
    expect(a.get('ServicePropertyID')).toEqual([ValueType.Number, 6067000000])
    expect(a.get('ValuationDate')![0]).toBe(ValueType.Date)
    expect((a.get('ValuationDate')![1] as Date).toISOString()).toBe('2026-10-01T00:00:00.000Z')
    expect(a.get('FHAEligible')).toEqual([ValueType.Boolean, false]) // record 0: i % 3 === 0
    const b = byHeader(ws, 3)
    expect(b.get('APN')).toEqual([ValueType.String, '1E5'])
    expect(b.get('Assumable')).toEqual([ValueType.Boolean, true])
    expect(b.get('FHAEligible')).toEqual([ValueType.Boolean, false])
    const c = byHeader(ws, 4)
    expect(c.get('CompleteStreetAddress')).toEqual([ValueType.String, '=HYPERLINK("http://x","y")'])
    const xml = await parts(out)
    const sheets = [...xml.keys()].filter((k) => k.startsWith('xl/worksheets/'))
    expect(sheets).toEqual(['xl/worksheets/sheet1.xml'])
    for (const s of sheets) expect(xml.get(s)).not.toMatch(/<f[ >]/)
    // sfl's own reader sees the same texts: the zeros and 1E5 as sent, the date as yyyy-mm-dd
    const own = await ownRows(out)
    const header = own[0]!
    const at = (row: number, name: string) => own[row]![header.indexOf(name)]
    expect(own).toHaveLength(4)
    expect([at(1, 'Zip'), at(1, 'APN'), at(2, 'APN'), at(1, 'Fips')]).toEqual([
      '02134',
      '00012345',
      '1E5',
      '06067',
    ])
    expect(at(1, 'FinalValue')).toBe('148800')
    expect(at(1, 'ValuationDate')).toMatch(/^2026-10-01/)
  })

  it('-o xlsx takes --out of any name; the same records as the CSV export, row for row', async () => {
    const dir = tempDir('sfl-xlsx-')
    const book = join(dir, 'book')
    const csv = join(dir, 't.csv')
    for (const args of [
      ['-o', 'xlsx', '--out', book],
      ['--out', csv],
    ]) {
      const r = await sfl(['county-export', '--fips', '06067', ...args, '--quiet', '--no-stats'], {
        env: env(),
      })
      expect(r.code, r.stderr).toBe(0)
    }
    const own = await ownRows(book)
    const {readFileSync} = await import('node:fs')
    const lines = readFileSync(csv, 'utf8').trimEnd().split('\r\n')
    expect(own[0]).toEqual(lines[0]!.split(','))
    expect(own.map((r) => r[own[0]!.indexOf('APN')])).toEqual([
      'APN',
      '00012345',
      '1E5',
      records()[2]!['APN'],
    ])
  })

  it.each([
    [
      ['-o', 'xlsx'],
      '--output xlsx needs a file: give --out FILE.xlsx (xlsx cannot go to stdout or a terminal)',
    ],
    [
      ['-o', 'xlsx', '--out-dir', 'DIR'],
      '--out-dir writes a dataset folder (CSV, NDJSON, JSON or Parquet files); an xlsx workbook is one file: give --out FILE.xlsx, or -o parquet with --out-dir',
    ],
    [
      ['--out', 'OUT/n.xlsx', '--changes-since', 'OUT/old.csv'],
      '--changes-since reads the export back, and sfl does not read xlsx exports: write .csv, .ndjson or .parquet to compare, then convert',
    ],
    [
      ['--out', 'OUT/t.xlsx.gz'],
      '--out OUT/t.xlsx.gz: an xlsx workbook is already a ZIP archive; name it .xlsx, without .gz',
    ],
    [
      ['--out', 'OUT/t.xlsx', '--bom'],
      '--bom is for CSV output (Excel); xlsx output never starts with a BOM',
    ],
    [['-o', 'ndjson', '--bom'], '--bom is for CSV output (Excel); ndjson output never starts with a BOM'],
    [
      ['-o', 'csv', '--out', 'OUT/t.xlsx'],
      '--out OUT/t.xlsx names a XLSX file but --output is csv; drop --output (the extension decides) or make them agree',
    ],
  ])('%j is refused with one line, exit 2, nothing sent or made', async (args, line) => {
    const dir = tempDir('sfl-xlsx-')
    writeFileSync(join(dir, 'old.csv'), 'Fips\n06067\n')
    const fill = (s: string) => s.replace('OUT/', `${dir}/`).replace(/^DIR$/, join(dir, 'd'))
    const before = server.log.length
    const r = await sfl(['county-export', '--fips', '06067', ...args.map(fill)], {env: env()})
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`Error: ${fill(line)}\n`)
    expect(r.stdout).toBe('')
    expect(server.log.length).toBe(before)
    expect(readdirSync(dir)).toEqual(['old.csv'])
    expect(existsSync(join(dir, 'd'))).toBe(false)
  })
})

describe('a batch lookup to xlsx', () => {
  it('lookup --input --out r.xlsx: one row per input row, input codes as typed, result columns and record typed', async () => {
    const dir = tempDir('sfl-xlsx-')
    const input = join(dir, 'in.csv')
    const rec = records()[0]!
    writeFileSync(input, `fips,apn,zip\n06067,00012345,02134\n06067,999-9999-999,00501\n`)
    const out = join(dir, 'r.xlsx')
    const r = await sfl(
      ['lookup', '--input', input, '--out', out, '--quiet', '--no-stats', '--plan', 'lookups'],
      {
        env: env(),
      },
    )
    expect(r.code, r.stderr).toBe(0) // a row not found is an answer (docs/lookup.md exit codes)
    expect(readdirSync(dir).sort()).toEqual(['in.csv', 'r.xlsx'])
    const wb = await load(out)
    expect(wb.worksheets.map((w) => w.name)).toEqual(['lookups'])
    const ws = wb.worksheets[0]!
    expect(ws.rowCount).toBe(3)
    const one = byHeader(ws, 2)
    expect(one.get('apn')).toEqual([ValueType.String, '00012345'])
    expect(one.get('zip')).toEqual([ValueType.String, '02134'])
    expect(one.get('sfl_row')).toEqual([ValueType.Number, 1])
    expect(one.get('status')).toEqual([ValueType.String, 'ok'])
    expect(one.get('records')).toEqual([ValueType.Number, 1])
    // the record's columns that share an input column's name are renamed (src/model/result-names.ts)
    expect(one.get('sfl_APN')).toEqual([ValueType.String, '00012345'])
    expect(one.get('sfl_Zip')).toEqual([ValueType.String, rec['Zip']])
    expect(one.get('FinalValue')).toEqual([ValueType.Number, 148800])
    expect(one.get('ValuationDate')![0]).toBe(ValueType.Date)
    expect(one.get('VAEligible')).toEqual([ValueType.Boolean, true])
    const two = byHeader(ws, 3)
    expect(two.get('zip')).toEqual([ValueType.String, '00501'])
    expect(two.get('sfl_row')).toEqual([ValueType.Number, 2])
    expect(two.get('status')).toEqual([ValueType.String, 'not_found'])
    expect(two.get('FinalValue')).toEqual([ValueType.Null, null])
    const xml = await parts(out)
    expect(xml.get('xl/worksheets/sheet1.xml')).not.toMatch(/<f[ >]/)
  })
})

describe('a workbook where an export is read', () => {
  it('sfl stats, sfl changes and --changes-since name the workbook and what to give instead, quoting none of its bytes (exit 2)', async () => {
    const dir = tempDir('sfl-xlsx-')
    const book = join(dir, 't.xlsx')
    const made = await sfl(['county-export', '--fips', '06067', '--out', book, '--quiet', '--no-stats'], {
      env: env(),
    })
    expect(made.code, made.stderr).toBe(0)
    const why = `${book} is not an sfl export: it is an xlsx file, which sfl writes but does not read back as an export; count or compare a CSV, NDJSON, JSON or Parquet export`
    const stats = await sfl(['stats', book])
    expect([stats.code, stats.stderr]).toEqual([2, `Error: ${why}; nothing more of it was read\n`])
    const changes = await sfl(['changes', book, book])
    expect([changes.code, changes.stderr]).toEqual([2, `Error: ${why}\n`])
    const before = server.log.length
    const since = await sfl(
      ['county-export', '--fips', '06067', '--out', join(dir, 'n.csv'), '--changes-since', book],
      {env: env()},
    )
    expect([since.code, since.stderr]).toEqual([2, `Error: ${why}\n`])
    expect(server.log.length).toBe(before)
    expect(readdirSync(dir)).toEqual(['t.xlsx'])
  })
})
