import {appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {CheckpointError} from '../../src/errors.js'
import {exportHeader} from '../../src/jobs/events.js'
import {Journal, journalPaths, type JournalHeader} from '../../src/jobs/journal.js'

const header: JournalHeader = {v: 2, kind: 'county-export', params: {fips: ['06067'], format: 'csv'}}
const fresh = () => journalPaths(join(mkdtempSync(join(tmpdir(), 'sfl-journal-')), 'out.csv'))
const open = async (paths: ReturnType<typeof fresh>, h = header, restart = false) => {
  const events: Array<Record<string, unknown>> = []
  const r = await Journal.open(paths, h, {restart, replay: (e) => events.push(e)})
  return {...r, events}
}

describe('the checkpoint journal', () => {
  it('replays every event of a continued run, in order', async () => {
    const paths = fresh()
    const a = await open(paths)
    expect(a.resumed).toBe(false)
    a.journal.append({t: 'page', u: '06067', n: 1})
    a.journal.append({t: 'end', u: '06067', outcome: {kind: 'done'}})
    a.journal.close()
    const b = await open(paths)
    expect(b.resumed).toBe(true)
    expect(b.events).toEqual([
      {t: 'page', u: '06067', n: 1},
      {t: 'end', u: '06067', outcome: {kind: 'done'}},
    ])
  })

  it('drops a last line cut short by a crash, and appends after the last whole one', async () => {
    const paths = fresh()
    const a = await open(paths)
    a.journal.append({t: 'page', n: 1})
    a.journal.close()
    appendFileSync(paths.journal, '{"t":"page","n":2,"rec') // kill -9 mid-write
    const b = await open(paths)
    expect(b.events).toEqual([{t: 'page', n: 1}])
    b.journal.append({t: 'page', n: 2})
    b.journal.close()
    expect(readFileSync(paths.journal, 'utf8').split('\n').slice(1)).toEqual([
      '{"t":"page","n":1}',
      '{"t":"page","n":2}',
      '',
    ])
  })

  it('appending costs the same at event 5,000 as at event 1 (the file only grows by the line)', async () => {
    const paths = fresh()
    const {journal} = await open(paths)
    let size = statSync(paths.journal).size
    for (let i = 0; i < 5_000; i++) {
      const at = journal.append({t: 'page', n: i})
      expect(at.offset).toBe(size)
      size += at.length + 1
    }
    expect(statSync(paths.journal).size).toBe(size)
    expect(
      journal.read(
        size - (JSON.stringify({t: 'page', n: 4_999}).length + 1),
        JSON.stringify({t: 'page', n: 4_999}).length,
      ),
    ).toEqual({t: 'page', n: 4_999})
    journal.close()
  })

  it('refuses a journal of other arguments, naming them and --restart; --restart discards it', async () => {
    const paths = fresh()
    ;(await open(paths)).journal.close()
    const other: JournalHeader = {...header, params: {fips: ['48201'], format: 'csv'}}
    await expect(open(paths, other)).rejects.toThrow(CheckpointError)
    await expect(open(paths, other)).rejects.toThrow(
      /belongs to a different run \(fips 06067; format csv\); rerun with those arguments to finish it, or add --restart/,
    )
    const r = await open(paths, other, true)
    expect(r.resumed).toBe(false)
    r.journal.close()
  })

  it("a Parquet run's codec and row groups are its arguments; the defaults add none, so a checkpoint from before the flags continues", async () => {
    const run = {fips: ['06067'], format: 'parquet'}
    const url = 'https://api.example.com/v1'
    const plain = exportHeader(run, url)
    // a checkpoint of a Parquet run written before --parquet-compression existed: exactly these params
    expect(plain.params).toEqual({
      fips: ['06067'],
      format: 'parquet',
      fields: null,
      baseUrl: url,
      strict: false,
    })
    expect(exportHeader({...run, parquet: {compression: 'snappy', rowGroupRows: 16_384}}, url)).toEqual(plain)
    const gzip = exportHeader({...run, parquet: {compression: 'gzip', rowGroupRows: 4096}}, url)
    expect(gzip.params).toEqual({...plain.params, parquetCompression: 'gzip', parquetRowGroupSize: 4096})
    // options that do not apply to the format are not recorded (the CLI refuses them anyway)
    expect(
      exportHeader({fips: ['06067'], format: 'csv', parquet: {compression: 'gzip', rowGroupRows: 4096}}, url)
        .params,
    ).not.toHaveProperty('parquetCompression')

    const paths = fresh()
    ;(await open(paths, plain)).journal.close()
    await expect(open(paths, gzip)).rejects.toThrow(
      `belongs to a different run (fips 06067; format parquet; baseUrl ${url})`,
    )
    ;(await open(paths, plain)).journal.close() // the same options: continued
    const other = journalPaths(join(mkdtempSync(join(tmpdir(), 'sfl-journal-')), 'out.parquet'))
    ;(await open(other, gzip)).journal.close()
    await expect(open(other, plain)).rejects.toThrow(
      `(fips 06067; format parquet; baseUrl ${url}; parquetCompression gzip; parquetRowGroupSize 4096)`,
    )
  })

  it('names a long county list of the other run by its first codes and count', async () => {
    const paths = fresh()
    const many = Array.from({length: 254}, (_, i) => String(48001 + 2 * i))
    ;(await open(paths, {...header, params: {fips: many, format: 'csv'}})).journal.close()
    await expect(open(paths)).rejects.toThrow(
      'belongs to a different run (fips 48001,48003,48005,48007,48009,… (254 in all); format csv)',
    )
  })

  it('refuses a checkpoint that is not one (an old version, an edited file) with --restart as the way out', async () => {
    const paths = fresh()
    writeFileSync(paths.journal, '{"version":1,"units":{}}\n')
    await expect(open(paths)).rejects.toThrow(
      /cannot be read \(not written by this version of sfl\?\); add --restart/,
    )
    writeFileSync(paths.journal, 'garbage\n')
    await expect(open(paths)).rejects.toThrow(/cannot be read/)
  })
})
