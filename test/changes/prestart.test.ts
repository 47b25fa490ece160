import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import type {Worker} from 'node:worker_threads'

import {afterAll, describe, expect, it} from 'vitest'

import {
  prestartScanWorker,
  SCAN_WORKER_BYTES,
  scanWorkerFile,
  scanWorkerWanted,
  sidesOf,
  takePrestartedWorker,
  VALUE_FLAGS,
} from '../../src/changes/prestart.js'
import {changesTable} from '../../src/cli/local-commands.js'

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

describe('one thread or two', () => {
  const big = join(dir, 'big.csv')
  const small = join(dir, 'small.csv')
  writeFileSync(big, Buffer.alloc(SCAN_WORKER_BYTES / 2 + 1))
  writeFileSync(small, 'Fips\n')

  it('two files below the bound are scanned on one thread; at or above it, or anything but files, on two', () => {
    const env = {}
    expect(scanWorkerWanted([small, small], env)).toBe(false)
    expect(scanWorkerWanted([big, small], env)).toBe(false)
    expect(scanWorkerWanted([big, big], env)).toBe(true)
    // a folder (an --out-dir export), a missing path, an s3:// side: as before, two
    expect(scanWorkerWanted([dir, small], env)).toBe(true)
    expect(scanWorkerWanted([join(dir, 'missing.csv'), small], env)).toBe(true)
    expect(scanWorkerWanted(['s3://bucket/a.csv', small], env)).toBe(true)
    // SFL_SCAN_WORKER_BYTES moves the bound (the tests of the worker's path)
    expect(scanWorkerWanted([small, small], {SFL_SCAN_WORKER_BYTES: '1'})).toBe(true)
    // one that is not a whole number of bytes is ignored: the bound stays SCAN_WORKER_BYTES
    for (const bad of ['abc', '-5', '0', '1.5', ''])
      expect(scanWorkerWanted([big, big], {SFL_SCAN_WORKER_BYTES: bad})).toBe(true)
  })

  it('the entry finds the sides among the words as the parser does: the values of the flags that take one skipped', () => {
    const valueFlags = Object.entries(changesTable.flags).flatMap(([name, f]) =>
      f.type === 'boolean' ? [] : [`--${name}`, ...(f.char ? [`-${f.char}`] : [])],
    )
    expect([...VALUE_FLAGS].sort()).toEqual(valueFlags.sort())
    expect(
      sidesOf(['--out', 'c.csv', 'a.csv', '-o', 'csv', '--fips', '06067', 'b.csv', '-q', '--json']),
    ).toEqual(['a.csv', 'b.csv'])
    expect(sidesOf(['a.csv', '--out=c.csv', '-', '--ignore-fields', 'none'])).toEqual(['a.csv', '-'])
  })

  it('is not started ahead for two small files', async () => {
    await prestartScanWorker(['changes', small, small, '--out', big], entry)
    expect(takePrestartedWorker(scanWorkerFile(entry))).toBeUndefined()
    await prestartScanWorker(['changes', big, big], entry)
    const worker = takePrestartedWorker(scanWorkerFile(entry))
    expect(worker).toBeDefined()
    await worker!.terminate()
  })
})
