// the types of the undici files imported by path (dts-bundle-generator compiles only what is referenced)
// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- an ambient module file, not one to import
/// <reference path="./undici-internals.d.ts" />
import api from 'undici/lib/api/index.js'
import DispatcherClass from 'undici/lib/dispatcher/dispatcher.js'
import EnvHttpProxyAgent from 'undici/lib/dispatcher/env-http-proxy-agent.js'
import type {Dispatcher} from 'undici'

/**
 * The part of undici a request needs: the request API and the proxy-aware agent, without the fetch,
 * WebSocket, EventSource and cache modules the package entry loads (bundled, the entry's chunk is 1.09 MB
 * against 0.55 MB and took about 40 ms longer to load and send one request, on Node 20 and on Node 24).
 *
 * These are paths inside undici, not its public API. They are safe because the build bundles them: what
 * runs is the undici version package-lock.json pins (package.json pins it exactly), never one a user's
 * install resolves. If an upgrade moves the files the build fails, and test/api/undici-parts.test.ts
 * checks the agent still tunnels through a proxy.
 */
export const request = (
  dispatcher: Dispatcher,
  options: Dispatcher.RequestOptions,
): Promise<Dispatcher.ResponseData> => api.request.call(dispatcher, options)

// What undici's entry does: a ProxyAgent tunnels through dispatcher.connect(), which lives on the prototype.
Object.assign(DispatcherClass.prototype, api)

export {EnvHttpProxyAgent}
