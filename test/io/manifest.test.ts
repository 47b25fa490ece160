import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {
  countyFilePath,
  freshCounties,
  ManifestFile,
  parseManifest,
  readManifest,
  withEntry,
  type Manifest,
  type ManifestEntry,
} from '../../src/io/manifest.js'
import {cliMessage} from '../../src/cli/error-words.js'
import {UsageError, type SflError} from '../../src/errors.js'

const entry = (fips: string, finishedAt: string, records = 10): ManifestEntry => ({
  fips,
  state: 'CA',
  name: 'X County',
  path: countyFilePath('CA', fips, 'csv'),
  records,
  pages: 1,
  finishedAt,
})

describe('the --out-dir manifest', () => {
  it('county files live in Hive-style partitions, the extension per format', () => {
    expect(countyFilePath('CA', '06067', 'csv')).toBe('state=CA/fips=06067/data.csv')
    expect(countyFilePath('TX', '48201', 'ndjson')).toBe('state=TX/fips=48201/data.ndjson')
    expect(countyFilePath('FL', '12086', 'json')).toBe('state=FL/fips=12086/data.json')
    expect(countyFilePath('FL', '12086', 'parquet')).toBe('state=FL/fips=12086/data.parquet')
  })

  it('a county finished again replaces its entry; the others stay, in FIPS order', () => {
    let m: Manifest = {version: 1, format: 'csv', counties: []}
    m = withEntry(m, entry('12086', '2026-11-01T00:00:00.000Z'))
    m = withEntry(m, entry('06067', '2026-11-01T00:00:00.000Z'))
    m = withEntry(m, entry('12086', '2026-11-22T00:00:00.000Z', 99))
    expect(m.counties.map((c) => [c.fips, c.records])).toEqual([
      ['06067', 10],
      ['12086', 99],
    ])
  })

  it('--max-age: fresh is younger than the age and its file still there', () => {
    const now = Date.parse('2026-11-22T08:00:00Z')
    const m: Manifest = {
      version: 1,
      format: 'csv',
      counties: [
        entry('06067', '2026-11-21T08:00:01Z'), // 23:59:59 old
        entry('12086', '2026-11-21T08:00:00Z'), // exactly a day: not younger
        entry('48201', '2026-11-22T07:00:00Z'), // young, but its file is gone
        entry('06037', '2026-11-22T07:00:00Z'), // young, not asked
      ],
    }
    const exists = (p: string) => !p.includes('48201')
    expect([...freshCounties(m, ['06067', '12086', '48201', '01001'], 86_400_000, now, exists)]).toEqual([
      '06067',
    ])
    expect(freshCounties(undefined, ['06067'], 86_400_000, now, exists).size).toBe(0)
  })

  it('--max-age with --where: fresh only when the file was written with the same filter (none is one of its own)', () => {
    const now = Date.parse('2026-11-22T08:00:00Z')
    const young = '2026-11-22T07:00:00Z'
    const m: Manifest = {
      version: 1,
      format: 'csv',
      counties: [
        entry('06067', young),
        {...entry('12086', young), where: 'FHAEligible = true'},
        {...entry('48201', young), where: 'FHAEligible = false'},
      ],
    }
    const asked = ['06067', '12086', '48201']
    const fresh = (where?: string) => [...freshCounties(m, asked, 86_400_000, now, () => true, where)]
    expect(fresh()).toEqual(['06067'])
    expect(fresh('FHAEligible = true')).toEqual(['12086'])
    expect(fresh('City is null')).toEqual([])
  })

  it('is rewritten whole after each county; entries of an earlier run stay; another format is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-manifest-'))
    const first = await ManifestFile.open(dir, 'csv')
    await first.record(entry('12086', '2026-11-01T00:00:00.000Z'))
    const again = await ManifestFile.open(dir, 'csv')
    await Promise.all([
      again.record(entry('06067', '2026-11-22T00:00:00.000Z')),
      again.record(entry('06037', '2026-11-22T00:00:01.000Z')),
    ])
    const m = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as Manifest
    // under _sfl/ (a name dataset readers skip), nothing at the folder's root
    expect(readdirSync(dir)).toEqual(['_sfl'])
    expect(m.format).toBe('csv')
    expect(m.counties.map((c) => c.fips)).toEqual(['06037', '06067', '12086'])
    const other = (await ManifestFile.open(dir, 'ndjson').then(
      () => undefined,
      (e: unknown) => e,
    )) as SflError
    expect(other).toBeInstanceOf(UsageError)
    expect(other.message).toBe(`the folder ${dir} holds a csv export (manifest.json), not ndjson`)
    // the CLI's words (src/cli/error-words.ts)
    expect(cliMessage(other)).toBe(
      `--out-dir ${dir} holds a csv export (_sfl/manifest.json); pass --output csv, or export ndjson into another folder`,
    )
  })

  it("an earlier sfl's root manifest.json is read, and moved to _sfl/ by the next write with its entries", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-manifest-'))
    const old = {version: 1, format: 'csv', counties: [entry('12086', '2026-11-01T00:00:00.000Z')]}
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(old))
    expect((await readManifest(dir))?.counties.map((c) => c.fips)).toEqual(['12086'])
    const file = await ManifestFile.open(dir, 'csv')
    // read, not yet moved: a run that stops before its first county leaves the folder as it was
    expect(existsSync(join(dir, 'manifest.json'))).toBe(true)
    await file.record(entry('06067', '2026-11-22T00:00:00.000Z'))
    expect(existsSync(join(dir, 'manifest.json'))).toBe(false)
    const m = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as Manifest
    expect(m.counties.map((c) => c.fips)).toEqual(['06067', '12086'])
    // another format in the old place is refused as in the new one, and left where it is
    const other = mkdtempSync(join(tmpdir(), 'sfl-manifest-'))
    writeFileSync(join(other, 'manifest.json'), JSON.stringify({...old, format: 'ndjson'}))
    await expect(ManifestFile.open(other, 'csv')).rejects.toThrow('holds a ndjson export')
    expect(existsSync(join(other, 'manifest.json'))).toBe(true)
  })

  it('both places: _sfl/ wins where both have a county, the root adds what only it has or finished later', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-manifest-'))
    mkdirSync(join(dir, '_sfl'))
    const now = {version: 1, format: 'csv', counties: [entry('06067', '2026-11-22T00:00:00.000Z', 5)]}
    writeFileSync(join(dir, '_sfl', 'manifest.json'), JSON.stringify(now))
    const older = [
      entry('06067', '2026-11-01T00:00:00.000Z', 99), // older than _sfl/'s: not taken
      entry('12086', '2026-11-02T00:00:00.000Z', 7), // only here: taken
    ]
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({version: 1, format: 'csv', counties: older}))
    // a reader takes _sfl/'s alone
    expect((await readManifest(dir))?.counties.map((c) => c.records)).toEqual([5])
    const file = await ManifestFile.open(dir, 'csv')
    await file.save()
    const m = JSON.parse(readFileSync(join(dir, '_sfl', 'manifest.json'), 'utf8')) as Manifest
    expect(m.counties.map((c) => [c.fips, c.records])).toEqual([
      ['06067', 5],
      ['12086', 7],
    ])
    expect(readdirSync(dir)).toEqual(['_sfl'])
  })

  it('a manifest sfl cannot read is a usage error, not overwritten', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sfl-manifest-'))
    writeFileSync(join(dir, 'manifest.json'), '{"version": 2}')
    const e = (await readManifest(dir).then(
      () => undefined,
      (x: unknown) => x,
    )) as SflError
    expect(e).toBeInstanceOf(UsageError)
    expect(e.message).toMatch(
      /is not a manifest this version of sfl can read \(not an sfl export manifest .*\)$/,
    )
    expect(cliMessage(e)).toMatch(
      /is not a manifest this version of sfl can read \(not an sfl export manifest .*\); move it away/,
    )
    expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).toBe('{"version": 2}')
  })

  it.each([
    ['null', 'not an sfl export manifest (expected "version": 1 and a "counties" list)'],
    ['{"version":1,"counties":[]}', 'the manifest names no "format"'],
    ['{"version":1,"format":"csv","counties":[{"fips":"06067"}]}', 'county 1 has no "fips" and "path"'],
    ['{"version":1,"format":"csv","counties":[null]}', 'county 1 has no "fips" and "path"'],
  ])('the one manifest parser (an --out-dir run and sfl changes) refuses %s', (text, problem) => {
    expect(parseManifest(text)).toEqual({problem})
  })

  it('the one manifest parser reads a manifest as written', () => {
    const m = {version: 1, format: 'parquet', counties: [entry('06067', '2026-11-22T00:00:00.000Z')]}
    expect(parseManifest(JSON.stringify(m))).toEqual(m)
    expect(parseManifest('{"version":1,')).toEqual({problem: expect.stringMatching(/^not JSON \(/)})
  })
})
