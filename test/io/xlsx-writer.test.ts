import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import ExcelJS from 'exceljs'
import {describe, expect, it} from 'vitest'

import {
  columnLetters,
  datetimeSerial,
  dateSerial,
  writeXlsx,
  xlsxKind,
  xmlText,
  XlsxWriter,
  type XlsxColumn,
} from '../../src/io/xlsx-writer.js'
import {XlsxWorkbook} from '../../src/io/xlsx-reader.js'
import {tempDir} from '../helpers/tmp.js'
import {MemoryTarget} from './memory-target.js'

/**
 * The xlsx writer, read back by an independent reader (exceljs, a test-only devDependency): cell types,
 * number formats, the frozen header, no formula anywhere, the sheet split.
 */

const {ValueType} = ExcelJS

async function load(bytes: Buffer): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook()
  // exceljs's declared Buffer type predates Node's generic Buffer
  await wb.xlsx.load(bytes as unknown as ExcelJS.Buffer)
  return wb
}

/** Every cell of the sheet as [address, type, value], header included. */
function cells(ws: ExcelJS.Worksheet): Array<[string, ExcelJS.ValueType, unknown]> {
  const out: Array<[string, ExcelJS.ValueType, unknown]> = []
  ws.eachRow({includeEmpty: false}, (row) =>
    row.eachCell({includeEmpty: false}, (c) => out.push([c.address, c.type, c.value])),
  )
  return out
}

function partFile(dir: string, records: Array<Record<string, unknown>>): string {
  const f = join(dir, 'part-1.ndjson')
  writeFileSync(f, records.map((r) => `${JSON.stringify(r)}\n`).join(''))
  return f
}

const COLUMNS = [
  'Fips',
  'ServicePropertyID',
  'APN',
  'CompleteStreetAddress',
  'Zip',
  'FinalValue',
  'ValuationDate',
  'FHAEligible',
  'AssumableMortgage.RecordingDate',
  'Extra',
  'Count',
]

describe('an export written as xlsx, read back by exceljs', () => {
  it('codes stay text with their zeros, numbers are numbers, dates are dates, the header is frozen, no cell is a formula', async () => {
    const dir = tempDir('sfl-xlsx-')
    // FinalValue as the service sends it (148800.0); an unknown object field and an unknown number
    const part = partFile(dir, [
      {
        Fips: '06067',
        ServicePropertyID: 30000000006,
        APN: '00012345',
        CompleteStreetAddress: '=HYPERLINK("http://x")',
        Zip: '02134',
        FinalValue: 148800.0,
        ValuationDate: '2026-01-15T10:30:00',
        FHAEligible: true,
        AssumableMortgage: {RecordingDate: '2024-09-16'},
        Extra: {a: 1},
        Count: 3,
      },
      {
        Fips: '06067',
        ServicePropertyID: 30000000007,
        APN: '1E5',
        CompleteStreetAddress: '+1 MAIN ST',
        Zip: '00501',
        FinalValue: 0.1,
        ValuationDate: '2026-01-15T00:00:00',
        FHAEligible: false,
        AssumableMortgage: null,
        Extra: null,
        Count: null,
      },
    ])
    const target = new MemoryTarget()
    const result = await writeXlsx(target, [part], {columns: COLUMNS})
    expect(result).toEqual({rows: 2, sheets: ['data'], asText: [], cut: []})
    expect(target.committed).toBe(false) // the caller commits

    const wb = await load(target.bytes)
    expect(wb.worksheets.map((w) => w.name)).toEqual(['data'])
    const ws = wb.worksheets[0]!
    expect(ws.views).toMatchObject([{state: 'frozen', ySplit: 1, xSplit: 0, topLeftCell: 'A2'}])
    expect(ws.getRow(1).values).toEqual([undefined, ...COLUMNS])
    expect(ws.getCell('A1').font).toMatchObject({bold: true})
    expect(cells(ws).slice(COLUMNS.length)).toEqual([
      ['A2', ValueType.String, '06067'],
      ['B2', ValueType.Number, 30000000006],
      ['C2', ValueType.String, '00012345'],
      ['D2', ValueType.String, '=HYPERLINK("http://x")'],
      ['E2', ValueType.String, '02134'],
      ['F2', ValueType.Number, 148800],
      ['G2', ValueType.Date, new Date(Date.UTC(2026, 0, 15, 10, 30))],
      ['H2', ValueType.Boolean, true],
      ['I2', ValueType.Date, new Date(Date.UTC(2024, 8, 16))],
      ['J2', ValueType.String, '{"a":1}'],
      ['K2', ValueType.Number, 3],
      ['A3', ValueType.String, '06067'],
      ['B3', ValueType.Number, 30000000007],
      ['C3', ValueType.String, '1E5'],
      ['D3', ValueType.String, '+1 MAIN ST'],
      ['E3', ValueType.String, '00501'],
      ['F3', ValueType.Number, 0.1],
      ['G3', ValueType.Date, new Date(Date.UTC(2026, 0, 15))],
      ['H3', ValueType.Boolean, false],
    ])
    expect(ws.getCell('B2').numFmt).toBe('0') // 11 digits, never 3E+10
    expect(ws.getCell('G2').numFmt).toBe('yyyy-mm-dd hh:mm:ss')
    expect(ws.getCell('I2').numFmt).toBe('yyyy-mm-dd')
    expect(ws.getCell('E2').numFmt).toBe('@') // a ZIP typed into the cell later stays text too
    let formulas = 0
    ws.eachRow((row) =>
      row.eachCell((c) => {
        if (c.type === ValueType.Formula || c.formula !== undefined) formulas++
      }),
    )
    expect(formulas).toBe(0)
  })

  it('past the rows a sheet holds, the rows go on in "data 2", "data 3", each with the header, every row once and in order', async () => {
    const target = new MemoryTarget()
    const cols: XlsxColumn[] = [
      {header: 'n', kind: 'number'},
      {header: 'zip', kind: 'text'},
    ]
    const w = new XlsxWriter(target, cols, {rowsPerSheet: 3})
    for (let i = 1; i <= 7; i++) if (!w.row([i, String(i).padStart(5, '0')])) await w.drain()
    expect(await w.end()).toMatchObject({rows: 7, sheets: ['data', 'data 2', 'data 3']})
    const wb = await load(target.bytes)
    expect(wb.worksheets.map((s) => [s.name, s.views[0]?.state])).toEqual([
      ['data', 'frozen'],
      ['data 2', 'frozen'],
      ['data 3', 'frozen'],
    ])
    const all = wb.worksheets.map((s) =>
      s
        .getSheetValues()
        .slice(1)
        .map((r) => (r as unknown[]).slice(1)),
    )
    expect(all).toEqual([
      [
        ['n', 'zip'],
        [1, '00001'],
        [2, '00002'],
        [3, '00003'],
      ],
      [
        ['n', 'zip'],
        [4, '00004'],
        [5, '00005'],
        [6, '00006'],
      ],
      [
        ['n', 'zip'],
        [7, '00007'],
      ],
    ])
  })

  it('an empty run is a workbook with the header row alone', async () => {
    const target = new MemoryTarget()
    const r = await new XlsxWriter(target, [{header: 'Fips', kind: 'text'}]).end()
    expect(r).toEqual({rows: 0, sheets: ['data'], asText: [], cut: []})
    const ws = (await load(target.bytes)).worksheets[0]!
    expect(ws.getSheetValues().slice(1)).toEqual([[undefined, 'Fips']])
  })

  it('a value of another type than its column is kept as text and counted; a text past 32,767 characters is cut and counted', async () => {
    const target = new MemoryTarget()
    const w = new XlsxWriter(target, [
      {header: 'FinalValue', kind: 'number'},
      {header: 'RecordingDate', kind: 'date'},
      {header: 'Note', kind: 'text'},
    ])
    w.row(['abc', '2024-02-30', 'x'.repeat(40_000)])
    w.row([5, '1899-01-01', 'ok'])
    const r = await w.end()
    expect(r.asText).toEqual([
      {column: 'FinalValue', count: 1},
      {column: 'RecordingDate', count: 2}, // not a date; and a date before 1900-03-01, which Excel miscounts
    ])
    expect(r.cut).toEqual([{column: 'Note', count: 1}])
    const ws = (await load(target.bytes)).worksheets[0]!
    expect(cells(ws).slice(3)).toEqual([
      ['A2', ValueType.String, 'abc'],
      ['B2', ValueType.String, '2024-02-30'],
      ['C2', ValueType.String, 'x'.repeat(32_767)],
      ['A3', ValueType.Number, 5],
      ['B3', ValueType.String, '1899-01-01'],
      ['C3', ValueType.String, 'ok'],
    ])
  })

  it('XML specials, spaces at the ends and line breaks survive the trip', async () => {
    const target = new MemoryTarget()
    const w = new XlsxWriter(target, [{header: 'a <b> & "c"', kind: 'text'}])
    const texts = ['<tag> & "q" \'s\'', '  padded  ', 'two\nlines', 'Ñandú 🏠']
    for (const t of texts) w.row([t])
    await w.end()
    const ws = (await load(target.bytes)).worksheets[0]!
    expect(
      ws
        .getSheetValues()
        .slice(1)
        .map((r) => (r as unknown[])[1]),
    ).toEqual(['a <b> & "c"', ...texts])
  })

  it('writing waits for a slow target: no more than about one buffer is ever outstanding, whatever the row count', async () => {
    const target = new MemoryTarget(64 * 1024)
    const cols: XlsxColumn[] = Array.from({length: 20}, (_, i) => ({header: `c${i}`, kind: 'text'}))
    // random-looking text compresses poorly, so the sheet is several MB through deflate
    let receivedWhenPulledAll = 0
    const rows = async function* () {
      for (let i = 0; i < 20_000; i++) {
        const r: Record<string, unknown> = {}
        for (let j = 0; j < 20; j++) r[`c${j}`] = ((i * 7919 + j * 104729) % 1_000_003).toString(36).repeat(3)
        yield r
      }
      receivedWhenPulledAll = target.bytes.length
    }
    const result = await writeXlsx(target, {flat: rows()}, {columns: cols.map((c) => c.header)})
    expect(result.rows).toBe(20_000)
    const size = target.bytes.length
    expect(size).toBeGreaterThan(2 * 1024 ** 2)
    expect(target.drains).toBeGreaterThan(20)
    // 64 KiB of room, plus the one deflate chunk (64 KiB) that found the target full
    expect(target.maxOutstanding).toBeLessThanOrEqual(64 * 1024 + 64 * 1024 + 1024)
    // rows are taken no faster than the target takes their bytes: when the last row was taken, all but
    // the buffers in between had reached the target (a writer that ignored drain() would have taken
    // every row while the target held a few chunks, buffering the rest in deflate)
    expect(receivedWhenPulledAll).toBeGreaterThan(size - 512 * 1024)
    // every row is there (read with sfl's reader: exceljs takes seconds over 20,000 rows; the tests
    // above read what the writer makes with it)
    const path = join(tempDir('sfl-xlsx-'), 'slow.xlsx')
    writeFileSync(path, target.bytes)
    const book = await XlsxWorkbook.open(path)
    let n = 0
    let last: string[] = []
    for await (const r of book.rows(book.pick())) {
      n++
      last = r.cells
    }
    expect(n).toBe(20_001)
    expect(last[19]).toBe(((19_999 * 7919 + 19 * 104729) % 1_000_003).toString(36).repeat(3))
  })

  it('a sheet name Excel would refuse, or too many columns, is refused before anything is written', () => {
    const target = new MemoryTarget()
    for (const name of ['', 'a/b', 'Q3 [draft]', "'quoted'", 'x'.repeat(28)])
      expect(() => new XlsxWriter(target, [{header: 'a', kind: 'text'}], {sheetName: name})).toThrow(
        `"${name}" cannot name an xlsx sheet`,
      )
    const wide = Array.from({length: 16_385}, (_, i) => ({header: `c${i}`, kind: 'text' as const}))
    expect(() => new XlsxWriter(target, wide)).toThrow('an xlsx sheet holds at most 16384 columns; got 16385')
    expect(new XlsxWriter(target, [{header: 'a', kind: 'text'}], {sheetName: "Bob's Q3"})).toBeInstanceOf(
      XlsxWriter,
    )
    expect(target.chunks).toEqual([])
  })

  it('the same rows make the same bytes', async () => {
    const make = async () => {
      const t = new MemoryTarget()
      const w = new XlsxWriter(t, [{header: 'x', kind: 'value'}])
      w.row([1])
      w.row(['a'])
      await w.end()
      return t.bytes
    }
    expect((await make()).equals(await make())).toBe(true)
  })
})

describe('ZIP64 fields', () => {
  const unzip = spawnSync('unzip', ['-v']).status === 0
  const python = spawnSync('python3', ['-c', 'import zipfile']).status === 0

  it.skipIf(!unzip || !python)(
    'a workbook whose sizes and offsets pass the ZIP64 threshold is read by unzip, Python zipfile and exceljs (needs unzip and python3)',
    async () => {
      const dir = tempDir('sfl-zip64-')
      const target = new MemoryTarget()
      // a threshold of 1,000 bytes makes every part and the directory ZIP64, as 4 GiB would
      const w = new XlsxWriter(target, [{header: 'n', kind: 'number'}], {zip64At: 1000, rowsPerSheet: 200})
      for (let i = 0; i < 500; i++) if (!w.row([i])) await w.drain()
      expect((await w.end()).sheets).toEqual(['data', 'data 2', 'data 3'])
      const path = join(dir, 'big.xlsx')
      writeFileSync(path, target.bytes)
      // a ZIP64 end record is there (APPNOTE 4.3.14)
      const bytes = target.bytes
      expect(bytes.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBe(true)
      // each sheet's data descriptor has 8-byte sizes (4.3.9.2): 24 bytes, then the next header
      const descriptor = Buffer.from([0x50, 0x4b, 0x07, 0x08])
      const after: string[] = []
      for (let at = bytes.indexOf(descriptor); at !== -1; at = bytes.indexOf(descriptor, at + 4))
        after.push(bytes.subarray(at + 24, at + 28).toString('hex'))
      expect(after).toEqual(['504b0304', '504b0304', '504b0304'])
      const t = spawnSync('unzip', ['-t', path], {encoding: 'utf8'})
      expect(t.stdout).toMatch(/No errors detected/)
      const py = spawnSync(
        'python3',
        [
          '-c',
          'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(z.testzip()); print(sorted(i.filename for i in z.infolist()))',
          path,
        ],
        {encoding: 'utf8'},
      )
      expect(py.stdout).toBe(
        "None\n['[Content_Types].xml', '_rels/.rels', 'xl/_rels/workbook.xml.rels', 'xl/styles.xml', 'xl/workbook.xml', 'xl/worksheets/sheet1.xml', 'xl/worksheets/sheet2.xml', 'xl/worksheets/sheet3.xml']\n",
      )
      const wb = await load(target.bytes)
      expect(wb.worksheets.map((s) => s.rowCount)).toEqual([201, 201, 101])
      expect(wb.worksheets[2]!.getCell('A101').value).toBe(499)
    },
  )
})

describe('the pieces of a cell', () => {
  it.each([
    [{key: 'Zip'}, 'text'],
    [{key: 'Fips'}, 'text'],
    [{key: 'APN'}, 'text'],
    [{key: 'MSACode'}, 'text'],
    [{key: 'ServicePropertyID'}, 'integer'],
    [{key: 'ConfidenceScore'}, 'number'],
    [{key: 'FinalValue'}, 'number'],
    [{key: 'FHAEligible'}, 'boolean'],
    [{key: 'ValuationDate'}, 'datetime'],
    [{key: 'FHACondoEligibility', sub: 'CondoID'}, 'text'],
    [{key: 'AssumableMortgage', sub: 'LoanDueDate'}, 'date'],
    [{key: 'SomethingNew'}, 'value'],
  ] as const)('a column %j is %s', (column, kind) => expect(xlsxKind(column)).toBe(kind))

  it.each([
    [0, 'A'],
    [25, 'Z'],
    [26, 'AA'],
    [701, 'ZZ'],
    [702, 'AAA'],
    [16_383, 'XFD'],
  ])('column %i is %s', (i, letters) => expect(columnLetters(i)).toBe(letters))

  it.each([
    ['plain', 'plain'],
    ['a & b < c > d', 'a &amp; b &lt; c &gt; d'],
    ['bell\u0007', 'bell_x0007_'],
    ['cr\r\nlf', 'cr_x000D_\nlf'],
    ['tab\there', 'tab\there'],
    ['_x0041_ as typed', '_x005F_x0041_ as typed'],
    ['_x00 is not an escape', '_x00 is not an escape'],
  ])('xmlText(%j) is %j', (text, xml) => expect(xmlText(text)).toBe(xml))

  it.each([
    ['1900-03-01', 61],
    ['1970-01-01', 25_569],
    ['2026-01-15', 46_037],
    ['1900-02-28', undefined], // Excel counts a 29 February 1900: written as text instead
    ['2024-02-30', undefined],
    ['15/01/2026', undefined],
  ])('dateSerial(%s) is %s', (text, serial) => expect(dateSerial(text)).toBe(serial))

  it.each([
    ['2026-01-15T12:00:00', 46_037.5],
    ['2026-01-15T06:00:00', 46_037.25],
    ['2026-01-15', 46_037],
    ['2026-01-15T25:00:00', undefined],
  ])('datetimeSerial(%s) is %s', (text, serial) => expect(datetimeSerial(text)).toBe(serial))
})
