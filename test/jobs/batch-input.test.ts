import {describe, expect, it} from 'vitest'

import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {
  BatchInput,
  compactKey,
  dedupeKey,
  InputError,
  KeySet,
  RowKeys,
  type InputRow,
} from '../../src/jobs/batch-input.js'

const dir = mkdtempSync(join(tmpdir(), 'sfl-input-test-'))
let n = 0
/** Write the text to a file, open it as a batch input and read every row. */
const parse = async (text: string | Buffer, fips?: string) => {
  const path = join(dir, `in-${n++}.csv`)
  writeFileSync(path, text)
  const input = await BatchInput.open(path, 'in.csv', fips)
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

  it('uses --fips for rows without a county', async () => {
    const p = await parse('apn\n078-0123-045\n', '06067')
    expect(p.rows[0]!.query?.fips).toBe('06067')
  })

  it('marks rows that break a lookup rule invalid, with the line and the rule', async () => {
    const p = await parse('fips,address,apn\n6067,x,\n06067,,\n06067,a,b\n')
    expect(p.rows.map((r) => r.invalid)).toEqual([
      'line 2: fips "6067" must be exactly 5 digits (2-digit state code + 3-digit county code)',
      'line 3: give exactly one of address, apn or property_id; none was given',
      'line 4: give exactly one of address, apn or property_id; got address and apn',
    ])
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
      /line 1: no lookup column; expected one of address, apn, property_id \(found: fips, name\)/,
    ],
    ['address\n1 MAIN ST\n', /line 1: no fips column; add one or give a default county with --fips/],
    ['fips,Address,address\n', /the column "address" appears twice/],
    ['{"fips":"06067","address":"x"}\n{oops\n', /in\.csv line 2: not valid JSON/],
    ['{"fips":"06067","address":"x"}\n[1]\n', /line 2: expected a JSON object per line/],
  ])('a malformed input %j stops with the line number', async (text, msg) => {
    await expect(parse(text)).rejects.toThrow(InputError)
    await expect(parse(text)).rejects.toThrow(msg)
  })

  it('rejects binary garbage and non-UTF-8 text', async () => {
    await expect(
      parse(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00])),
    ).rejects.toThrow(/not a text file \(a NUL byte at offset 8\)/)
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
