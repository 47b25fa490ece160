import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import Changes from '../../src/commands/changes.js'
import Stats from '../../src/commands/stats.js'
import {FileTarget} from '../../src/io/output.js'
import {writeParquet} from '../../src/io/parquet-writer.js'
import {cliConfigOf, readPackageJson} from '../../src/cli/cli-config.js'
import {runLocalFast} from '../../src/cli/local-fast.js'
import {captureRun, runCommand} from '../helpers/run-command.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * `sfl stats` and `sfl changes` run without oclif (src/cli/local-fast.ts): each line it takes must answer
 * exactly as the command through oclif does (stdout, stderr, exit code, files written), and each line it
 * does not take it hands back having written nothing, for oclif to answer.
 */
const dir = mkdtempSync(join(tmpdir(), 'sfl-local-fast-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
const cli = cliConfigOf(readPackageJson(new URL('../../dist/sfl.js', import.meta.url)))
const write = (name: string, text: string) => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}
const prev = write(
  'oct.csv',
  'Fips,ServicePropertyID,FinalValue,VAEligible\r\n06067,1,100,true\r\n06067,2,200,\r\n',
)
const cur = write(
  'nov.ndjson',
  '{"Fips":"06067","ServicePropertyID":1,"FinalValue":100,"VAEligible":true}\n{"Fips":"06067","ServicePropertyID":3,"FinalValue":250,"VAEligible":false}\n',
)
const other = write('tx.ndjson', '{"Fips":"48201","ServicePropertyID":9,"FinalValue":5}\n')
const missing = join(dir, 'missing.csv')
const notExport = write('people.csv', 'password,email\nhunter2,bob@example.com\n')
const parquet = join(dir, 'nov.parquet')
const target = await FileTarget.create(parquet, () => undefined)
await writeParquet(target, [cur])
await target.commit()

/** A line run both ways: `out` (when given) is a file each run writes; its bytes are compared too. */
type Case = [string, 'stats' | 'changes', (out: string) => string[]]
const CASES: Case[] = [
  ['stats as a table', 'stats', () => [prev]],
  ['stats --json', 'stats', () => [cur, '--json']],
  ['stats of Parquet by county, --json', 'stats', () => [parquet, '--by-county', '--json']],
  ['stats by county as tables, --quiet', 'stats', () => [prev, '--by-county', '-q']],
  ['stats of a missing file (exit 2)', 'stats', () => [missing]],
  ['stats of a missing file with --json (the error document)', 'stats', () => [missing, '--json']],
  ['stats of a file that is no export (exit 2)', 'stats', () => [notExport, '--json']],
  ['stats --json -o table', 'stats', () => [prev, '--json', '-o', 'table']],
  ['changes to stdout as CSV', 'changes', () => [prev, cur]],
  ['changes of a CSV and a Parquet side, NDJSON', 'changes', () => [prev, parquet, '-o', 'ndjson']],
  ['changes --out --json', 'changes', (out) => [prev, cur, '--out', join(out, 'd.csv'), '--json']],
  ['changes --exit-code with changes (exit 1)', 'changes', () => [prev, cur, '--exit-code', '-q']],
  ['changes --exit-code without changes (exit 0)', 'changes', () => [prev, prev, '--exit-code']],
  ['changes of counties only one side holds (notices)', 'changes', () => [prev, other]],
  [
    'changes --fips, --ignore-fields',
    'changes',
    () => [prev, cur, '--fips', '06067', '--ignore-fields', 'FinalValue'],
  ],
  ['changes --json without --out (exit 2)', 'changes', () => [prev, cur, '--json']],
  [
    'changes --ignore-fields of no spec field (exit 2)',
    'changes',
    () => [prev, cur, '--ignore-fields', 'Nope'],
  ],
  [
    'changes of a missing side with --json',
    'changes',
    (out) => [missing, cur, '--out', join(out, 'd.csv'), '--json'],
  ],
  [
    'changes --out with a name it cannot write (exit 2)',
    'changes',
    (out) => [prev, cur, '--out', join(out, 'd.parquet')],
  ],
  ['changes --debug', 'changes', () => [prev, cur, '--debug', '-o', 'json']],
]

describe('sfl stats and sfl changes without oclif answer as the commands do through oclif', () => {
  it.each(CASES)('%s', async (_name, id, argvOf) => {
    const fastDir = tempDir('sfl-local-fast-a-')
    const oclifDir = tempDir('sfl-local-fast-b-')
    let handled: boolean | undefined
    const fast = await captureRun(async () => {
      handled = await runLocalFast([id, ...argvOf(fastDir)], cli)
    })
    const oclif = await runCommand(id === 'stats' ? Stats : Changes, argvOf(oclifDir))
    expect(handled).toBe(true)
    expect(fast.exitCode).toBe(oclif.exitCode)
    const same = (text: string, d: string) => text.replaceAll(d, '<dir>')
    expect(same(fast.stdout, fastDir)).toBe(same(oclif.stdout, oclifDir))
    expect(same(fast.stderr, fastDir)).toBe(same(oclif.stderr, oclifDir))
    const written = (d: string) => {
      try {
        return readFileSync(join(d, 'd.csv'), 'utf8')
      } catch {
        return undefined
      }
    }
    expect(written(fastDir)).toBe(written(oclifDir))
  })
})

describe('what the run without oclif hands back to oclif, having written nothing', () => {
  it.each([
    ['help', ['stats', prev, '--help']],
    ['-h', ['changes', prev, cur, '-h']],
    ['an unknown flag', ['changes', prev, cur, '--nope']],
    ['a missing argument', ['changes', prev]],
    ['an extra argument', ['stats', prev, cur]],
    ['a bad option value', ['stats', prev, '-o', 'csv']],
    ['the deprecated stats --output json (oclif warns)', ['stats', prev, '-o', 'json']],
    ['another command', ['lookup', '--fips', '06067', '--apn', '1']],
    ['no command', []],
  ])('%s', async (_name, argv) => {
    let handled: boolean | undefined
    const r = await captureRun(async () => {
      handled = await runLocalFast(argv, cli)
    })
    expect(handled).toBe(false)
    expect(r).toMatchObject({stdout: '', stderr: '', exitCode: 0})
  })

  it("SFL_CONTENT_TYPE (oclif's other switch for --json) goes to oclif", async () => {
    let handled: boolean | undefined
    const r = await captureRun(
      async () => {
        handled = await runLocalFast(['stats', prev], cli)
      },
      {SFL_CONTENT_TYPE: 'json'},
    )
    expect(handled).toBe(false)
    expect(r.stdout).toBe('')
  })
})
