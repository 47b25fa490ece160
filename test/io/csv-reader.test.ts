import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {parse} from 'csv-parse/sync'
import {describe, expect, it} from 'vitest'

import {CsvSyntaxError, readCsv, type CsvRecord} from '../../src/io/csv-reader.js'

const dir = mkdtempSync(join(tmpdir(), 'sfl-csv-'))
let n = 0
async function read(text: string, chunkSize?: number): Promise<CsvRecord[]> {
  const p = join(dir, `${n++}.csv`)
  writeFileSync(p, text)
  const out: CsvRecord[] = []
  for await (const r of readCsv(p, chunkSize ? {chunkSize} : {})) out.push(r)
  return out
}

/** A tiny seeded generator, so a failing case can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32
}

describe('the batch CSV reader', () => {
  it('reads quoted commas, doubled quotes, line breaks in fields, a BOM, and skips empty lines', async () => {
    const recs = await read('\ufeffa,b\r\n"x, y","say ""hi"""\r\n\r\n"multi\nline",z\n')
    expect(recs).toEqual([
      {fields: ['a', 'b'], line: 1},
      {fields: ['x, y', 'say "hi"'], line: 2},
      {fields: ['multi\nline', 'z'], line: 4},
    ])
  })

  it('reads CR-only line ends (old Mac exports)', async () => {
    expect((await read('a,b\r1,2\r3,4\r')).map((r) => r.fields)).toEqual([
      ['a', 'b'],
      ['1', '2'],
      ['3', '4'],
    ])
  })

  it.each([
    ['a,b\n1,"x\n', /^Quote Not Closed/, 2],
    ['a,b\n1,2,3\n', /^Invalid Record Length: expect 2, got 3$/, 2],
    ['a,b\n1,x"y"\n', /^Invalid Opening Quote/, 2],
    ['a,b\n1,"x"y\n', /^Invalid Closing Quote: got "y"/, 2],
  ])('%j is refused with the line', async (text, message, line) => {
    const error = await read(text).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CsvSyntaxError)
    expect((error as CsvSyntaxError).message).toMatch(message)
    expect((error as CsvSyntaxError).line).toBe(line)
  })

  it('agrees with csv-parse on 300 random files, whatever the chunk boundaries', async () => {
    const next = rng(42)
    const pieces = ['a', 'b', ' ', ',', '"', '""', '\n', '\r\n', 'é', '😀', 'x,y', '\r']
    for (let k = 0; k < 300; k++) {
      const cols = 1 + Math.floor(next() * 4)
      const rows: string[][] = []
      for (let r = 0; r < 1 + Math.floor(next() * 6); r++) {
        const row: string[] = []
        for (let c = 0; c < cols; c++) {
          let v = ''
          for (let j = 0; j < Math.floor(next() * 5); j++) v += pieces[Math.floor(next() * pieces.length)]
          row.push(v)
        }
        rows.push(row)
      }
      // quote every field that needs it (and some that do not), as a spreadsheet would
      const text = rows
        .map((row) =>
          row.map((v) => (/[",\r\n]/.test(v) || next() < 0.2 ? `"${v.replace(/"/g, '""')}"` : v)).join(','),
        )
        .join(next() < 0.5 ? '\n' : '\r\n')
      // a row of one empty field is a blank line to csv-parse even when quoted; sfl keeps `""` as a row
      const blank = (r: string[]) => r.length === 1 && r[0] === ''
      const expected = (parse(text, {skip_empty_lines: true}) as string[][]).filter((r) => !blank(r))
      for (const chunk of [1, 2, 3, 7, 1 << 20]) {
        const got = (await read(text, chunk)).map((r) => r.fields).filter((r) => !blank(r))
        expect(got, `${JSON.stringify(text)} in chunks of ${chunk}`).toEqual(expected)
      }
    }
  })
})
