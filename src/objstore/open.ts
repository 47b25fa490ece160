import {createTransport, type Transport} from '../api/transport.js'
import {ObjectStore} from './client.js'
import {processInputs, resolveStoreConfig, type StoreConfig} from './config.js'
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

/** What every store of a process shares: the configuration, resolved once, and the transport. */
export interface StoreBase {
  config: StoreConfig
  transport: Transport
}

/** The AWS chain read once (environment, profiles, web identity, instance role): no request yet. */
export async function resolveStore(): Promise<StoreBase> {
  const transport = createTransport()
  const config = await resolveStoreConfig(processInputs(), {
    webIdentity: (inputs) => webIdentityProvider(inputs, transport),
    instance: (env) => instanceRoleProvider(env, transport),
  })
  return {config, transport}
}

/** A store on a resolved base, with a caller's signal (a run's Ctrl-C) and debug lines. */
export function storeWith(base: StoreBase, options: StoreOptions = {}): ObjectStore {
  return new ObjectStore({
    config: base.config,
    transport: base.transport,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    debug: options.debug,
  })
}

export async function openStore(options: StoreOptions = {}): Promise<ObjectStore> {
  return storeWith(await resolveStore(), options)
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
