import {spawnSync} from 'node:child_process'
import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {gunzipSync, gzipSync} from 'node:zlib'

import {DuckDBInstance} from '@duckdb/node-api'
import {describe, expect, it} from 'vitest'

import {UsageError} from '../../src/errors.js'
import {GzipTarget, gunzipToFile, readGzip} from '../../src/io/gzip.js'
import {InputFormatError} from '../../src/io/input-error.js'
import {FileTarget, type OutputTarget} from '../../src/io/output.js'
import {RecordWriter} from '../../src/io/record-writer.js'
import {tempDir} from '../helpers/tmp.js'
import {MemoryTarget} from './memory-target.js'

/** gzip by name: the output target that compresses into another, and the capped reader of .gz inputs. */

const tmp = () => tempDir('sfl-gzip-')
const ROWS = [
  ['06067', '02134', 'Ñandú, "the" house', '148800'],
  ['06067', '00501', '=SUM(A1)', '0.1'],
]

async function duckRows(path: string): Promise<unknown[]> {
  const db = await DuckDBInstance.create(':memory:')
  const c = await db.connect()
  try {
    // all_varchar: the codes as written (DuckDB would guess 02134 an integer, as issue 32 says)
    const sql = `SELECT * FROM read_csv('${path.replace(/'/g, "''")}', all_varchar = true)`
    return (await c.runAndReadAll(sql)).getRowsJson()
  } finally {
    c.closeSync()
    db.closeSync()
  }
}

describe('a .gz output', () => {
  it('CSV written through a GzipTarget onto a file is what zcat and DuckDB read back', async () => {
    const dir = tmp()
    const out = join(dir, 'records.csv.gz')
    const file = await FileTarget.create(out, () => undefined)
    const target = new GzipTarget(file)
    const w = new RecordWriter(target, 'csv', {header: ['Fips', 'Zip', 'Address', 'FinalValue']})
    for (const r of ROWS) if (!w.csv(r)) await target.drain()
    w.end()
    expect(existsSync(out)).toBe(false) // atomic: nothing at the name before commit
    await target.commit()
    const csv =
      'Fips,Zip,Address,FinalValue\r\n06067,02134,"Ñandú, ""the"" house",148800\r\n06067,00501,=SUM(A1),0.1\r\n'
    expect(gunzipSync(readFileSync(out)).toString('utf8')).toBe(csv)
    const zcat = spawnSync('zcat', [out], {encoding: 'utf8'})
    expect(zcat.stdout).toBe(csv)
    expect(await duckRows(out)).toEqual(ROWS)
    expect(readdirSync(dir)).toEqual(['records.csv.gz']) // no temp file left
  })

  it('an aborted .gz output leaves nothing behind', async () => {
    const dir = tmp()
    const target = new GzipTarget(await FileTarget.create(join(dir, 'x.ndjson.gz'), () => undefined))
    target.write('{"a":1}\n')
    await target.abort()
    expect(readdirSync(dir)).toEqual([])
  })

  it('compression waits for a slow target: about one chunk outstanding, and the bytes are whole', async () => {
    const inner = new MemoryTarget(64 * 1024)
    const target = new GzipTarget(inner, {level: 1})
    let text = ''
    for (let i = 0; i < 200_000; i++) {
      const line = `${i},${((i * 7919) % 1_000_003).toString(36)},${'x'.repeat(i % 17)}\n`
      text += line
      if (!target.write(line)) await target.drain()
    }
    await target.commit()
    expect(inner.committed).toBe(true)
    expect(inner.drains).toBeGreaterThan(5)
    expect(inner.maxOutstanding).toBeLessThanOrEqual(2 * 64 * 1024)
    expect(gunzipSync(inner.bytes).toString('utf8')).toBe(text)
  })

  it('a failure of the target under it is reported by drain and commit, and the target is aborted', async () => {
    const failing: OutputTarget & {aborted: boolean} = {
      aborted: false,
      write: () => false,
      drain: () => Promise.reject(new Error('the disk is full (ENOSPC) while writing x.csv.gz')),
      commit: () => Promise.resolve(),
      abort() {
        this.aborted = true
        return Promise.resolve()
      },
    }
    const target = new GzipTarget(failing)
    // enough that gzip emits a chunk, which the target refuses
    for (let i = 0; i < 50 && target.write(Buffer.alloc(64 * 1024, i)); i++);
    await expect(target.drain()).rejects.toThrow('the disk is full (ENOSPC) while writing x.csv.gz')
    await expect(target.commit()).rejects.toThrow('the disk is full (ENOSPC) while writing x.csv.gz')
    expect(failing.aborted).toBe(true)
  })
})

describe('a .gz input', () => {
  it('is expanded whole, concatenated members included (as gzip -d reads them)', async () => {
    const dir = tmp()
    const path = join(dir, 'in.csv.gz')
    writeFileSync(path, Buffer.concat([gzipSync('fips,apn\n'), gzipSync('06067,1\n')]))
    const chunks: Buffer[] = []
    for await (const c of readGzip(path)) chunks.push(c)
    expect(Buffer.concat(chunks).toString()).toBe('fips,apn\n06067,1\n')
    await gunzipToFile(path, join(dir, 'out'))
    expect(readFileSync(join(dir, 'out'), 'utf8')).toBe('fips,apn\n06067,1\n')
  })

  const failure = async (p: Promise<unknown>) => {
    try {
      await p
    } catch (error) {
      expect(error).toBeInstanceOf(InputFormatError)
      return (error as Error).message
    }
    throw new Error('no error')
  }

  it('a damaged stream, one cut short, a bomb past the ratio or the size cap: one line each, the partial copy left to the caller', async () => {
    const dir = tmp()
    const good = gzipSync(Buffer.alloc(3 * 1024 ** 2, 0x41), {level: 9})
    const cut = join(dir, 'cut.gz')
    writeFileSync(cut, good.subarray(0, good.length - 20))
    expect(await failure(gunzipToFile(cut, join(dir, 'a')))).toMatch(
      /^the gzip data is damaged \(unexpected end of file\); compress the file again, or give it uncompressed$/,
    )
    const bad = Buffer.from(good)
    bad[20] = bad[20]! ^ 0xff
    const damaged = join(dir, 'bad.gz')
    writeFileSync(damaged, bad)
    expect(await failure(gunzipToFile(damaged, join(dir, 'b')))).toMatch(/^the gzip data is damaged \(/)
    const bomb = join(dir, 'bomb.gz')
    writeFileSync(bomb, good) // 3 MB of one letter: about 1,000 to 1
    const caps = {maxBytes: 1024 ** 3, maxRatio: 200, ratioFloor: 1024 ** 2}
    expect(await failure(gunzipToFile(bomb, join(dir, 'c'), caps))).toBe(
      'the gzip data expands more than 200 to 1; refused as a possible gzip bomb',
    )
    const small = {maxBytes: 1024 ** 2, maxRatio: 10_000, ratioFloor: 0}
    const read = (async () => {
      for await (const c of readGzip(bomb, small)) void c
    })()
    expect(await failure(read)).toBe('the gzip data expands past 1 MB, more than sfl reads; split it')
  })

  it("a caller's cancel stops the expansion with the caller's own error, not a gzip one", async () => {
    const dir = tmp()
    const path = join(dir, 'in.csv.gz')
    writeFileSync(path, gzipSync(Buffer.alloc(8 * 1024 ** 2, 0x41)))
    const stop = new AbortController()
    stop.abort(new UsageError('the call was cancelled'))
    await expect(gunzipToFile(path, join(dir, 'out'), undefined, stop.signal)).rejects.toThrow(
      new UsageError('the call was cancelled'),
    )
  })
})
