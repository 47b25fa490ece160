import {mkdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ExportFileError} from '../../src/io/export-reader.js'
import {
  columnsProblem,
  openExportSource,
  TRUSTED_LIMITS,
  UNTRUSTED_LIMITS,
} from '../../src/io/export-source.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * The one gate for export paths (src/io/export-source.ts), its rules as tables: which column lists are an
 * export's, which first records, and what a file named otherwise or shaped like Parquet must be.
 */
describe('an export is known by its columns', () => {
  it.each([
    [['Fips', 'ServicePropertyID', 'FinalValue'], undefined],
    [['FinalValue'], undefined],
    [['Fips', 'AssumableMortgage.LoanType', 'FHACondoEligibility.CondoName'], undefined],
    // a sub-field the spec does not list, under an option the spec has: a server's addition, kept
    [['Fips', 'AssumableMortgage.ServicerName'], undefined],
    [[''], 'it names no column'],
    [['Fips', 'password'], 'column 2 is no field of the spec'],
    [['Fips', 'Fips'], 'column 2 repeats an earlier one'],
    [['Other.Field'], 'column 1 is no field of the spec'],
    [['AssumableMortgage.bad name'], 'column 1 is no field of the spec'],
  ])('%j: %s', (names, problem) => {
    expect(columnsProblem(names)).toBe(problem)
  })
})

describe('openExportSource', () => {
  const refusal = async (path: string, limits = UNTRUSTED_LIMITS) => {
    const e = await openExportSource(path, limits).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(ExportFileError)
    return (e as Error).message
  }

  it("sfl's JSON layout (an array, a record a line) is read by its first record", async () => {
    const dir = tempDir()
    const ok = join(dir, 'x.json')
    writeFileSync(
      ok,
      '[\n{"Fips":"06067","ServicePropertyID":1},\n{"Fips":"06067","ServicePropertyID":2}\n]\n',
    )
    const source = await openExportSource(ok, UNTRUSTED_LIMITS)
    const records = []
    for await (const r of source.records(source.files[0]!)) records.push(r)
    expect(records).toEqual([
      {Fips: '06067', ServicePropertyID: 1},
      {Fips: '06067', ServicePropertyID: 2},
    ])
    const empty = join(dir, 'empty.json')
    writeFileSync(empty, '[]\n')
    expect((await openExportSource(empty, UNTRUSTED_LIMITS)).files).toHaveLength(1)
    const pretty = join(dir, 'pretty.json')
    writeFileSync(pretty, '{\n  "secret": "x"\n}\n')
    expect(await refusal(pretty)).toBe(
      `${pretty} is not an sfl export: it is not a JSON array with a record a line, as sfl writes one; nothing more of it was read`,
    )
  })

  it('a file named otherwise is known by its first bytes; an empty file is no export', async () => {
    const dir = tempDir()
    const nd = join(dir, 'export.txt')
    writeFileSync(nd, '{"Fips":"06067"}\n')
    expect((await openExportSource(nd, TRUSTED_LIMITS)).files[0]!.format).toBe('ndjson')
    const blank = join(dir, 'blank.csv')
    writeFileSync(blank, '')
    expect(await refusal(blank, TRUSTED_LIMITS)).toBe(
      `${blank} is not an sfl export: the file is empty; nothing more of it was read`,
    )
  })

  it('a file that only looks like Parquet is refused by its footer, unparsed', async () => {
    const dir = tempDir()
    const fake = join(dir, 'x.parquet')
    writeFileSync(fake, Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(64, 7), Buffer.from('PAR1')]))
    expect(await refusal(fake)).toMatch(
      /^.*x\.parquet is not an sfl export: its Parquet metadata is larger than an export has;/,
    )
  })

  it.each(['_sfl/manifest.json', 'manifest.json'])(
    'a folder with its manifest at %s: the county paths are relative to the folder, the same files from the folder and from the manifest',
    async (place) => {
      const dir = tempDir()
      mkdirSync(join(dir, 'state=CA', 'fips=06067'), {recursive: true})
      writeFileSync(join(dir, 'state=CA', 'fips=06067', 'data.csv'), 'Fips,FinalValue\r\n06067,1\r\n')
      mkdirSync(join(dir, '_sfl'), {recursive: true})
      const counties = [{fips: '06067', path: 'state=CA/fips=06067/data.csv'}]
      writeFileSync(join(dir, place), JSON.stringify({version: 1, format: 'csv', counties}))
      for (const arg of [dir, join(dir, place)]) {
        const source = await openExportSource(arg, UNTRUSTED_LIMITS)
        expect(source.manifest).toMatch(new RegExp(`${place.replace('.', '\\.')}$`))
        expect(source.files.map((f) => [f.fips, f.path])).toEqual([
          ['06067', join(dir, 'state=CA', 'fips=06067', 'data.csv')],
        ])
      }
    },
  )

  it("untrusted: an _sfl/ that is a link to another folder is refused, not read as this folder's", async () => {
    const dir = tempDir()
    const elsewhere = tempDir()
    writeFileSync(join(elsewhere, 'manifest.json'), JSON.stringify({version: 1, format: 'csv', counties: []}))
    symlinkSync(elsewhere, join(dir, '_sfl'))
    expect(await refusal(dir)).toBe(
      `${join(dir, '_sfl')} is a symbolic link, not an export: only regular files and folders are read`,
    )
  })

  it('untrusted: a file over the size cap is refused before it is read', async () => {
    const dir = tempDir()
    const big = join(dir, 'big.ndjson')
    writeFileSync(big, '{"Fips":"06067"}\n'.repeat(10))
    expect(await refusal(big, {...UNTRUSTED_LIMITS, maxBytes: 100})).toBe(
      `${big} is larger than 100 bytes, the most this reader takes; not read`,
    )
  })
})
