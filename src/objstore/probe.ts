import {randomBytes} from 'node:crypto'

import type {ObjectStore} from './client.js'
import {type ObjectUrl, joinKey} from './url.js'

/**
 * Before a run sends anything to the service, check that sfl may write where it was told to (issue 34,
 * "before any request to the service where it can be checked first"): a small object is written beside
 * the target and removed at once. That one PutObject meets every refusal a run would meet later (refused
 * credentials, a missing bucket, a bucket in another region, a denied write, a store that keeps
 * throttling), each as the one line src/objstore/errors.ts makes, naming the location as the user wrote
 * it. Its name begins with a dot (`.sfl-probe-<hex>`), which the engines that read an export skip (Hive,
 * Spark, Trino, Athena ignore `_` and `.` names), so a probe a killed process could not remove is never
 * read as data. The DeleteObject also proves the permission the run's lock object needs.
 */
export async function probeWrite(store: ObjectStore, url: ObjectUrl, shown: string): Promise<void> {
  // beside the object (`dir/.file.csv.sfl-probe-…`) or under the prefix (`prefix/.sfl-probe-…`)
  const slash = url.key.lastIndexOf('/')
  const folder = url.key.slice(0, slash + 1)
  const name = url.key.slice(slash + 1)
  const key = joinKey(folder, `.${name ? `${name}.` : ''}sfl-probe-${randomBytes(6).toString('hex')}`)
  const naming = {shown, doing: 'checking that sfl may write there (a probe object, removed at once)'}
  await store.putObject(url.bucket, key, [Buffer.from('sfl probe\n')], 'text/plain', naming)
  await store.deleteObject(url.bucket, key, {...naming, doing: 'removing its probe object'})
}
