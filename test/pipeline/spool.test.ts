import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {PartFile} from '../../src/pipeline/spool.js'
import {sealedBytes} from '../helpers/records.js'

describe('a part file', () => {
  it('waits out backpressure many times without piling up listeners', async () => {
    const warnings: Error[] = []
    const onWarning = (w: Error) => warnings.push(w)
    process.on('warning', onWarning)
    try {
      const path = join(mkdtempSync(join(tmpdir(), 'sfl-spool-')), 'p.ndjson')
      const part = await PartFile.create(path)
      const record = sealedBytes(Buffer.from(JSON.stringify({x: 'y'.repeat(64 * 1024)})))
      let drains = 0
      for (let i = 0; i < 400; i++) {
        part.write(record)
        if (part.needsDrain) {
          drains++
          await part.drain()
        }
      }
      await part.close()
      // let a warning emitted on the last drain reach the listener
      await new Promise((resolve) => setImmediate(resolve))
      expect(drains).toBeGreaterThan(20)
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning')
      expect(readFileSync(path, 'utf8').split('\n')).toHaveLength(401)
    } finally {
      process.off('warning', onWarning)
    }
  })
})

describe('CSV rows in a part file', () => {
  it('keeps every byte of multi-byte rows across batch boundaries, and a row longer than a batch', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'sfl-spool-')), 'p.csv')
    const part = await PartFile.create(path)
    const rows: string[] = []
    // rows of mixed widths (1-, 2-, 3- and 4-byte UTF-8) so batch edges fall at many offsets
    for (let i = 0; i < 5_000; i++) rows.push(`${i},Peña,東京,😀${'x'.repeat(i % 97)}\r\n`)
    rows.splice(2_500, 0, `huge,${'ß'.repeat(300 * 1024)}\r\n`)
    for (const r of rows) part.writeText(r)
    await part.close()
    expect(readFileSync(path, 'utf8')).toBe(rows.join(''))
  })
})

describe('an NDJSON part file that starts its write-back as it goes', () => {
  it('keeps every record, whether a write-back is under way when it closes or not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-spool-'))
    for (const syncEvery of [1, 300 * 1024, 0]) {
      const path = join(dir, `p-${syncEvery}.ndjson`)
      const part = await PartFile.create(path, {syncEvery})
      const records = Array.from({length: 3_000}, (_, i) =>
        sealedBytes(Buffer.from(JSON.stringify({i, pad: 'x'.repeat(i % 500)}))),
      )
      for (const r of records) {
        part.write(r)
        if (part.needsDrain) await part.drain()
      }
      await part.close()
      expect(readFileSync(path, 'utf8')).toBe(records.map((r) => `${r.toString()}\n`).join(''))
    }
  })
})
