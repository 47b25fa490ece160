import {open} from 'node:fs/promises'

const NL = 0x0a
const CHUNK = 1 << 20

export interface Line {
  /** The line's bytes, without its newline. */
  bytes: Buffer
  /** Byte offset of the line in the file. */
  offset: number
  /** Whether the line ended with a newline (a last line without one may have been cut short). */
  complete: boolean
}

/**
 * The lines of a file with their byte offsets, read in 1 MiB chunks: constant memory whatever the file's
 * size, and offsets so a later pass can read one line back (batch answers in the checkpoint).
 */
export async function* readLines(path: string): AsyncGenerator<Line> {
  const fh = await open(path, 'r')
  try {
    let carry: Buffer = Buffer.alloc(0)
    let carryOffset = 0
    let pos = 0
    for (;;) {
      // a fresh buffer per read: a caller may hand a line to a stream that holds it until flushed
      const buf = Buffer.allocUnsafe(CHUNK)
      const {bytesRead} = await fh.read(buf, 0, CHUNK, pos)
      if (bytesRead === 0) break
      pos += bytesRead
      const chunk = carry.length
        ? Buffer.concat([carry, buf.subarray(0, bytesRead)])
        : buf.subarray(0, bytesRead)
      let start = 0
      for (let nl = chunk.indexOf(NL, start); nl !== -1; nl = chunk.indexOf(NL, start)) {
        yield {bytes: chunk.subarray(start, nl), offset: carryOffset + start, complete: true}
        start = nl + 1
      }
      carry = chunk.subarray(start)
      carryOffset += start
    }
    if (carry.length) yield {bytes: carry, offset: carryOffset, complete: false}
  } finally {
    await fh.close()
  }
}

/** Count the newline-terminated lines of a file (a part file's records), in constant memory. */
export async function countLines(path: string): Promise<number> {
  let n = 0
  for await (const l of readLines(path)) if (l.complete) n++
  return n
}
