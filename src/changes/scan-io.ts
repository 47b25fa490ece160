import {closeSync, openSync, readSync} from 'node:fs'

/** A file the byte scanners leave to src/io/export-reader.ts (which names what is wrong with it). */
export class ScanAnomaly extends Error {}

/** One file of a side: its index among the side's files and, in a manifest, its county. */
export interface ScanTarget {
  path: string
  index: number
  /** The manifest's county for every record of the file; undefined: each record's own Fips. */
  group: string | undefined
}

const CHUNK = 1 << 20

/**
 * Feed a file to `take` a 1 MiB chunk at a time: `take(buf, start, end, base, final)` consumes whole
 * records of `buf[start, end)` (`base` is the file offset of `buf[0]`, `final` says no byte follows) and
 * returns where the first record it could not finish starts; those bytes come again at the front of the
 * next call, so a record is never split. A record longer than the buffer grows it.
 *
 * Reads are synchronous, on the scanning thread itself: an awaited read goes through libuv's thread pool,
 * a third thread that must be scheduled beside the two scanning ones on a 2-core machine, and the CPU
 * profile of a 200,000-record NDJSON comparison showed the main thread idle a fifth of its scan waiting for
 * it (issue 32). The thread yields to the event loop after each chunk, so Ctrl-C is still handled there.
 */
export async function forEachChunk(
  path: string,
  take: (buf: Buffer, start: number, end: number, base: number, final: boolean) => number,
): Promise<void> {
  const fd = openSync(path, 'r')
  try {
    let buf = Buffer.allocUnsafe(CHUNK)
    let end = 0
    let base = 0
    for (;;) {
      if (end === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2)
        buf.copy(bigger, 0, 0, end)
        buf = bigger
      }
      const bytesRead = readSync(fd, buf, end, buf.length - end, base + end)
      end += bytesRead
      const final = bytesRead === 0
      let used = 0
      for (let next = take(buf, 0, end, base, final); next !== used; next = take(buf, used, end, base, final))
        used = next
      if (final) {
        if (used < end) throw new ScanAnomaly('bytes after the last record') // not expected: every take finishes
        return
      }
      // the unfinished record moves to the front
      buf.copy(buf, 0, used, end)
      base += used
      end -= used
      await new Promise((resolve) => setImmediate(resolve))
    }
  } finally {
    closeSync(fd)
  }
}
