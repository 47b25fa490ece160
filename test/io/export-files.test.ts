import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {ExportFileError} from '../../src/io/export-reader.js'
import {allParquet, exportFiles} from '../../src/io/export-files.js'

const made: string[] = []
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, {recursive: true, force: true})
})
function folder(): string {
  const d = mkdtempSync(join(tmpdir(), 'sfl-export-files-'))
  made.push(d)
  return d
}

/** An --out-dir export: two counties, one file named by the manifest's format, one by its own extension. */
function outDir(place = '_sfl/manifest.json'): string {
  const d = folder()
  for (const [fips, name] of [
    ['06067', 'data.csv'],
    ['06113', 'data.ndjson'],
  ] as const) {
    mkdirSync(join(d, `state=CA/fips=${fips}`), {recursive: true})
    writeFileSync(join(d, `state=CA/fips=${fips}`, name), '')
  }
  const counties = [
    {fips: '06067', path: 'state=CA/fips=06067/data.csv'},
    {fips: '06113', path: 'state=CA/fips=06113/data.ndjson'},
  ]
  // _sfl/manifest.json as sfl writes it now, or manifest.json at the root as sfl before 0.3 did
  if (place === '_sfl/manifest.json') mkdirSync(join(d, '_sfl'))
  writeFileSync(join(d, place), JSON.stringify({version: 1, format: 'csv', counties}))
  return d
}

describe('one resolver for export arguments (sfl stats, sfl changes, --changes-since)', () => {
  it.each(['_sfl/manifest.json', 'manifest.json'])(
    'a folder and its %s resolve to the same county files, in the manifest order',
    async (place) => {
      const d = outDir(place)
      const want = {
        manifest: join(d, place),
        files: [
          {path: join(d, 'state=CA/fips=06067/data.csv'), fips: '06067', format: 'csv'},
          {path: join(d, 'state=CA/fips=06113/data.ndjson'), fips: '06113', format: 'ndjson'},
        ],
      }
      expect(await exportFiles(d)).toEqual(want)
      expect(await exportFiles(join(d, place))).toEqual(want)
    },
  )

  it('an export file is itself, with no county and no manifest', async () => {
    const d = folder()
    writeFileSync(join(d, 'x.csv'), 'Fips\n06067\n')
    expect(await exportFiles(join(d, 'x.csv'))).toEqual({
      manifest: undefined,
      files: [{path: join(d, 'x.csv')}],
    })
  })

  it.each([
    [
      'a missing path',
      (d: string) => join(d, 'nope'),
      (d: string) => `${join(d, 'nope')}: no such file or folder`,
    ],
    [
      'a folder without a manifest',
      (d: string) => d,
      (d: string) =>
        `${d} is a folder without _sfl/manifest.json; give an export file or an --out-dir folder`,
    ],
  ])('%s: a usage error naming it', async (_name, arg, message) => {
    const d = folder()
    const error = await exportFiles(arg(d)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ExportFileError)
    expect((error as Error).message).toBe(message(d))
  })

  it('a manifest naming a county file that is gone: refused before anything is read', async () => {
    const d = outDir()
    rmSync(join(d, 'state=CA/fips=06113/data.ndjson'))
    await expect(exportFiles(d)).rejects.toThrow(
      `${join(d, '_sfl/manifest.json')}: the file of county 06113 (state=CA/fips=06113/data.ndjson) is missing`,
    )
  })
})

describe('whether exports are all Parquet (the CLI raises V8 budget for such runs)', () => {
  it('Parquet files by name or by their magic bytes, and a folder whose county files all are: yes', async () => {
    const d = folder()
    writeFileSync(join(d, 'a.parquet'), 'not even Parquet inside: the name says')
    writeFileSync(join(d, 'b.bin'), 'PAR1....PAR1')
    expect(await allParquet([join(d, 'a.parquet'), join(d, 'b.bin')])).toBe(true)
    const o = folder()
    mkdirSync(join(o, 'state=CA/fips=06067'), {recursive: true})
    writeFileSync(join(o, 'state=CA/fips=06067/data.parquet'), '')
    mkdirSync(join(o, '_sfl'))
    writeFileSync(
      join(o, '_sfl/manifest.json'),
      JSON.stringify({
        version: 1,
        format: 'parquet',
        counties: [{fips: '06067', path: 'state=CA/fips=06067/data.parquet'}],
      }),
    )
    expect(await allParquet([o, join(d, 'a.parquet')])).toBe(true)
  })

  it('a CSV or NDJSON file, a folder holding one, a missing path or no path at all: no', async () => {
    const d = folder()
    writeFileSync(join(d, 'a.parquet'), '')
    writeFileSync(join(d, 'x.csv'), 'Fips\n06067\n')
    writeFileSync(join(d, 'y'), '{"Fips":"06067"}\n')
    expect(await allParquet([join(d, 'a.parquet'), join(d, 'x.csv')])).toBe(false)
    expect(await allParquet([join(d, 'y')])).toBe(false)
    expect(await allParquet([outDir()])).toBe(false)
    expect(await allParquet([join(d, 'nope.parquet')])).toBe(false)
    expect(await allParquet([])).toBe(false)
    // a named pipe, even one named .parquet: not opened (that would wait for a writer), not Parquet
    execFileSync('mkfifo', [join(d, 'pipe.parquet')])
    execFileSync('mkfifo', [join(d, 'pipe.csv.gz')])
    expect(await allParquet([join(d, 'pipe.parquet')])).toBe(false)
    expect(await allParquet([join(d, 'pipe.csv.gz')])).toBe(false)
  })
})
