/**
 * The fixed parts of a workbook sfl writes (ECMA-376 Part 1, SpreadsheetML; Part 2, Open Packaging
 * Conventions): the package's content types and relationships, the workbook with its sheet list, and the
 * styles the sheets' cells point at. The sheets themselves are streamed by src/io/xlsx-writer.ts.
 */

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships'
const HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'

/** Indexes into styles.xml's cellXfs, the `s` of a cell. */
export const STYLE = {
  general: 0,
  header: 1,
  date: 2,
  datetime: 3,
  integer: 4,
  text: 5,
} as const

/**
 * Dates as ISO 8601 (yyyy-mm-dd) whatever the reader's locale, so a sheet shows the text the CSV has; whole
 * numbers of 11 digits and more (ServicePropertyID) with the format "0", which Excel's General would
 * show as 3E+10; text cells with the format "@", so a value typed into them later stays text (a ZIP
 * typed as 02134 keeps its zero). The header is bold and text.
 */
export function stylesXml(): string {
  return (
    `${HEAD}<styleSheet xmlns="${MAIN}">` +
    '<numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/>' +
    '<numFmt numFmtId="165" formatCode="yyyy-mm-dd hh:mm:ss"/></numFmts>' +
    '<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font>' +
    '<font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>' +
    '<fills count="2"><fill><patternFill patternType="none"/></fill>' +
    '<fill><patternFill patternType="gray125"/></fill></fills>' +
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
    '<cellXfs count="6">' +
    '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
    '<xf numFmtId="49" fontId="1" fillId="0" borderId="0" xfId="0" applyNumberFormat="1" applyFont="1"/>' +
    '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
    '<xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
    '<xf numFmtId="1" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
    '<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
    '</cellXfs>' +
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
    '</styleSheet>'
  )
}

/** The sheet names, in tab order, each `xl/worksheets/sheet<N>.xml`. */
export function workbookXml(sheets: readonly string[]): string {
  const list = sheets
    .map((name, i) => `<sheet name="${xmlAttr(name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`)
    .join('')
  return (
    `${HEAD}<workbook xmlns="${MAIN}" xmlns:r="${REL}">` +
    `<bookViews><workbookView activeTab="0"/></bookViews><sheets>${list}</sheets></workbook>`
  )
}

export function workbookRelsXml(sheets: number): string {
  let rels = ''
  for (let i = 1; i <= sheets; i++)
    rels += `<Relationship Id="rId${i}" Type="${REL}/worksheet" Target="worksheets/sheet${i}.xml"/>`
  rels += `<Relationship Id="rId${sheets + 1}" Type="${REL}/styles" Target="styles.xml"/>`
  return `${HEAD}<Relationships xmlns="${PKG_REL}">${rels}</Relationships>`
}

export function rootRelsXml(): string {
  return (
    `${HEAD}<Relationships xmlns="${PKG_REL}">` +
    `<Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`
  )
}

export function contentTypesXml(sheets: number): string {
  const ct = 'application/vnd.openxmlformats-officedocument.spreadsheetml'
  let overrides =
    `<Override PartName="/xl/workbook.xml" ContentType="${ct}.sheet.main+xml"/>` +
    `<Override PartName="/xl/styles.xml" ContentType="${ct}.styles+xml"/>`
  for (let i = 1; i <= sheets; i++)
    overrides += `<Override PartName="/xl/worksheets/sheet${i}.xml" ContentType="${ct}.worksheet+xml"/>`
  return (
    `${HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
    `<Default Extension="xml" ContentType="application/xml"/>${overrides}</Types>`
  )
}

/** The start of a sheet: the header row frozen (the pane below it scrolls), column widths. */
export function sheetStart(widths: readonly number[], first: boolean): string {
  const cols = widths.map((w, i) => `<col min="${i + 1}" max="${i + 1}" width="${w}" customWidth="1"/>`)
  return (
    `${HEAD}<worksheet xmlns="${MAIN}" xmlns:r="${REL}">` +
    `<sheetViews><sheetView${first ? ' tabSelected="1"' : ''} workbookViewId="0">` +
    '<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>' +
    '<selection pane="bottomLeft" activeCell="A2" sqref="A2"/></sheetView></sheetViews>' +
    '<sheetFormatPr defaultRowHeight="15"/>' +
    (cols.length ? `<cols>${cols.join('')}</cols>` : '') +
    '<sheetData>'
  )
}

export const SHEET_END = '</sheetData></worksheet>'

/** An attribute value: the five XML specials escaped. */
export function xmlAttr(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
