import {describe, expect, expectTypeOf, it} from 'vitest'

import {ExitCode, ForbiddenError, RateLimitExceededError} from '../../src/errors.js'
import type {OutputTarget} from '../../src/io/output.js'
import {ObjectTarget} from '../../src/objstore/target.js'
import {startServer, storeOn} from './fixture.js'

const url = {bucket: 'exports', key: 'run/state=CA/fips=06001/data.ndjson'}

/** Write `total` bytes in `chunk`-byte pieces as the output module does: honouring write() === false. */
async function pump(target: ObjectTarget, total: number, chunk: number): Promise<Buffer> {
  const all = Buffer.alloc(total)
  for (let i = 0; i < total; i++) all[i] = (i * 7 + (i >> 10)) & 0xff
  for (let at = 0; at < total; at += chunk) {
    if (!target.write(all.subarray(at, Math.min(total, at + chunk)))) await target.drain()
  }
  return all
}

describe('the object target (the OutputTarget seam of src/io/output.ts)', () => {
  it('fits OutputTarget: write, drain, commit, abort', () => {
    expectTypeOf<ObjectTarget>().toMatchTypeOf<OutputTarget>()
  })

  it('an object smaller than a part is one PutObject at commit, nothing before', async () => {
    const server = await startServer()
    const failures: Error[] = []
    const target = new ObjectTarget(storeOn(server).store, url, (e) => failures.push(e), {partSize: 1024})
    expect(target.write('{"a":1}\n')).toBe(true)
    expect(target.write(Buffer.from('{"a":2}\n'))).toBe(true)
    await target.drain()
    expect(server.log).toHaveLength(0)
    await target.commit()
    expect(server.log.map((r) => `${r.method} ${r.status}`)).toEqual(['PUT 200'])
    expect(server.object('exports', url.key)?.body.toString()).toBe('{"a":1}\n{"a":2}\n')
    expect(failures).toEqual([])
  })

  it('a caller that reuses its buffer after write() does not change what was sent (the bytes are copied)', async () => {
    const server = await startServer()
    const target = new ObjectTarget(storeOn(server).store, url, () => undefined, {partSize: 1024})
    const scratch = Buffer.alloc(300)
    const expected: Buffer[] = []
    for (let i = 0; i < 20; i++) {
      scratch.fill(65 + i) // the same buffer, refilled after every write, as a batch writer may
      expected.push(Buffer.from(scratch))
      if (!target.write(scratch)) await target.drain()
    }
    await target.commit()
    expect(server.object('exports', url.key)?.body.equals(Buffer.concat(expected))).toBe(true)
    expect(target.heldBytes).toBe(0)
  })

  it('a small object holds what it needs, not a whole part', async () => {
    const server = await startServer()
    const target = new ObjectTarget(storeOn(server).store, url, () => undefined)
    target.write('{"a":1}\n')
    expect(target.heldBytes).toBe(64 * 1024)
    await target.commit()
    expect(target.heldBytes).toBe(0)
  })

  it('an empty run commits an empty object (an empty county still gets its file)', async () => {
    const server = await startServer()
    const target = new ObjectTarget(storeOn(server).store, url, () => undefined)
    await target.commit()
    expect(server.object('exports', url.key)?.body.length).toBe(0)
  })

  it('many parts: invisible until commit, then whole and byte-exact; memory held stays within (in flight + 1) parts', async () => {
    const server = await startServer()
    const partSize = 4096
    const target = new ObjectTarget(storeOn(server).store, url, () => undefined, {partSize, partsInFlight: 2})
    const sent = await pump(target, 50 * partSize + 123, 1000)
    expect(server.keys('exports')).toEqual([])
    await target.commit()
    const stored = server.object('exports', url.key)
    expect(stored?.body.equals(sent)).toBe(true)
    expect(stored?.etag).toMatch(/-51"$/)
    expect(server.log.filter((r) => r.query['partNumber'] !== undefined)).toHaveLength(51)
    // parts of exactly partSize: two in flight and one filling
    expect(target.peakHeldBytes).toBeLessThanOrEqual(3 * partSize)
    expect(target.peakHeldBytes).toBeGreaterThanOrEqual(partSize)
    expect(target.heldBytes).toBe(0)
    expect(server.uploads.size).toBe(0)
  })

  it('the memory bound does not grow with the object: 4x the bytes, the same peak', async () => {
    const peaks: number[] = []
    for (const parts of [20, 80]) {
      const server = await startServer()
      const target = new ObjectTarget(storeOn(server).store, url, () => undefined, {
        partSize: 2048,
        partsInFlight: 2,
      })
      await pump(target, parts * 2048, 512)
      await target.commit()
      peaks.push(target.peakHeldBytes)
    }
    expect(peaks[0]).toBeLessThanOrEqual(3 * 2048)
    expect(peaks[1]).toBe(peaks[0])
  })

  it('abort: nothing appears and no upload is left open', async () => {
    const server = await startServer()
    const target = new ObjectTarget(storeOn(server).store, url, () => undefined, {partSize: 1024})
    await pump(target, 10 * 1024, 300)
    await target.abort()
    expect(server.keys('exports')).toEqual([])
    expect(server.uploads.size).toBe(0)
    expect(server.log.some((r) => r.method === 'DELETE' && r.query['uploadId'] !== undefined)).toBe(true)
    await target.abort() // twice is fine
    // writes after abort are dropped quietly; commit refuses
    expect(target.write('late')).toBe(true)
    await expect(target.commit()).rejects.toThrow('ObjectTarget.commit in state aborted')
  })

  it('an abort after the run was interrupted still goes out (cleanup is not cut by the run signal)', async () => {
    const server = await startServer()
    const controller = new AbortController()
    const {store} = storeOn(server, {signal: controller.signal})
    const target = new ObjectTarget(store, url, () => undefined, {partSize: 1024})
    await pump(target, 4 * 1024, 1024)
    await target.drain()
    while (server.log.filter((r) => r.query['partNumber']).length < 3)
      await new Promise((r) => setImmediate(r))
    controller.abort(new Error('interrupted'))
    await target.abort()
    expect(server.uploads.size).toBe(0)
    expect(server.keys('exports')).toEqual([])
  })

  it('a part refused mid-upload: onFailure at once, drain and commit reject with the one-line error, the upload aborted, nothing visible', async () => {
    const server = await startServer()
    const failures: Error[] = []
    const target = new ObjectTarget(storeOn(server).store, url, (e) => failures.push(e), {partSize: 1024})
    await pump(target, 3 * 1024, 1024)
    while (server.log.filter((r) => r.query['partNumber'] && r.status === 200).length < 3)
      await new Promise((r) => setImmediate(r))
    server.denyWrites('exports')
    target.write(Buffer.alloc(1024))
    // the failure is reported as it happens (so the run stops sending), then by every drain and commit
    while (failures.length === 0) await new Promise((r) => setImmediate(r))
    await expect(target.drain()).rejects.toBeInstanceOf(ForbiddenError)
    expect(failures).toHaveLength(1)
    expect(failures[0]?.message).toMatch(
      /^s3:\/\/exports\/run\/state=CA\/fips=06001\/data\.ndjson: access denied while writing part 4 \(AccessDenied, HTTP 403\)/,
    )
    const e = await target.commit().catch((error: unknown) => error)
    expect(e).toBe(failures[0])
    expect((e as ForbiddenError).exitCode).toBe(ExitCode.auth)
    expect(server.keys('exports')).toEqual([])
  })

  it('throttled parts are retried and the object is whole; throttled past the retries, exit 5 and nothing visible', async () => {
    const server = await startServer()
    server.inject(
      {kind: 'status', status: 503, code: 'SlowDown', match: (r) => r.query['partNumber'] === '2'},
      {kind: 'status', status: 503, code: 'SlowDown', match: (r) => r.query['partNumber'] === '3'},
    )
    const ok = new ObjectTarget(storeOn(server).store, url, () => undefined, {partSize: 1024})
    const sent = await pump(ok, 5 * 1024, 1024)
    await ok.commit()
    expect(server.object('exports', url.key)?.body.equals(sent)).toBe(true)

    const throttled = await startServer()
    for (let i = 0; i < 3; i++)
      throttled.inject({
        kind: 'status',
        status: 503,
        code: 'SlowDown',
        match: (r) => r.query['partNumber'] === '2',
      })
    const target = new ObjectTarget(storeOn(throttled, {attempts: 3}).store, url, () => undefined, {
      partSize: 1024,
    })
    await pump(target, 3 * 1024, 1024)
    const e = await target.commit().catch((error: unknown) => error)
    expect(e).toBeInstanceOf(RateLimitExceededError)
    expect((e as Error).message).toBe(
      's3://exports/run/state=CA/fips=06001/data.ndjson: the store is throttling requests while writing part 2 (SlowDown, HTTP 503) after 3 attempts; run again later or with fewer runs at once',
    )
    expect(throttled.keys('exports')).toEqual([])
    expect(throttled.uploads.size).toBe(0)
  })

  it('a Complete refused leaves nothing visible and aborts the upload', async () => {
    const server = await startServer()
    server.inject({
      kind: 'status',
      status: 400,
      code: 'InvalidPart',
      match: (r) => r.method === 'POST' && r.query['uploadId'] !== undefined,
    })
    const target = new ObjectTarget(storeOn(server).store, url, () => undefined, {partSize: 1024})
    await pump(target, 3 * 1024, 1024)
    await expect(target.commit()).rejects.toThrow(/\(InvalidPart, HTTP 400\)/)
    expect(server.keys('exports')).toEqual([])
    expect(server.uploads.size).toBe(0)
  })
})
