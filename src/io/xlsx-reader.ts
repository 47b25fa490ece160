import {posix} from 'node:path'

import {InputFormatError} from './input-error.js'
import {numberShape, shapedNumber, type NumberShape} from './xlsx-format.js'
import {attr, decodeText, XmlScanner, type XmlHandler} from './xlsx-xml.js'
import {INFLATE_CAPS, ZipArchive} from './zip-reader.js'

/**
 * An .xlsx workbook read as rows of text (ECMA-376 Part 1, SpreadsheetML; Part 2, the package): the sheet
 * list from xl/workbook.xml and its relationships, shared strings, inline strings, formula results (the
 * value the cell shows; the formula itself is never read or run), booleans as TRUE/FALSE, and numbers as
 * the text a person saw where it matters (src/io/xlsx-format.ts: dates, zero-padded identifiers). A sheet
 * is streamed: memory holds the shared strings and one chunk of rows.
 */

export interface SheetInfo {
  name: string
  /** The sheet's part in the package, e.g. xl/worksheets/sheet1.xml. */
  part: string
  kind: 'worksheet' | 'chartsheet' | 'other'
  hidden: boolean
}

export interface SheetRow {
  /** The row's number in the sheet (1-based, as the spreadsheet shows it). */
  row: number
  /** Each column's text ('' for an empty cell), up to the row's last cell. */
  cells: string[]
}

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const SMALL_PART = 64 * 1024 ** 2
/** The shared strings are held in memory while a sheet is read. */
const MAX_SHARED = 512 * 1024 ** 2
const MAX_COLUMN = 16_384

export class XlsxWorkbook {
  private constructor(
    private readonly zip: ZipArchive,
    readonly sheets: readonly SheetInfo[],
    private readonly shapes: readonly NumberShape[],
    private readonly sharedPart: string | undefined,
    private readonly date1904: boolean,
  ) {}

  /** Open the package and read its workbook, relationships and styles. Throws InputFormatError. */
  static async open(path: string): Promise<XlsxWorkbook> {
    const zip = await ZipArchive.open(path)
    const root = zip.has('_rels/.rels') ? await rels(zip, '_rels/.rels', '') : new Map<string, Rel>()
    const main =
      [...root.values()].find((r) => r.type === `${REL}/officeDocument`)?.target ?? 'xl/workbook.xml'
    if (!zip.has(main)) {
      if (zip.has('xl/workbook.bin'))
        throw new InputFormatError('it is an Excel binary workbook (.xlsb); save it as .xlsx or as CSV')
      throw new InputFormatError('it is a ZIP archive but not an xlsx workbook (no xl/workbook.xml)')
    }
    const relsPart = posix.join(posix.dirname(main), '_rels', `${posix.basename(main)}.rels`)
    const links = zip.has(relsPart) ? await rels(zip, relsPart, posix.dirname(main)) : new Map<string, Rel>()
    const {sheets, date1904} = await readWorkbook(zip, main, links)
    const of = (type: string) => [...links.values()].find((r) => r.type === `${REL}/${type}`)?.target
    const stylesPart = of('styles')
    const shapes = stylesPart && zip.has(stylesPart) ? await readStyles(zip, stylesPart) : []
    const shared = of('sharedStrings')
    return new XlsxWorkbook(zip, sheets, shapes, shared && zip.has(shared) ? shared : undefined, date1904)
  }

  /**
   * The sheet `name` (matched as typed, else ignoring case as spreadsheets do), or without one the first
   * worksheet that is not hidden.
   */
  pick(name?: string): SheetInfo {
    const list = () => this.sheets.map((s) => `"${s.name}"`).join(', ')
    if (name === undefined) {
      const first =
        this.sheets.find((s) => s.kind === 'worksheet' && !s.hidden) ??
        this.sheets.find((s) => s.kind === 'worksheet')
      if (!first) throw new InputFormatError(`it has no worksheet (its sheets: ${list() || 'none'})`)
      return first
    }
    const found =
      this.sheets.find((s) => s.name === name) ??
      this.sheets.find((s) => s.name.toLowerCase() === name.toLowerCase())
    if (!found) throw new InputFormatError(`it has no sheet named "${name}"; its sheets are ${list()}`)
    if (found.kind !== 'worksheet')
      throw new InputFormatError(`the sheet "${found.name}" is a chart, not rows; pick another with --sheet`)
    return found
  }

  /** The sheet's rows in order, each with its number; rows with no cell are not in the sheet, so not here. */
  async *rows(sheet: SheetInfo): AsyncGenerator<SheetRow> {
    if (!this.zip.has(sheet.part))
      throw new InputFormatError(`the part ${sheet.part} of its sheet is missing`)
    const strings = this.sharedPart ? await readShared(this.zip, this.sharedPart) : []
    const reader = new SheetReader(strings, this.shapes, this.date1904)
    const scanner = new XmlScanner(reader)
    for await (const text of decodePart(this.zip, sheet.part, INFLATE_CAPS.maxBytes)) {
      scanner.push(text)
      if (reader.out.length) {
        yield* reader.out
        reader.out = []
      }
    }
    scanner.end()
    yield* reader.out
  }
}

/** A part's text as it is inflated, UTF-8 (or UTF-16 with its BOM, which XML allows). */
async function* decodePart(zip: ZipArchive, part: string, maxBytes: number): AsyncGenerator<string> {
  let decoder: InstanceType<typeof TextDecoder> | undefined
  try {
    for await (const chunk of zip.read(part, {...INFLATE_CAPS, maxBytes})) {
      decoder ??= new TextDecoder(
        chunk[0] === 0xff && chunk[1] === 0xfe
          ? 'utf-16le'
          : chunk[0] === 0xfe && chunk[1] === 0xff
            ? 'utf-16be'
            : 'utf-8',
        {fatal: true},
      )
      yield decoder.decode(chunk, {stream: true})
    }
    if (decoder) yield decoder.decode()
  } catch (error) {
    if (error instanceof TypeError) throw new InputFormatError(`its part ${part} is not valid UTF-8 text`)
    throw error
  }
}

/** A whole small part scanned with `handler`. */
async function scanPart(
  zip: ZipArchive,
  part: string,
  handler: XmlHandler,
  maxBytes = SMALL_PART,
): Promise<void> {
  const scanner = new XmlScanner(handler)
  for await (const text of decodePart(zip, part, maxBytes)) scanner.push(text)
  scanner.end()
}

interface Rel {
  type: string
  /** The target as a part name (no leading slash), resolved against the source part's folder. */
  target: string
}

/** Part 2, 9.3: a relationships part, each Id to its type and target. */
async function rels(zip: ZipArchive, part: string, base: string): Promise<Map<string, Rel>> {
  const out = new Map<string, Rel>()
  await scanPart(zip, part, {
    open(name, attrs) {
      if (name !== 'Relationship' || attr(attrs, 'TargetMode') === 'External') return
      const id = attr(attrs, 'Id')
      const target = attr(attrs, 'Target')
      const type = attr(attrs, 'Type')
      if (id === undefined || target === undefined || type === undefined) return
      const path = target.startsWith('/') ? target.slice(1) : posix.join(base, target)
      out.set(id, {type, target: posix.normalize(path)})
    },
    close() {},
    text() {},
  })
  return out
}

async function readWorkbook(
  zip: ZipArchive,
  part: string,
  links: Map<string, Rel>,
): Promise<{sheets: SheetInfo[]; date1904: boolean}> {
  const sheets: SheetInfo[] = []
  let date1904 = false
  await scanPart(zip, part, {
    open(name, attrs) {
      if (name === 'workbookPr') {
        const v = attr(attrs, 'date1904')
        date1904 = v === '1' || v === 'true'
      } else if (name === 'sheet') {
        const rel = links.get(attr(attrs, 'id') ?? '')
        const type = rel?.type ?? ''
        sheets.push({
          name: attr(attrs, 'name') ?? `Sheet${sheets.length + 1}`,
          part: rel?.target ?? '',
          kind: type.endsWith('/worksheet')
            ? 'worksheet'
            : type.endsWith('/chartsheet')
              ? 'chartsheet'
              : 'other',
          hidden: (attr(attrs, 'state') ?? 'visible') !== 'visible',
        })
      }
    },
    close() {},
    text() {},
  })
  return {sheets, date1904}
}

/** 18.8.10 cellXfs: each cell style's number format, as the shape its numbers are read in. */
async function readStyles(zip: ZipArchive, part: string): Promise<NumberShape[]> {
  const codes = new Map<number, string>()
  const ids: number[] = []
  let inXfs = false
  await scanPart(zip, part, {
    open(name, attrs) {
      if (name === 'numFmt') {
        const id = Number(attr(attrs, 'numFmtId'))
        const code = attr(attrs, 'formatCode')
        if (Number.isInteger(id) && code !== undefined) codes.set(id, code)
      } else if (name === 'cellXfs') inXfs = true
      else if (name === 'xf' && inXfs) ids.push(Number(attr(attrs, 'numFmtId') ?? 0))
    },
    close(name) {
      if (name === 'cellXfs') inXfs = false
    },
    text() {},
  })
  return ids.map((id) => numberShape(id, codes.get(id)))
}

/** Excel writes a character XML cannot hold as `_xHHHH_` (22.9.2.19 ST_Xstring): decoded back here. */
export function decodeXstring(s: string): string {
  return s.includes('_x')
    ? s.replace(/_x([0-9A-Fa-f]{4})_/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    : s
}

/**
 * Text runs of a string item (18.4.8 `si`, 18.3.1.53 `is`): `t` directly, or in rich-text runs `r`; the
 * phonetic guide (`rPh`, the reading of East Asian text) is not the cell's text.
 */
class StringText {
  private inT = false
  private phonetic = 0
  private raw = ''
  value = ''

  start(): void {
    this.value = ''
  }

  open(name: string): void {
    if (name === 'rPh') this.phonetic++
    else if (name === 't' && this.phonetic === 0) {
      this.inT = true
      this.raw = ''
    }
  }

  close(name: string): void {
    if (name === 'rPh') this.phonetic--
    else if (name === 't' && this.inT) {
      this.inT = false
      this.value += decodeXstring(decodeText(this.raw))
    }
  }

  text(raw: string): void {
    if (this.inT) this.raw += raw
  }
}

async function readShared(zip: ZipArchive, part: string): Promise<string[]> {
  const strings: string[] = []
  const item = new StringText()
  let inSi = false
  await scanPart(
    zip,
    part,
    {
      open(name) {
        if (name === 'si') {
          inSi = true
          item.start()
        } else if (inSi) item.open(name)
      },
      close(name) {
        if (name === 'si') {
          inSi = false
          strings.push(item.value)
        } else if (inSi) item.close(name)
      },
      text(raw) {
        if (inSi) item.text(raw)
      },
    },
    MAX_SHARED,
  )
  return strings
}

/** 18.3.1.4 `c` in 18.3.1.73 `row`: the cells of each row, as text. */
class SheetReader implements XmlHandler {
  out: SheetRow[] = []
  private row: SheetRow | undefined
  private lastRow = 0
  private col = -1
  private type = 'n'
  private style = 0
  private inV = false
  private raw = ''
  private inline: StringText | undefined

  constructor(
    private readonly strings: readonly string[],
    private readonly shapes: readonly NumberShape[],
    private readonly date1904: boolean,
  ) {}

  open(name: string, attrs: string): void {
    if (this.inline && name !== 'is') {
      this.inline.open(name)
      return
    }
    switch (name) {
      case 'row': {
        const r = attr(attrs, 'r')
        const n = r === undefined ? this.lastRow + 1 : Number(r)
        if (!Number.isInteger(n) || n <= this.lastRow) throw damaged(`a row numbered ${r} out of order`)
        this.lastRow = n
        this.row = {row: n, cells: []}
        this.col = -1
        break
      }
      case 'c': {
        const ref = attr(attrs, 'r')
        this.col = ref === undefined ? this.col + 1 : columnIndex(ref)
        this.type = attr(attrs, 't') ?? 'n'
        this.style = Number(attr(attrs, 's') ?? 0)
        this.raw = ''
        break
      }
      case 'v':
        this.inV = true
        this.raw = ''
        break
      case 'is':
        this.inline = new StringText()
        break
    }
  }

  close(name: string): void {
    if (this.inline) {
      if (name === 'is') {
        this.raw = this.inline.value
        this.inline = undefined
      } else this.inline.close(name)
      return
    }
    if (name === 'v') this.inV = false
    else if (name === 'c') {
      const text = this.value()
      if (this.row && text !== '') {
        const cells = this.row.cells
        while (cells.length < this.col) cells.push('')
        cells[this.col] = text
      }
    } else if (name === 'row' && this.row) {
      this.out.push(this.row)
      this.row = undefined
    }
  }

  text(raw: string): void {
    if (this.inline) this.inline.text(raw)
    else if (this.inV) this.raw += raw
  }

  /** The cell's text by its type (18.18.11 ST_CellType). An inline string's text is already decoded. */
  private value(): string {
    const t = this.type
    if (t === 'inlineStr') return this.raw
    const v = decodeText(this.raw)
    switch (t) {
      case 's': {
        const s = this.strings[Number(v)]
        if (s === undefined) throw damaged(`a cell points at shared string ${v}, which is not there`)
        return s
      }
      case 'str':
        return decodeXstring(v)
      case 'b':
        return v === '1' ? 'TRUE' : v === '0' ? 'FALSE' : v
      case 'e':
      case 'd':
        return v
      default: {
        if (v.trim() === '') return ''
        const n = Number(v)
        if (!Number.isFinite(n)) return v
        return shapedNumber(n, this.shapes[this.style] ?? {kind: 'number'}, this.date1904)
      }
    }
  }
}

/** `BC12` -> 54 (0-based column); the row digits are not needed (the row element has them). */
function columnIndex(ref: string): number {
  let n = 0
  let i = 0
  for (; i < ref.length; i++) {
    const c = ref.charCodeAt(i) | 0x20 // lower case
    if (c < 0x61 || c > 0x7a) break
    n = n * 26 + (c - 0x60)
  }
  if (i === 0 || n > MAX_COLUMN) throw damaged(`a cell reference ${ref} outside the sheet`)
  return n - 1
}

function damaged(what: string): InputFormatError {
  return new InputFormatError(
    `the workbook is damaged (${what}); open it and save it again, or save it as CSV`,
  )
}
