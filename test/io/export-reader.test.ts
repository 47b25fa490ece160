import {mkdtempSync, mkdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {
  asBoolean,
  asNumber,
  asText,
  ExportFileError,
  exportFormatOf,
  flattenRecord,
  readExport,
  type FlatRecord,
} from '../../src/io/export-reader.js'
import {unguardCell} from '../../src/text/csv-cell.js'

const dir = mkdtempSync(join(tmpdir(), 'sfl-export-reader-'))
let n = 0
function file(name: string, text: string): string {
  const p = join(dir, `${n++}-${name}`)
  writeFileSync(p, text)
  return p
}
async function all(path: string): Promise<FlatRecord[]> {
  const out: FlatRecord[] = []
  for await (const r of readExport(path)) out.push(r)
  return out
}

const record = {
  Fips: '06067',
  ServicePropertyID: 12,
  City: 'Élk Grove',
  FinalValue: 688600.0,
  FHACondoEligible: null,
  AssumableMortgage: {LoanType: 'FHA', EstimatedInterestRate: 3.25},
  FHACondo: null,
  Note: '=HYPERLINK("x")',
}

describe('reading an export back', () => {
  it('gives the same flat records from NDJSON, our JSON and a formula-guarded CSV', async () => {
    const nd = file('a.ndjson', `${JSON.stringify(record)}\n`)
    const js = file(
      'a.json',
      `[\n${JSON.stringify(record)},\n${JSON.stringify({...record, ServicePropertyID: 13})}\n]\n`,
    )
    const csv = file(
      'a.csv',
      '\ufeffFips,ServicePropertyID,City,FinalValue,FHACondoEligible,AssumableMortgage.LoanType,AssumableMortgage.EstimatedInterestRate,Note\r\n' +
        `06067,12,Élk Grove,688600.0,,FHA,3.25,"'=HYPERLINK(""x"")"\r\n`,
    )
    const fromNd = await all(nd)
    expect(fromNd).toEqual([
      {
        Fips: '06067',
        ServicePropertyID: 12,
        City: 'Élk Grove',
        FinalValue: 688600,
        FHACondoEligible: null,
        'AssumableMortgage.LoanType': 'FHA',
        'AssumableMortgage.EstimatedInterestRate': 3.25,
        // a null option object (spec 2.2: the key includes it, the property has none) stays one null
        FHACondo: null,
        Note: '=HYPERLINK("x")',
      },
    ])
    expect((await all(js)).map((r) => r['ServicePropertyID'])).toEqual([12, 13])
    const fromCsv = await all(csv)
    expect(fromCsv).toHaveLength(1)
    // the same values once compared as text, whatever the format's types
    for (const k of Object.keys(fromNd[0]!)) expect(asText(fromCsv[0]![k]), k).toBe(asText(fromNd[0]![k]))
  })

  it("keeps a field named as Object.prototype's own (__proto__, constructor) from every format, and no other", async () => {
    // a hostile service may send any field name and the export keeps it; on an ordinary object the one
    // would set the record's prototype (the field lost), the other answer where a record lacks it
    const line = '{"Fips":"06067","__proto__":"P","AssumableMortgage":{"constructor":"K"}}\n'
    const csv = file('p.csv', 'Fips,__proto__,AssumableMortgage.constructor\r\n06067,P,K\r\n')
    for (const path of [file('p.ndjson', line), csv]) {
      const [rec] = await all(path)
      expect(Object.entries(rec!), path).toEqual([
        ['Fips', '06067'],
        ['__proto__', 'P'],
        ['AssumableMortgage.constructor', 'K'],
      ])
      expect(rec!['constructor'], path).toBeUndefined()
    }
  })

  it('knows the format from the name, else from the first bytes', async () => {
    expect(await exportFormatOf(file('x.jsonl', '{}'))).toBe('ndjson')
    expect(await exportFormatOf(file('x.PARQUET', 'PAR1'))).toBe('parquet')
    expect(await exportFormatOf(file('noext', 'PAR1xxxx'))).toBe('parquet')
    expect(await exportFormatOf(file('noext2', '\ufeff[\n'))).toBe('json')
    expect(await exportFormatOf(file('noext3', '{"a":1}\n'))).toBe('ndjson')
    expect(await exportFormatOf(file('noext4', 'Fips,APN\r\n'))).toBe('csv')
  })

  it('refuses a pretty-printed JSON file, a missing file and a directory with one line each', async () => {
    const pretty = file('p.json', '[\n  {\n    "Fips": "06067"\n  }\n]\n')
    await expect(all(pretty)).rejects.toThrow(/line 2: not one record per line; export as NDJSON/)
    await expect(all(join(dir, 'nope.csv'))).rejects.toThrow(ExportFileError)
    await expect(all(join(dir, 'nope.csv'))).rejects.toThrow(/no such file/)
    const sub = join(dir, 'sub.csv')
    mkdirSync(sub)
    await expect(all(sub)).rejects.toThrow(/is a directory/)
    await expect(all(file('bad.ndjson', '{"a":1}\n[1]\n'))).rejects.toThrow(
      /line 2: a record must be a JSON object/,
    )
    await expect(all(file('ragged.csv', 'a,b\r\n1\r\n'))).rejects.toThrow(/line 2: not a readable CSV export/)
  })

  it('refuses a file named .parquet that is not Parquet with one line', async () => {
    await expect(all(file('fake.parquet', 'Fips,APN\r\n06067,1\r\n'))).rejects.toThrow(
      /fake\.parquet: not a readable Parquet file/,
    )
  })

  it('flattens the spec’s option objects to Option.Field; any other object, a list or anything deeper is JSON text', () => {
    expect(
      flattenRecord({
        AssumableMortgage: {LoanType: 'FHA', Extra: {C: 1}, D: [1, 2], N: null},
        FHACondoEligibility: null,
        A: {B: {C: 1}, D: [1, 2]},
        E: [true],
        F: 'x',
      }),
    ).toEqual({
      'AssumableMortgage.LoanType': 'FHA',
      'AssumableMortgage.Extra': '{"C":1}',
      'AssumableMortgage.D': '[1,2]',
      'AssumableMortgage.N': null,
      FHACondoEligibility: null,
      A: '{"B":{"C":1},"D":[1,2]}',
      E: '[true]',
      F: 'x',
    })
    // an option that is not an object is one column, as it is
    expect(flattenRecord({AssumableMortgage: [1]})).toEqual({AssumableMortgage: '[1]'})
  })

  it('undoes only the export formula guard', () => {
    expect(unguardCell("'=1+2")).toBe('=1+2')
    expect(unguardCell("'-5")).toBe('-5')
    expect(unguardCell("'quoted")).toBe("'quoted")
    expect(unguardCell("'")).toBe("'")
  })

  it('reads numbers and booleans across formats', () => {
    expect([asNumber('0.1'), asNumber(' '), asNumber('abc'), asNumber(7), asNumber(null)]).toEqual([
      0.1,
      undefined,
      undefined,
      7,
      undefined,
    ])
    expect([asBoolean('true'), asBoolean(false), asBoolean('TRUE'), asBoolean(null)]).toEqual([
      true,
      false,
      undefined,
      undefined,
    ])
    expect([asText('688600.0'), asText(688600), asText('06067'), asText(null), asText('1e21')]).toEqual([
      '688600',
      '688600',
      '06067',
      null,
      '1e+21',
    ])
  })
})
