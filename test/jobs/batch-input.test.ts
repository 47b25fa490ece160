import {describe, expect, it} from 'vitest'

import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {
  BatchInput,
  blankRow,
  compactKey,
  dedupeKey,
  InputError,
  KeySet,
  RowKeys,
  type InputRow,
} from '../../src/jobs/batch-input.js'
import type {ColumnMap} from '../../src/jobs/batch-map.js'

const dir = mkdtempSync(join(tmpdir(), 'sfl-input-test-'))
let n = 0
/** Write the text to a file, open it as a batch input and read every row. */
const parse = async (text: string | Buffer, fips?: string, map: ColumnMap = {}) => {
  const path = join(dir, `in-${n++}.csv`)
  writeFileSync(path, text)
  const input = await BatchInput.open(path, 'in.csv', fips, undefined, map)
  const rows: InputRow[] = []
  for await (const r of input.rows()) rows.push(r)
  return {columns: input.columns, rows}
}

describe('batch input parsing', () => {
  it('reads CSV with quoted commas, doubled quotes, CRLF and a BOM; carries every column', async () => {
    const p = await parse(
      '\ufeffName,fips,address,Notes\r\n"Doe, Jane",06067,"3526 HIGH ST, SACRAMENTO, CA 95838","says ""hi"""\r\n',
    )
    expect(p.columns).toEqual(['Name', 'fips', 'address', 'Notes'])
    expect(p.rows).toHaveLength(1)
    expect(p.rows[0]!.values).toEqual({
      Name: 'Doe, Jane',
      fips: '06067',
      address: '3526 HIGH ST, SACRAMENTO, CA 95838',
      Notes: 'says "hi"',
    })
    expect(p.rows[0]!.query).toEqual({
      fips: '06067',
      by: {kind: 'address', value: '3526 HIGH ST, SACRAMENTO, CA 95838'},
    })
    expect(p.rows[0]!.line).toBe(2)
  })

  it('reads NDJSON, numbers included', async () => {
    const p = await parse(
      '{"fips":"06067","property_id":30000000006}\n\n{"fips":"06067","apn":"078-0123-045","x":true}\n',
    )
    expect(p.columns).toEqual(['fips', 'property_id', 'apn', 'x'])
    expect(p.rows.map((r) => r.query?.by.kind)).toEqual(['property_id', 'apn'])
    expect(p.rows[1]!.line).toBe(3)
  })

  it("carries a column named as Object.prototype's own (__proto__, constructor) like any other", async () => {
    // a sheet may name a column anything: an ordinary object made `__proto__` its prototype (the cell
    // lost) and answered a missing `constructor` with Object itself (the output then failed)
    const csv = await parse('apn,fips,__proto__,constructor\n078-0123-039,06067,p1,k1\n')
    expect(csv.columns).toEqual(['apn', 'fips', '__proto__', 'constructor'])
    expect(Object.entries(csv.rows[0]!.values)).toEqual([
      ['apn', '078-0123-039'],
      ['fips', '06067'],
      ['__proto__', 'p1'],
      ['constructor', 'k1'],
    ])
    const lines = await parse(
      '{"apn":"078-0123-039","fips":"06067","__proto__":"p1"}\n{"apn":"078-0123-039","fips":"06067","constructor":"k2"}\n',
    )
    expect(lines.columns).toEqual(['apn', 'fips', '__proto__', 'constructor'])
    expect(lines.rows[0]!.values['__proto__']).toBe('p1')
    expect(lines.rows[0]!.values['constructor']).toBeUndefined()
    expect(lines.rows[1]!.values['__proto__']).toBeUndefined()
    expect(lines.rows[1]!.values['constructor']).toBe('k2')
  })

  it('uses --fips for rows without a county', async () => {
    const p = await parse('apn\n078-0123-045\n', '06067')
    expect(p.rows[0]!.query?.fips).toBe('06067')
  })

  it('marks rows that break a lookup rule invalid, with the line and the rule', async () => {
    const p = await parse('fips,address,apn\n606777,x,\n06067,,\n06067,a,b\n67,x,\n')
    expect(p.rows.map((r) => r.invalid)).toEqual([
      'line 2: fips "606777" must be exactly 5 digits (2-digit state code + 3-digit county code)',
      'line 3: give exactly one of address, apn or property_id; none was given',
      undefined,
      'line 5: fips "67" must be exactly 5 digits (2-digit state code + 3-digit county code)',
    ])
  })

  it('a row with several identifiers is looked up by the most precise, and its note names the ones not used', async () => {
    const p = await parse(
      'fips,address,apn,property_id\n06067,"3526 High St, Sacramento",078-0123-045,\n06067,x,078-0123-045,30000000006\n06067,x,,\n',
    )
    expect(p.rows.map((r) => [r.query?.by, r.note])).toEqual([
      [
        {kind: 'apn', value: '078-0123-045'},
        'looked up by apn; not used: address "3526 High St, Sacramento"',
      ],
      [
        {kind: 'property_id', value: '30000000006'},
        'looked up by property_id; not used: apn "078-0123-045", address "x"',
      ],
      [{kind: 'address', value: 'x'}, undefined],
    ])
    // one identity for de-duplication: the row's APN, whatever address came with it
    expect(p.rows[0]!.key).toBe((await parse('fips,apn\n06067,078-0123-045\n')).rows[0]!.key)
  })

  it('pads a fips that lost its leading zero (Excel) to 5 digits and notes it on the row', async () => {
    const p = await parse('FIPS,Address\n6067,3526 HIGH ST\n06067,3526 HIGH ST\n" 6067 ",1 A ST\n')
    expect(p.rows.map((r) => r.query?.fips)).toEqual(['06067', '06067', '06067'])
    expect(p.rows.map((r) => r.note)).toEqual([
      'fips 6067 read as 06067 (leading zero restored)',
      undefined,
      'fips 6067 read as 06067 (leading zero restored)',
    ])
    // the same property typed both ways is one lookup
    expect(p.rows[0]!.key).toBe(p.rows[1]!.key)
  })

  it('pads a 3-digit fips too, and the state rule then judges it', async () => {
    const p = await parse('fips,apn\n123,1\n')
    expect(p.rows[0]!.note).toBe('fips 123 read as 00123 (leading zero restored)')
    expect(p.rows[0]!.invalid).toBe(
      'line 2: fips "00123" starts with 00, which is not a US state or territory code',
    )
  })

  it('keeps header names exactly as typed and still finds the lookup columns ignoring case', async () => {
    const p = await parse('FIPS,Address,City, Property ID \n06067,3526 HIGH ST,Sacramento,\n')
    expect(p.columns).toEqual(['FIPS', 'Address', 'City', ' Property ID '])
    expect(p.rows[0]!.values).toEqual({
      FIPS: '06067',
      Address: '3526 HIGH ST',
      City: 'Sacramento',
      ' Property ID ': '',
    })
    expect(p.rows[0]!.query).toEqual({fips: '06067', by: {kind: 'address', value: '3526 HIGH ST'}})
  })

  it('names the typed column in a row error', async () => {
    const p = await parse('Fips,Parcel Number,APN\n06067,,' + 'x'.repeat(46) + '\n')
    expect(p.rows[0]!.invalid).toBe('line 2: APN is 46 characters; the service allows at most 45')
  })

  it('builds the address from mapped columns as "street, city, state zip"', async () => {
    const p = await parse(
      'Street,Unit,City,State,Zip,County\n3526 High St,,Sacramento,CA,95838,6067\n1150 River Oaks Dr,#114,Sacramento,CA,95831,06067\n',
      undefined,
      {address: ['street', 'unit', 'CITY', 'state', 'zip'], fips: ['county']},
    )
    expect(p.rows.map((r) => r.query)).toEqual([
      {fips: '06067', by: {kind: 'address', value: '3526 High St, Sacramento, CA 95838'}},
      {fips: '06067', by: {kind: 'address', value: '1150 River Oaks Dr, #114, Sacramento, CA 95831'}},
    ])
    expect(p.rows.map((r) => r.note)).toEqual(['fips 6067 read as 06067 (leading zero restored)', undefined])
  })

  it('a mapped address with every part blank is "none was given", naming the columns', async () => {
    const p = await parse('street,city,fips\n,,06067\n', undefined, {address: ['street', 'city']})
    expect(p.rows[0]!.invalid).toBe(
      'line 2: give exactly one of address (street + city), apn or property_id; none was given',
    )
  })

  it('a map overrides a column of the same name; other lookup columns are still read by name', async () => {
    const p = await parse('address,Parcel,fips\nold text,078-0123-045,06067\n', undefined, {
      apn: ['parcel'],
    })
    expect(p.rows[0]!.query).toEqual({fips: '06067', by: {kind: 'apn', value: '078-0123-045'}})
    expect(p.rows[0]!.note).toBe('looked up by apn; not used: address "old text"')
    const q = await parse('address,Parcel,fips\nold text,078-0123-045,06067\n', undefined, {
      address: ['Parcel'],
    })
    expect(q.rows[0]!.query).toEqual({fips: '06067', by: {kind: 'address', value: '078-0123-045'}})
  })

  it('refuses a map naming a column the input lacks, with the nearest header name', async () => {
    await expect(
      parse('Street,City,fips\n1 A ST,X,06067\n', undefined, {address: ['stret', 'city']}),
    ).rejects.toThrow('--map address: no column "stret" in in.csv; did you mean "Street"?')
    await expect(
      parse('Street,City,fips\n1 A ST,X,06067\n', undefined, {apn: ['parcel_no']}),
    ).rejects.toThrow('--map apn: no column "parcel_no" in in.csv; the columns are: Street, City, fips')
  })

  it('maps NDJSON keys too, and refuses two spellings of one lookup key', async () => {
    const p = await parse('{"County":6067,"Street":"3526 HIGH ST","Zip":"95838"}\n', undefined, {
      fips: ['county'],
      address: ['street', 'zip'],
    })
    expect(p.rows[0]!.query).toEqual({fips: '06067', by: {kind: 'address', value: '3526 HIGH ST 95838'}})
    await expect(parse('{"fips":"06067","apn":"1"}\n{"FIPS":"06067","apn":"2"}\n')).rejects.toThrow(
      'in.csv: the keys "fips" and "FIPS" both name fips; use one spelling, or pick one with --map fips=fips',
    )
  })

  it('reads a CSV as Excel saves it: BOM, CRLF, blank rows (,,,) kept in the middle and counted at the end', async () => {
    const path = join(dir, `in-${n++}.csv`)
    writeFileSync(
      path,
      '\ufeffName,fips,apn,Notes\r\n' +
        'a,06067,078-0123-045,x\r\n' +
        ',,,\r\n' + // a formatted blank row in the middle
        'b,06067,078-0123-046,\r\n' +
        ' , ,,\r\n' + // spaces only: blank too, and after the last data row
        '\r\n' + // a truly empty line, skipped as before (not counted as a blank row)
        ',,,\r\n,,,\r\n', // the run of blank rows Excel leaves at the end
    )
    const input = await BatchInput.open(path, 'in.csv', undefined)
    // the one in the middle keeps its place (one output row per input row); the three at the end do not
    expect([input.keptBlank, input.blankRows]).toEqual([1, 3])
    const rows: InputRow[] = []
    for await (const r of input.rows()) rows.push(r)
    expect(rows.map((r) => [r.line, r.values['Name'], r.invalid, r.blank, r.query?.by.value])).toEqual([
      [2, 'a', undefined, undefined, '078-0123-045'],
      [3, '', undefined, true, undefined],
      [4, 'b', undefined, undefined, '078-0123-046'],
    ])
    // the output pass sees the same rows, in the same places
    const records: Array<[number, boolean]> = []
    for await (const r of input.records()) records.push([r.line, r.blank === true])
    expect(records).toEqual([
      [2, false],
      [3, true],
      [4, false],
    ])
  })

  it.each([
    [['', '', ''], true],
    [[' ', '\t', ''], true],
    [[''], true],
    [['', '', '0'], false],
    [['', '"', ''], false],
  ])('blankRow(%j) is %s', (fields, blank) => expect(blankRow(fields)).toBe(blank))

  it('reads a TAB-separated header and rows (a .tsv, or a text Excel saved) with CSV quoting', async () => {
    const p = await parse('Name\tfips\tapn\n"Doe, ""J"""\t06067\t078-0123-045\n')
    expect(p.columns).toEqual(['Name', 'fips', 'apn'])
    expect(p.rows.map((r) => [r.values, r.query?.by])).toEqual([
      [
        {Name: 'Doe, "J"', fips: '06067', apn: '078-0123-045'},
        {kind: 'apn', value: '078-0123-045'},
      ],
    ])
  })

  it('a header with a comma stays CSV even if it holds a tab', async () => {
    const p = await parse('fips,apn,note\tmore\n06067,1,x\ty\n')
    expect(p.columns).toEqual(['fips', 'apn', 'note\tmore'])
  })

  it('remembers whether the input starts with a BOM', async () => {
    const path = join(dir, `bom-${n++}.csv`)
    writeFileSync(path, '\ufefffips,apn\n06067,1\n')
    expect((await BatchInput.open(path, 'in.csv', undefined)).bom).toBe(true)
    writeFileSync(path, 'fips,apn\n06067,1\n')
    expect((await BatchInput.open(path, 'in.csv', undefined)).bom).toBe(false)
  })

  it.each([
    ['', /in\.csv: the input is empty/],
    ['\ufeff\n\n', /the input is empty/],
    ['fips,address\n06067,"x\n', /in\.csv line 2: Quote Not Closed/],
    ['fips,address\n06067,a,extra\n', /in\.csv line 2: Invalid Record Length: expect 2, got 3/],
    [
      'fips,address\n06067,a"b",c\n',
      /in\.csv line 2: Invalid Opening Quote|line 2: Invalid Closing Quote|line 2:/,
    ],
    [
      'fips,name\n06067,x\n',
      /line 1: no lookup column; expected one of address, apn, property_id \(found: fips, name\), or name yours with --map address=street,city,state,zip/,
    ],
    // an address column alone is taken: its rows are placed by their ZIPs (test/e2e/batch-zip.e2e.test.ts)
    [
      'apn\n078-1\n',
      /line 1: no fips column; add one, name yours with --map fips=COLUMN, or give a default county with --fips/,
    ],
    ['fips,address,address\n', /line 1: the column "address" appears twice in the header/],
    ['fips,Address,address\n', /line 1: the columns "Address" and "address" differ only in case or spacing/],
    ['{"fips":"06067","address":"x"}\n{oops\n', /in\.csv line 2: not valid JSON/],
    ['{"fips":"06067","address":"x"}\n[1]\n', /line 2: expected a JSON object per line/],
  ])('a malformed input %j stops with the line number', async (text, msg) => {
    await expect(parse(text)).rejects.toThrow(InputError)
    await expect(parse(text)).rejects.toThrow(msg)
  })

  it('rejects binary garbage, naming what it looks like, and non-UTF-8 text', async () => {
    await expect(
      parse(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00])),
    ).rejects.toThrow(
      'in.csv: it is a PNG image, not a table of lookups; give them as CSV UTF-8 or as an .xlsx workbook',
    )
    await expect(parse(Buffer.from([0x66, 0x69, 0x70, 0x73, 0x0a, 0x00, 0x01]))).rejects.toThrow(
      'in.csv: it is a binary file (a NUL byte at offset 5), not CSV or NDJSON text; save it as CSV UTF-8',
    )
    await expect(parse(Buffer.from([0x66, 0x69, 0x70, 0x73, 0x0a, 0xff, 0xfe, 0x41]))).rejects.toThrow(
      /not UTF-8 text/,
    )
  })
})

describe('dedupeKey', () => {
  it('treats spellings of the same address as one lookup', () => {
    const k = (v: string) => dedupeKey({fips: '06067', by: {kind: 'address', value: v}})
    expect(k('3526 High Street, Sacramento, CA 95838')).toBe(k('3526 HIGH ST, SACRAMENTO, CA 95838'))
    expect(k('1150 River Oaks Dr Apt 114')).toBe(k('1150 RIVER OAKS DR #114'))
    expect(k('1150 River Oaks Dr Apt 114')).not.toBe(k('1150 RIVER OAKS DR #115'))
    // the unit's value counts, not its designator or leading zeros
    expect(k('1150 River Oaks Drive Unit 0114')).toBe(k('1150 RIVER OAKS DR STE 114'))
    expect(k('10 North Main Avenue, Sacramento, CA 95838')).toBe(k('10 N MAIN AVE, SACRAMENTO CA 95838'))
    expect(k('10 North Main Avenue')).not.toBe(k('10 N MAIN AVE, SACRAMENTO CA 95838'))
    // whole words only: STEELE is a street, not STE ELE
    expect(k('12 Steele St')).not.toBe(k('12 ST UNIT ELE'))
    expect(dedupeKey({fips: '06067', by: {kind: 'apn', value: '1'}})).not.toBe(
      dedupeKey({fips: '06037', by: {kind: 'apn', value: '1'}}),
    )
  })
})

describe('the key set and row keys of a batch', () => {
  it('a key is new once, whatever the set has grown to', () => {
    const set = new KeySet()
    const keys = Array.from({length: 20_000}, (_, i) => compactKey(`06067|apn|${i}`))
    expect(keys.every((k) => set.add(k))).toBe(true)
    expect(keys.some((k) => set.add(k))).toBe(false)
    set.clear()
    expect(set.add(keys[0]!)).toBe(true)
  })

  it('row keys give back each row its key, and nothing for a row without a lookup', () => {
    const rows = new RowKeys()
    const keys = Array.from({length: 10_000}, (_, i) => (i % 7 === 0 ? undefined : compactKey(`k${i}`)))
    for (const k of keys) rows.push(k)
    expect(keys.map((_, i) => rows.get(i))).toEqual(keys)
  })
})
