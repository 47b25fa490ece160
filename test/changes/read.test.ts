import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import fc from 'fast-check'
import {afterAll, describe, expect, it} from 'vitest'

import {
  compareText,
  csvCellText,
  Layouts,
  numberCell,
  numberText,
  recordObject,
  type ChangeRecord,
} from '../../src/changes/cells.js'
import {RecordReader} from '../../src/changes/read.js'
import {asText, flattenRecord} from '../../src/io/export-reader.js'
import {FileTarget} from '../../src/io/output.js'
import {writeParquet} from '../../src/io/parquet-writer.js'

/**
 * The read-back of changed records (src/changes/read.ts) names a record's members by the field list and
 * sets each in its place; the records it cannot name so (a name met twice, a name past the cap on unknown
 * names) are read by their key texts. Either way a record is the one export-reader makes of the line:
 * its names in JSON.parse's order, their values as text alike, numbers as sent.
 */
const dir = mkdtempSync(join(tmpdir(), 'sfl-change-read-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** Every line of `lines` read back from an NDJSON file of them. */
async function readBack(lines: string[]): Promise<ChangeRecord[]> {
  const path = join(dir, `${lines.length}-${Math.random().toString(36).slice(2)}.ndjson`)
  writeFileSync(path, `${lines.join('\n')}\n`)
  const reader = await RecordReader.create([{path, kind: 'ndjson'}])
  try {
    const out: ChangeRecord[] = []
    let offset = 0
    for (const line of lines) {
      out.push(recordObject(reader.read(0, offset)))
      offset += Buffer.byteLength(line) + 1
    }
    return out
  } finally {
    reader.close()
  }
}

const asRead = (rec: ChangeRecord) => Object.entries(rec).map(([k, v]) => [k, compareText(v)])
const asParsed = (line: string) =>
  Object.entries(flattenRecord(JSON.parse(line) as Record<string, unknown>)).map(([k, v]) => [k, asText(v)])

describe('records read back', () => {
  it('an option object met twice is its last object, in the place of the first name', async () => {
    const lines = [
      '{"Fips":"48201","ServicePropertyID":1,"AssumableMortgage":{"LoanType":"FHA","Rate":1.5},"City":"A"}',
      '{"Fips":"48201","ServicePropertyID":2,"AssumableMortgage":{"LoanType":"VA"},"City":"B","AssumableMortgage":{"Rate":2.0}}',
      '{"Fips":"48201","ServicePropertyID":3,"AssumableMortgage":{"LoanType":"VA"},"AssumableMortgage":null,"City":"C"}',
      '{"Fips":"48201","ServicePropertyID":4,"City":"D","City":"E","FinalValue":1.0}',
    ]
    const got = await readBack(lines)
    expect(got.map(asRead)).toEqual(lines.map(asParsed))
    expect(Object.keys(got[1]!)).toEqual(['Fips', 'ServicePropertyID', 'AssumableMortgage.Rate', 'City'])
    expect(got[1]!['AssumableMortgage.Rate']).toEqual({n: '2.0'})
    expect(got[2]).toEqual({Fips: '48201', ServicePropertyID: {n: '3'}, AssumableMortgage: null, City: 'C'})
    expect(got[3]).toEqual({Fips: '48201', ServicePropertyID: {n: '4'}, City: 'E', FinalValue: {n: '1.0'}})
  })

  it('an object that is no option object, a list, and an option object in an option object are JSON text', async () => {
    const lines = [
      '{"ServicePropertyID":1,"Extra":{"a":[1,2.50],"b":{"c":null}},"Tags":[ "x" , 1e2 ],"AssumableMortgage":{"Deep":{"AssumableMortgage":{"x":1}},"More":[]}}',
    ]
    const [rec] = await readBack(lines)
    expect(rec).toEqual({
      ServicePropertyID: {n: '1'},
      Extra: '{"a":[1,2.5],"b":{"c":null}}',
      Tags: '["x",100]',
      'AssumableMortgage.Deep': '{"AssumableMortgage":{"x":1}}',
      'AssumableMortgage.More': '[]',
    })
  })

  it('names with escapes and text beyond ASCII: decoded as JSON.parse decodes them, numbers as sent', async () => {
    const lines = [
      '{"\\u0041PN":"a\\"b","City":"Saint-\u00c9tienne","\\u0041ssumableMortgage":{"Lender":"\\u00e9","Rate":0.10},"FinalValue":-0}',
      '{"APN":"x","City":"\u00c9","AssumableMortgage":{"Lender":"L","Rate":1E5},"FinalValue":12345678901234567890}',
    ]
    const got = await readBack(lines)
    expect(got.map(asRead)).toEqual(lines.map(asParsed))
    expect(got[0]).toEqual({
      APN: 'a"b',
      City: 'Saint-\u00c9tienne',
      'AssumableMortgage.Lender': '\u00e9',
      'AssumableMortgage.Rate': {n: '0.10'},
      FinalValue: {n: '-0'},
    })
    expect(got[1]!['AssumableMortgage.Rate']).toEqual({n: '1E5'})
    expect(got[1]!['FinalValue']).toEqual({n: '12345678901234567890'})
  })

  it('names past the cap on unknown names (a hostile record of ever-new names) are still read, in order', async () => {
    const many = (from: number) =>
      `{"ServicePropertyID":${from},${Array.from({length: 700}, (_, i) => `"n${from + i}":${i}`).join(',')}}`
    // 1,400 new names: the field list gives ids to the first 1,000 (src/pipeline/fields.ts MAX_UNKNOWN_FIELDS)
    const lines = [many(0), many(700), many(0)]
    const got = await readBack(lines)
    expect(got.map(asRead)).toEqual(lines.map(asParsed))
    expect(Object.keys(got[1]!)).toHaveLength(701)
    expect(got[1]!['n1399']).toEqual({n: '699'})
  })
})

describe('records of a layout', () => {
  it('a CSV header naming a field twice: the field in the place of its first column, holding its last value', async () => {
    const path = join(dir, 'twice.csv')
    const header = ['Fips', 'City', 'ServicePropertyID', 'City', '__proto__']
    writeFileSync(path, `${header.join(',')}\r\n06067,Elk Grove,1,Galt,x\r\n06067,,2,Sloughhouse,\r\n`)
    const reader = await RecordReader.create([{path, kind: 'csv', header}])
    try {
      const first = reader.read(0, header.join(',').length + 2)
      const second = reader.read(0, header.join(',').length + 2 + '06067,Elk Grove,1,Galt,x\r\n'.length)
      expect(first.layout.names).toEqual(['Fips', 'City', 'ServicePropertyID', '__proto__'])
      expect(first.values).toEqual(['06067', 'Galt', {n: '1'}, 'x'])
      // the records of one file share one layout; a field named __proto__ is a field like any other
      expect(second.layout).toBe(first.layout)
      expect(second.values).toEqual(['06067', 'Sloughhouse', {n: '2'}, null])
      expect(Object.hasOwn(recordObject(first), '__proto__')).toBe(true)
    } finally {
      reader.close()
    }
  })

  it('two readers sharing a registry give records of the same fields one layout; another order maps by name', async () => {
    const header = ['Fips', 'ServicePropertyID', 'City']
    const a = join(dir, 'shared-a.csv')
    const b = join(dir, 'shared-b.csv')
    const c = join(dir, 'shared-c.csv')
    writeFileSync(a, `${header.join(',')}\r\n06067,1,A\r\n`)
    writeFileSync(b, `${header.join(',')}\r\n06067,1,B\r\n`)
    writeFileSync(c, 'City,Fips,Extra\r\nC,06067,x\r\n')
    const layouts = new Layouts()
    const ra = await RecordReader.create([{path: a, kind: 'csv', header}], layouts)
    const rb = await RecordReader.create(
      [
        {path: b, kind: 'csv', header},
        {path: c, kind: 'csv', header: ['City', 'Fips', 'Extra']},
      ],
      layouts,
    )
    try {
      const start = header.join(',').length + 2
      const x = ra.read(0, start)
      const y = rb.read(0, start)
      const z = rb.read(1, 'City,Fips,Extra'.length + 2)
      expect(y.layout).toBe(x.layout)
      expect(z.layout).not.toBe(x.layout)
      // where each of z's fields is in x's layout, and the other way round
      expect([...z.layout.placesIn(x.layout)]).toEqual([2, 0, -1])
      expect([...x.layout.placesIn(z.layout)]).toEqual([1, -1, 0])
    } finally {
      ra.close()
      rb.close()
    }
  })

  it('NDJSON records of the same fields in the same order share one layout, others get their own', async () => {
    const lines = [
      '{"Fips":"06067","ServicePropertyID":1,"City":"A"}',
      '{"Fips":"06067","ServicePropertyID":2,"City":"B"}',
      '{"ServicePropertyID":3,"Fips":"06067","City":"C"}',
      '{"Fips":"06067","ServicePropertyID":4,"City":"D"}',
    ]
    const path = join(dir, 'layouts.ndjson')
    writeFileSync(path, `${lines.join('\n')}\n`)
    const reader = await RecordReader.create([{path, kind: 'ndjson'}])
    try {
      let offset = 0
      const recs = lines.map((l) => {
        const r = reader.read(0, offset)
        offset += l.length + 1
        return r
      })
      expect(recs[1]!.layout).toBe(recs[0]!.layout)
      expect(recs[2]!.layout).not.toBe(recs[0]!.layout)
      expect(recs[2]!.layout.names).toEqual(['ServicePropertyID', 'Fips', 'City'])
      // met again after another: the one kept
      expect(recs[3]!.layout).toBe(recs[0]!.layout)
    } finally {
      reader.close()
    }
  })
})

describe('numberCell and numberText', () => {
  it("write every double as JSON's shortest form, whole numbers by the small-integer path included", () => {
    const edges = [0, -0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e21, 0.1, -2.5]
    const same = (x: number) => {
      expect(numberText(x)).toBe(String(x))
      expect(csvCellText(numberCell(x))).toBe(String(x))
      expect(compareText(numberCell(x))).toBe(asText(String(x)))
    }
    for (const x of edges) same(x)
    fc.assert(fc.property(fc.double({noNaN: true, noDefaultInfinity: true}), same))
    fc.assert(fc.property(fc.integer(), same))
  })

  it('keep a number as the number, and an infinity or NaN (which JSON cannot hold) as its text', () => {
    expect(numberCell(148800)).toBe(148800)
    for (const x of [NaN, Infinity, -Infinity]) expect(numberCell(x)).toBe(String(x))
  })
})

describe('Parquet rows read back as planned', () => {
  it('planned rows of many row groups, and rows not planned between them, each read as written', async () => {
    const n = 500
    const part = join(dir, 'groups.ndjson')
    const recs = Array.from({length: n}, (_, i) => ({
      Fips: '06067',
      ServicePropertyID: i,
      City: `C${i % 7}`,
      FinalValue: i * 1.5,
    }))
    writeFileSync(part, recs.map((r) => `${JSON.stringify(r)}\n`).join(''))
    const path = join(dir, 'groups.parquet')
    const target = await FileTarget.create(path, () => undefined)
    await writeParquet(target, [part], {rowGroupRows: 64})
    await target.commit()
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({min: 0, max: n - 1}), {maxLength: 120}),
        fc.uniqueArray(fc.integer({min: 0, max: n - 1}), {maxLength: 60}),
        (planned, extra) => {
          // the reader is asked in file order, as the comparison asks (a few rows it did not plan among them)
          const reads = [...new Set([...planned, ...extra])].sort((a, b) => a - b)
          return (async () => {
            const reader = await RecordReader.create([{path, kind: 'parquet'}])
            const alone = await RecordReader.create([{path, kind: 'parquet'}])
            try {
              // the plan as the comparison makes it: unsorted input is sorted by the reader
              reader.plan(0, [...planned].reverse())
              for (const row of reads) {
                const got = recordObject(reader.read(0, row))
                // the row alone, as a reader without a plan reads it
                expect(got).toEqual(recordObject(alone.read(0, row)))
                expect(got).toMatchObject({ServicePropertyID: row, City: `C${row % 7}`})
              }
            } finally {
              reader.close()
              alone.close()
            }
          })()
        },
      ),
      {numRuns: 40},
    )
  })
})
