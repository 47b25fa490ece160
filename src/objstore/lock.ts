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
export type LockOutcome = 'acquired' | {held: string | undefined}

/**
 * Take the lock, or say who holds it (the holder's token, undefined when it cannot be read). `stale`
 * decides whether a lock found in place was left by a run that is gone (the caller knows: a run of this
 * machine and this local state folder, whose local lock the caller now holds): such a lock is removed
 * and taken, once; a lock taken by another run meanwhile still wins.
 */
export async function acquireLockObject(
  store: ObjectStore,
  bucket: string,
  key: string,
  token: string,
  stale: (held: string | undefined) => boolean = () => false,
): Promise<LockOutcome> {
  const first = await tryLock(store, bucket, key, token)
  if (first === 'acquired' || !stale(first.held)) return first
  await store.deleteObject(bucket, key, {doing: 'removing the lock of a run that is gone'})
  return tryLock(store, bucket, key, token)
}

async function tryLock(store: ObjectStore, bucket: string, key: string, token: string): Promise<LockOutcome> {
  const held = async (): Promise<LockOutcome> => ({
    held: await readSmall(store, bucket, key).catch(() => undefined),
  })
  if (await store.headObject(bucket, key)) return held()
  const body = [Buffer.from(token, 'utf8')]
  const put = await store.putObjectIfAbsent(bucket, key, body)
  if (put === 'exists') return held()
  if (put === 'unsupported') await store.putObject(bucket, key, body)
  // a store that ignored the condition lets the last writer win: only the one whose token is there holds it
  const there = await readSmall(store, bucket, key)
  return there === token ? 'acquired' : {held: there}
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
