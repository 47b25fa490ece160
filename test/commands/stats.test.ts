import {execFileSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import Stats from '../../src/commands/stats.js'
import {runCommand} from '../helpers/run-command.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * `sfl stats` reads through the same gate as `export_statistics` (src/io/export-source.ts): an export
 * only, a FIFO refused without waiting for a writer, and an error that names the file and the line but
 * never quotes its bytes. One line, exit 2, nothing on stdout.
 */
describe('sfl stats on what is not an export', () => {
  it('a FIFO is refused at once (no writer is waited for), exit 2', async () => {
    const fifo = join(tempDir(), 'x.csv')
    execFileSync('mkfifo', [fifo])
    const r = await runCommand(Stats, [fifo])
    expect(r).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: `Error: ${fifo} is a FIFO, not an export: only regular files and folders are read\n`,
    })
  })

  it('a CSV of something else is refused by its header, without quoting it', async () => {
    const file = join(tempDir(), 'people.csv')
    writeFileSync(file, 'password,email\nhunter2,bob@example.com\n')
    const r = await runCommand(Stats, [file])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toBe(
      `Error: ${file} is not an sfl export: column 1 is no field of the spec; nothing more of it was read\n`,
    )
  })

  it("a damaged row is named by its line; the reader's quote of the cell is not repeated", async () => {
    const file = join(tempDir(), 'damaged.csv')
    writeFileSync(file, 'Fips,City\r\n06067,Sacramento\r\n06067,a"SECRET-IN-A-CELL"b\r\n')
    const r = await runCommand(Stats, [file])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toBe(`Error: ${file} line 3: not a readable CSV export\n`)
    expect(r.stdout).toBe('')
  })

  it('an export still reads as before', async () => {
    const file = join(tempDir(), 'ok.csv')
    writeFileSync(file, 'Fips,ServicePropertyID,FHAEligible\r\n06067,1,true\r\n06067,2,false\r\n')
    const r = await runCommand(Stats, [file, '--json'])
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({run: {records: 2, flags: {FHAEligible: {true: 1, false: 1}}}})
  })
})
