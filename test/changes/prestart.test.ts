import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import type {Worker} from 'node:worker_threads'

import {afterAll, describe, expect, it} from 'vitest'

import {prestartScanWorker, scanWorkerFile, takePrestartedWorker} from '../../src/changes/prestart.js'

/**
 * `sfl changes`' worker thread is started by the CLI's entry before oclif loads (src/changes/prestart.ts)
 * and taken by the command's scan (src/changes/scan-run.ts): once, only while alive, only for its file.
 * A stand-in worker file echoes the first message it gets.
 */
const dir = mkdtempSync(join(tmpdir(), 'sfl-prestart-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
writeFileSync(
  join(dir, 'change-scan-worker.js'),
  "import {parentPort} from 'node:worker_threads'\nparentPort.once('message', (m) => parentPort.postMessage({echo: m}))\n",
)
const entry = pathToFileURL(join(dir, 'sfl.js'))

function echo(worker: Worker, message: string): Promise<unknown> {
  return new Promise((resolve) => {
    worker.once('message', resolve)
    worker.postMessage(message)
  })
}

describe('the scan worker started ahead', () => {
  it('is started for `sfl changes` and taken once, alive and answering', async () => {
    await prestartScanWorker(['changes', 'a.parquet', 'b.parquet'], entry)
    const worker = takePrestartedWorker(scanWorkerFile(entry))
    expect(worker).toBeDefined()
    expect(takePrestartedWorker(scanWorkerFile(entry))).toBeUndefined()
    await expect(echo(worker!, 'side')).resolves.toEqual({echo: 'side'})
    await worker!.terminate()
  })

  it('is not started for another command or for help', async () => {
    for (const argv of [['stats', 'a.csv'], ['changes', '--help'], ['changes', 'a', 'b', '-h'], []]) {
      await prestartScanWorker(argv, entry)
      expect(takePrestartedWorker(scanWorkerFile(entry))).toBeUndefined()
    }
  })

  it('is not started when the worker file is missing (running from the sources)', async () => {
    await prestartScanWorker(['changes', 'a', 'b'], pathToFileURL(join(dir, 'elsewhere', 'sfl.js')))
    expect(takePrestartedWorker(scanWorkerFile(entry))).toBeUndefined()
  })

  it('one that has ended is not handed over: the caller starts its own', async () => {
    await prestartScanWorker(['changes', 'a', 'b'], entry)
    const slot = Symbol.for('sfl.changes.prestartedScanWorker')
    const held = (globalThis as Record<symbol, {worker: Worker}>)[slot]!
    await held.worker.terminate()
    await new Promise((resolve) => setImmediate(resolve))
    expect(takePrestartedWorker(scanWorkerFile(entry))).toBeUndefined()
  })

  it('one started for another worker file is ended, not handed over', async () => {
    await prestartScanWorker(['changes', 'a', 'b'], entry)
    const slot = Symbol.for('sfl.changes.prestartedScanWorker')
    const held = (globalThis as Record<symbol, {worker: Worker}>)[slot]!
    const exited = new Promise((resolve) => held.worker.once('exit', resolve))
    expect(takePrestartedWorker(new URL('other-worker.js', entry))).toBeUndefined()
    await expect(exited).resolves.toBeDefined()
  })
})
