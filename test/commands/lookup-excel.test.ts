import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import Lookup from '../../src/commands/lookup.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {runCommand} from '../helpers/run-command.js'
import {readLog} from '../helpers/sandbox.js'

let sb: Sandbox
let dir: string
let log: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sfl-excel-'))
  log = join(dir, 'log.ndjson')
  writeFileSync(log, '')
  sb = await startSandbox({log})
})
afterAll(async () => {
  await sb.close()
  rmSync(dir, {recursive: true, force: true})
})

describe('lookup --input: a sheet as Excel saves it', () => {
  it('a blank row (,,,) between data rows keeps its place as an empty answer, the run at the end is counted; exit 0, not 7', async () => {
    const input = join(dir, 'sheet.csv')
    // a BOM, CRLF, blank rows between the data and the run of them Excel leaves at the end
    writeFileSync(
      input,
      '\ufefftag,fips,apn\r\na,06067,078-0123-045\r\n,,\r\nb,06067,078-0123-045\r\n,,\r\n,,\r\n',
    )
    const out = join(dir, 'out.csv')
    const r = await runCommand(Lookup, ['--input', input, '--out', out], {
      SFL_BASE_URL: sb.baseUrl,
      SFL_API_KEY: 'sandbox-full',
    })
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toMatch(
      /sfl lookup --input: 3 rows \(2 ok, 1 blank\), 2 blank rows after the last data row skipped, 1 lookups saved by duplicate rows, 1 requests/,
    )
    const lines = readFileSync(out, 'utf8')
      .replace(/^\ufeff/, '')
      .trimEnd()
      .split('\r\n')
    // one output row per input row, numbered as the input's data rows are
    expect(lines.map((l) => l.split(',').slice(0, 5).join(','))).toEqual([
      'tag,fips,apn,sfl_row,status',
      'a,06067,078-0123-045,1,ok',
      ',,,2,blank',
      'b,06067,078-0123-045,3,ok',
    ])
    expect(readLog(log)).toHaveLength(1)
  })
})
