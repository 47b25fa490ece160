import {Readable} from 'node:stream'

import {isRetryableNetworkError} from '../api/client.js'
import {ServerError} from '../errors.js'
import type {ObjectBody, ObjectStore} from './client.js'
import {type ObjectUrl, formatObjectUrl} from './url.js'

/**
 * An object's bytes as a stream, for the readers (`stats`, `changes`, a manifest): the object is opened
 * first, so a missing object or refused credentials fail before the stream is handed over, then read as it
 * arrives (memory stays at a chunk or two, whatever the size). A connection cut mid-body is resumed from
 * the byte where it stopped (`Range`), only while the object is still the one begun (`If-Match` its ETag):
 * a reader never gets the first half of one version and the rest of another.
 */
export interface ObjectSource {
  size: number | undefined
  etag: string | undefined
  stream: Readable
}

export interface SourceOptions {
  /** Resumes after a cut, at most. Default 5. */
  resumes?: number | undefined
}

export async function openObjectSource(
  store: ObjectStore,
  url: ObjectUrl,
  options: SourceOptions = {},
): Promise<ObjectSource> {
  const first = await store.getObject(url.bucket, url.key)
  const resumes = options.resumes ?? 5
  async function* bytes(): AsyncGenerator<Buffer> {
    let current: ObjectBody = first
    let offset = 0
    for (let resumed = 0; ; resumed++) {
      try {
        for await (const chunk of current.body) {
          offset += chunk.length
          yield chunk
        }
        if (first.size !== undefined && offset !== first.size)
          throw new ServerError(
            `${formatObjectUrl(url)}: the object ended after ${offset} of ${first.size} bytes; read it again`,
          )
        return
      } catch (error) {
        const canResume = first.etag !== undefined && first.size !== undefined && offset < first.size
        if (!canResume || resumed >= resumes || !isRetryableNetworkError(error)) throw error
      } finally {
        current.cancel()
      }
      // the rest of the same version; a changed object answers 412, which ends the read with its error
      current = await store.getObject(url.bucket, url.key, {offset, ifMatch: first.etag ?? ''})
    }
  }
  return {size: first.size, etag: first.etag, stream: Readable.from(bytes(), {objectMode: false})}
}
