import {describe, expect, it} from 'vitest'

import {ExitCode, ServerError, UsageError} from '../../src/errors.js'
import {acquireLockObject, releaseLockObject} from '../../src/objstore/lock.js'
import {openObjectSource} from '../../src/objstore/source.js'
import {readAll, startServer, storeOn} from './fixture.js'

const url = {bucket: 'exports', key: 'run/data.csv'}

describe('the read source', () => {
  it("streams an object's bytes, with its size and ETag known before the first byte", async () => {
    const server = await startServer()
    const body = Buffer.alloc(300_000, 'r')
    server.put('exports', url.key, body)
    const source = await openObjectSource(storeOn(server).store, url)
    expect(source.size).toBe(300_000)
    expect(source.etag).toBe(server.object('exports', url.key)?.etag)
    expect((await readAll(source.stream)).equals(body)).toBe(true)
  })

  it('a missing object fails when opened, one line, exit 2: no stream is handed over', async () => {
    const server = await startServer()
    const e = await openObjectSource(storeOn(server).store, url).catch((error: unknown) => error)
    expect(e).toBeInstanceOf(UsageError)
    expect((e as UsageError).exitCode).toBe(ExitCode.usage)
  })

  it('a download cut mid-body resumes from the byte where it stopped (Range + If-Match), and the bytes are whole', async () => {
    const server = await startServer()
    const body = Buffer.from(Array.from({length: 100_000}, (_, i) => i % 251))
    server.put('exports', url.key, body)
    server.inject({kind: 'cut-body', bytes: 40_000, match: (r) => r.method === 'GET'})
    const source = await openObjectSource(storeOn(server).store, url)
    expect((await readAll(source.stream)).equals(body)).toBe(true)
    const gets = server.log.filter((r) => r.method === 'GET')
    expect(gets.map((r) => `${r.status} ${r.code}`)).toEqual(['200 cut-body', '206 '])
  })

  it('an object replaced while it was read is not stitched together: the resume gets 412 and the read fails', async () => {
    const server = await startServer()
    server.put('exports', url.key, Buffer.alloc(100_000, 'a'))
    server.inject({kind: 'cut-body', bytes: 10_000, match: (r) => r.method === 'GET'})
    const source = await openObjectSource(storeOn(server).store, url)
    server.put('exports', url.key, Buffer.alloc(100_000, 'b'))
    const e = await readAll(source.stream).catch((error: unknown) => error)
    expect(e).toBeInstanceOf(ServerError)
    expect((e as Error).message).toBe(
      's3://exports/run/data.csv: the object changed while sfl was reading it (PreconditionFailed, HTTP 412); run again to read the new version whole',
    )
  })

  it('a reader that stops early drops the connection (no more bytes are read)', async () => {
    const server = await startServer()
    server.put('exports', url.key, Buffer.alloc(4_000_000, 'x'))
    const source = await openObjectSource(storeOn(server).store, url)
    for await (const chunk of source.stream) {
      expect((chunk as Buffer).length).toBeGreaterThan(0)
      break
    }
    expect(source.stream.destroyed).toBe(true)
  })
})

describe('the lock object', () => {
  it('the first run acquires, a second is told the prefix is held; release removes only its own lock', async () => {
    const server = await startServer()
    const {store} = storeOn(server)
    expect(await acquireLockObject(store, 'exports', 'run/_sfl.lock', 'host-a 1 x')).toBe('acquired')
    expect(await acquireLockObject(store, 'exports', 'run/_sfl.lock', 'host-b 2 y')).toEqual({
      held: 'host-a 1 x',
    })
    expect(await releaseLockObject(store, 'exports', 'run/_sfl.lock', 'host-b 2 y')).toBe(false)
    expect(server.object('exports', 'run/_sfl.lock')?.body.toString()).toBe('host-a 1 x')
    expect(await releaseLockObject(store, 'exports', 'run/_sfl.lock', 'host-a 1 x')).toBe(true)
    expect(server.keys('exports')).toEqual([])
    expect(await releaseLockObject(store, 'exports', 'run/_sfl.lock', 'host-a 1 x')).toBe(false)
  })

  it('two runs racing past the check on a store with conditional writes: exactly one acquires', async () => {
    const server = await startServer()
    const {store} = storeOn(server)
    const outcomes = await Promise.all([
      acquireLockObject(store, 'exports', 'run/_sfl.lock', 'a'),
      acquireLockObject(store, 'exports', 'run/_sfl.lock', 'b'),
    ])
    expect(outcomes.filter((o) => o === 'acquired')).toHaveLength(1)
    const winner = server.object('exports', 'run/_sfl.lock')?.body.toString()
    expect(outcomes.find((o) => o !== 'acquired')).toEqual({held: winner})
  })

  it('a store answering 501 to If-None-Match: the fallback writes, reads back, and a later run sees it held', async () => {
    const server = await startServer({conditionalWrites: 'not-implemented'})
    const {store} = storeOn(server)
    expect(await acquireLockObject(store, 'exports', 'l', 'a')).toBe('acquired')
    expect(await acquireLockObject(store, 'exports', 'l', 'b')).toEqual({held: 'a'})
    expect(server.log.filter((r) => r.method === 'PUT').map((r) => r.status)).toEqual([501, 200])
  })

  it('a store that ignores the condition: the read-back catches a run that wrote after ours', async () => {
    const server = await startServer({conditionalWrites: 'ignored'})
    const {store} = storeOn(server)
    // another run's lock lands between our write and our read-back
    server.inject({
      kind: 'status',
      status: 503,
      code: 'SlowDown',
      match: (r) => {
        if (r.method !== 'GET') return false
        server.put('exports', 'l', 'other run')
        return false
      },
    })
    expect(await acquireLockObject(store, 'exports', 'l', 'ours')).toEqual({held: 'other run'})
  })

  it('a lock its caller knows to be stale is removed and taken; a live one is never removed', async () => {
    const server = await startServer()
    const {store} = storeOn(server)
    server.put('exports', 'l', 'gone run')
    const seen: Array<string | undefined> = []
    const live = await acquireLockObject(store, 'exports', 'l', 'ours', (held) => {
      seen.push(held)
      return false
    })
    expect(live).toEqual({held: 'gone run'})
    expect(server.object('exports', 'l')?.body.toString()).toBe('gone run')
    expect(await acquireLockObject(store, 'exports', 'l', 'ours', (held) => held === 'gone run')).toBe(
      'acquired',
    )
    expect(seen).toEqual(['gone run'])
    expect(server.object('exports', 'l')?.body.toString()).toBe('ours')
  })
})
