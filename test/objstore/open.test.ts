import {join} from 'node:path'

import {afterEach, describe, expect, it, vi} from 'vitest'

import {ExitCode, MissingKeyError, UsageError} from '../../src/errors.js'
import {openObjectInput, openObjectOutput, openStore} from '../../src/objstore/open.js'
import {tempDir} from '../helpers/tmp.js'
import {KEY_ID, SECRET, readAll, startServer} from './fixture.js'

/**
 * The entries the wiring calls, on the process's own environment (stubbed here, restored after): a store
 * from the AWS chain, a target for a path written, a source for a path read. The instance role is turned
 * off, so nothing is ever sent to the metadata address.
 */
afterEach(() => vi.unstubAllEnvs())

function environment(env: Record<string, string | undefined>): void {
  const dir = tempDir()
  const all: Record<string, string | undefined> = {
    AWS_ACCESS_KEY_ID: undefined,
    AWS_SECRET_ACCESS_KEY: undefined,
    AWS_SESSION_TOKEN: undefined,
    AWS_PROFILE: undefined,
    AWS_DEFAULT_PROFILE: undefined,
    AWS_REGION: undefined,
    AWS_DEFAULT_REGION: undefined,
    AWS_ENDPOINT_URL: undefined,
    AWS_WEB_IDENTITY_TOKEN_FILE: undefined,
    AWS_ROLE_ARN: undefined,
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
    AWS_CONFIG_FILE: join(dir, 'no-config'),
    AWS_EC2_METADATA_DISABLED: 'true',
    ...env,
  }
  for (const [k, v] of Object.entries(all)) vi.stubEnv(k, v)
}

describe('the entries for s3:// values', () => {
  it('a store from the environment; --out s3://... written through the target; read back through the source', async () => {
    const server = await startServer()
    environment({
      AWS_ACCESS_KEY_ID: KEY_ID,
      AWS_SECRET_ACCESS_KEY: SECRET,
      AWS_ENDPOINT_URL_S3: server.endpoint,
    })
    const store = await openStore()
    expect(store.config.addressing).toBe('path')
    const target = openObjectOutput(store, 's3://exports/2026-11/ca.csv', '--out', () => undefined)
    target.write('id\n1\n')
    expect(server.keys('exports')).toEqual([])
    await target.commit()
    const source = await openObjectInput(store, 's3://exports/2026-11/ca.csv', 'FILE')
    expect((await readAll(source.stream)).toString()).toBe('id\n1\n')
  })

  it('a bad location is refused before any request, exit 2', async () => {
    const server = await startServer()
    environment({
      AWS_ACCESS_KEY_ID: KEY_ID,
      AWS_SECRET_ACCESS_KEY: SECRET,
      AWS_ENDPOINT_URL_S3: server.endpoint,
    })
    const store = await openStore()
    expect(() => openObjectOutput(store, 's3://Exports/x.csv', '--out', () => undefined)).toThrow(UsageError)
    await expect(openObjectInput(store, 's3://exports/', 'FILE')).rejects.toThrow(
      'FILE s3://exports/: names a folder-like prefix, not an object; end it with a file name (s3://exports/name.csv)',
    )
    expect(server.log).toEqual([])
  })

  it('no credentials anywhere and the instance role off: exit 4 before any request', async () => {
    environment({})
    const e = await openStore().catch((error: unknown) => error)
    expect(e).toBeInstanceOf(MissingKeyError)
    expect((e as MissingKeyError).exitCode).toBe(ExitCode.auth)
  })
})
