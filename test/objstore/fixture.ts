import {afterEach} from 'vitest'

import {clearSecrets} from '../../src/api/secrets.js'
import {createTransport} from '../../src/api/transport.js'
import {ObjectStore, type ObjectStoreOptions} from '../../src/objstore/client.js'
import type {Credentials, StoreConfig} from '../../src/objstore/config.js'
import {S3TestServer, type S3ServerOptions} from '../helpers/s3-server.js'

/** Credentials of the tests' store: made-up values in AWS's documented example format. */
export const KEY_ID = 'AKIAS3CORETESTKEY001'
export const SECRET = 'sfl/S3coreTestSecret+0123456789abcdefGHIJ'
export const TOKEN = 'FwoGZXIvYXdzEXAMPLEsessionTOKENfor-sfl-tests-0123456789'

export function fixedCredentials(c: Partial<Credentials> = {}): StoreConfig['credentials'] {
  const creds: Credentials = {accessKeyId: KEY_ID, secretAccessKey: SECRET, source: 'the test', ...c}
  return {source: creds.source, get: async () => creds}
}

export async function startServer(options: Partial<S3ServerOptions> = {}): Promise<S3TestServer> {
  const server = await S3TestServer.start({
    credentials: [{accessKeyId: KEY_ID, secretAccessKey: SECRET}],
    buckets: ['exports'],
    minPartSize: 1024,
    ...options,
  })
  servers.push(server)
  return server
}

const servers: S3TestServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close()
  clearSecrets()
})

/** Waits between attempts, recorded instead of slept (no test waits for real). */
export interface Recorded {
  sleeps: number[]
  debug: string[]
}

/** A store on `server`, path-style, retries with recorded waits. */
export function storeOn(
  server: S3TestServer,
  overrides: Partial<ObjectStoreOptions> & {credentials?: StoreConfig['credentials']} = {},
): {store: ObjectStore; recorded: Recorded} {
  const recorded: Recorded = {sleeps: [], debug: []}
  const {credentials, ...rest} = overrides
  const store = new ObjectStore({
    config: {
      region: 'us-east-1',
      regionSource: 'AWS_REGION',
      endpoint: new URL(server.endpoint),
      addressing: 'path',
      credentials: credentials ?? fixedCredentials(),
    },
    transport: createTransport(),
    sleep: async (ms) => {
      recorded.sleeps.push(ms)
    },
    random: () => 0.5,
    debug: (line) => recorded.debug.push(line),
    ...rest,
  })
  return {store, recorded}
}

/** Every byte of an async iterable. */
export async function readAll(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const c of body) chunks.push(c)
  return Buffer.concat(chunks)
}
