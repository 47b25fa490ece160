import {mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import Changes from '../../src/commands/changes.js'
import {runCommand} from '../helpers/run-command.js'
import {countyFolder} from '../helpers/county-folder.js'

const dir = mkdtempSync(join(tmpdir(), 'sfl-cmd-changes-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
let n = 0
function file(name: string, text: string): string {
  const p = join(dir, `${n++}-${name}`)
  writeFileSync(p, text)
  return p
}
const prev = file('oct.csv', 'Fips,ServicePropertyID,FinalValue\r\n06067,1,100\r\n06067,2,200\r\n')
const cur = file(
  'nov.ndjson',
  '{"Fips":"06067","ServicePropertyID":1,"FinalValue":100}\n{"Fips":"06067","ServicePropertyID":2,"FinalValue":250}\n',
)

describe('sfl changes', () => {
  it('writes the change file to stdout as CSV by default, the summary on stderr, exit 0', async () => {
    const r = await runCommand(Changes, [prev, cur])
    expect(r.stdout).toBe(
      'Change,ServicePropertyID,Fips,ChangedFields,FinalValue,Previous.FinalValue\r\nupdated,2,06067,FinalValue,250,200\r\n',
    )
    expect(r.stderr).toBe('sfl changes: 0 added, 1 updated, 0 deleted, 1 unchanged in 1 county\n')
    expect(r.exitCode).toBe(0)
  })

  it('--exit-code: 1 when there are changes, 0 when there are none', async () => {
    expect((await runCommand(Changes, [prev, cur, '--exit-code'])).exitCode).toBe(1)
    expect((await runCommand(Changes, [prev, prev, '--exit-code'])).exitCode).toBe(0)
  })

  it('--out FILE: the format from its extension, written whole with no temp file left', async () => {
    const d = mkdtempSync(join(dir, 'out-'))
    const r = await runCommand(Changes, [prev, cur, '--out', join(d, 'delta.ndjson'), '--quiet'])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toBe('')
    expect(JSON.parse(readFileSync(join(d, 'delta.ndjson'), 'utf8'))).toEqual({
      Change: 'updated',
      ServicePropertyID: 2,
      Fips: '06067',
      ChangedFields: ['FinalValue'],
      FinalValue: 250,
      Previous: {FinalValue: 200},
    })
    expect(readdirSync(d)).toEqual(['delta.ndjson'])
  })

  it('a folder of two counties against a file of one: the other county is deleted and a notice names it; --fips narrows', async () => {
    const m = countyFolder(mkdtempSync(join(dir, 'outdir-')), 'csv', [
      {
        fips: '06067',
        path: 'a.csv',
        text: 'Fips,ServicePropertyID,FinalValue\r\n06067,1,100\r\n06067,2,200\r\n',
      },
      {fips: '48201', path: 'b.csv', text: 'Fips,ServicePropertyID,FinalValue\r\n48201,7,1\r\n48201,8,2\r\n'},
    ])
    const all = await runCommand(Changes, [m, cur])
    expect(all.exitCode).toBe(0)
    expect(all.stderr).toBe(
      'sfl changes: 0 added, 1 updated, 2 deleted, 1 unchanged in 2 counties\n' +
        'sfl changes: 48201 is only in the previous export: its 2 records are reported deleted (--fips compares only the counties named)\n',
    )
    const one = await runCommand(Changes, [m, cur, '--fips', '06067'])
    expect(one.stderr).toBe('sfl changes: 0 added, 1 updated, 0 deleted, 1 unchanged in 1 county\n')
    expect(one.stdout).toBe(
      'Change,ServicePropertyID,Fips,ChangedFields,FinalValue,Previous.FinalValue\r\nupdated,2,06067,FinalValue,250,200\r\n',
    )
  })

  it.each([
    [
      'a --fips that is not a county code',
      () => [prev, cur, '--fips', '6067'],
      /--fips "6067" must be exactly 5 digits/,
    ],
    ['a missing file', () => [prev, join(dir, 'nope.csv')], /nope\.csv: no such file or folder/],
    [
      'a .parquet file that is not Parquet',
      () => [file('x.parquet', 'PAR1'), cur],
      /x\.parquet: not a readable Parquet file/,
    ],
    ['a folder with no manifest', () => [dir, cur], /is a folder without _sfl\/manifest\.json/],
    [
      'a manifest missing a county file',
      () => {
        const m = join(dir, `m${n++}`)
        mkdirSync(m)
        writeFileSync(
          join(m, 'manifest.json'),
          JSON.stringify({version: 1, format: 'csv', counties: [{fips: '06067', path: 'a.csv'}]}),
        )
        return [m, cur]
      },
      /the file of county 06067 \(a\.csv\) is missing/,
    ],
    [
      'not a manifest',
      () => {
        const m = mkdtempSync(join(dir, 'm-'))
        writeFileSync(join(m, 'manifest.json'), '{"counties":3}')
        return [join(m, 'manifest.json'), cur]
      },
      /not an sfl export manifest/,
    ],
    [
      'a broken NDJSON line',
      () => [prev, file('b.ndjson', '{"Fips":\n')],
      /b\.ndjson line 1: not a JSON record/,
    ],
    [
      'an unknown --ignore-fields name',
      () => [prev, cur, '--ignore-fields', 'Nope'],
      /unknown column "Nope"/,
    ],
    ['--out into a missing folder', () => [prev, cur, '--out', join(dir, 'no', 'x.csv')], /does not exist/],
  ])('%s: exit 2 with one line, nothing written', async (_name, argv, message) => {
    const r = await runCommand(Changes, argv())
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(message)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })
})
