import type {ObjectStore} from './client.js'

/**
 * Abort the multipart uploads left under a prefix by runs that were killed before they could abort their
 * own (their parts are invisible to readers but kept, and billed, until aborted). Only uploads started
 * before `startedBefore` are touched, so an upload of a run still going on is left alone; the caller
 * holds the prefix's lock (src/objstore/lock.ts), so no other sfl run is writing there.
 *
 * `ours` narrows it to the keys sfl writes there (a county file, the manifest, the rejects): an upload of
 * another program under the same prefix is none of sfl's business.
 *
 * Returns the keys whose uploads were aborted, in listing order.
 */
export async function abortAbandonedUploads(
  store: ObjectStore,
  bucket: string,
  prefix: string,
  startedBefore: Date,
  ours: (key: string) => boolean = () => true,
): Promise<string[]> {
  const stale: Array<{key: string; uploadId: string}> = []
  for await (const upload of store.listMultipartUploads(bucket, prefix)) {
    if (!ours(upload.key)) continue
    const initiated = Date.parse(upload.initiated)
    // an upload whose start time cannot be read is not known to be abandoned: left alone
    if (Number.isFinite(initiated) && initiated < startedBefore.getTime()) stale.push(upload)
  }
  for (const u of stale) await store.abortMultipartUpload(bucket, u.key, u.uploadId)
  return stale.map((u) => u.key)
}
