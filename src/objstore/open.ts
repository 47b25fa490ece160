import {createTransport} from '../api/transport.js'
import {ObjectStore} from './client.js'
import {processInputs, resolveStoreConfig} from './config.js'
import {instanceRoleProvider, webIdentityProvider} from './remote-credentials.js'
import {type ObjectSource, openObjectSource} from './source.js'
import {ObjectTarget, type ObjectTargetOptions} from './target.js'
import {parseObjectUrl} from './url.js'

/**
 * The entries the output module and the readers call for an `s3://` value (loaded with import() only
 * then, so nothing of this folder is parsed by a run that writes local files): one store per run, from
 * the process's environment and AWS files; a target for a path written; a source for a path read.
 */
export interface StoreOptions {
  signal?: AbortSignal | undefined
  debug?: ((line: string) => void) | undefined
  timeoutMs?: number | undefined
}

export async function openStore(options: StoreOptions = {}): Promise<ObjectStore> {
  const transport = createTransport()
  const config = await resolveStoreConfig(processInputs(), {
    webIdentity: (inputs) => webIdentityProvider(inputs, transport),
    instance: (env) => instanceRoleProvider(env, transport),
  })
  return new ObjectStore({
    config,
    transport,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    debug: options.debug,
  })
}

/** `--out s3://bucket/key` and the like: an OutputTarget (src/io/output.ts) whose commit makes it appear. */
export function openObjectOutput(
  store: ObjectStore,
  value: string,
  flag: string,
  onFailure: (error: Error) => void,
  options?: ObjectTargetOptions,
): ObjectTarget {
  return new ObjectTarget(store, parseObjectUrl(value, flag), onFailure, options)
}

/** A file read from `s3://bucket/key`: opened (errors now), then streamed. */
export async function openObjectInput(
  store: ObjectStore,
  value: string,
  flag: string,
): Promise<ObjectSource> {
  return openObjectSource(store, parseObjectUrl(value, flag))
}
