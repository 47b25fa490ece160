import {describe, expect, it} from 'vitest'

import {abortAbandonedUploads} from '../../src/objstore/cleanup.js'
import {startServer, storeOn} from './fixture.js'

describe('cleaning up uploads a killed run left', () => {
  it('aborts the uploads under the prefix started before the cut-off; later ones and other prefixes stay', async () => {
    const server = await startServer({pageSize: 2})
    const {store} = storeOn(server)
    const old = ['run/a.csv', 'run/state=CA/b.csv', 'run/c.csv']
    for (const k of old) await store.createMultipartUpload('exports', k)
    const elsewhere = await store.createMultipartUpload('exports', 'other/d.csv')
    const cutOff = new Date(Date.now() + 1000)
    const current = await store.createMultipartUpload('exports', 'run/e.csv')
    for (const u of server.uploads.values()) if (u.id === current) u.initiated = new Date(Date.now() + 60_000)
    expect(await abortAbandonedUploads(store, 'exports', 'run/', cutOff)).toEqual([
      'run/a.csv',
      'run/c.csv',
      'run/state=CA/b.csv',
    ])
    expect([...server.uploads.values()].map((u) => u.id).sort()).toEqual([elsewhere, current].sort())
    expect(server.keys('exports')).toEqual([])
  })
})
