import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {registerSecret} from '../../src/api/secrets.js'
import {
  ExitCode,
  ForbiddenError,
  InvalidKeyError,
  RateLimitExceededError,
  ServerError,
  ServerStatusError,
  SflError,
  UsageError,
} from '../../src/errors.js'
import {keyProblem} from '../../src/objstore/url.js'
import {KEY_ID, SECRET, TOKEN, fixedCredentials, readAll, startServer, storeOn} from './fixture.js'

async function failure(run: Promise<unknown>): Promise<SflError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(SflError)
  expect((error as Error).message.split('\n')).toHaveLength(1)
  return error as SflError
}

describe('each operation against the loopback S3 server (SigV4 checked on every request)', () => {
  it('PutObject, HeadObject, GetObject streamed, DeleteObject', async () => {
    const server = await startServer()
    const {store} = storeOn(server)
    const etag = await store.putObject(
      'exports',
      'a/b c/ü+$.csv',
      [Buffer.from('id\n1\n'), Buffer.from('2\n')],
      'text/csv',
    )
    expect(etag).toBe(server.object('exports', 'a/b c/ü+$.csv')?.etag)
    expect(server.object('exports', 'a/b c/ü+$.csv')?.body.toString()).toBe('id\n1\n2\n')
    expect(await store.headObject('exports', 'a/b c/ü+$.csv')).toMatchObject({size: 7, etag})
    const got = await store.getObject('exports', 'a/b c/ü+$.csv')
    expect(got.size).toBe(7)
    expect((await readAll(got.body)).toString()).toBe('id\n1\n2\n')
    await store.deleteObject('exports', 'a/b c/ü+$.csv')
    expect(server.keys('exports')).toEqual([])
    expect(await store.headObject('exports', 'a/b c/ü+$.csv')).toBeUndefined()
    await store.deleteObject('exports', 'never-there') // not an error, as on S3
    expect(server.log.map((r) => `${r.method} ${r.status}`)).toEqual([
      'PUT 200',
      'HEAD 200',
      'GET 200',
      'DELETE 204',
      'HEAD 404',
      'DELETE 204',
    ])
  })

  it('any key sfl accepts reaches the server as that key and comes back from a listing and a read unchanged', async () => {
    const server = await startServer()
    const {store} = storeOn(server)
    const segment = fc
      .string({unit: 'grapheme', minLength: 1, maxLength: 12})
      .filter((s) => !s.includes('/') && s !== '.' && s !== '..')
    const key = fc.array(segment, {minLength: 1, maxLength: 4}).map((parts) => parts.join('/'))
    await fc.assert(
      fc.asyncProperty(
        key.filter((k) => keyProblem(k) === undefined),
        async (k) => {
          await store.putObject('exports', k, [Buffer.from(k)])
          expect(server.object('exports', k)?.body.toString()).toBe(k)
          const listed: string[] = []
          for await (const o of store.listObjects('exports', k)) listed.push(o.key)
          expect(listed[0]).toBe(k)
          expect((await readAll((await store.getObject('exports', k)).body)).toString()).toBe(k)
          await store.deleteObject('exports', k)
        },
      ),
      {numRuns: 40},
    )
    expect(server.keys('exports')).toEqual([])
  })

  it('ListObjectsV2 follows continuation tokens to the last page, in key order, under the prefix only', async () => {
    const server = await startServer({pageSize: 3})
    for (let i = 9; i >= 0; i--) server.put('exports', `run/state=CA/fips=0600${i}/data.csv`, `x${i}`)
    server.put('exports', 'other/x', 'y')
    server.put('exports', 'run-not-this/x', 'y')
    const {store} = storeOn(server)
    const keys: string[] = []
    for await (const o of store.listObjects('exports', 'run/')) keys.push(`${o.key}:${o.size}`)
    expect(keys).toEqual(Array.from({length: 10}, (_, i) => `run/state=CA/fips=0600${i}/data.csv:2`))
    expect(server.log.filter((r) => r.query['list-type'] === '2')).toHaveLength(4)
  })

  it('a multipart upload is invisible until Complete, then whole; ListMultipartUploads finds open uploads; Abort leaves nothing', async () => {
    const server = await startServer()
    const {store} = storeOn(server)
    const id = await store.createMultipartUpload('exports', 'big.ndjson')
    const e1 = await store.uploadPart('exports', 'big.ndjson', id, 1, [Buffer.alloc(2048, 'a')])
    const e2 = await store.uploadPart('exports', 'big.ndjson', id, 2, [Buffer.from('tail')])
    expect(server.keys('exports')).toEqual([])
    const open = []
    for await (const u of store.listMultipartUploads('exports', '')) open.push(u)
    expect(open).toEqual([
      {key: 'big.ndjson', uploadId: id, initiated: expect.stringMatching(/^\d{4}-/) as string},
    ])
    const etag = await store.completeMultipartUpload('exports', 'big.ndjson', id, [
      {partNumber: 1, etag: e1},
      {partNumber: 2, etag: e2},
    ])
    expect(etag).toMatch(/^"[0-9a-f]{32}-2"$/)
    expect(server.object('exports', 'big.ndjson')?.body.toString()).toBe(`${'a'.repeat(2048)}tail`)

    const other = await store.createMultipartUpload('exports', 'gone.ndjson')
    await store.uploadPart('exports', 'gone.ndjson', other, 1, [Buffer.alloc(2048)])
    await store.abortMultipartUpload('exports', 'gone.ndjson', other)
    await store.abortMultipartUpload('exports', 'gone.ndjson', other) // already gone: fine
    expect(server.keys('exports')).toEqual(['big.ndjson'])
    expect(server.uploads.size).toBe(0)
  })

  it('ListMultipartUploads pages through key and upload-id markers, under the prefix', async () => {
    const server = await startServer({pageSize: 2})
    const {store} = storeOn(server)
    const ids = []
    for (const k of ['p/a', 'p/b', 'p/c', 'q/d', 'p/e'])
      ids.push(await store.createMultipartUpload('exports', k))
    const seen = []
    for await (const u of store.listMultipartUploads('exports', 'p/')) seen.push(u.key)
    expect(seen).toEqual(['p/a', 'p/b', 'p/c', 'p/e'])
  })

  it('a conditional put creates once, then answers "exists" (412), and never replaces the first', async () => {
    const server = await startServer()
    const {store} = storeOn(server)
    expect(await store.putObjectIfAbsent('exports', 'run/.lock', [Buffer.from('one')])).toBe('created')
    expect(await store.putObjectIfAbsent('exports', 'run/.lock', [Buffer.from('two')])).toBe('exists')
    expect(server.object('exports', 'run/.lock')?.body.toString()).toBe('one')
    const unsupported = await startServer({conditionalWrites: 'not-implemented'})
    expect(await storeOn(unsupported).store.putObjectIfAbsent('exports', 'k', [Buffer.from('x')])).toBe(
      'unsupported',
    )
  })

  it('virtual-hosted requests name the bucket in the host; path-style in the path', async () => {
    const server = await startServer()
    const {store} = storeOn(server)
    expect(store.urlFor('exports', 'a b/c').href).toBe(`${server.endpoint}/exports/a%20b/c`)
    const aws = storeOn(server, {}).store
    Object.assign(aws.config, {endpoint: undefined, addressing: 'virtual', region: 'eu-west-1'})
    expect(aws.urlFor('exports', 'k', [['uploads', '']]).href).toBe(
      'https://exports.s3.eu-west-1.amazonaws.com/k?uploads=',
    )
    // a dotted bucket would break the wildcard certificate: path-style for it
    expect(aws.urlFor('my.exports', 'k').href).toBe('https://s3.eu-west-1.amazonaws.com/my.exports/k')
  })

  it('session tokens are sent and signed; an expired one is refused in one line, exit 4', async () => {
    const server = await startServer({
      credentials: [{accessKeyId: KEY_ID, secretAccessKey: SECRET, sessionToken: TOKEN}],
    })
    const ok = storeOn(server, {credentials: fixedCredentials({sessionToken: TOKEN})}).store
    await ok.putObject('exports', 'k', [Buffer.from('x')])
    const expired = await startServer({
      credentials: [{accessKeyId: KEY_ID, secretAccessKey: SECRET, sessionToken: TOKEN, expired: true}],
    })
    const e = await failure(
      storeOn(expired, {
        credentials: fixedCredentials({sessionToken: TOKEN, source: 'AWS_SESSION_TOKEN'}),
      }).store.putObject('exports', 'k', [Buffer.from('x')]),
    )
    expect(e).toBeInstanceOf(InvalidKeyError)
    expect(e.exitCode).toBe(ExitCode.auth)
    expect(e.message).toBe(
      's3://exports/k: the store refused the session token from AWS_SESSION_TOKEN (ExpiredToken, HTTP 400); it has expired or is not valid: get new credentials',
    )
  })
})

describe('refusals: one line naming the location and what to do, the documented exit code, no retry', () => {
  it('an unknown access key: InvalidAccessKeyId, exit 4, one request', async () => {
    const server = await startServer()
    const {store} = storeOn(server, {
      credentials: fixedCredentials({
        accessKeyId: 'AKIAUNKNOWNKEY000099',
        source: 'the environment (AWS_ACCESS_KEY_ID)',
      }),
    })
    const e = await failure(store.putObject('exports', 'run/x.csv', [Buffer.from('x')]))
    expect(e).toBeInstanceOf(InvalidKeyError)
    expect(e.exitCode).toBe(ExitCode.auth)
    expect(e.message).toBe(
      `s3://exports/run/x.csv: the store does not know the access key AKIA…0099 (InvalidAccessKeyId, HTTP 403); check the credentials from the environment (AWS_ACCESS_KEY_ID) and the endpoint ${new URL(server.endpoint).host}`,
    )
    expect(server.log).toHaveLength(1)
  })

  it('a wrong secret: SignatureDoesNotMatch, exit 4, and the secret is in no line, not even under --debug', async () => {
    const server = await startServer()
    const wrong = 'wrongSecretAccessKey/ForTheTest+0000000007'
    registerSecret(wrong)
    const {store, recorded} = storeOn(server, {
      credentials: fixedCredentials({
        secretAccessKey: wrong,
        source: 'profile default in ~/.aws/credentials',
      }),
    })
    const e = await failure(store.putObject('exports', 'run/x.csv', [Buffer.from('x')]))
    expect(e).toBeInstanceOf(InvalidKeyError)
    expect(e.exitCode).toBe(ExitCode.auth)
    expect(e.message).toBe(
      "s3://exports/run/x.csv: the store refused the request's signature (SignatureDoesNotMatch, HTTP 403): the secret access key from profile default in ~/.aws/credentials does not match the access key AKIA…Y001; check it",
    )
    const everything = [e.message, e.stack ?? '', ...recorded.debug].join('\n')
    expect(recorded.debug.length).toBeGreaterThan(0)
    for (const secret of [wrong, SECRET]) {
      expect(everything).not.toContain(secret)
      expect(everything.toLowerCase()).not.toContain(secret.slice(4, 16).toLowerCase())
    }
    expect(server.log).toHaveLength(1)
  })

  it('a missing bucket: NoSuchBucket, exit 2 (as a missing --out-dir folder), no retry', async () => {
    const server = await startServer()
    const e = await failure(
      storeOn(server).store.putObject('no-such-bucket', 'run/x.csv', [Buffer.from('x')]),
    )
    expect(e).toBeInstanceOf(UsageError)
    expect(e.exitCode).toBe(ExitCode.usage)
    expect(e.message).toBe(
      `s3://no-such-bucket/run/x.csv: the bucket does not exist at ${new URL(server.endpoint).host} (NoSuchBucket, HTTP 404); create it first, or check the bucket name, the region (us-east-1) and the endpoint`,
    )
    expect(server.log).toHaveLength(1)
  })

  it('a denied write: AccessDenied, exit 4, naming what was being done', async () => {
    const server = await startServer()
    server.denyWrites('exports')
    const e = await failure(storeOn(server).store.createMultipartUpload('exports', 'run/x.parquet'))
    expect(e).toBeInstanceOf(ForbiddenError)
    expect(e.exitCode).toBe(ExitCode.auth)
    expect(e.message).toBe(
      's3://exports/run/x.parquet: access denied while starting an upload (AccessDenied, HTTP 403); the credentials from the test (AKIA…Y001) are not permitted there: ask for the permission, or choose another bucket or prefix',
    )
  })

  it('a missing object read: NoSuchKey, exit 2 (as a missing input file)', async () => {
    const server = await startServer()
    const e = await failure(storeOn(server).store.getObject('exports', 'run/none.csv'))
    expect(e.exitCode).toBe(ExitCode.usage)
    expect(e.message).toBe('s3://exports/run/none.csv: no such object (NoSuchKey, HTTP 404)')
  })

  it('the bucket in another region: exit 2, naming the region to set', async () => {
    const server = await startServer({region: 'eu-west-1'})
    const e = await failure(storeOn(server).store.putObject('exports', 'k', [Buffer.from('x')]))
    expect(e.exitCode).toBe(ExitCode.usage)
    expect(e.message).toBe(
      "s3://exports/k: the store wants another endpoint or region for this bucket (AuthorizationHeaderMalformed, HTTP 400): the region 'us-east-1' is wrong; expecting 'eu-west-1'; check AWS_REGION and AWS_ENDPOINT_URL_S3",
    )
  })

  it('a clock far off: RequestTimeTooSkewed, exit 2, set the clock', async () => {
    const server = await startServer()
    const {store} = storeOn(server, {now: () => new Date(Date.now() - 3_600_000)})
    const e = await failure(store.putObject('exports', 'k', [Buffer.from('x')]))
    expect(e.exitCode).toBe(ExitCode.usage)
    expect(e.message).toMatch(
      /clock is wrong by more than 15 minutes \(RequestTimeTooSkewed, HTTP 403\); set the system clock$/,
    )
  })
})

describe('retries: full-jitter backoff on throttling, 5xx and resets, never on another 4xx', () => {
  it('503 SlowDown twice, then success: three requests, two waits of random x base x 2^n', async () => {
    const server = await startServer()
    server.inject(
      {kind: 'status', status: 503, code: 'SlowDown'},
      {kind: 'status', status: 503, code: 'SlowDown'},
    )
    const {store, recorded} = storeOn(server, {backoff: {baseMs: 100, capMs: 20_000}})
    await store.putObject('exports', 'k', [Buffer.from('x')])
    expect(server.log.map((r) => `${r.status} ${r.code}`)).toEqual(['503 SlowDown', '503 SlowDown', '200 '])
    expect(recorded.sleeps).toEqual([50, 100]) // random 0.5 x min(cap, 100 x 2^attempt)
    expect(server.object('exports', 'k')?.body.toString()).toBe('x')
  })

  it('still throttled after every attempt: RateLimitExceededError, exit 5, one line with the count', async () => {
    const server = await startServer()
    for (let i = 0; i < 4; i++) server.inject({kind: 'status', status: 503, code: 'SlowDown'})
    const {store, recorded} = storeOn(server, {attempts: 4})
    const e = await failure(store.putObject('exports', 'run/x.csv', [Buffer.from('x')]))
    expect(e).toBeInstanceOf(RateLimitExceededError)
    expect(e.exitCode).toBe(ExitCode.rateLimit)
    expect(e.message).toBe(
      's3://exports/run/x.csv: the store is throttling requests while writing (SlowDown, HTTP 503) after 4 attempts; run again later or with fewer runs at once',
    )
    expect(server.log).toHaveLength(4)
    expect(recorded.sleeps).toHaveLength(3)
    expect(server.keys('exports')).toEqual([])
  })

  it('500 InternalError and RequestTimeout (400) are retried; after the attempts, exit 6', async () => {
    const server = await startServer()
    server.inject(
      {kind: 'status', status: 400, code: 'RequestTimeout'},
      {kind: 'status', status: 500, code: 'InternalError'},
    )
    const {store} = storeOn(server)
    await store.putObject('exports', 'k', [Buffer.from('x')])
    expect(server.log.map((r) => r.status)).toEqual([400, 500, 200])
    for (let i = 0; i < 2; i++) server.inject({kind: 'status', status: 500, code: 'InternalError'})
    const e = await failure(storeOn(server, {attempts: 2}).store.getObject('exports', 'k'))
    expect(e).toBeInstanceOf(ServerStatusError)
    expect(e.exitCode).toBe(ExitCode.server)
    expect(e.message).toBe(
      's3://exports/k: the store failed while reading (InternalError, HTTP 500) after 2 attempts: injected fault; run again later',
    )
  })

  it('429 is retried; 400 and 403 of other kinds are not', async () => {
    const server = await startServer()
    server.inject({kind: 'status', status: 429, code: 'TooManyRequests'})
    await storeOn(server).store.putObject('exports', 'k', [Buffer.from('x')])
    expect(server.log.map((r) => r.status)).toEqual([429, 200])
    server.inject({kind: 'status', status: 400, code: 'InvalidArgument'})
    const e = await failure(storeOn(server).store.putObject('exports', 'k', [Buffer.from('x')]))
    expect(e.exitCode).toBe(ExitCode.server)
    expect(e.message).toBe(
      's3://exports/k: the store refused writing (InvalidArgument, HTTP 400): injected fault',
    )
    expect(server.log.map((r) => r.status)).toEqual([429, 200, 400])
  })

  it('a connection reset mid-upload is retried with the same part, and the object is whole', async () => {
    const server = await startServer()
    const {store} = storeOn(server)
    const id = await store.createMultipartUpload('exports', 'big')
    server.inject({kind: 'reset', match: (r) => r.query['partNumber'] === '1'})
    const body = Buffer.alloc(256 * 1024, 'z')
    const etag = await store.uploadPart('exports', 'big', id, 1, [
      body.subarray(0, 1000),
      body.subarray(1000),
    ])
    await store.completeMultipartUpload('exports', 'big', id, [{partNumber: 1, etag}])
    expect(server.object('exports', 'big')?.body.equals(body)).toBe(true)
    expect(server.log.filter((r) => r.query['partNumber'] === '1').map((r) => r.code)).toEqual(['reset', ''])
  })

  it('resets on every attempt: ServerError, exit 6, naming the store and the code', async () => {
    const server = await startServer()
    for (let i = 0; i < 3; i++) server.inject({kind: 'reset'})
    const e = await failure(
      storeOn(server, {attempts: 3}).store.putObject('exports', 'k', [Buffer.alloc(70_000)]),
    )
    expect(e).toBeInstanceOf(ServerError)
    expect(e.exitCode).toBe(ExitCode.server)
    expect(e.message).toMatch(
      new RegExp(
        `^s3://exports/k: no answer from the store at ${new URL(server.endpoint).host} while writing \\((ECONNRESET|EPIPE|UND_ERR_SOCKET)\\) after 3 attempts; check the endpoint and the network$`,
      ),
    )
  })

  it('a Complete answered 200 with an <Error> inside is retried, and the object appears once', async () => {
    const server = await startServer()
    const {store, recorded} = storeOn(server)
    const id = await store.createMultipartUpload('exports', 'k')
    const etag = await store.uploadPart('exports', 'k', id, 1, [Buffer.from('only part')])
    server.inject({kind: 'complete-error', code: 'InternalError', match: (r) => r.method === 'POST'})
    await store.completeMultipartUpload('exports', 'k', id, [{partNumber: 1, etag}])
    expect(server.object('exports', 'k')?.body.toString()).toBe('only part')
    expect(recorded.sleeps).toHaveLength(1)
  })

  it("a Complete whose answer was lost: the retry finds no upload, and the object's multipart ETag says it completed", async () => {
    const server = await startServer()
    const {store} = storeOn(server)
    const id = await store.createMultipartUpload('exports', 'k')
    const etag = await store.uploadPart('exports', 'k', id, 1, [Buffer.from('only part')])
    // the first Complete is done by someone else's hand (as if its answer was lost); ours then finds no upload
    await storeOn(server).store.completeMultipartUpload('exports', 'k', id, [{partNumber: 1, etag}])
    expect(await store.completeMultipartUpload('exports', 'k', id, [{partNumber: 1, etag}])).toMatch(/-1"$/)
  })

  it('a listing cut mid-answer is asked again, and every key is listed once', async () => {
    const server = await startServer({pageSize: 2})
    for (const k of ['a', 'b', 'c']) server.put('exports', k, k)
    server.inject({
      kind: 'cut-body',
      bytes: 60,
      match: (r) => r.query['list-type'] === '2' && !r.query['continuation-token'],
    })
    const keys: string[] = []
    for await (const o of storeOn(server).store.listObjects('exports', '')) keys.push(o.key)
    expect(keys).toEqual(['a', 'b', 'c'])
    expect(server.log.map((r) => r.code)).toEqual(['cut-body', '', ''])
  })

  it("the run's signal ends a wait between attempts at once", async () => {
    const server = await startServer()
    server.inject({kind: 'status', status: 503, code: 'SlowDown'})
    const controller = new AbortController()
    const {store} = storeOn(server, {
      signal: controller.signal,
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason as Error))
          controller.abort(new Error('interrupted'))
        }),
    })
    await expect(store.putObject('exports', 'k', [Buffer.from('x')])).rejects.toThrow('interrupted')
    expect(server.log).toHaveLength(1)
  })
})
