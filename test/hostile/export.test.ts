import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {leakedRun} from './expect.js'
import {startHostileServer, type HostileMode, type HostileServer} from './server.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * A hostile server against the long runs (county-export, lookup --input): broken answers end the county
 * as malformed, poison records are skipped with the rest of the county written, loops end, and the key
 * is never stored. Runs the built CLI.
 */
const KEY = 'sk_live_HOSTILE_0123456789abcdef'
let server: HostileServer
beforeAll(async () => {
  server = await startHostileServer()
})
afterAll(async () => server.close())
const tmp = () => tempDir('sfl-hostile-export-')

function exportCounty(mode: HostileMode, out: string | undefined, extra: string[] = []) {
  return sfl(
    ['county-export', '--fips', '06067', '--retries', '0', ...(out ? ['--out', out] : []), ...extra],
    {
      env: {SFL_BASE_URL: server.baseUrl(mode), SFL_API_KEY: KEY},
    },
  )
}

describe('a broken county answer is a malformed county, named in the summary', () => {
  it.each(['data-null', 'data-string', 'data-number'] as const)(
    '%s: exit 6, nothing written, not retried by a rerun',
    async (mode) => {
      const d = tmp()
      const out = join(d, 'o.csv')
      const r = await exportCounty(mode, out)
      expect(r.code).toBe(6)
      expect(r.stderr).toMatch(
        / {2}malformed 06067: the service answered 200 with `data` .* instead of a record object or a list of records \(spec 4\)/,
      )
      expect(r.stderr).not.toMatch(/checkpoint kept|\n\s+at /)
      expect(readdirSync(d)).toEqual([])
    },
  )

  it('a next link back to a page already fetched ends the county as malformed after one request', async () => {
    const before = server.requests.length
    const r = await exportCounty('link-loop', undefined, ['-o', 'ndjson'])
    expect(r.code).toBe(6)
    expect(r.stderr).toMatch(
      /malformed 06067: the next-page link after page 1 leads back to a page already fetched/,
    )
    expect(server.requests.length - before).toBe(1)
    // on stdout the page already streamed stays: the summary says the county did not finish
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(1)
  })

  it('a next link carrying the key is neither followed nor stored', async () => {
    const d = tmp()
    const out = join(d, 'o.csv')
    const before = server.requests.length
    const r = await exportCounty('key-in-link', out)
    expect(r.code).toBe(6)
    expect(r.stderr).toMatch(
      /malformed 06067: the next-page link carries the API key; not stored or followed/,
    )
    expect(server.requests.length - before).toBe(1)
    for (const f of readdirSync(d)) expect(leakedRun(readFileSync(join(d, f), 'utf8'), KEY)).toBeUndefined()
    expect(leakedRun(r.stderr + r.stdout, KEY)).toBeUndefined()
  })
})

describe('poison records are skipped, listed, and the rest of the county is written', () => {
  it('a record nested 100,000 deep: no stack overflow, the other record written, exit 7, a rerun is clean', async () => {
    const d = tmp()
    const out = join(d, 'o.ndjson')
    const r = await exportCounty('deep', out, ['-o', 'ndjson'])
    expect(r.code).toBe(7)
    expect(r.stderr).toMatch(/skipped 06067 page 1 record 1: nested deeper than 64 levels/)
    expect(r.stderr).toMatch(/the skipped records are listed in .*o\.ndjson\.rejects\.ndjson/)
    expect(r.stderr).not.toMatch(/Maximum call stack/)
    expect(
      readFileSync(out, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).APN),
    ).toEqual(['078-0123-045'])
    expect(JSON.parse(readFileSync(`${out}.rejects.ndjson`, 'utf8'))).toEqual({
      fips: '06067',
      page: 1,
      record: 1,
      reason: 'nested deeper than 64 levels',
    })
    // the county is final (done, with a record skipped): no checkpoint traps the next run
    expect(existsSync(`${out}.sfl-checkpoint`)).toBe(false)
  })

  it('a 17 MB field over --max-record-bytes is dropped without holding it', async () => {
    const d = tmp()
    const out = join(d, 'o.csv')
    const r = await exportCounty('huge-field', out, ['--max-record-bytes', '1048576'])
    expect(r.code).toBe(7)
    expect(r.stderr).toMatch(/skipped 06067 page 1 record 1: larger than 1,048,576 bytes/)
    expect(readFileSync(out, 'utf8').trimEnd().split('\r\n')).toHaveLength(2)
  })
})

describe('CSV headers are formula-guarded too', () => {
  it('a server field named =HYPERLINK(...) lands as text', async () => {
    const r = await exportCounty('formula-header', undefined)
    expect(r.code).toBe(0)
    const header = r.stdout.split('\r\n')[0]!
    expect(header).toContain(`"'=HYPERLINK(""http://evil.example/"",""x"")"`)
    expect(header).not.toMatch(/(^|,)"?=HYPERLINK/)
  })

  it('a batch input column named =cmd|... lands as text', async () => {
    const d = tmp()
    writeFileSync(join(d, 'in.csv'), 'fips,property_id,=cmd|calc\n06067,30000000006,x\n')
    const r = await sfl(['lookup', '--input', join(d, 'in.csv'), '-o', 'csv', '--retries', '0'], {
      env: {SFL_BASE_URL: server.baseUrl('ok'), SFL_API_KEY: KEY},
    })
    expect(r.stdout.split('\r\n')[0]).toMatch(/^fips,property_id,'=cmd\|calc,sfl_row,status,error,/)
  })
})

describe('a body pretty-printed only in the middle still gives one NDJSON line per record', () => {
  it('a record with line breaks after a compact megabyte, sent in small writes, is re-serialised; its neighbours are not', async () => {
    const rec = (i: number) => ({
      Fips: '06067',
      ServicePropertyID: i,
      APN: `a-${i}`,
      FinalValue: 1000 + i,
      FHAEligible: i % 2 === 0,
    })
    const compact = Array.from({length: 4_000}, (_, i) => JSON.stringify(rec(i)))
    const pretty = JSON.stringify(rec(4_000), null, 2)
    const body = `{"status":"success","data":[${[...compact, pretty, JSON.stringify(rec(4_001))].join(',')}]}`
    const srv = createServer((_req, res) => {
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'X-RateLimit-Limit': '1000',
        'X-RateLimit-Remaining': '999',
        'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + 3600),
      })
      // small writes: the pretty record's line breaks arrive in a later chunk than the records before it
      const bytes = Buffer.from(body)
      for (let i = 0; i < bytes.length; i += 1000) res.write(bytes.subarray(i, i + 1000))
      res.end()
    })
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
    try {
      const d = tmp()
      const out = join(d, 'o.ndjson')
      const r = await sfl(
        ['county-export', '--fips', '06067', '-o', 'ndjson', '--out', out, '--stats-json', join(d, 's.json')],
        {env: {SFL_BASE_URL: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`, SFL_API_KEY: KEY}},
      )
      expect(r.code).toBe(0)
      const lines = readFileSync(out, 'utf8').trimEnd().split('\n')
      expect(lines).toHaveLength(4_002)
      expect(lines.map((l) => (JSON.parse(l) as {ServicePropertyID: number}).ServicePropertyID)).toEqual(
        Array.from({length: 4_002}, (_, i) => i),
      )
      // the compact records are as sent, byte for byte; the pretty one is compacted
      expect(lines[3_999]).toBe(compact[3_999])
      expect(lines[4_000]).toBe(JSON.stringify(rec(4_000)))
      const stats = JSON.parse(readFileSync(join(d, 's.json'), 'utf8')) as {
        run: {records: number; FinalValue: {count: number}}
      }
      expect([stats.run.records, stats.run.FinalValue.count]).toEqual([4_002, 4_002])
    } finally {
      await new Promise((resolve) => srv.close(resolve))
    }
  })
})
