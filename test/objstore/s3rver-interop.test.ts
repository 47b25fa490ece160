import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import S3rver from 's3rver'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {createTransport} from '../../src/api/transport.js'
import {ExitCode, InvalidKeyError} from '../../src/errors.js'
import {ObjectStore} from '../../src/objstore/client.js'
import {openObjectSource} from '../../src/objstore/source.js'
import {ObjectTarget} from '../../src/objstore/target.js'
import {fixedCredentials, readAll} from './fixture.js'

/**
 * Interoperability with an S3 emulator written by others (s3rver 3.7.1, MIT, a devDependency), on
 * loopback: the same client that passes our own test server (test/helpers/s3-server.ts) must pass theirs.
 * s3rver checks the access key ID against its account (S3RVER) but not SigV4 signatures ("Signature
 * version 4 calculation is unimplemented" in its authentication middleware): the signer's correctness
 * rests on AWS's published examples (sigv4.test.ts) and on our server's strict check.
 */
let server: S3rver
let dir: string
let endpoint: URL

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 's3rver-'))
  server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: dir,
    configureBuckets: [{name: 'exports'}],
  })
  const {port} = await server.run()
  endpoint = new URL(`http://127.0.0.1:${port}`)
})
afterAll(async () => {
  await server.close()
  rmSync(dir, {recursive: true, force: true})
})

function store(accessKeyId = 'S3RVER'): ObjectStore {
  return new ObjectStore({
    config: {
      region: 'us-east-1',
      regionSource: 'AWS_REGION',
      endpoint,
      addressing: 'path',
      credentials: fixedCredentials({accessKeyId, secretAccessKey: 'S3RVER'}),
    },
    transport: createTransport(),
    attempts: 1,
  })
}

describe('against s3rver, an independent S3 emulator', () => {
  it('put, head, get, list (with a prefix), delete; keys with spaces, + and non-ASCII', async () => {
    const s = store()
    const key = 'run 1/state=CA/fips=06001/ü+x.csv'
    await s.putObject('exports', key, [Buffer.from('id\n1\n')])
    await s.putObject('exports', 'other/y.csv', [Buffer.from('z')])
    expect((await s.headObject('exports', key))?.size).toBe(5)
    expect((await readAll((await s.getObject('exports', key)).body)).toString()).toBe('id\n1\n')
    const listed: string[] = []
    for await (const o of s.listObjects('exports', 'run 1/')) listed.push(o.key)
    expect(listed).toEqual([key])
    await s.deleteObject('exports', key)
    expect(await s.headObject('exports', key)).toBeUndefined()
  })

  it('the object target: a multipart upload of 5 MiB parts appears whole at commit; an aborted one leaves nothing', async () => {
    const s = store()
    const part = 5 * 1024 * 1024
    const body = Buffer.alloc(2 * part + 1234)
    for (let i = 0; i < body.length; i += 4096) body[i] = i & 0xff
    const target = new ObjectTarget(s, {bucket: 'exports', key: 'big/data.ndjson'}, () => undefined, {
      partSize: part,
    })
    for (let at = 0; at < body.length; at += 1 << 20)
      if (!target.write(body.subarray(at, at + (1 << 20)))) await target.drain()
    expect(await s.headObject('exports', 'big/data.ndjson')).toBeUndefined()
    await target.commit()
    const source = await openObjectSource(s, {bucket: 'exports', key: 'big/data.ndjson'})
    expect((await readAll(source.stream)).equals(body)).toBe(true)

    const aborted = new ObjectTarget(s, {bucket: 'exports', key: 'big/aborted.ndjson'}, () => undefined, {
      partSize: part,
    })
    aborted.write(Buffer.alloc(part + 1))
    await aborted.drain()
    await aborted.abort()
    expect(await s.headObject('exports', 'big/aborted.ndjson')).toBeUndefined()
  })

  it('an access key it does not know is refused: InvalidAccessKeyId, one line, exit 4', async () => {
    const e = await store('AKIANOTS3RVER0000001')
      .putObject('exports', 'k', [Buffer.from('x')])
      .catch((error: unknown) => error)
    expect(e).toBeInstanceOf(InvalidKeyError)
    expect((e as InvalidKeyError).exitCode).toBe(ExitCode.auth)
    expect((e as Error).message).toBe(
      `s3://exports/k: the store does not know the access key AKIA…0001 (InvalidAccessKeyId, HTTP 403); check the credentials from the test and the endpoint ${endpoint.host}`,
    )
  })
})
