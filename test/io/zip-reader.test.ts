import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import ExcelJS from 'exceljs'
import {describe, expect, it} from 'vitest'

import {InputFormatError} from '../../src/io/input-error.js'
import {ZipArchive, type InflateCaps} from '../../src/io/zip-reader.js'
import {ZipWriter} from '../../src/io/zip-writer.js'
import {tempDir} from '../helpers/tmp.js'
import {MemoryTarget} from './memory-target.js'

/** The ZIP container of an xlsx input: its directory, and what a hostile or damaged one gets. */

async function zipOf(parts: Record<string, string | Buffer>, opts: {level?: number; zip64At?: number} = {}) {
  const target = new MemoryTarget()
  const zip = new ZipWriter(target, opts)
  for (const [name, data] of Object.entries(parts)) {
    // the first part streamed (with a data descriptor), the others whole: both layouts are read
    if (name === Object.keys(parts)[0]) {
      const s = zip.stream(name)
      s.write(data)
      await s.end()
    } else await zip.file(name, data)
  }
  await zip.finish()
  return target.bytes
}

function save(bytes: Buffer): string {
  const path = join(tempDir('sfl-zip-'), 'a.zip')
  writeFileSync(path, bytes)
  return path
}

async function text(zip: ZipArchive, name: string, caps?: InflateCaps): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of zip.read(name, caps)) chunks.push(c)
  return Buffer.concat(chunks).toString('utf8')
}

/** The central directory header of `name` in the archive's bytes (APPNOTE 4.3.12). */
function centralAt(bytes: Buffer, name: string): number {
  const at = bytes.indexOf(Buffer.concat([Buffer.from([0x50, 0x4b, 0x01, 0x02])]), 0)
  for (let p = at; p !== -1; p = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), p + 4)) {
    const len = bytes.readUInt16LE(p + 28)
    if (bytes.toString('latin1', p + 46, p + 46 + len) === name) return p
  }
  throw new Error(`no ${name}`)
}

const message = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (error) {
    expect(error).toBeInstanceOf(InputFormatError)
    return (error as Error).message
  }
  throw new Error('no error')
}

describe('a ZIP read from its central directory', () => {
  it('reads every part of a workbook exceljs wrote (an independent writer)', async () => {
    const wb = new ExcelJS.Workbook()
    wb.addWorksheet('One').addRow(['fips', 'apn'])
    const path = join(tempDir('sfl-zip-'), 'x.xlsx')
    await wb.xlsx.writeFile(path)
    const zip = await ZipArchive.open(path)
    expect([...zip.entries.keys()]).toEqual(
      expect.arrayContaining(['[Content_Types].xml', 'xl/workbook.xml', 'xl/worksheets/sheet1.xml']),
    )
    expect(await text(zip, 'xl/workbook.xml')).toMatch(/<sheet [^>]*name="One"/)
  })

  it('reads parts streamed with data descriptors and parts written whole, ZIP64 fields included', async () => {
    const parts = {'a.xml': 'x'.repeat(5000), 'b.xml': '<b/>', 'c.xml': 'é'.repeat(3000)}
    for (const zip64At of [undefined, 100]) {
      const zip = await ZipArchive.open(save(await zipOf(parts, zip64At ? {zip64At} : {})))
      expect([await text(zip, 'a.xml'), await text(zip, 'b.xml'), await text(zip, 'c.xml')]).toEqual([
        parts['a.xml'],
        parts['b.xml'],
        parts['c.xml'],
      ])
    }
  })

  it('a part whose directory says it expands more than 200 to 1 is refused before it is inflated', async () => {
    // 40 MB of zeros deflate to about 40 KB: a bomb's ratio, though a small one
    const bytes = await zipOf({'xl/worksheets/sheet1.xml': Buffer.alloc(40 * 1024 ** 2, 0x30)}, {level: 9})
    const zip = await ZipArchive.open(save(bytes))
    expect(await message(text(zip, 'xl/worksheets/sheet1.xml'))).toBe(
      'its part xl/worksheets/sheet1.xml expands more than 200 to 1; refused as a possible zip bomb',
    )
    // and past an absolute cap, whatever the ratio
    const caps = {maxBytes: 1024 ** 2, maxRatio: 10_000, ratioFloor: 0}
    expect(await message(text(zip, 'xl/worksheets/sheet1.xml', caps))).toBe(
      'its part xl/worksheets/sheet1.xml expands past 1 MB, more than sfl reads; save it as CSV',
    )
  })

  it('a part that inflates past the size its directory gives is stopped there, as damaged', async () => {
    const bytes = await zipOf({'a.xml': 'y'.repeat(100_000)})
    bytes.writeUInt32LE(1000, centralAt(bytes, 'a.xml') + 24) // the directory now says 1,000 bytes
    const zip = await ZipArchive.open(save(bytes))
    expect(await message(text(zip, 'a.xml'))).toBe(
      'the file is damaged (the part a.xml holds more than its directory says); open it and save it again, or save it as CSV',
    )
  })

  it('a part whose CRC does not match is damaged', async () => {
    const bytes = await zipOf({'a.xml': 'hello', 'b.xml': 'world'})
    const at = centralAt(bytes, 'b.xml') + 16
    bytes.writeUInt32LE(bytes.readUInt32LE(at) ^ 1, at)
    const zip = await ZipArchive.open(save(bytes))
    expect(await text(zip, 'a.xml')).toBe('hello')
    expect(await message(text(zip, 'b.xml'))).toMatch(
      /^the file is damaged \(the part b\.xml fails its CRC check\)/,
    )
  })

  it('an encrypted part, or one compressed another way, is refused with what to do', async () => {
    const bytes = await zipOf({'a.xml': 'hello', 'b.xml': 'world'})
    bytes.writeUInt16LE(1, centralAt(bytes, 'a.xml') + 8)
    bytes.writeUInt16LE(12, centralAt(bytes, 'b.xml') + 10) // bzip2
    const zip = await ZipArchive.open(save(bytes))
    expect(await message(text(zip, 'a.xml'))).toBe('it is encrypted; save it without a password, or as CSV')
    expect(await message(text(zip, 'b.xml'))).toBe(
      'its part b.xml uses compression method 12, which sfl does not read',
    )
  })

  it('a file cut short, or not a ZIP at its end, has no directory', async () => {
    const bytes = await zipOf({'a.xml': 'hello'})
    const cut = save(bytes.subarray(0, bytes.length - 10))
    expect(await message(ZipArchive.open(cut))).toBe(
      'the file is damaged (no ZIP directory at its end); open it and save it again, or save it as CSV',
    )
    const path = save(Buffer.concat([Buffer.from('PK\u0003\u0004'), Buffer.alloc(100)]))
    expect(await message(ZipArchive.open(path))).toMatch(/no ZIP directory at its end/)
    expect(readFileSync(path).length).toBe(104)
  })
})
