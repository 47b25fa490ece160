import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Worker} from 'node:worker_threads'

import {afterAll, describe, expect, it} from 'vitest'

import type {ChangeRecord} from '../../src/changes/cells.js'
import {RecordReader} from '../../src/changes/read.js'
import {LocalRows, ROW_BATCH, WorkerRows, type RowSource} from '../../src/changes/row-source.js'
import {FileTarget} from '../../src/io/output.js'
import {writeParquet} from '../../src/io/parquet-writer.js'

/**
 * A county's changed records read back in the order the comparison names them (src/changes/row-source.ts):
 * each record is the one read alone at its place, whatever the order (forwards, backwards, across row
 * groups, a row twice), in batches; a reader thread that dies fails the read instead of leaving it waiting.
 */
const dir = mkdtempSync(join(tmpdir(), 'sfl-row-source-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const ROWS = 2600

/** A Parquet export of ROWS records in row groups of 1,000 (three groups, the last short). */
async function parquetFile(): Promise<string> {
  const part = join(dir, 'part.ndjson')
  let text = ''
  for (let i = 0; i < ROWS; i++)
    text += `${JSON.stringify({
      Fips: '06067',
      ServicePropertyID: 1000 + i,
      APN: i % 7 === 0 ? null : `APN-${i}`,
      FinalValue: i * 1.25,
      FHAEligible: i % 3 === 0,
      AssumableMortgage: i % 5 === 0 ? null : {LoanType: i % 2 ? 'FHA' : 'VA', RecordingDate: '2020-02-03'},
    })}\n`
  writeFileSync(part, text)
  const path = join(dir, 'x.parquet')
  const target = await FileTarget.create(path, () => undefined)
  await writeParquet(target, [part], {rowGroupRows: 1000})
  await target.commit()
  return path
}

async function readAll(source: RowSource, rows: number[]): Promise<ChangeRecord[]> {
  source.begin(new Uint16Array(rows.length), Float64Array.from(rows))
  const out: ChangeRecord[] = []
  for (let i = 0; i < rows.length; i++) out.push(await source.next())
  return out
}

describe('changed records read back in order', () => {
  const orders: Array<[string, number[]]> = [
    ['forwards across row groups', [0, 1, 999, 1000, 1500, 2599]],
    ['backwards', [2599, 1800, 1000, 999, 3]],
    ['interleaved groups and a row twice', [5, 1200, 6, 2100, 1200, 7]],
    [
      'more rows than a batch',
      Array.from({length: ROW_BATCH + 17}, (_, i) => (i * 3 + (i > 900 ? 1000 : 0)) % ROWS),
    ],
  ]

  it.each(orders)('%s: each record is the one read alone at its row', async (_, rows) => {
    const path = await parquetFile()
    const alone = await RecordReader.create([{path, kind: 'parquet'}])
    const want = rows.map((r) => alone.read(0, r))
    alone.close()
    expect(want[0]!['ServicePropertyID']).toEqual({n: String(1000 + rows[0]!)})
    const local = new LocalRows(await RecordReader.create([{path, kind: 'parquet'}]))
    expect(await readAll(local, rows)).toEqual(want)
    local.close()
  })

  it('on a worker thread: the same records, county after county', async () => {
    const path = await parquetFile()
    const alone = await RecordReader.create([{path, kind: 'parquet'}])
    const w = new Worker(
      `
      const {parentPort, workerData} = require('node:worker_threads')
      // the test's stand-in for scan-worker.ts's serve(): the records asked for, a batch at a time
      parentPort.on('message', (m) => {
        if (m.begin) globalThis.q = Array.from(m.begin.offsets)
        parentPort.postMessage({rows: globalThis.q.splice(0, workerData.batch).map((r) => ({row: r}))})
      })`,
      {eval: true, workerData: {batch: ROW_BATCH}},
    )
    const remote = new WorkerRows(w)
    for (const [, rows] of orders) expect(await readAll(remote, rows)).toEqual(rows.map((r) => ({row: r})))
    remote.close()
    alone.close()
  })

  it('a reader thread that dies fails the read: one error, no wait for ever', async () => {
    const w = new Worker(`process.exit(3)`, {eval: true})
    const remote = new WorkerRows(w)
    remote.begin(Uint16Array.of(0), Float64Array.of(0))
    await expect(remote.next()).rejects.toThrow('the read-back thread stopped (exit 3)')
    remote.close()
  })

  it('an error on the reader thread comes back as the error', async () => {
    const w = new Worker(
      `require('node:worker_threads').parentPort.on('message', () =>
         require('node:worker_threads').parentPort.postMessage({error: {message: 'x.parquet: the record at 5 changed while it was compared'}}))`,
      {eval: true},
    )
    const remote = new WorkerRows(w)
    remote.begin(Uint16Array.of(0), Float64Array.of(5))
    await expect(remote.next()).rejects.toThrow('changed while it was compared')
    remote.close()
  })
})
