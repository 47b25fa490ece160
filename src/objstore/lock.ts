import type {ObjectStore} from './client.js'

/**
 * A lock object under a prefix, so that a second run writing the same prefix at the same time is refused
 * (issue 34). Its body is the holder's token (the caller's: host, pid, a random part), read back to be sure.
 *
 * Where the store has conditional writes (S3 since 2024, MinIO, R2), `If-None-Match: *` makes the create
 * atomic: of two runs, exactly one gets 'acquired'. Where it answers 501 or silently ignores the condition,
 * the fallback is a check, not a guarantee: a HEAD before the write and a read-back after it catch a run
 * that started earlier or wrote later, but two runs starting within the same moment can both pass. The
 * docs say so (docs/exports.md, "s3://").
 */
export type LockOutcome = 'acquired' | 'held'

export async function acquireLockObject(
  store: ObjectStore,
  bucket: string,
  key: string,
  token: string,
): Promise<LockOutcome> {
  if (await store.headObject(bucket, key)) return 'held'
  const body = [Buffer.from(token, 'utf8')]
  const put = await store.putObjectIfAbsent(bucket, key, body)
  if (put === 'exists') return 'held'
  if (put === 'unsupported') await store.putObject(bucket, key, body)
  // a store that ignored the condition lets the last writer win: only the one whose token is there holds it
  return (await readSmall(store, bucket, key)) === token ? 'acquired' : 'held'
}

/** Remove the lock if it is still ours (another run's lock is never removed). */
export async function releaseLockObject(
  store: ObjectStore,
  bucket: string,
  key: string,
  token: string,
): Promise<boolean> {
  if ((await store.headObject(bucket, key)) === undefined) return false
  if ((await readSmall(store, bucket, key)) !== token) return false
  await store.deleteObject(bucket, key)
  return true
}

/** A lock's body: a token is short, so a lock larger than 64 KiB is not one of ours. */
async function readSmall(store: ObjectStore, bucket: string, key: string): Promise<string | undefined> {
  const object = await store.getObject(bucket, key)
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of object.body) {
      size += chunk.length
      if (size > 64 * 1024) return undefined
      chunks.push(chunk)
    }
  } finally {
    object.cancel()
  }
  return Buffer.concat(chunks).toString('utf8')
}
