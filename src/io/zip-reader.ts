import {createReadStream} from 'node:fs'
import {open, type FileHandle} from 'node:fs/promises'
import {pipeline, Readable} from 'node:stream'
import {crc32, createInflateRaw} from 'node:zlib'

import {InputFormatError} from './input-error.js'

/**
 * A ZIP archive read from its central directory (PKWARE APPNOTE 6.3.x, 4.3.12-4.3.16), for xlsx inputs: the
 * end record found within the last 64 KiB, ZIP64 end records followed, each entry's name, method, sizes and
 * offset. A part whose declared size passes an absolute cap, or a ratio to its compressed size, is refused
 * before it is inflated; it is then read through node:zlib's inflateRaw with its bytes counted as they
 * come, and stopped the moment they pass the declared size, so a zip bomb never fills memory or disk,
 * whatever its directory claims. A CRC or size that does not match is "damaged".
 */

export interface ZipEntry {
  name: string
  flags: number
  method: number
  crc: number
  csize: number
  usize: number
  offset: number
}

export interface InflateCaps {
  /** Most bytes one part may expand to. */
  maxBytes: number
  /** Most bytes out per byte in, once past `ratioFloor` bytes out. */
  maxRatio: number
  ratioFloor: number
}

/**
 * The caps a part of an input workbook is read with. XML compresses 5 to 30 times in the workbooks people
 * save; deflate cannot pass about 1,030 to 1; a bomb is built at that end. 200 to 1 is far above real
 * files and far below a bomb; the absolute cap bounds a part that is honest but absurd.
 */
export const INFLATE_CAPS: InflateCaps = {maxBytes: 4 * 1024 ** 3, maxRatio: 200, ratioFloor: 16 * 1024 ** 2}

const END = 0x06054b50
const END64 = 0x06064b50
const LOCATOR64 = 0x07064b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
const MAX_DIRECTORY = 64 * 1024 ** 2
const MAX_ENTRIES = 100_000

export class ZipArchive {
  private constructor(
    private readonly path: string,
    private readonly size: number,
    readonly entries: ReadonlyMap<string, ZipEntry>,
  ) {}

  /** Read the central directory. Throws InputFormatError when it is missing or damaged. */
  static async open(path: string): Promise<ZipArchive> {
    const fh = await open(path, 'r')
    try {
      const {size} = await fh.stat()
      const dir = await findDirectory(fh, size)
      if (dir.size > MAX_DIRECTORY || dir.count > MAX_ENTRIES)
        throw new InputFormatError(`its ZIP directory lists ${dir.count} entries; a workbook has a few dozen`)
      if (dir.offset + dir.size > size) throw damaged('the ZIP directory lies past the end of the file')
      const buf = await readAt(fh, dir.offset, dir.size)
      return new ZipArchive(path, size, parseDirectory(buf, dir.count))
    } finally {
      await fh.close()
    }
  }

  /**
   * A part's bytes as they are inflated, in chunks; the caps stop a part that expands too far. The CRC
   * and size are checked at its end.
   */
  async *read(name: string, caps: InflateCaps = INFLATE_CAPS): AsyncGenerator<Buffer> {
    const e = this.entries.get(name)
    if (!e) throw damaged(`the part ${name} is missing`)
    if (e.flags & 1) throw new InputFormatError('it is encrypted; save it without a password, or as CSV')
    if (e.method !== 0 && e.method !== 8)
      throw new InputFormatError(
        `its part ${name} uses compression method ${e.method}, which sfl does not read`,
      )
    const fh = await open(this.path, 'r')
    let start: number
    try {
      const head = await readAt(fh, e.offset, 30)
      if (head.readUInt32LE(0) !== LOCAL) throw damaged(`the part ${name} has no local header`)
      start = e.offset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28)
    } finally {
      await fh.close()
    }
    if (start + e.csize > this.size) throw damaged(`the part ${name} runs past the end of the file`)
    // what the directory declares is refused at once; what the data does is counted below
    if (e.usize > caps.maxBytes) throw tooLarge(name, caps)
    if (e.usize > caps.ratioFloor && e.usize > caps.maxRatio * e.csize) throw bomb(name, caps)
    let out = 0
    let crc = 0
    let source: Readable
    if (e.csize === 0) source = Readable.from([])
    else {
      const raw = createReadStream(this.path, {start, end: start + e.csize - 1})
      // pipeline: a read error of the file ends the inflate with it, and destroying the last ends both
      source = e.method === 0 ? raw : pipeline(raw, createInflateRaw({chunkSize: 1 << 16}), () => undefined)
    }
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        out += chunk.length
        // the directory's size passed the caps above: more than it says is a lie, stopped here
        if (out > e.usize) throw damaged(`the part ${name} holds more than its directory says`)
        crc = crc32(chunk, crc)
        yield chunk
      }
    } catch (error) {
      if (error instanceof InputFormatError) throw error
      throw damaged(`the part ${name} cannot be inflated (${(error as Error).message})`)
    } finally {
      source.destroy()
    }
    if (out !== e.usize) throw damaged(`the part ${name} is shorter than its directory says`)
    if (crc >>> 0 !== e.crc >>> 0) throw damaged(`the part ${name} fails its CRC check`)
  }

  has(name: string): boolean {
    return this.entries.has(name)
  }
}

function damaged(what: string): InputFormatError {
  return new InputFormatError(`the file is damaged (${what}); open it and save it again, or save it as CSV`)
}

function bomb(name: string, caps: InflateCaps): InputFormatError {
  return new InputFormatError(
    `its part ${name} expands more than ${caps.maxRatio} to 1; refused as a possible zip bomb`,
  )
}

function tooLarge(name: string, caps: InflateCaps): InputFormatError {
  const mb = Math.round(caps.maxBytes / 1024 ** 2)
  return new InputFormatError(`its part ${name} expands past ${mb} MB, more than sfl reads; save it as CSV`)
}

async function readAt(fh: FileHandle, at: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length)
  const {bytesRead} = await fh.read(buf, 0, length, at)
  if (bytesRead !== length) throw damaged('it ends early')
  return buf
}

interface Directory {
  offset: number
  size: number
  count: number
}

/** APPNOTE 4.3.16: the end record is the last 22 bytes plus a comment of at most 65,535 bytes. */
async function findDirectory(fh: FileHandle, size: number): Promise<Directory> {
  const tail = Math.min(size, 22 + 0xffff)
  const buf = await readAt(fh, size - tail, tail)
  let at = -1
  for (let i = tail - 22; i >= 0; i--)
    if (buf.readUInt32LE(i) === END && i + 22 + buf.readUInt16LE(i + 20) === tail) {
      at = i
      break
    }
  if (at === -1) throw damaged('no ZIP directory at its end')
  if (buf.readUInt16LE(at + 4) !== 0 || buf.readUInt16LE(at + 6) !== 0)
    throw new InputFormatError('it is one part of a ZIP split across several files')
  const dir: Directory = {
    count: buf.readUInt16LE(at + 10),
    size: buf.readUInt32LE(at + 12),
    offset: buf.readUInt32LE(at + 16),
  }
  if (dir.count !== 0xffff && dir.size !== 0xffffffff && dir.offset !== 0xffffffff) return dir
  // APPNOTE 4.3.15: the ZIP64 locator sits just before the end record
  const locAt = size - tail + at - 20
  if (locAt < 0) throw damaged('a ZIP64 directory without its locator')
  const loc = await readAt(fh, locAt, 20)
  if (loc.readUInt32LE(0) !== LOCATOR64) throw damaged('a ZIP64 directory without its locator')
  const end64 = await readAt(fh, Number(loc.readBigUInt64LE(8)), 56)
  if (end64.readUInt32LE(0) !== END64) throw damaged('the ZIP64 end record is missing')
  return {
    count: Number(end64.readBigUInt64LE(32)),
    size: Number(end64.readBigUInt64LE(40)),
    offset: Number(end64.readBigUInt64LE(48)),
  }
}

function parseDirectory(buf: Buffer, count: number): Map<string, ZipEntry> {
  const entries = new Map<string, ZipEntry>()
  let p = 0
  for (let i = 0; i < count; i++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== CENTRAL)
      throw damaged('its ZIP directory is cut short')
    const nameLen = buf.readUInt16LE(p + 28)
    const extraLen = buf.readUInt16LE(p + 30)
    const commentLen = buf.readUInt16LE(p + 32)
    if (p + 46 + nameLen + extraLen + commentLen > buf.length) throw damaged('its ZIP directory is cut short')
    const flags = buf.readUInt16LE(p + 8)
    // bit 11: the name is UTF-8; else code page 437, which is ASCII for the names a workbook's parts have
    const name = buf.toString(flags & 0x800 ? 'utf8' : 'latin1', p + 46, p + 46 + nameLen)
    const e: ZipEntry = {
      name,
      flags,
      method: buf.readUInt16LE(p + 10),
      crc: buf.readUInt32LE(p + 16),
      csize: buf.readUInt32LE(p + 20),
      usize: buf.readUInt32LE(p + 24),
      offset: buf.readUInt32LE(p + 42),
    }
    readZip64(buf.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen), e)
    entries.set(name, e)
    p += 46 + nameLen + extraLen + commentLen
  }
  return entries
}

/** APPNOTE 4.5.3: the ZIP64 extra field holds, in order, each of usize, csize, offset that is 0xFFFFFFFF. */
function readZip64(extra: Buffer, e: ZipEntry): void {
  for (let q = 0; q + 4 <= extra.length;) {
    const id = extra.readUInt16LE(q)
    const len = extra.readUInt16LE(q + 2)
    if (id === 0x0001) {
      let r = q + 4
      const next = (): number => {
        if (r + 8 > q + 4 + len) throw damaged('a ZIP64 field is cut short')
        const v = Number(extra.readBigUInt64LE(r))
        r += 8
        return v
      }
      if (e.usize === 0xffffffff) e.usize = next()
      if (e.csize === 0xffffffff) e.csize = next()
      if (e.offset === 0xffffffff) e.offset = next()
      return
    }
    q += 4 + len
  }
}
