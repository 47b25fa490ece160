import {describe, expect, it} from 'vitest'

import {batchFormat, batchOutput, lookupRequest} from '../../src/cli/lookup-flags.js'
import {UsageError} from '../../src/errors.js'
import {batchProblems} from '../../src/cli/jobs.js'

describe('the output format of lookup --input', () => {
  it.each([
    // [flags, stdout is a terminal, format]
    [{}, true, 'csv'],
    [{}, false, 'json'],
    [{bom: true}, false, 'csv'],
    [{out: 'res.json'}, true, 'json'],
    [{out: 'res.JSON'}, false, 'json'],
    [{out: 'res.ndjson'}, true, 'ndjson'],
    [{out: 'res.jsonl'}, false, 'ndjson'],
    [{out: 'res.csv'}, false, 'csv'],
    [{out: 'results'}, false, 'csv'],
    [{out: 'res.txt'}, false, 'csv'],
    [{output: 'ndjson'}, true, 'ndjson'],
    [{output: 'json', out: 'res.json'}, true, 'json'],
    [{output: 'csv', out: 'results.txt'}, true, 'csv'],
  ] as const)('%j (terminal: %s) → %s', (flags, tty, format) => {
    expect(batchFormat(flags, tty)).toBe(format)
  })

  it('an --output that contradicts --out is exit 2 naming both', () => {
    expect(() => batchFormat({out: 'res.json', output: 'csv'}, true)).toThrow(
      '--out res.json names a JSON file but --output is csv; drop --output (the extension decides) or make them agree',
    )
    expect(() => batchFormat({out: 'res.csv', output: 'ndjson'}, true)).toThrow(
      /names a CSV file but --output is ndjson/,
    )
  })

  it('a .parquet --out and --output table are refused', () => {
    expect(() => batchFormat({out: 'res.parquet'}, true)).toThrow(/Parquet is written by county-export/)
    expect(() => batchFormat({output: 'table'}, true)).toThrow('--output table is for one property')
  })

  it('an --out named .xlsx is a workbook; --bom and a contradicting --output are refused with it', () => {
    expect(batchFormat({out: 'r.xlsx'}, true)).toBe('xlsx')
    expect(batchFormat({out: 'R.XLSX'}, false)).toBe('xlsx')
    expect(() => batchOutput({out: 'r.xlsx', bom: true}, true)).toThrow(
      '--bom is for CSV output (Excel); xlsx output never starts with a BOM',
    )
    expect(() => batchFormat({out: 'r.xlsx', output: 'csv'}, true)).toThrow(
      '--out r.xlsx names a XLSX file but --output is csv',
    )
    expect(() => batchFormat({out: 'r.xlsx.gz'}, true)).toThrow('already a ZIP archive')
  })

  it('the other batch output checks', () => {
    expect(() => batchOutput({restart: true}, true)).toThrow('--restart needs --out')
    expect(() => batchOutput({resume: true, restart: true, out: 'a.csv'}, true)).toThrow('contradict')
    expect(() => batchOutput({bom: true, out: 'a.json'}, true)).toThrow('--bom is for CSV output')
    expect(batchOutput({bom: true, out: 'a.csv'}, false)).toBe('csv')
  })
})

describe('the problem lines of a batch (printed with --quiet too)', () => {
  const none = {
    ok: 0,
    matched_without_unit: 0,
    not_found: 0,
    invalid: 0,
    forbidden: 0,
    malformed: 0,
    error: 0,
    blank: 0,
    filtered: 0,
  }
  it('one line per status that makes the exit code 7, none for answers', () => {
    expect(
      batchProblems(
        {...none, ok: 3, not_found: 2, matched_without_unit: 1, blank: 4, filtered: 5},
        'res.csv',
      ),
    ).toEqual([])
    expect(batchProblems({...none, invalid: 1, error: 1200}, 'res.csv')).toEqual([
      '  1 row invalid: a lookup rule is broken, so nothing was sent for them; see the status and error columns of res.csv',
      '  1,200 rows not answered (network, server or a stop); rerun the same command to ask them again; see the status and error columns of res.csv',
    ])
    expect(batchProblems({...none, forbidden: 2, malformed: 1}, undefined)).toEqual([
      '  2 rows forbidden (HTTP 403): the key may not look up their county; see the status and error columns of the output',
      '  1 row with a malformed answer from the service; see the status and error columns of the output',
    ])
  })
})

describe('an identifier flag given empty', () => {
  it("is that flag's one line, with or without a county, blank or empty, beside another identifier too", () => {
    for (const f of [
      {address: ''},
      {address: '', fips: '06067'},
      {address: '   ', fips: '06067'},
      {address: '   '},
      {address: '', apn: '123', fips: '06067'},
    ])
      expect(() => lookupRequest(f, 'json')).toThrow(new UsageError('--address must not be empty'))
    expect(() => lookupRequest({apn: ' ', fips: '06067'}, 'json')).toThrow(
      new UsageError('--apn must not be empty'),
    )
    expect(() => lookupRequest({'property-id': '', county: 'Sacramento, CA'}, 'json')).toThrow(
      new UsageError('--property-id must not be empty'),
    )
    // not given at all is still the county's or the identifiers' line
    expect(() => lookupRequest({fips: '06067'}, 'json')).toThrow(/give exactly one of --address/)
  })
})
