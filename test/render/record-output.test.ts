import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it, onTestFinished} from 'vitest'

import {readCsv} from '../../src/io/csv-reader.js'
import {renderRecords} from '../../src/render/record-output.js'
import {sealed} from '../helpers/records.js'

const record = {
  Fips: '06067',
  ServicePropertyID: 1,
  APN: '=1+2',
  City: 'ELK\nGROVE',
  State: 'CA',
  Zip: 'a\rb',
}

/** The rows a CSV reader gets back from a text (the reader sfl's own `stats` and `changes` use). */
async function rows(text: string): Promise<string[][]> {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-lookup-csv-'))
  onTestFinished(() => rmSync(dir, {recursive: true, force: true}))
  writeFileSync(join(dir, 'out.csv'), text)
  const out: string[][] = []
  for await (const r of readCsv(join(dir, 'out.csv'))) out.push(r.fields)
  return out
}

describe("a single lookup's CSV", () => {
  it('quotes a value holding a lone line feed or carriage return, so the row stays one row', async () => {
    const text = await renderRecords([sealed(record)], 'csv', {escapeFormulas: true, width: 80})
    const [header, row] = await rows(text)
    expect(row![header!.indexOf('City')]).toBe('ELK\nGROVE')
    expect(row![header!.indexOf('Zip')]).toBe('a\rb')
    expect(text).toContain('"ELK\nGROVE"')
  })

  it('guards formula cells in the rows and the header with the rule every path uses', async () => {
    const text = await renderRecords([sealed({...record, '@odd': 'x'})], 'csv', {
      escapeFormulas: true,
      width: 80,
    })
    const [header, row] = await rows(text)
    expect(row![header!.indexOf('APN')]).toBe("'=1+2")
    expect(header).toContain("'@odd")
    const plain = await renderRecords([sealed(record)], 'csv', {escapeFormulas: false, width: 80})
    expect((await rows(plain))[1]![2]).toBe('=1+2')
  })
})
