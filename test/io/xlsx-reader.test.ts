import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import ExcelJS from 'exceljs'
import {describe, expect, it} from 'vitest'

import {InputFormatError} from '../../src/io/input-error.js'
import {numberShape, numberText, serialText, shapedNumber} from '../../src/io/xlsx-format.js'
import {XlsxWorkbook, type SheetRow} from '../../src/io/xlsx-reader.js'
import {ZipWriter} from '../../src/io/zip-writer.js'
import {tempDir} from '../helpers/tmp.js'
import {MemoryTarget} from './memory-target.js'

/**
 * The xlsx reader of batch inputs, on workbooks written by an independent writer (exceljs: shared strings,
 * styles, formulas as a spreadsheet saves them) and on parts written by hand for what exceljs does not
 * write (inline strings, prefixes, phonetic runs, the 1904 date system, damaged parts).
 */

async function rowsOf(path: string, sheet?: string): Promise<SheetRow[]> {
  const book = await XlsxWorkbook.open(path)
  const rows: SheetRow[] = []
  for await (const r of book.rows(book.pick(sheet))) rows.push(r)
  return rows
}

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (error) {
    expect(error).toBeInstanceOf(InputFormatError)
    return (error as Error).message
  }
  throw new Error('no error')
}

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const PKG = 'http://schemas.openxmlformats.org/package/2006/relationships'

/** A package of hand-written parts; the workbook's relationships name the sheets, styles and strings. */
async function handMade(parts: Record<string, string>): Promise<string> {
  const target = new MemoryTarget()
  const zip = new ZipWriter(target)
  const all: Record<string, string> = {
    '_rels/.rels': `<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/_rels/workbook.xml.rels':
      `<Relationships xmlns="${PKG}">` +
      `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/>` +
      `<Relationship Id="rId2" Type="${REL}/chartsheet" Target="/xl/chartsheets/sheet1.xml"/>` +
      `<Relationship Id="rId3" Type="${REL}/styles" Target="styles.xml"/>` +
      `<Relationship Id="rId4" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ...parts,
  }
  for (const [name, text] of Object.entries(all)) await zip.file(name, text)
  await zip.finish()
  const path = join(tempDir('sfl-xlsx-in-'), 'hand.xlsx')
  writeFileSync(path, target.bytes)
  return path
}

const WORKBOOK_1904 =
  `<x:workbook xmlns:x="${MAIN}" xmlns:r="${REL}"><x:workbookPr date1904="1"/>` +
  '<x:sheets><x:sheet name="Data" sheetId="1" r:id="rId1"/><x:sheet name="Chart" sheetId="2" r:id="rId2"/></x:sheets></x:workbook>'
const STYLES =
  `<styleSheet xmlns="${MAIN}"><numFmts count="1"><numFmt numFmtId="164" formatCode="00000"/></numFmts>` +
  '<cellStyleXfs count="1"><xf numFmtId="49"/></cellStyleXfs>' +
  '<cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="164"/></cellXfs></styleSheet>'
const SHARED =
  `<sst xmlns="${MAIN}"><si><t>plain</t></si>` +
  '<si><r><t xml:space="preserve">rich </t></r><r><rPr><b/></rPr><t>text</t></r><rPh sb="0" eb="1"><t>ふりがな</t></rPh></si>' +
  '<si><t>cr_x000D_&#10;lf and _x005F_x0041_</t></si></sst>'

describe('a workbook written by exceljs, read as rows of text', () => {
  async function book(): Promise<string> {
    const wb = new ExcelJS.Workbook()
    wb.addWorksheet('Notes', {state: 'hidden'}).addRow(['not these rows'])
    const ws = wb.addWorksheet('Prospects')
    ws.addRow([
      'Name',
      'FIPS',
      'Zip',
      'Zip4',
      'APN',
      'Since',
      'At',
      'Active',
      'Total',
      'Count',
      'Rich',
      'Formula',
      'Share',
    ])
    ws.addRow([
      'Ann',
      6067,
      2134,
      21341234,
      '1E5',
      new Date(Date.UTC(2024, 0, 15)),
      new Date(Date.UTC(2024, 0, 15, 10, 30)),
      true,
      0.1 + 0.2,
      100000,
      {richText: [{text: 'bold '}, {font: {bold: true}, text: 'and plain'}]},
      {formula: 'A2&"x"', result: 'Annx'},
      0.05,
    ])
    for (const [cell, fmt] of [
      ['B2', '00000'],
      ['C2', '00000'],
      ['D2', '00000-0000'],
      ['F2', 'm/d/yyyy'],
      ['G2', 'yyyy-mm-dd hh:mm'],
      ['M2', '0%'],
    ] as const)
      ws.getCell(cell).numFmt = fmt
    ws.addRow([]) // row 3 stays empty: not in the sheet
    ws.getRow(4).values = ['Bob', '06067', '02134', '', '00012345']
    wb.addWorksheet('Other').addRow(['x'])
    const path = join(tempDir('sfl-xlsx-in-'), 'book.xlsx')
    await wb.xlsx.writeFile(path)
    return path
  }

  it('the first visible sheet, each number as its person saw it where that is its meaning, each row with its number', async () => {
    expect(await rowsOf(await book())).toEqual([
      {
        row: 1,
        cells: [
          'Name',
          'FIPS',
          'Zip',
          'Zip4',
          'APN',
          'Since',
          'At',
          'Active',
          'Total',
          'Count',
          'Rich',
          'Formula',
          'Share',
        ],
      },
      {
        row: 2,
        cells: [
          'Ann',
          '06067', // "00000" kept the zero on screen: kept here
          '02134',
          '02134-1234',
          '1E5',
          '2024-01-15',
          '2024-01-15T10:30:00',
          'TRUE',
          '0.3', // the 15 digits a spreadsheet keeps
          '100000',
          'bold and plain',
          'Annx', // the formula's result; the formula is never read
          '0.05', // a percent format is a number's, not an identifier's
        ],
      },
      {row: 4, cells: ['Bob', '06067', '02134', '', '00012345']},
    ])
  })

  it('--sheet picks a sheet by name, ignoring case; a name it lacks lists the sheets', async () => {
    const path = await book()
    expect(await rowsOf(path, 'other')).toEqual([{row: 1, cells: ['x']}])
    expect(await rowsOf(path, 'Notes')).toEqual([{row: 1, cells: ['not these rows']}]) // hidden, but named
    expect(await failure(rowsOf(path, 'Leads'))).toBe(
      'it has no sheet named "Leads"; its sheets are "Notes", "Prospects", "Other"',
    )
  })
})

describe('parts written by hand', () => {
  it('prefixed names, inline and rich strings without their phonetic guide, escapes, formula results and errors, cells without references, the 1904 date system', async () => {
    const sheet =
      `<?xml version="1.0"?><!-- written by hand --><x:worksheet xmlns:x="${MAIN}"><x:sheetData>` +
      '<x:row r="1"><x:c r="A1" t="s"><x:v>0</x:v></x:c><x:c r="B1" t="s"><x:v>1</x:v></x:c><x:c r="C1" t="s"><x:v>2</x:v></x:c></x:row>' +
      // no r on the row or its cells: the next row, the next columns
      '<x:row><x:c t="inlineStr"><x:is><x:t><![CDATA[<b>&]]></x:t></x:is></x:c><x:c s="1"><x:v>0</x:v></x:c><x:c s="2"><x:v>501</x:v></x:c></x:row>' +
      '<x:row r="5"><x:c r="B5" t="str"><x:f>1/0</x:f><x:v>a &amp; b</x:v></x:c><x:c r="D5" t="e"><x:v>#DIV/0!</x:v></x:c><x:c r="E5" t="b"><x:v>0</x:v></x:c></x:row>' +
      '</x:sheetData></x:worksheet>'
    const path = await handMade({
      'xl/workbook.xml': WORKBOOK_1904,
      'xl/styles.xml': STYLES,
      'xl/sharedStrings.xml': SHARED,
      'xl/worksheets/sheet1.xml': sheet,
    })
    expect(await rowsOf(path)).toEqual([
      {row: 1, cells: ['plain', 'rich text', 'cr\r\nlf and _x0041_']},
      {row: 2, cells: ['<b>&', '1904-01-01', '00501']},
      {row: 5, cells: ['', 'a & b', '', '#DIV/0!', 'FALSE']},
    ])
  })

  it.each([
    [
      'a shared string it does not have',
      '<row r="1"><c r="A1" t="s"><v>7</v></c></row>',
      'the workbook is damaged (a cell points at shared string 7, which is not there); open it and save it again, or save it as CSV',
    ],
    [
      'rows out of order',
      '<row r="2"><c r="A2"><v>1</v></c></row><row r="1"><c r="A1"><v>1</v></c></row>',
      'the workbook is damaged (a row numbered 1 out of order); open it and save it again, or save it as CSV',
    ],
    [
      'a cell past column XFD',
      '<row r="1"><c r="XFE1"><v>1</v></c></row>',
      'the workbook is damaged (a cell reference XFE1 outside the sheet); open it and save it again, or save it as CSV',
    ],
  ])('%s is damaged, in one line', async (_, rows, message) => {
    const path = await handMade({
      'xl/workbook.xml': WORKBOOK_1904,
      'xl/sharedStrings.xml': SHARED,
      'xl/worksheets/sheet1.xml': `<worksheet xmlns="${MAIN}"><sheetData>${rows}</sheetData></worksheet>`,
    })
    expect(await failure(rowsOf(path))).toBe(message)
  })

  it('a DOCTYPE is refused before any entity could be defined (no billion laughs)', async () => {
    const path = await handMade({
      'xl/workbook.xml': WORKBOOK_1904,
      'xl/worksheets/sheet1.xml': `<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY lol "lol">]><worksheet xmlns="${MAIN}"><sheetData/></worksheet>`,
    })
    expect(await failure(rowsOf(path))).toBe(
      'a part of it declares a DOCTYPE, which no workbook has; save it as CSV',
    )
  })

  it('a chart sheet is not rows; a binary workbook and a ZIP that is no workbook are named', async () => {
    const path = await handMade({
      'xl/workbook.xml': WORKBOOK_1904,
      'xl/worksheets/sheet1.xml': '<worksheet/>',
    })
    expect(await failure(rowsOf(path, 'chart'))).toBe(
      'the sheet "Chart" is a chart, not rows; pick another with --sheet',
    )
    const xlsb = await handMade({'xl/workbook.bin': 'binary'})
    expect(await failure(XlsxWorkbook.open(xlsb))).toBe(
      'it is an Excel binary workbook (.xlsb); save it as .xlsx or as CSV',
    )
    const other = await handMade({'word/document.xml': '<w:document/>'})
    expect(await failure(XlsxWorkbook.open(other))).toBe(
      'it is a ZIP archive but not an xlsx workbook (no xl/workbook.xml)',
    )
  })
})

describe('a number cell as the text its person saw', () => {
  it.each([
    [0, undefined, 'number'],
    [1, undefined, 'number'],
    [14, undefined, 'date'],
    [22, undefined, 'datetime'],
    [20, undefined, 'time'],
    [49, undefined, 'number'],
    [164, '00000', 'pad'],
    [164, '00000-0000', 'pad'],
    [164, '000-00-0000', 'pad'],
    [164, '"ZIP "00000', 'pad'],
    [164, '\\-00000', 'pad'],
    [164, '0', 'number'],
    [164, '#,##0', 'number'],
    [164, '0.00', 'number'],
    [164, '0%', 'number'],
    [164, '0.00E+00', 'number'],
    [164, '[Red]0.00', 'number'],
    [164, 'General', 'number'],
    [164, 'yyyy-mm-dd', 'date'],
    [164, 'd-mmm', 'date'],
    [164, '[$-409]m/d/yy h:mm AM/PM', 'datetime'],
    [164, 'mm:ss', 'time'],
    [164, '[h]:mm:ss', 'time'],
    [164, '"Due "dd/mm/yyyy;@', 'date'],
    [164, '#,##0_s;*d(#,##0)', 'number'], // _s and *d are a space and a fill, not seconds and days
  ] as const)('format %i %j is read as a %s', (id, code, kind) =>
    expect(numberShape(id, code).kind).toBe(kind),
  )

  const pad = (code: string) => numberShape(164, code)
  it.each([
    [2134, pad('00000'), false, '02134'],
    [123456, pad('00000'), false, '123456'],
    [21341234, pad('00000-0000'), false, '02134-1234'],
    [12345678, pad('000-00-0000'), false, '012-34-5678'],
    [2134.5, pad('00000'), false, '2134.5'],
    [-5, pad('00000'), false, '-5'],
    [45306, numberShape(14, undefined), false, '2024-01-15'],
    [45306.4375, numberShape(22, undefined), false, '2024-01-15T10:30:00'],
    [45306.999999999, numberShape(22, undefined), false, '2024-01-16T00:00:00'],
    [0.5, numberShape(20, undefined), false, '12:00:00'],
    [1.5, numberShape(20, undefined), false, '1.5'], // a duration past a day is a number
    [1, numberShape(14, undefined), false, '1900-01-01'],
    [59, numberShape(14, undefined), false, '1900-02-28'],
    [60, numberShape(14, undefined), false, '1900-02-29'], // Excel's day that never was, as Excel shows it
    [61, numberShape(14, undefined), false, '1900-03-01'],
    [0, numberShape(14, undefined), true, '1904-01-01'],
    [-1, numberShape(14, undefined), false, '-1'],
  ] as const)('%d shaped %j (1904: %s) is %s', (n, shape, d1904, text) =>
    expect(shapedNumber(n, shape, d1904)).toBe(text),
  )

  it.each([
    [0.1 + 0.2, '0.3'],
    [30000000006, '30000000006'],
    [148800, '148800'],
    [1e21, '1e+21'],
    [2 ** 60, '1152921504606850000'], // 1152921504606846976 has 19 digits
  ])('numberText(%d) is %s', (n, text) => expect(numberText(n)).toBe(text))

  it('a serial past 9999-12-31 is no date', () =>
    expect(serialText(2_958_466, 'date', false)).toBeUndefined())
})
