import {existsSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {Readable} from 'node:stream'
import {gzipSync} from 'node:zlib'

import ExcelJS from 'exceljs'
import {describe, expect, it} from 'vitest'

import {InputError, openBatchInput, type BatchInput, type InputRow} from '../../src/jobs/batch-input.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * `--input` in every form sfl reads (src/jobs/batch-input-decode.ts): a workbook's sheet, UTF-16 text as
 * Excel saves "Unicode Text", a .gz file, each decoded once before any request into a temp folder that
 * the clean-up removes; and what it refuses, in one line that starts with the input's name.
 */

const tmp = () => tempDir('sfl-decode-')
const none = Readable.from([])

async function open(path: string, opts: {sheet?: string; stdin?: NodeJS.ReadableStream; fips?: string} = {}) {
  const r = await openBatchInput(path, opts.fips, opts.stdin ?? none, {}, {sheet: opts.sheet})
  const rows: InputRow[] = []
  for await (const row of r.input.rows()) rows.push(row)
  return {...r, rows}
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (error) {
    expect(error).toBeInstanceOf(InputError)
    return (error as Error).message
  }
  throw new Error('opened')
}

/** A CRM export as Excel saves it: a title-less sheet "Leads" after a hidden one, numbers formatted. */
async function workbook(dir: string, edit?: (ws: ExcelJS.Worksheet) => void): Promise<string> {
  const wb = new ExcelJS.Workbook()
  wb.addWorksheet('Lists', {state: 'hidden'}).addRow(['CA', 'TX'])
  const ws = wb.addWorksheet('Leads')
  ws.addRow(['Name', 'FIPS', 'APN', 'Zip'])
  ws.addRow(['Ann', 6067, '078-0123-045', 95838])
  ws.getCell('B2').numFmt = '00000'
  ws.getRow(3).getCell(1).style = {font: {bold: true}} // a formatted, empty row
  ws.getRow(4).values = ['Bob', '06067', '', '']
  edit?.(ws)
  wb.addWorksheet('Other').addRow(['fips', 'apn'])
  const path = join(dir, 'leads.xlsx')
  await wb.xlsx.writeFile(path)
  return path
}

describe('an .xlsx input', () => {
  it('its first visible sheet: rows numbered as the sheet shows them, the fips a "00000" format kept, a BOM for a CSV output', async () => {
    const path = await workbook(tmp())
    const {input, rows, cleanup} = await open(path)
    expect(input.kind).toBe('rows')
    expect(input.columns).toEqual(['Name', 'FIPS', 'APN', 'Zip'])
    expect(input.bom).toBe(true)
    // the formatted empty row 3 keeps its place (an empty answer): the output lines up with the sheet
    expect([input.keptBlank, input.blankRows]).toEqual([1, 0])
    expect(rows.map((r) => [r.line, r.values, r.query, r.invalid])).toEqual([
      [
        2,
        {Name: 'Ann', FIPS: '06067', APN: '078-0123-045', Zip: '95838'},
        {fips: '06067', by: {kind: 'apn', value: '078-0123-045'}},
        undefined,
      ],
      [3, {Name: '', FIPS: '', APN: '', Zip: ''}, undefined, undefined],
      // an invalid row names its row, as the spreadsheet numbers it
      [
        4,
        {Name: 'Bob', FIPS: '06067', APN: '', Zip: ''},
        undefined,
        'row 4: give exactly one of address, APN or property_id; none was given',
      ],
    ])
    // the output pass sees the same rows
    const again: number[] = []
    for await (const r of input.records()) again.push(r.line)
    expect(again).toEqual([2, 3, 4])
    const decoded = (input as BatchInput).path
    expect(existsSync(decoded)).toBe(true)
    await cleanup()
    expect(existsSync(decoded)).toBe(false)
  })

  it('--sheet picks another sheet; a sheet it lacks, or --sheet on a text input, is exit 2 naming the input', async () => {
    const dir = tmp()
    const path = await workbook(dir)
    const other = await open(path, {sheet: 'OTHER', fips: '06067'})
    expect(other.input.columns).toEqual(['fips', 'apn'])
    // the checkpoint's identity of the input is the rows read: another sheet is another input
    const first = await open(path)
    const again = await open(path, {sheet: 'leads'})
    expect(again.inputId).toBe(first.inputId)
    expect(other.inputId).not.toBe(first.inputId)
    for (const r of [other, first, again]) await r.cleanup()
    expect(await refusal(open(path, {sheet: 'Prospects'}))).toBe(
      `${path}: it has no sheet named "Prospects"; its sheets are "Lists", "Leads", "Other"`,
    )
    writeFileSync(join(dir, 'in.csv'), 'fips,apn\n06067,1\n')
    expect(await refusal(open(join(dir, 'in.csv'), {sheet: 'Leads'}))).toBe(
      `${join(dir, 'in.csv')}: --sheet picks a sheet of an .xlsx workbook, and this is not one; drop --sheet`,
    )
  })

  it('a value in a column without a header name is refused naming its cell; a header twice names the row', async () => {
    const dir = tmp()
    const stray = await workbook(dir, (ws) => (ws.getCell('F4').value = 'call back'))
    expect(await refusal(open(stray))).toBe(
      `${stray} row 4: cell F4 has a value but its column has no name in the header (row 1); name the column or clear the cell`,
    )
    const twice = await workbook(tmp(), (ws) => (ws.getCell('E1').value = 'fips'))
    expect(await refusal(open(twice))).toBe(
      `${twice} row 1: the columns "FIPS" and "fips" differ only in case or spacing; rename one`,
    )
  })

  it('a sheet with nothing in it is refused; rows above the header that are empty are not the header', async () => {
    const wb = new ExcelJS.Workbook()
    wb.addWorksheet('Empty')
    const late = wb.addWorksheet('Late')
    late.getCell('A1').style = {font: {bold: true}} // formatted, empty: a row in the sheet, with no value
    late.getCell('A3').value = 'fips'
    late.getCell('B3').value = 'apn'
    late.getCell('A4').value = '06067'
    late.getCell('B4').value = 'X1'
    const path = join(tmp(), 'book.xlsx')
    await wb.xlsx.writeFile(path)
    expect(await refusal(open(path))).toBe(
      `${path}: the sheet "Empty" is empty; expected a header row such as fips,address`,
    )
    const r = await open(path, {sheet: 'Late'})
    expect(r.rows.map((x) => [x.line, x.query])).toEqual([
      [4, {fips: '06067', by: {kind: 'apn', value: 'X1'}}],
    ])
    await r.cleanup()
  })
})

describe('text inputs Excel saves, and .gz', () => {
  const UNICODE_TEXT =
    'Name\tfips\tproperty_id\r\n"Doe, ""J"""\t06067\t30000000006\r\nÑandú\t06067\t30000000007\r\n'

  it.each([
    ['UTF-16LE', Buffer.from(`\ufeff${UNICODE_TEXT}`, 'utf16le')],
    ['UTF-16BE', Buffer.from(`\ufeff${UNICODE_TEXT}`, 'utf16le').swap16()],
  ])(
    "Excel's Unicode Text (%s, TAB-separated) is read as its rows, with a BOM for a CSV output",
    async (_, bytes) => {
      const path = join(tmp(), 'leads.txt')
      writeFileSync(path, bytes)
      const {input, rows, cleanup} = await open(path)
      expect([input.kind, input.delimiter, input.bom]).toEqual(['csv', '\t', true])
      expect(rows.map((r) => [r.line, r.values['Name'], r.query?.by])).toEqual([
        [2, 'Doe, "J"', {kind: 'property_id', value: '30000000006'}],
        [3, 'Ñandú', {kind: 'property_id', value: '30000000007'}],
      ])
      await cleanup()
    },
  )

  it('a .csv.gz is read as the CSV it holds, with the same checkpoint identity', async () => {
    const dir = tmp()
    const csv = 'fips,apn\n06067,078-0123-045\n'
    writeFileSync(join(dir, 'in.csv'), csv)
    writeFileSync(join(dir, 'in.csv.gz'), gzipSync(csv))
    const plain = await open(join(dir, 'in.csv'))
    const gz = await open(join(dir, 'in.csv.gz'))
    expect(gz.rows.map((r) => r.query)).toEqual([{fips: '06067', by: {kind: 'apn', value: '078-0123-045'}}])
    expect(gz.inputId).toBe(plain.inputId)
    expect(gz.input.bom).toBe(false)
    await gz.cleanup()
    await plain.cleanup()
  })

  it('a gzip not named .gz, gzip on stdin, gzip inside gzip, and a binary file are refused in one line', async () => {
    const dir = tmp()
    writeFileSync(join(dir, 'in.csv'), gzipSync('fips,apn\n'))
    expect(await refusal(open(join(dir, 'in.csv')))).toBe(
      `${join(dir, 'in.csv')}: it is gzip-compressed but its name does not end in .gz; name it so (sfl then reads it), or decompress it (gunzip)`,
    )
    expect(await refusal(open('-', {stdin: Readable.from([gzipSync('fips,apn\n')])}))).toBe(
      'stdin: it is gzip-compressed; give the file by its name (--input FILE.gz), or pipe it through gunzip -c',
    )
    writeFileSync(join(dir, 'twice.csv.gz'), gzipSync(gzipSync('fips,apn\n')))
    expect(await refusal(open(join(dir, 'twice.csv.gz')))).toBe(
      `${join(dir, 'twice.csv.gz')}: it is gzip data inside gzip data; decompress it once (gunzip) and give the result`,
    )
    writeFileSync(
      join(dir, 'old.xls'),
      Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0]),
    )
    expect(await refusal(open(join(dir, 'old.xls')))).toBe(
      `${join(dir, 'old.xls')}: it is an Excel 97-2003 workbook (.xls), or a workbook with a password; open it in Excel or Calc and save it, with no password, as .xlsx or as CSV UTF-8`,
    )
  })

  it('an xlsx piped on stdin is read like one given by name', async () => {
    const path = await workbook(tmp())
    const {readFileSync} = await import('node:fs')
    const r = await open('-', {stdin: Readable.from([readFileSync(path)])})
    expect(r.input.name).toBe('stdin')
    expect(r.rows.map((x) => x.line)).toEqual([2, 3, 4])
    await r.cleanup()
  })
})
