import {mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {gzipSync} from 'node:zlib'

import {parse} from 'csv-parse/sync'
import ExcelJS from 'exceljs'
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {readLog} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'

/**
 * `lookup --input` with the files a spreadsheet user has (issue 32): an .xlsx workbook, Excel's "Unicode
 * Text", a .gz, answered row for row against the sandbox, whose request log proves what was sent; and
 * binary files and output names sfl cannot serve, refused with exit 2 before any request.
 */

let sb: Sandbox
let dir: string
let log: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sfl-e2e-inputs-log-'))
  log = join(dir, 'log.ndjson')
  writeFileSync(log, '')
  sb = await startSandbox({port: 0, log})
})
afterAll(async () => {
  await sb.close()
  rmSync(dir, {recursive: true, force: true})
})
beforeEach(() => writeFileSync(log, ''))

const env = () => ({SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'})
const lookup = (args: string[], input?: string) =>
  sfl(['lookup', ...args], {env: env(), ...(input === undefined ? {} : {input})})
const queries = () => readLog(log).map((e) => e.query)

function csvRows(text: string): Array<Record<string, string>> {
  return parse(text.replace(/^\ufeff/, ''), {columns: true}) as Array<Record<string, string>>
}

describe('inputs a spreadsheet user has', () => {
  it('an .xlsx workbook: its first sheet looked up row for row, the fips its "00000" format shows, a CSV with a BOM back', async () => {
    const d = tempDir('sfl-e2e-inputs-')
    const wb = new ExcelJS.Workbook()
    const ws = wb.addWorksheet('Leads')
    ws.addRow(['Name', 'fips', 'property_id', 'APN'])
    ws.addRow(['Ann', 6067, 30000000006, null])
    ws.getCell('B2').numFmt = '00000' // as Excel shows a county code whose zero it would otherwise drop
    ws.addRow(['Bob', '06067', null, '078-0123-045'])
    ws.addRow(['Cy', '06067', 123, null])
    const input = join(d, 'leads.xlsx')
    await wb.xlsx.writeFile(input)
    const out = join(d, 'answers.csv')
    const r = await lookup(['--input', input, '--out', out, '--no-stats', '--plan', 'lookups'])
    expect(r.code).toBe(0) // not_found is an answer (exit 0)
    expect(r.stderr).toMatch(/3 rows \(2 ok, 1 not_found\)/)
    const text = readFileSync(out, 'utf8')
    expect(text.startsWith('\ufeffName,fips,property_id,APN,sfl_row,status,')).toBe(true)
    expect(csvRows(text).map((x) => [x['Name'], x['fips'], x['status'], x['ServicePropertyID']])).toEqual([
      ['Ann', '06067', 'ok', '30000000006'],
      ['Bob', '06067', 'ok', '30000000006'],
      ['Cy', '06067', 'not_found', ''],
    ])
    expect(queries()).toEqual([
      {fips: '06067', property_id: '30000000006'},
      {fips: '06067', apn: '078-0123-045'},
      {fips: '06067', property_id: '123'},
    ])
  })

  it("Excel's Unicode Text (UTF-16LE, TAB-separated, quoted) is read and answered", async () => {
    const d = tempDir('sfl-e2e-inputs-')
    const text = 'Name\tfips\tproperty_id\r\n"Doe, ""J"""\t06067\t30000000006\r\n'
    const input = join(d, 'leads.txt')
    writeFileSync(input, Buffer.from(`\ufeff${text}`, 'utf16le'))
    const r = await lookup(['--input', input, '-o', 'json', '--no-stats'])
    expect(r.code).toBe(0)
    const rows = JSON.parse(r.stdout) as Array<Record<string, unknown>>
    expect(rows.map((x) => [x['Name'], x['status'], (x['data'] as {APN: string}).APN])).toEqual([
      ['Doe, "J"', 'ok', '078-0123-045'],
    ])
    expect(queries()).toEqual([{fips: '06067', property_id: '30000000006'}])
  })

  it('a .csv.gz is read as the CSV it holds', async () => {
    const d = tempDir('sfl-e2e-inputs-')
    const input = join(d, 'leads.csv.gz')
    writeFileSync(input, gzipSync('fips,apn\n06067,078-0123-045\n'))
    const r = await lookup(['--input', input, '-o', 'ndjson', '--no-stats'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({fips: '06067', apn: '078-0123-045', status: 'ok'})
    expect(queries()).toEqual([{fips: '06067', apn: '078-0123-045'}])
  })
})

describe('what is refused before any request, exit 2', () => {
  it.each([
    [
      'old.xls',
      Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]),
      'it is an Excel 97-2003 workbook (.xls), or a workbook with a password; open it in Excel or Calc and save it, with no password, as .xlsx or as CSV UTF-8',
    ],
    [
      'list.pdf',
      Buffer.from('%PDF-1.7\n\u0000'),
      'it is a PDF document, not a table of lookups; give them as CSV UTF-8 or as an .xlsx workbook',
    ],
    [
      'list.csv',
      gzipSync('fips,apn\n06067,1\n'),
      'it is gzip-compressed but its name does not end in .gz; name it so (sfl then reads it), or decompress it (gunzip)',
    ],
    [
      'list.zip',
      // an empty ZIP archive: its end record alone
      Buffer.from([0x50, 0x4b, 0x05, 0x06, ...new Array<number>(18).fill(0)]),
      'it is a ZIP archive but not an xlsx workbook (no xl/workbook.xml)',
    ],
  ])('an input %s gets one line naming what it is', async (file, bytes, said) => {
    const d = tempDir('sfl-e2e-inputs-')
    const input = join(d, file)
    writeFileSync(input, bytes)
    const r = await lookup(['--input', input, '--out', join(d, 'out.csv')])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`Error: ${input}: ${said}\n`)
    expect(r.stdout).toBe('')
    expect(queries()).toEqual([])
    expect(readdirSync(d)).toEqual([file])
  })

  it.each([
    [
      't.ndjson.zst',
      'sfl writes gzip (.gz) but not zstd (.zst): name it t.ndjson.gz, or write t.ndjson and compress it with zstd',
    ],
    [
      't.csv.bz2',
      'sfl writes gzip (.gz) but not bzip2 (.bz2): name it t.csv.gz, or write t.csv and compress it with bzip2',
    ],
    ['t.xls', 'sfl does not write an Excel 97-2003 workbook (.xls): name it .xlsx for a workbook, or .csv'],
    ['t.gz', 'name the format before .gz: t.csv.gz, t.ndjson.gz or t.json.gz'],
    // t.csv.gz is written as gzip now (test/e2e/gzip-output.e2e.test.ts)
    ['t.parquet.gz', 'a Parquet file compresses its own pages; name it .parquet, without .gz'],
    ['t.xlsx.gz', 'an xlsx workbook is already a ZIP archive; name it .xlsx, without .gz'],
    [
      't.parquet',
      'lookup --input writes .csv, .ndjson, .json or .xlsx (name the file so); Parquet is written by county-export',
    ],
  ])('--out %s: the reason, and nothing read, sent or written', async (name, reason) => {
    const d = tempDir('sfl-e2e-inputs-')
    writeFileSync(join(d, 'in.csv'), 'fips,apn\n06067,078-0123-045\n')
    const out = join(d, name)
    const r = await lookup(['--input', join(d, 'in.csv'), '--out', out])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`Error: --out ${out}: ${reason}\n`)
    expect(queries()).toEqual([])
    expect(readdirSync(d)).toEqual(['in.csv'])
  })

  it('--sheet without --input is refused like the other batch flags', async () => {
    const r = await lookup(['--fips', '06067', '--apn', '1', '--sheet', 'Leads'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('Error: --sheet applies to batch lookups; add --input FILE\n')
    expect(queries()).toEqual([])
  })
})
