import {mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {parse} from 'csv-parse/sync'
import fc from 'fast-check'
import {afterAll, describe, expect, it} from 'vitest'

import {flatCellValue, Layout, type ReadRecord} from '../../src/changes/cells.js'
import {
  changedFields,
  compareExports,
  oneSidedNotices,
  type ChangeRequest,
  type ChangeSummary,
} from '../../src/changes/compare.js'
import type {FlatRecord} from '../../src/io/export-reader.js'
import {ObjectDigester} from '../../src/changes/row-digest.js'
import {FileTarget} from '../../src/io/output.js'
import {writeParquet} from '../../src/io/parquet-writer.js'
import {countyFolder} from '../helpers/county-folder.js'

const dir = mkdtempSync(join(tmpdir(), 'sfl-changes-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
let n = 0
function file(name: string, text: string | Buffer): string {
  const p = join(dir, `${n++}-${name}`)
  writeFileSync(p, text)
  return p
}
const none = new Set<string>()
/** A record object's values as a change row holds them (numbers with their text, text typed by the spec). */
const cells = (rec: FlatRecord): ReadRecord => ({
  layout: new Layout(Object.keys(rec)),
  values: Object.entries(rec).map(([k, v]) => flatCellValue(k, v)),
})
/** A record's digest and key (src/changes/row-digest.ts), as text to compare. */
function fingerprint(rec: FlatRecord, ignore: ReadonlySet<string> = none): {digest: string; key?: string} {
  const d = new ObjectDigester(ignore)
  d.take(rec)
  return {digest: `${d.digest.a},${d.digest.b}`, ...(d.hasKey ? {key: `${d.key.a},${d.key.b}`} : {})}
}

/** A property as the export writes it (NDJSON shape). */
function prop(fips: string, id: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Fips: fips,
    ServicePropertyID: id,
    APN: `${fips}-${id}`,
    City: 'Elk Grove',
    FinalValue: 300_000 + id,
    ValuationDate: '2026-10-01T00:00:00',
    FHAEligible: id % 2 === 0,
    AssumableMortgage: {LoanType: 'FHA', EstimatedInterestRate: 3.25},
    ...over,
  }
}
const ndjson = (recs: Array<Record<string, unknown>>) => recs.map((r) => `${JSON.stringify(r)}\n`).join('')
/** The same records as the CSV export lays them out: flattened columns, numbers as sent, CRLF. */
function csv(recs: Array<Record<string, unknown>>): string {
  const cols = [
    'Fips',
    'ServicePropertyID',
    'APN',
    'City',
    'FinalValue',
    'ValuationDate',
    'FHAEligible',
    'AssumableMortgage.LoanType',
    'AssumableMortgage.EstimatedInterestRate',
  ]
  const flat = (r: Record<string, unknown>): unknown[] =>
    cols.map((c) => {
      const [a, b] = c.split('.')
      const v = b ? (r[a!] as Record<string, unknown> | null)?.[b] : r[a!]
      return v === null || v === undefined ? '' : String(v)
    })
  return [cols, ...recs.map(flat)].map((r) => `${r.join(',')}\r\n`).join('')
}

async function compare(
  previous: string,
  current: string,
  over: Partial<ChangeRequest> = {},
): Promise<{
  rows: Array<Record<string, string>>
  header: string[]
  s: Awaited<ReturnType<typeof compareExports>>
}> {
  const out = join(dir, `${n++}-changes.csv`)
  const s = await compareExports({previous, current, ignore: ['ValuationDate'], out, format: 'csv', ...over})
  const text = readFileSync(out, 'utf8')
  const table = parse(text) as string[][]
  const header = table[0]!
  return {header, s, rows: table.slice(1).map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]!])))}
}
const brief = (rows: Array<Record<string, string>>) =>
  rows.map((r) => `${r['Change']} ${r['Fips']}/${r['ServicePropertyID']} ${r['ChangedFields']}`.trimEnd())

/** NDJSON sides of these records compared into a change file of `format`: its summary and its rows. */
async function compareInto(
  format: 'csv' | 'ndjson',
  prev: Array<Record<string, unknown>>,
  cur: Array<Record<string, unknown>>,
): Promise<{s: Awaited<ReturnType<typeof compareExports>>; rows: Array<Record<string, unknown>>}> {
  const out = join(dir, `${n++}-changes.${format}`)
  const s = await compareExports({
    previous: file('p.ndjson', ndjson(prev)),
    current: file('c.ndjson', ndjson(cur)),
    ignore: ['ValuationDate'],
    out,
    format,
  })
  const text = readFileSync(out, 'utf8')
  const rows =
    format === 'csv'
      ? (parse(text, {columns: true}) as Array<Record<string, unknown>>)
      : text
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>)
  return {s, rows}
}

describe('the comparison rules', () => {
  it.each<[string, FlatRecord, FlatRecord, string[]]>([
    ['CSV text and JSON numbers of one value are equal', {FinalValue: '688600.0'}, {FinalValue: 688600}, []],
    ['a missing field and null are equal', {FinalValue: 1, Lender: null}, {FinalValue: 1}, []],
    ['a changed value is named', {FinalValue: 1, City: 'A'}, {FinalValue: 2, City: 'A'}, ['FinalValue']],
    ['a field that became null is named', {City: 'A', Zip: '95814'}, {City: 'A', Zip: null}, ['Zip']],
    [
      'a field only the previous record had is named last',
      {Zip: '1', City: 'A'},
      {City: 'B'},
      ['City', 'Zip'],
    ],
    ['a code keeps its leading zero', {Fips: '06067'}, {Fips: 6067}, ['Fips']],
    ['booleans compare with their CSV text', {FHAEligible: 'true'}, {FHAEligible: true}, []],
  ])('%s', (_name, prev, cur, changed) => {
    expect(changedFields(cells(prev), cells(cur), none)).toEqual(changed)
    expect(fingerprint(prev).digest === fingerprint(cur).digest).toBe(changed.length === 0)
  })

  it('ignored fields are neither compared nor part of the digest', () => {
    const a = {FinalValue: 1, ValuationDate: '2026-10-01'}
    const b = {FinalValue: 1, ValuationDate: '2026-11-01'}
    const ignore = new Set(['ValuationDate'])
    expect(changedFields(cells(a), cells(b), ignore)).toEqual([])
    expect(fingerprint(a, ignore).digest).toBe(fingerprint(b, ignore).digest)
    expect(changedFields(cells(a), cells(b), none)).toEqual(['ValuationDate'])
    expect(fingerprint(a).digest).not.toBe(fingerprint(b).digest)
  })

  it('the digest does not depend on field order, and a value moved to another field changes it', () => {
    expect(fingerprint({A: 1, B: 'x'}).digest).toBe(fingerprint({B: 'x', A: '1'}).digest)
    expect(fingerprint({A: 'x', B: 1}).digest).not.toBe(fingerprint({B: 'x', A: '1'}).digest)
  })

  it('records are keyed by ServicePropertyID, else by APN (within the county), else not at all', () => {
    const id12 = fingerprint({ServicePropertyID: 12, APN: 'x'}).key
    expect(fingerprint({ServicePropertyID: '12.0', APN: 'y'}).key).toBe(id12)
    expect(fingerprint({ServicePropertyID: 13, APN: 'x'}).key).not.toBe(id12)
    // an empty id falls back to the APN; an APN never equals an id of the same text
    expect(fingerprint({ServicePropertyID: '', APN: 'x'}).key).toBe(fingerprint({APN: 'x'}).key)
    expect(fingerprint({APN: '12'}).key).not.toBe(id12)
    expect(fingerprint({City: 'A'}).key).toBeUndefined()
  })

  it.each<[string, Partial<ChangeSummary>, string[]]>([
    ['both exports hold every county: nothing to say', {}, []],
    [
      'one county only in the previous export',
      {onlyPrevious: [{fips: '48201', rows: 3}]},
      [
        'sfl changes: 48201 is only in the previous export: its 3 records are reported deleted (--fips compares only the counties named)',
      ],
    ],
    [
      'many counties only in the previous export, one record only in the current one',
      {
        onlyPrevious: Array.from({length: 12}, (_, i) => ({
          fips: `060${String(i).padStart(2, '0')}`,
          rows: 1000,
        })),
        onlyCurrent: [{fips: '17031', rows: 1}],
      },
      [
        'sfl changes: 12 counties (06000, 06001, 06002, 06003, 06004, 06005, 06006, 06007, 06008, 06009 and 2 more) are only in the previous export: their 12,000 records are reported deleted (--fips compares only the counties named)',
        'sfl changes: 17031 is only in the current export: its 1 record is reported added',
      ],
    ],
    [
      'a county asked that neither holds',
      {inNeither: ['01001']},
      ['sfl changes: --fips 01001: in neither export'],
    ],
  ])('notices: %s', (_name, over, lines) => {
    const s: ChangeSummary = {
      ...{added: 0, updated: 0, deleted: 0, unchanged: 0, unkeyed: 0, duplicates: 0, counties: 1},
      ...{tableBytes: 0, onlyPrevious: [], onlyCurrent: [], inNeither: []},
      ...over,
    }
    expect(oneSidedNotices(s)).toEqual(lines)
  })
})

describe('compareExports', () => {
  const before = [prop('06067', 1), prop('06067', 2), prop('06067', 3), prop('06067', 4)]
  const after = [
    prop('06067', 1, {ValuationDate: '2026-11-01T00:00:00'}), // only the date moved: unchanged
    prop('06067', 2, {FinalValue: 650_000, AssumableMortgage: {LoanType: 'VA', EstimatedInterestRate: 3.25}}),
    prop('06067', 4),
    prop('06067', 5),
  ]

  it('a worker file is started only for sides of SCAN_WORKER_BYTES or more (county-export --changes-since)', async () => {
    // a worker file that does not exist: the comparison fails where it starts one, and only there
    const worker = new URL('file:///nonexistent/sfl-change-scan-worker.js')
    const req = () => ({
      previous: file('p.ndjson', ndjson(before)),
      current: file('c.ndjson', ndjson(after)),
      ignore: ['ValuationDate'],
      out: join(dir, `${n++}-changes.csv`),
      format: 'csv' as const,
      worker,
    })
    await expect(compareExports(req())).resolves.toMatchObject({added: 1, updated: 1, deleted: 1})
    const bound = process.env['SFL_SCAN_WORKER_BYTES']
    process.env['SFL_SCAN_WORKER_BYTES'] = '1'
    try {
      await expect(compareExports(req())).rejects.toThrow()
    } finally {
      if (bound === undefined) delete process.env['SFL_SCAN_WORKER_BYTES']
      else process.env['SFL_SCAN_WORKER_BYTES'] = bound
    }
  })

  it('a CSV previous and an NDJSON current of the same data show no change (a header only)', async () => {
    const {rows, header, s} = await compare(file('p.csv', csv(before)), file('c.ndjson', ndjson(before)))
    expect(rows).toEqual([])
    expect(header.slice(0, 4)).toEqual(['Change', 'ServicePropertyID', 'Fips', 'ChangedFields'])
    expect(s).toMatchObject({added: 0, updated: 0, deleted: 0, unchanged: 4, counties: 1})
  })

  it('gives exactly the added, updated (with the changed fields) and deleted rows', async () => {
    const {rows, header, s} = await compare(file('p.csv', csv(before)), file('c.ndjson', ndjson(after)))
    expect(brief(rows)).toEqual([
      'added 06067/5',
      'updated 06067/2 FinalValue;AssumableMortgage.LoanType',
      'deleted 06067/3',
    ])
    expect(s).toMatchObject({added: 1, updated: 1, deleted: 1, unchanged: 2, unkeyed: 0, duplicates: 0})
    // the current record for added/updated, the previous one for deleted; old values beside the new
    expect(header).toEqual([
      'Change',
      'ServicePropertyID',
      'Fips',
      'ChangedFields',
      'APN',
      'City',
      'FinalValue',
      'ValuationDate',
      'FHAEligible',
      'AssumableMortgage.LoanType',
      'AssumableMortgage.EstimatedInterestRate',
      'Previous.FinalValue',
      'Previous.AssumableMortgage.LoanType',
    ])
    expect(rows[1]).toMatchObject({
      FinalValue: '650000',
      'AssumableMortgage.LoanType': 'VA',
      'Previous.FinalValue': '300002',
      'Previous.AssumableMortgage.LoanType': 'FHA',
    })
    expect(rows[2]).toMatchObject({APN: '06067-3', FinalValue: '300003', 'Previous.FinalValue': ''})
  })

  it('NDJSON change rows carry ChangedFields as a list and the old values under Previous', async () => {
    const out = join(dir, `${n++}-changes.ndjson`)
    await compareExports({
      previous: file('p.csv', csv(before)),
      current: file('c.ndjson', ndjson(after)),
      ignore: ['ValuationDate'],
      out,
      format: 'ndjson',
    })
    const lines = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines[1]).toEqual({
      Change: 'updated',
      ServicePropertyID: 2,
      Fips: '06067',
      ChangedFields: ['FinalValue', 'AssumableMortgage.LoanType'],
      APN: '06067-2',
      City: 'Elk Grove',
      FinalValue: 650000,
      ValuationDate: '2026-10-01T00:00:00',
      FHAEligible: true,
      'AssumableMortgage.LoanType': 'VA',
      'AssumableMortgage.EstimatedInterestRate': 3.25,
      Previous: {FinalValue: 300002, 'AssumableMortgage.LoanType': 'FHA'},
    })
    // the deleted row comes from the CSV side: typed back as the spec says
    expect(lines[2]).toMatchObject({
      Change: 'deleted',
      ServicePropertyID: 3,
      FinalValue: 300003,
      FHAEligible: false,
    })
  })

  it('Parquet sides give exactly the rows CSV and NDJSON sides give, values and all', async () => {
    const parquet = async (recs: Array<Record<string, unknown>>) => {
      const part = file('part.ndjson', ndjson(recs))
      const path = join(dir, `${n++}-x.parquet`)
      const target = await FileTarget.create(path, () => undefined)
      await writeParquet(target, [part])
      await target.commit()
      return path
    }
    const text = await compare(file('p.csv', csv(before)), file('c.ndjson', ndjson(after)))
    const pq = await compare(await parquet(before), await parquet(after))
    expect(brief(pq.rows)).toEqual(brief(text.rows))
    expect(pq.s).toMatchObject({added: 1, updated: 1, deleted: 1, unchanged: 2})
    // the record's own columns agree cell for cell (a Parquet file has every column of its run)
    for (const [i, row] of text.rows.entries())
      for (const c of text.header) expect(pq.rows[i]![c], c).toBe(row[c])
    // a Parquet side against an NDJSON side of the same data: no change
    const same = await compare(await parquet(before), file('c.ndjson', ndjson(before)))
    expect(same.rows).toEqual([])
    expect(same.s.unchanged).toBe(4)
  })

  it("fields named as Object.prototype's own (__proto__, constructor, toString) are compared and written like any other", async () => {
    // a hostile service may send any field name, and the export keeps it (before: a crash on the CSV
    // sides, and a changed __proto__ read back from NDJSON as no change at all). `proto` stands for
    // __proto__ here: an object literal's __proto__ is its prototype, JSON.parse's a field.
    const rec = (id: number, over: Record<string, string>) => ({
      Fips: '06067',
      ServicePropertyID: id,
      APN: `A${id}`,
      ...over,
    })
    const before = [
      rec(1, {proto: 'x', constructor: 'c1'}),
      rec(2, {proto: 'y', constructor: 'c2'}),
      rec(3, {proto: 'z', toString: 't3'}),
    ]
    const after = [
      rec(1, {proto: 'x', constructor: 'c1'}),
      rec(2, {proto: 'CHANGED', constructor: 'c2'}),
      rec(3, {proto: 'z'}),
    ]
    const lines = (recs: Array<Record<string, string | number>>) =>
      recs.map((r) => `${JSON.stringify(r).replace('"proto":', '"__proto__":')}\n`).join('')
    const p = file('p.ndjson', lines(before))
    const c = file('c.ndjson', lines(after))
    const rows = (await compare(p, c)).rows
    expect(brief(rows)).toEqual(['updated 06067/2 __proto__', 'updated 06067/3 toString'])
    expect(rows[0]!['__proto__']).toBe('CHANGED')
    expect(rows[0]!['Previous.__proto__']).toBe('y')
    expect(rows[0]!['constructor']).toBe('c2')
    expect(rows[1]!['toString']).toBe('')
    expect(rows[1]!['Previous.toString']).toBe('t3')
    // the same through CSV sides and Parquet sides
    const names = ['Fips', 'ServicePropertyID', 'APN', 'proto', 'constructor', 'toString']
    const table = (recs: Array<Record<string, string | number>>) =>
      [
        names.join(',').replace('proto', '__proto__'),
        ...recs.map((r) => names.map((k) => r[k] ?? '').join(',')),
      ]
        .map((l) => `${l}\r\n`)
        .join('')
    const fromCsv = await compare(file('p.csv', table(before)), file('c.csv', table(after)))
    expect(brief(fromCsv.rows)).toEqual(brief(rows))
    expect(fromCsv.rows[0]!['Previous.__proto__']).toBe('y')
    // CSV sides the byte scanner gives to export-reader's record objects (a byte that is not UTF-8),
    // their records read back from the scan's scratch copy (before: the changed __proto__ was lost there)
    const latin1 = (text: string) => Buffer.from(text.replace('A1', 'A\u00e91'), 'latin1')
    const fromObjects = await compare(
      file('p.csv', latin1(table(before))),
      file('c.csv', latin1(table(after))),
    )
    expect(brief(fromObjects.rows)).toEqual(brief(rows))
    expect(fromObjects.rows[0]!['__proto__']).toBe('CHANGED')
    expect(fromObjects.rows[0]!['Previous.__proto__']).toBe('y')
    const parquet = async (ndjsonPath: string) => {
      const path = join(dir, `${n++}-x.parquet`)
      const target = await FileTarget.create(path, () => undefined)
      await writeParquet(target, [ndjsonPath])
      await target.commit()
      return path
    }
    const fromParquet = await compare(await parquet(p), await parquet(c))
    expect(brief(fromParquet.rows)).toEqual(brief(rows))
    expect(fromParquet.rows[0]!['__proto__']).toBe('CHANGED')
    expect(fromParquet.rows[0]!['Previous.__proto__']).toBe('y')
  })

  it("an unknown field keeps the export's place: after the standard fields, before the add-on columns", async () => {
    const p = file('p.ndjson', ndjson([prop('06067', 1), prop('06067', 2)]))
    const c = file(
      'c.ndjson',
      ndjson([prop('06067', 1, {Zoning: 'R1'}), prop('06067', 2, {Zoning: 'C2', Zip: '95814'})]),
    )
    const {header, rows} = await compare(p, c)
    expect(header).toEqual([
      'Change',
      'ServicePropertyID',
      'Fips',
      'ChangedFields',
      'APN',
      'City',
      'Zip',
      'FinalValue',
      'ValuationDate',
      'FHAEligible',
      'Zoning',
      'AssumableMortgage.LoanType',
      'AssumableMortgage.EstimatedInterestRate',
      'Previous.Zip',
      'Previous.Zoning',
    ])
    expect(brief(rows)).toEqual(['updated 06067/1 Zoning', 'updated 06067/2 Zoning;Zip'])
  })

  it('--ignore-fields none reports the moved valuation date; naming a field ignores it', async () => {
    const p = file('p.csv', csv(before))
    const c = file('c.ndjson', ndjson(after))
    expect(brief((await compare(p, c, {ignore: []})).rows)).toEqual([
      'added 06067/5',
      'updated 06067/1 ValuationDate',
      'updated 06067/2 FinalValue;AssumableMortgage.LoanType',
      'deleted 06067/3',
    ])
    const only = await compare(p, c, {ignore: ['ValuationDate', 'FinalValue', 'AssumableMortgage.LoanType']})
    expect(brief(only.rows)).toEqual(['added 06067/5', 'deleted 06067/3'])
    expect(only.s.unchanged).toBe(3)
  })

  it('a manifest folder of two counties compared with one multi-county file, counties in any order', async () => {
    const m = join(dir, `${n++}-outdir`)
    mkdirSync(join(m, 'state=CA', 'fips=06067'), {recursive: true})
    mkdirSync(join(m, 'state=TX', 'fips=48201'), {recursive: true})
    writeFileSync(join(m, 'state=CA', 'fips=06067', 'data.csv'), csv(before))
    writeFileSync(
      join(m, 'state=TX', 'fips=48201', 'data.ndjson'),
      ndjson([prop('48201', 7), prop('48201', 8)]),
    )
    writeFileSync(
      join(m, 'manifest.json'),
      JSON.stringify({
        version: 1,
        format: 'csv',
        counties: [
          {
            fips: '06067',
            state: 'CA',
            name: 'Sacramento',
            path: 'state=CA/fips=06067/data.csv',
            records: 4,
            pages: 1,
          },
          // a county file's own extension wins over the manifest's format
          {
            fips: '48201',
            state: 'TX',
            name: 'Harris',
            path: 'state=TX/fips=48201/data.ndjson',
            records: 2,
            pages: 1,
          },
        ],
      }),
    )
    // the current file interleaves the counties: a county met again is appended to its group
    const cur = [after[0]!, prop('48201', 8, {City: 'Houston'}), ...after.slice(1)]
    for (const previous of [m, join(m, 'manifest.json')]) {
      const {rows, s} = await compare(previous, file('c.ndjson', ndjson(cur)))
      expect(brief(rows)).toEqual([
        'added 06067/5',
        'updated 06067/2 FinalValue;AssumableMortgage.LoanType',
        'deleted 06067/3',
        // added rows in the current export's order, then the rest in the previous export's
        'deleted 48201/7',
        'updated 48201/8 City',
      ])
      expect(s).toMatchObject({counties: 2, unchanged: 2})
    }
  })

  it('only the counties asked are compared: a county of the previous export not asked is not deleted', async () => {
    const p = file('p.ndjson', ndjson([...before, prop('48201', 7)]))
    const c = file('c.csv', csv([...after, prop('17031', 1)]))
    const {rows, s} = await compare(p, c, {counties: ['06067', '17031']})
    expect(brief(rows)).toEqual([
      'added 06067/5',
      'updated 06067/2 FinalValue;AssumableMortgage.LoanType',
      'deleted 06067/3',
      'added 17031/1',
    ])
    expect(s.counties).toBe(2)
    // without the list, every county of either side: 48201 is gone
    expect(brief((await compare(p, c)).rows)).toContain('deleted 48201/7')
  })

  it('a folder of two counties against a file of one: the other county is all deleted, and named', async () => {
    const m = countyFolder(join(dir, `${n++}-outdir`), 'csv', [
      {fips: '06067', path: 'a.csv', text: csv(before)},
      {fips: '48201', path: 'b.ndjson', text: ndjson([prop('48201', 7), prop('48201', 8)])},
    ])
    const one = file('c.ndjson', ndjson(after))
    const all = await compare(m, one)
    expect(all.s).toMatchObject({deleted: 3, onlyPrevious: [{fips: '48201', rows: 2}], onlyCurrent: []})
    // --fips: only the county both hold, nothing said
    const some = await compare(m, one, {counties: ['06067']})
    expect(brief(some.rows)).toEqual([
      'added 06067/5',
      'updated 06067/2 FinalValue;AssumableMortgage.LoanType',
      'deleted 06067/3',
    ])
    expect(some.s).toMatchObject({counties: 1, onlyPrevious: [], onlyCurrent: [], inNeither: []})
    // the other way round: all added
    expect((await compare(one, m)).s).toMatchObject({added: 3, onlyCurrent: [{fips: '48201', rows: 2}]})
    expect((await compare(m, one, {counties: ['01001']})).s).toMatchObject({inNeither: ['01001'], added: 0})
    // a county file not asked for is not read: damaged, it changes nothing
    writeFileSync(join(m, 'b.ndjson'), 'not an export\n')
    expect(brief((await compare(m, one, {counties: ['06067']})).rows)).toEqual(brief(some.rows))
    await expect(compare(m, one)).rejects.toThrow(/b\.ndjson/)
  })

  it('a county asked that finished empty: all its previous records deleted', async () => {
    const {rows} = await compare(file('p.csv', csv(before)), file('c.csv', csv([])), {counties: ['06067']})
    expect(brief(rows)).toEqual(['deleted 06067/1', 'deleted 06067/2', 'deleted 06067/3', 'deleted 06067/4'])
  })

  it('records without ServicePropertyID are keyed by APN; records with neither are counted, not compared', async () => {
    const p = file(
      'p.ndjson',
      ndjson([
        {Fips: '06067', APN: 'A-1', FinalValue: 1},
        {Fips: '06067', City: 'X'},
      ]),
    )
    const c = file(
      'c.ndjson',
      ndjson([
        {Fips: '06067', APN: 'A-1', FinalValue: 2},
        {Fips: '06067', City: 'Y'},
      ]),
    )
    const {rows, s} = await compare(p, c)
    expect(rows.map((r) => [r['Change'], r['APN'], r['ChangedFields']])).toEqual([
      ['updated', 'A-1', 'FinalValue'],
    ])
    expect(s).toMatchObject({updated: 1, unkeyed: 2})
  })

  it('a repeated id in one county counts once and is reported as a duplicate', async () => {
    const p = file('p.ndjson', ndjson([prop('06067', 1), prop('06067', 1, {FinalValue: 9})]))
    const c = file('c.ndjson', ndjson([prop('06067', 1), prop('06067', 1)]))
    const {rows, s} = await compare(p, c)
    expect(rows).toEqual([])
    expect(s).toMatchObject({unchanged: 1, duplicates: 2})
  })

  it('records in the same order, shifted, reordered or repeated: counted as a map of first ids counts them', async () => {
    // the current side is read in the previous side's order where it can be (compareCounty's guess):
    // any order and any repeats must count as the plain model does
    const side = fc.array(fc.tuple(fc.nat(12), fc.nat(2)), {maxLength: 30})
    await fc.assert(
      fc.asyncProperty(side, side, fc.nat(4), async (prevIds, curIds, mode) => {
        // mode 0: any current side; else the previous one in its order, some values changed (mode 1) or
        // every (mode)th record from the first gone (so a repeated id can follow the last one matched)
        const cur =
          mode === 0
            ? curIds
            : mode === 1
              ? prevIds.map(([id, v], i) => [id, i % 3 === 0 ? v + 1 : v] as const)
              : prevIds.filter((_, i) => i % mode !== 0)
        const first = new Map<number, number>()
        const want = {added: 0, updated: 0, deleted: 0, unchanged: 0, duplicates: 0}
        for (const [id, v] of prevIds)
          if (first.has(id)) want.duplicates++
          else first.set(id, v)
        const met = new Set<number>()
        for (const [id, v] of cur) {
          if (met.has(id)) want.duplicates++
          else if (!first.has(id)) want.added++
          else if (first.get(id) === v) want.unchanged++
          else want.updated++
          met.add(id)
        }
        for (const id of first.keys()) if (!met.has(id)) want.deleted++
        const recs = (ids: ReadonlyArray<readonly [number, number]>) =>
          ndjson(ids.map(([id, v]) => prop('06067', id, {FinalValue: v})))
        const {s} = await compare(file('p.ndjson', recs(prevIds)), file('c.ndjson', recs(cur)))
        expect(s).toMatchObject(want)
      }),
      {numRuns: 60},
    )
  })

  it('change rows past those held in memory, each of its own fields, keep every field through the spool', async () => {
    // 6,000 updated rows (more than the 5,000 held, so they wait in a scratch spool, then go to the rows'
    // spool) of 6,000 layouts (more than the 1,024 a spool numbers, so the later ones carry their names),
    // after 100 added rows (held in memory until the updated ones' spool follows them)
    const N = 6000
    const prev = Array.from({length: N}, (_, i) => prop('06067', i, {[`Extra${i}`]: 'before'}))
    const cur = [
      ...Array.from({length: N}, (_, i) =>
        prop('06067', i, {[`Extra${i}`]: i % 2 ? 'after' : 'before', FinalValue: i}),
      ),
      ...Array.from({length: 100}, (_, i) => prop('06067', N + i)),
    ]
    const out = join(dir, `${n++}-changes.ndjson`)
    const s = await compareExports({
      previous: file('p.ndjson', ndjson(prev)),
      current: file('c.ndjson', ndjson(cur)),
      ignore: ['ValuationDate'],
      out,
      format: 'ndjson',
    })
    expect(s).toMatchObject({updated: N, added: 100, deleted: 0})
    const all = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(all).toHaveLength(N + 100)
    expect(all.slice(0, 100).map((r) => [r['Change'], r['ServicePropertyID']])).toEqual(
      Array.from({length: 100}, (_, i) => ['added', N + i]),
    )
    const rows = all.slice(100)
    rows.forEach((r, i) => {
      const id = r['ServicePropertyID'] as number
      expect(id).toBe(i)
      const changed = id % 2 ? ['FinalValue', `Extra${id}`] : ['FinalValue']
      expect(r['ChangedFields']).toEqual(changed)
      expect(r[`Extra${id}`]).toBe(id % 2 ? 'after' : 'before')
      expect(r['FinalValue']).toBe(id)
      expect(r['Previous']).toEqual({FinalValue: 300_000 + id, ...(id % 2 ? {[`Extra${id}`]: 'before'} : {})})
    })
  })

  it.each(['csv', 'ndjson'] as const)(
    "spooled rows (%s) keep texts that hold the spool's separators and line breaks as they are",
    async (format) => {
      // past the 5,000 rows held in memory, rows are lines of a scratch spool whose texts are joined by
      // U+001F after a mark U+001E (compare.ts RowCodec); a text holding either, or a line break, must
      // come back whole, in a line of its own
      const odd = ['a\x1fb', '\x1estart', 'two\nlines', 'crlf\r\nend', 'tail\r', '\x1f', '', 'plain']
      const N = 6000
      const prev = Array.from({length: N}, (_, i) => prop('06067', i, {City: 'OLD', Note: odd[i % 8]}))
      const cur = Array.from({length: N}, (_, i) =>
        prop('06067', i, {City: odd[(i + 3) % 8], Note: odd[i % 8]}),
      )
      const {s, rows} = await compareInto(format, prev, cur)
      expect(s).toMatchObject({updated: N, added: 0, deleted: 0})
      expect(rows).toHaveLength(N)
      rows.forEach((r, i) => {
        expect(r['City']).toBe(odd[(i + 3) % 8])
        expect(r['Note']).toBe(odd[i % 8])
        const previous =
          format === 'csv' ? r['Previous.City'] : (r['Previous'] as unknown as {City: string}).City
        expect(previous).toBe('OLD')
      })
    },
  )

  it.each(['csv', 'ndjson'] as const)(
    "spooled rows (%s) keep field names and a county that hold the spool's separator or a line break",
    async (format) => {
      // a hostile service may send any name, and the county is a record's Fips: both go into a spooled
      // line (the changed fields, the row's county), so a row holding U+001F or a line break there is JSON
      const odd = 'Odd\x1fName\nhere'
      const N = 12_000 // 6,000 updated: past the 5,000 held in memory
      const fips = (i: number) => (i % 3 ? '06067' : '06\x1f067')
      const prev = Array.from({length: N}, (_, i) => prop(fips(i), i, {[odd]: 'before'}))
      const cur = Array.from({length: N}, (_, i) => prop(fips(i), i, {[odd]: i % 2 ? 'after' : 'before'}))
      const {s, rows} = await compareInto(format, prev, cur)
      expect(s).toMatchObject({updated: N / 2, unchanged: N / 2})
      expect(rows).toHaveLength(N / 2)
      for (const r of rows) {
        const id = Number(r['ServicePropertyID'])
        expect(r['Fips']).toBe(fips(id))
        expect(r[odd]).toBe('after')
        if (format === 'csv') {
          expect(r['ChangedFields']).toBe(odd)
          expect(r[`Previous.${odd}`]).toBe('before')
        } else {
          expect(r['ChangedFields']).toEqual([odd])
          expect(r['Previous']).toEqual({[odd]: 'before'})
        }
      }
    },
  )

  it('spooled rows longer than a read of the spool, and characters of several bytes across its reads, come back whole', async () => {
    // the spool is read back 1 MiB at a time (src/io/lines.ts readLines): a row of a 1.5 MB text spans
    // reads, and 6,000 rows of two- to four-byte characters put some across a read's end
    const N = 6000
    const wide = (i: number) => `ü€😀${'é'.repeat(i % 50)}${i}`
    const long = 'x'.repeat(1_500_000)
    const prev = Array.from({length: N}, (_, i) => prop('06067', i, {City: 'OLD'}))
    const cur = Array.from({length: N}, (_, i) => prop('06067', i, {City: i === 4321 ? long : wide(i)}))
    const {s, rows} = await compareInto('csv', prev, cur)
    expect(s).toMatchObject({updated: N})
    expect(rows.map((r) => r['City'])).toEqual(
      Array.from({length: N}, (_, i) => (i === 4321 ? long : wide(i))),
    )
  })

  it('many records: ids spread over a growing table, every kind counted exactly', async () => {
    const N = 20_000
    const prev = Array.from({length: N}, (_, i) => prop('06067', i))
    const cur = Array.from({length: N}, (_, i) =>
      prop('06067', i + N / 2, i % 10 === 0 ? {FinalValue: 1} : {}),
    )
    const {rows, s} = await compare(file('p.ndjson', ndjson(prev)), file('c.csv', csv(cur)))
    // ids N/2..N-1 in both; those at i%10===0 of the current list changed
    expect(s).toMatchObject({added: N / 2, deleted: N / 2, updated: N / 20, unchanged: N / 2 - N / 20})
    expect(rows).toHaveLength(N + N / 20)
    expect(new Set(rows.map((r) => r['ServicePropertyID'])).size).toBe(N + N / 20)
    // 20,000 entries a side (24 bytes each), a table of at least twice the 40,000 keys they could hold
    // (131,072 slots of 4 bytes), a state byte per previous entry, and the kernel's lists (src/changes/kernel/
    // classify: five of 4 bytes an entry, its five counts on 24 bytes)
    expect(s.tableBytes).toBe(2 * 20_000 * 24 + 131_072 * 4 + 20_000 + 5 * 20_000 * 4 + 24)
  })

  it('CSV change cells and header are guarded as the export guards them: text that starts like a formula, never a number', async () => {
    const p = file('p.ndjson', ndjson([prop('06067', 1, {City: 'A'})]))
    const c = file(
      'c.ndjson',
      ndjson([
        prop('06067', 1, {
          City: '=HYPERLINK("x")',
          FinalValue: -4.5,
          APN: '+1',
          Zip: '-',
          Lender: '@x',
          '=HYPERLINK("http://x")': 'y',
        }),
      ]),
    )
    const out = join(dir, `${n++}-changes.csv`)
    await compareExports({previous: p, current: c, ignore: [], out, format: 'csv'})
    const text = readFileSync(out, 'utf8')
    const [header, row] = parse(text) as string[][]
    const cell = (name: string) => row![header!.indexOf(name)]
    // the header names a field as the export's header does: guarded, then quoted
    expect(text.split('\r\n')[0]).toContain(`,"'=HYPERLINK(""http://x"")",`)
    expect(cell(`'=HYPERLINK("http://x")`)).toBe('y')
    expect(cell('City')).toBe(`'=HYPERLINK("x")`)
    expect(cell('Previous.City')).toBe('A')
    expect(cell('FinalValue')).toBe('-4.5') // a number is never guarded
    expect(cell('APN')).toBe("'+1") // APN is text (spec 2.1 varchar): written as the export writes it
    expect(cell('Zip')).toBe("'-")
    expect(cell('Lender')).toBe("'@x")
  })

  it('leaves no scratch files behind', async () => {
    // a temp folder of this test's own: other test files running beside it make sfl-changes-* folders in
    // the shared one, so counting there could see theirs
    const inputs = [file('p.csv', csv([prop('06067', 1)])), file('c.csv', csv([prop('06067', 2)]))] as const
    const own = mkdtempSync(join(tmpdir(), 'sfl-scratch-test-'))
    const saved = process.env.TMPDIR
    process.env.TMPDIR = own
    try {
      await compare(...inputs)
      expect(tmpdir()).toBe(own)
    } finally {
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
    }
    expect(readdirSync(own)).toEqual([])
    rmSync(own, {recursive: true, force: true})
  })
})
