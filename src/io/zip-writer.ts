import {constants, crc32, createDeflateRaw, deflateRawSync} from 'node:zlib'

import type {OutputTarget} from './output.js'
import {ZlibPump} from './zlib-pump.js'

/**
 * A ZIP archive written front to back onto an OutputTarget (PKWARE APPNOTE 6.3.x), for the xlsx writer: a
 * few small parts deflated whole, and parts streamed through deflate with their CRC and sizes in a data
 * descriptor after the data (general purpose bit 3, APPNOTE 4.3.9), so a sheet of any length is written
 * with a bounded buffer. Sizes and offsets past 4 GiB take ZIP64 fields (APPNOTE 4.5.3, 4.3.14): the data
 * descriptor of such a part carries 8-byte sizes and the central directory the ZIP64 extra field, as Go's
 * archive/zip decides it once the sizes are known; an archive that never reaches 4 GiB has no ZIP64 field
 * at all, which every reader opens.
 *
 * Every entry carries the same date (1980-01-01, the DOS epoch), so the same rows make the same bytes.
 */

const LOCAL = 0x04034b50
const DESCRIPTOR = 0x08074b50
const CENTRAL = 0x02014b50
const END = 0x06054b50
const END64 = 0x06064b50
const LOCATOR64 = 0x07064b50
const DEFLATE = 8
/** Bit 3: CRC and sizes follow the data. Bit 11 (UTF-8 names) is not needed: part names are ASCII. */
const FLAG_DESCRIPTOR = 0x0008
const DOS_DATE = (0 << 9) | (1 << 5) | 1 // 1980-01-01
const DOS_TIME = 0
const VERSION = 20 // 2.0: deflate
const VERSION64 = 45 // 4.5: ZIP64
const MAX32 = 0xffffffff
const MAX16 = 0xffff

interface Entry {
  name: Buffer
  flags: number
  crc: number
  csize: number
  usize: number
  offset: number
}

export interface ZipWriterOptions {
  /** zlib level (1 fastest .. 9 smallest). */
  level?: number
  /**
   * A size or offset at or past this takes ZIP64 fields. 4 GiB - 1, as APPNOTE says; tests lower it to
   * write ZIP64 archives of a few bytes.
   */
  zip64At?: number
}

export class ZipWriter {
  private offset = 0
  private readonly entries: Entry[] = []
  private open: ZipEntryStream | undefined
  private readonly level: number
  private readonly zip64At: number

  constructor(
    private readonly target: OutputTarget,
    opts: ZipWriterOptions = {},
  ) {
    this.level = opts.level ?? constants.Z_DEFAULT_COMPRESSION
    this.zip64At = opts.zip64At ?? MAX32
  }

  /** Bytes written so far (the next part's offset). */
  get size(): number {
    return this.offset
  }

  /** Write bytes of the archive; false: await `target.drain()`. */
  put(buf: Buffer): boolean {
    this.offset += buf.length
    return this.target.write(buf)
  }

  /** A small part, deflated whole (its sizes are known, so no data descriptor). */
  async file(name: string, data: string | Buffer): Promise<void> {
    this.assertClosed()
    const raw = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    const packed = deflateRawSync(raw, {level: this.level})
    const entry: Entry = {
      name: Buffer.from(name, 'ascii'),
      flags: 0,
      crc: crc32(raw),
      csize: packed.length,
      usize: raw.length,
      offset: this.offset,
    }
    this.entries.push(entry)
    this.put(localHeader(entry))
    if (!this.put(packed)) await this.target.drain()
  }

  /** A part streamed through deflate: write its bytes, then `end()` it before the next part. */
  stream(name: string): ZipEntryStream {
    this.assertClosed()
    const entry: Entry = {
      name: Buffer.from(name, 'ascii'),
      flags: FLAG_DESCRIPTOR,
      crc: 0,
      csize: 0,
      usize: 0,
      offset: this.offset,
    }
    this.put(localHeader(entry))
    this.open = new ZipEntryStream(this, this.target, entry, this.level, this.zip64At, () => {
      this.entries.push(entry)
      this.open = undefined
    })
    return this.open
  }

  /** The central directory and its end records; the archive is whole (the caller commits the target). */
  async finish(): Promise<void> {
    this.assertClosed()
    const start = this.offset
    const parts: Buffer[] = this.entries.map((e) => centralHeader(e, this.zip64At))
    for (const p of parts) this.put(p)
    const size = this.offset - start
    const count = this.entries.length
    if (count >= MAX16 || size >= this.zip64At || start >= this.zip64At) {
      const at = this.offset
      this.put(end64(count, size, start))
      this.put(locator64(at))
      this.put(endRecord(MAX16, MAX32, MAX32))
    } else this.put(endRecord(count, size, start))
    await this.target.drain()
  }

  private assertClosed(): void {
    if (this.open) throw new Error('zip: the streamed part before this one was not ended')
  }
}

/**
 * One part's bytes on their way through deflate. `write` returns false when deflate's buffer is full:
 * await `drain()`, which also waits for the target, so memory holds one buffer of each whatever the
 * part's length.
 */
export class ZipEntryStream {
  private readonly pump: ZlibPump

  constructor(
    private readonly zip: ZipWriter,
    private readonly target: OutputTarget,
    private readonly entry: Entry,
    level: number,
    private readonly zip64At: number,
    private readonly done: () => void,
  ) {
    this.pump = new ZlibPump(
      createDeflateRaw({level, chunkSize: 64 * 1024}),
      (chunk) => {
        entry.csize += chunk.length
        return zip.put(chunk)
      },
      () => target.drain(),
    )
  }

  write(data: string | Buffer): boolean {
    if (this.pump.failed) return true // drain() or end() reports it
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    this.entry.crc = crc32(buf, this.entry.crc)
    this.entry.usize += buf.length
    return this.pump.write(buf)
  }

  drain(): Promise<void> {
    return this.pump.drain()
  }

  /** Flush deflate, then write the data descriptor with the CRC and both sizes. */
  async end(): Promise<void> {
    await this.pump.end()
    const e = this.entry
    const wide = e.csize >= this.zip64At || e.usize >= this.zip64At
    const d = Buffer.alloc(wide ? 24 : 16)
    d.writeUInt32LE(DESCRIPTOR, 0)
    d.writeUInt32LE(e.crc >>> 0, 4)
    if (wide) {
      d.writeBigUInt64LE(BigInt(e.csize), 8)
      d.writeBigUInt64LE(BigInt(e.usize), 16)
    } else {
      d.writeUInt32LE(e.csize, 8)
      d.writeUInt32LE(e.usize, 12)
    }
    this.done()
    if (!this.zip.put(d)) await this.target.drain()
  }
}

function localHeader(e: Entry): Buffer {
  const b = Buffer.alloc(30 + e.name.length)
  b.writeUInt32LE(LOCAL, 0)
  b.writeUInt16LE(VERSION, 4)
  b.writeUInt16LE(e.flags, 6)
  b.writeUInt16LE(DEFLATE, 8)
  b.writeUInt16LE(DOS_TIME, 10)
  b.writeUInt16LE(DOS_DATE, 12)
  // a streamed part's CRC and sizes are zero here and follow in its data descriptor (APPNOTE 4.4.4)
  b.writeUInt32LE(e.crc >>> 0, 14)
  b.writeUInt32LE(e.csize, 18)
  b.writeUInt32LE(e.usize, 22)
  b.writeUInt16LE(e.name.length, 26)
  b.writeUInt16LE(0, 28)
  e.name.copy(b, 30)
  return b
}

function centralHeader(e: Entry, zip64At: number): Buffer {
  // APPNOTE 4.5.3: each value too large for its field is 0xFFFFFFFF there and follows in the ZIP64
  // extra field, in the order uncompressed size, compressed size, offset
  const wide = [e.usize, e.csize, e.offset].map((v) => v >= zip64At)
  const extraValues = [e.usize, e.csize, e.offset].filter((_, i) => wide[i])
  const extra = extraValues.length ? Buffer.alloc(4 + 8 * extraValues.length) : Buffer.alloc(0)
  if (extraValues.length) {
    extra.writeUInt16LE(0x0001, 0)
    extra.writeUInt16LE(8 * extraValues.length, 2)
    extraValues.forEach((v, i) => extra.writeBigUInt64LE(BigInt(v), 4 + 8 * i))
  }
  const version = extraValues.length ? VERSION64 : VERSION
  const b = Buffer.alloc(46 + e.name.length + extra.length)
  b.writeUInt32LE(CENTRAL, 0)
  b.writeUInt16LE(VERSION64, 4) // made by: spec 4.5, MS-DOS attributes
  b.writeUInt16LE(version, 6)
  b.writeUInt16LE(e.flags, 8)
  b.writeUInt16LE(DEFLATE, 10)
  b.writeUInt16LE(DOS_TIME, 12)
  b.writeUInt16LE(DOS_DATE, 14)
  b.writeUInt32LE(e.crc >>> 0, 16)
  b.writeUInt32LE(wide[1] ? MAX32 : e.csize, 20)
  b.writeUInt32LE(wide[0] ? MAX32 : e.usize, 24)
  b.writeUInt16LE(e.name.length, 28)
  b.writeUInt16LE(extra.length, 30)
  b.writeUInt16LE(0, 32) // comment
  b.writeUInt16LE(0, 34) // disk
  b.writeUInt16LE(0, 36) // internal attributes
  b.writeUInt32LE(0, 38) // external attributes
  b.writeUInt32LE(wide[2] ? MAX32 : e.offset, 42)
  e.name.copy(b, 46)
  extra.copy(b, 46 + e.name.length)
  return b
}

function endRecord(count: number, size: number, offset: number): Buffer {
  const b = Buffer.alloc(22)
  b.writeUInt32LE(END, 0)
  b.writeUInt16LE(0, 4)
  b.writeUInt16LE(0, 6)
  b.writeUInt16LE(Math.min(count, MAX16), 8)
  b.writeUInt16LE(Math.min(count, MAX16), 10)
  b.writeUInt32LE(Math.min(size, MAX32), 12)
  b.writeUInt32LE(Math.min(offset, MAX32), 16)
  b.writeUInt16LE(0, 20)
  return b
}

/** APPNOTE 4.3.14: the ZIP64 end of central directory record. */
function end64(count: number, size: number, offset: number): Buffer {
  const b = Buffer.alloc(56)
  b.writeUInt32LE(END64, 0)
  b.writeBigUInt64LE(44n, 4) // the record's size after this field
  b.writeUInt16LE(VERSION64, 12)
  b.writeUInt16LE(VERSION64, 14)
  b.writeUInt32LE(0, 16)
  b.writeUInt32LE(0, 20)
  b.writeBigUInt64LE(BigInt(count), 24)
  b.writeBigUInt64LE(BigInt(count), 32)
  b.writeBigUInt64LE(BigInt(size), 40)
  b.writeBigUInt64LE(BigInt(offset), 48)
  return b
}

/** APPNOTE 4.3.15: where the ZIP64 end record is. */
function locator64(at: number): Buffer {
  const b = Buffer.alloc(20)
  b.writeUInt32LE(LOCATOR64, 0)
  b.writeUInt32LE(0, 4)
  b.writeBigUInt64LE(BigInt(at), 8)
  b.writeUInt32LE(1, 16)
  return b
}
