// Types for the three undici files src/api/undici-parts.ts imports by path (undici ships types for its
// package entry only). The shapes are those of undici 7, which package.json pins exactly.
declare module 'undici/lib/api/index.js' {
  import type {Dispatcher} from 'undici'
  const api: {
    request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>
  }
  export default api
}
declare module 'undici/lib/dispatcher/dispatcher.js' {
  const Dispatcher: {prototype: object}
  export default Dispatcher
}
declare module 'undici/lib/dispatcher/env-http-proxy-agent.js' {
  import type {Dispatcher} from 'undici'
  const EnvHttpProxyAgent: new () => Dispatcher
  export default EnvHttpProxyAgent
}
