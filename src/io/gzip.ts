import {createReadStream, createWriteStream} from 'node:fs'
import {stat} from 'node:fs/promises'
import {pipeline} from 'node:stream/promises'
import {Transform, type TransformCallback} from 'node:stream'
import {constants, createGunzip, createGzip} from 'node:zlib'

import {abortedBy} from '../errors.js'
import {InputFormatError} from './input-error.js'
import type {OutputTarget} from './output-target.js'
import {ZlibPump} from './zlib-pump.js'
import {INFLATE_CAPS, type InflateCaps} from './zip-reader.js'

/**
 * gzip (RFC 1952) both ways, chosen by a file's name (`.gz`, src/io/output-name.ts): an OutputTarget that
 * compresses into another (CSV, NDJSON and JSON outputs), and a reader that expands a `.gz` input under
 * the same caps as a workbook's parts, so a gzip bomb stops with one line instead of filling the disk.
 */

/**
 * Compresses everything written into `inner` (a file written atomically, a FIFO, stdout): `commit` ends
 * the gzip stream and then commits `inner`, `abort` aborts it. Writes follow backpressure as every
 * target's do: false from `write`, then `drain()`.
 */
export class GzipTarget implements OutputTarget {
  private readonly pump: ZlibPump

  /** `level`: zlib's 1 (fastest) to 9 (smallest); 6 by default, as gzip(1). */
  constructor(
    private readonly inner: OutputTarget,
    opts: {level?: number} = {},
  ) {
    this.pump = new ZlibPump(
      createGzip({level: opts.level ?? constants.Z_DEFAULT_COMPRESSION, chunkSize: 64 * 1024}),
      (chunk) => inner.write(chunk),
      () => inner.drain(),
    )
  }

  write(chunk: Buffer | string): boolean {
    return this.pump.write(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk)
  }

  drain(): Promise<void> {
    return this.pump.drain()
  }

  async commit(): Promise<void> {
    try {
      await this.pump.end()
    } catch (error) {
      await this.inner.abort()
      throw error
    }
    await this.inner.commit()
  }

  async abort(): Promise<void> {
    this.pump.fail(new Error('aborted'))
    await this.inner.abort()
  }
}

/** RFC 1952 section 2.3.1: every member starts with ID1 ID2 = 0x1f 0x8b. */
export function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b
}

/** Counts what gunzip gives and stops past the caps (`compressed`: the file's size). */
function capped(compressed: number, caps: InflateCaps, name: string): Transform {
  let out = 0
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      out += chunk.length
      if (out > caps.maxBytes)
        return done(
          new InputFormatError(
            `${name} expands past ${Math.round(caps.maxBytes / 1024 ** 2)} MB, more than sfl reads; split it`,
          ),
        )
      if (out > caps.ratioFloor && out > caps.maxRatio * compressed)
        return done(
          new InputFormatError(
            `${name} expands more than ${caps.maxRatio} to 1; refused as a possible gzip bomb`,
          ),
        )
      done(null, chunk)
    },
  })
}

/**
 * The data of a gzip file, expanded as it is read (concatenated members too, as gzip -d reads them),
 * stopped by the caps. A damaged stream is an InputFormatError.
 */
export async function* readGzip(path: string, caps: InflateCaps = INFLATE_CAPS): AsyncGenerator<Buffer> {
  const {size} = await stat(path)
  const gunzip = createGunzip({chunkSize: 64 * 1024})
  const limit = capped(size, caps, 'the gzip data')
  const done = pipeline(createReadStream(path), gunzip, limit)
  done.catch(() => undefined) // reported through the iteration below
  try {
    for await (const chunk of limit) yield chunk as Buffer
    await done
  } catch (error) {
    throw gzipError(error)
  } finally {
    limit.destroy()
  }
}

/**
 * Expand the gzip file `path` into `dest`, a new file (created exclusively, 0600), under the caps.
 * `signal` (an untrusted caller's deadline or cancel) stops the expansion between chunks.
 */
export async function gunzipToFile(
  path: string,
  dest: string,
  caps: InflateCaps = INFLATE_CAPS,
  signal?: AbortSignal,
): Promise<void> {
  const {size} = await stat(path)
  try {
    await pipeline(
      createReadStream(path),
      createGunzip({chunkSize: 64 * 1024}),
      capped(size, caps, 'the gzip data'),
      createWriteStream(dest, {flags: 'wx', mode: 0o600}),
      signal ? {signal} : {},
    )
  } catch (error) {
    if (signal?.aborted) throw abortedBy(signal)
    throw gzipError(error)
  }
}

function gzipError(error: unknown): Error {
  if (error instanceof InputFormatError) return error
  const code = (error as {code?: string}).code
  if (typeof code === 'string' && code.startsWith('Z_'))
    return new InputFormatError(
      `the gzip data is damaged (${(error as Error).message}); compress the file again, or give it uncompressed`,
    )
  return error instanceof Error ? error : new Error(String(error))
}
