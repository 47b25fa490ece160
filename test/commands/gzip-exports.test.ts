import {execFileSync} from 'node:child_process'
import {mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {gzipSync} from 'node:zlib'

import {afterAll, afterEach, beforeEach, describe, expect, it} from 'vitest'

import Changes from '../../src/commands/changes.js'
import Stats from '../../src/commands/stats.js'
import {runCommand} from '../helpers/run-command.js'

/**
 * `sfl changes` and `sfl stats` read gzipped exports (issue 32, "Compression by name"): the answers are
 * those of the plain files, byte for byte, and a damaged stream is one line and exit 2 with no copy left.
 */
const dir = mkdtempSync(join(tmpdir(), 'sfl-gz-exports-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

// the expansions go to the temp folder: each test gets its own, to see that none is left behind
let scratch = ''
const savedTmp = process.env['TMPDIR']
beforeEach(() => {
  scratch = mkdtempSync(join(dir, 'tmp-'))
  process.env['TMPDIR'] = scratch
})
afterEach(() => {
  if (savedTmp === undefined) delete process.env['TMPDIR']
  else process.env['TMPDIR'] = savedTmp
})

const HEADER = 'Fips,ServicePropertyID,APN,FinalValue,FHAEligible,CRAEligible,ConfidenceScore'

/** Two counties of `n` records each; `month` moves some values, drops some ids and adds others. */
function csvExport(n: number, month: 'oct' | 'nov'): string {
  const rows = [HEADER]
  for (const fips of ['06067', '48201'])
    for (let i = 0; i < n; i++) {
      if (month === 'nov' && i % 97 === 5) continue // deleted in November
      const value = month === 'nov' && i % 31 === 0 ? 100_000 + i * 7 : 100_000 + i
      rows.push(`${fips},${fips}-${i},A${i},${value},${i % 3 === 0},${i % 5 === 0 ? 'Low' : ''},${i % 101}`)
    }
  if (month === 'nov') for (let i = n; i < n + 40; i++) rows.push(`06067,06067-${i},A${i},1,false,,50`)
  return `${rows.join('\r\n')}\r\n`
}

function ndjsonOf(csv: string): string {
  const [head, ...lines] = csv.trimEnd().split('\r\n')
  const names = head!.split(',')
  return lines
    .map((l) => {
      const cells = l.split(',')
      const rec: Record<string, unknown> = {}
      names.forEach((name, i) => {
        const c = cells[i]!
        rec[name] = name === 'FinalValue' || name === 'ConfidenceScore' ? Number(c) : c === '' ? null : c
        if (name === 'FHAEligible') rec[name] = c === 'true'
      })
      return `${JSON.stringify(rec)}\n`
    })
    .join('')
}

function write(name: string, data: string | Buffer): string {
  const p = join(dir, name)
  writeFileSync(p, data)
  return p
}

// 20,000 records a side: the gzip streams run to several 64 KiB chunks
const octCsv = csvExport(10_000, 'oct')
const novCsv = csvExport(10_000, 'nov')
const oct = write('oct.csv', octCsv)
const nov = write('nov.csv', novCsv)
const octGz = write('oct.csv.gz', gzipSync(octCsv))
const novGz = write('nov.csv.gz', gzipSync(novCsv))

describe('gzipped exports (.gz) in sfl changes and sfl stats', () => {
  it('sfl changes a.csv.gz b.csv.gz writes the change file of the plain files, byte for byte', async () => {
    const plain = await runCommand(Changes, [oct, nov])
    expect(plain.exitCode).toBe(0)
    // the data has changes of every kind, so equal outputs are not two empty files. By hand, a county:
    // deleted i % 97 == 5 (104); updated i % 31 == 0 (323) but i = 0 (7 * 0 moves nothing) and the 3 also
    // deleted (2139, 5146, 8153): 319; unchanged 10,000 - 104 - 319 = 9,577; and 40 added in 06067
    expect(plain.stderr).toBe(
      'sfl changes: 40 added, 638 updated, 208 deleted, 19,154 unchanged in 2 counties\n',
    )
    const gz = await runCommand(Changes, [octGz, novGz])
    expect(gz.exitCode).toBe(0)
    expect(gz.stderr).toBe(plain.stderr)
    expect(gz.stdout).toBe(plain.stdout)
    // one side gzipped, the other plain
    expect((await runCommand(Changes, [octGz, nov])).stdout).toBe(plain.stdout)
    expect(readdirSync(scratch)).toEqual([])
  })

  it('sfl stats x.ndjson.gz and x.json.gz print the figures of the plain file', async () => {
    const nd = ndjsonOf(novCsv)
    const plainNd = write('nov.ndjson', nd)
    const json = `[\n${nd.trimEnd().split('\n').join(',\n')}\n]\n`
    const plain = await runCommand(Stats, [plainNd, '--json', '--by-county'])
    expect(plain.exitCode).toBe(0)
    const doc = JSON.parse(plain.stdout) as {run: {records: number}}
    expect(doc.run.records).toBe(19_832) // 2 x (10,000 - 104 deleted) + 40 added
    for (const gz of [write('nov.ndjson.gz', gzipSync(nd)), write('nov.json.gz', gzipSync(json))]) {
      const r = await runCommand(Stats, [gz, '--json', '--by-county'])
      expect(r.exitCode, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toEqual(doc)
    }
    // the CSV and its gzip
    expect(JSON.parse((await runCommand(Stats, [novGz, '--json'])).stdout)).toEqual(
      JSON.parse((await runCommand(Stats, [nov, '--json'])).stdout),
    )
    expect(readdirSync(scratch)).toEqual([])
  })

  it.each([
    ['cut short', () => gzipSync(novCsv).subarray(0, 9_000), 'unexpected end of file'],
    ['damaged inside', () => damaged(gzipSync(novCsv)), 'invalid'],
    ['not gzip at all', () => Buffer.from(novCsv), 'incorrect header check'],
  ])('a .gz %s: one line naming the file, exit 2, nothing written, no copy left', async (_n, bytes, why) => {
    const bad = write(`bad-${_n.replace(/ /g, '-')}.csv.gz`, bytes())
    const out = join(dir, `never-${_n.replace(/ /g, '-')}.csv`)
    for (const argv of [
      ['changes', oct, bad, '--out', out],
      ['stats', bad],
    ]) {
      const r = await runCommand(argv[0] === 'changes' ? Changes : Stats, argv.slice(1))
      expect(r.exitCode).toBe(2)
      const lines = r.stderr.trimEnd().split('\n')
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(new RegExp(`^Error: ${bad}: the gzip data is damaged \\(.*${why}.*\\); `))
      expect(r.stdout).toBe('')
    }
    expect(readdirSync(dir).filter((n) => n.startsWith('never-'))).toEqual([])
    expect(readdirSync(scratch)).toEqual([])
  })

  it('a FIFO named .csv.gz is refused as the export gate refuses one, without waiting for a writer', async () => {
    const fifo = join(dir, 'pipe.csv.gz')
    execFileSync('mkfifo', [fifo])
    const r = await runCommand(Stats, [fifo])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toBe(
      `Error: ${fifo} is a FIFO, not an export: only regular files and folders are read\n`,
    )
  })

  it('a missing .gz: the usual line, exit 2', async () => {
    const gone = join(dir, 'gone.csv.gz')
    const r = await runCommand(Changes, [gone, nov])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toBe(`Error: ${gone}: no such file or folder\n`)
  })
})

/** A gzip stream with bytes of its deflate data flipped (the header and trailer intact). */
function damaged(gz: Buffer): Buffer {
  const b = Buffer.from(gz)
  for (let i = 200; i < 400; i++) b[i] = b[i]! ^ 0xa5
  return b
}
