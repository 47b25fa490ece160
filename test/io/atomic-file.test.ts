import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {
  AtomicFile,
  openExclusive,
  removeStaleTemps,
  removeTempFilesSync,
  tempPathFor,
  writeFileAtomic,
} from '../../src/io/atomic-file.js'

const dir = () => mkdtempSync(join(tmpdir(), 'sfl-atomic-'))

describe('atomic files', () => {
  it('temp names beside the target are unpredictable', () => {
    const a = tempPathFor('/x/out.csv')
    expect(a).toMatch(/^\/x\/\.out\.csv\.sfl-tmp-[0-9a-f]{16}$/)
    expect(tempPathFor('/x/out.csv')).not.toBe(a)
  })

  it('never opens through a planted symlink or an existing file', async () => {
    const d = dir()
    writeFileSync(join(d, 'victim'), 'precious')
    symlinkSync(join(d, 'victim'), join(d, 'link'))
    await expect(openExclusive(join(d, 'link'), 0o600)).rejects.toMatchObject({code: 'EEXIST'})
    await expect(openExclusive(join(d, 'victim'), 0o600)).rejects.toMatchObject({code: 'EEXIST'})
    expect(readFileSync(join(d, 'victim'), 'utf8')).toBe('precious')
  })

  it('the target changes only on commit; abort leaves it and no temp file', async () => {
    const d = dir()
    const out = join(d, 'out.csv')
    writeFileSync(out, 'old')
    const f = await AtomicFile.create(out)
    f.stream.write('new')
    expect(readFileSync(out, 'utf8')).toBe('old')
    await f.abort()
    expect(readdirSync(d)).toEqual(['out.csv'])
    const g = await AtomicFile.create(out)
    g.stream.write('new')
    await g.commit()
    expect(readFileSync(out, 'utf8')).toBe('new')
    expect(readdirSync(d)).toEqual(['out.csv'])
  })

  it('a small file is written 0600 by default', async () => {
    const d = dir()
    await writeFileAtomic(join(d, 'config.json'), '{}')
    expect(statSync(join(d, 'config.json')).mode & 0o777).toBe(0o600)
  })

  it('an immediate exit (second Ctrl-C) removes the temp files still open', async () => {
    const d = dir()
    const f = await AtomicFile.create(join(d, 'out.csv'))
    expect(readdirSync(d)).toHaveLength(1)
    removeTempFilesSync()
    expect(readdirSync(d)).toEqual([])
    expect(existsSync(f.tmp)).toBe(false)
  })

  it('an adopted part file becomes the whole target with the output mode, or goes back to its length', async () => {
    const d = dir()
    const part = join(d, 'part.ndjson')
    writeFileSync(part, '{"a":1}\n', {mode: 0o600})
    writeFileSync(join(d, 'out.ndjson'), 'old\n')
    // a failure: the part file keeps exactly what it held (the checkpoint counts on it), the target is untouched
    const failed = AtomicFile.adopt(part, join(d, 'out.ndjson'))
    failed.stream.write('{"a":2}\n')
    await new Promise((resolve) => failed.stream.write('', resolve))
    await failed.abort()
    expect(readFileSync(part, 'utf8')).toBe('{"a":1}\n')
    expect(readFileSync(join(d, 'out.ndjson'), 'utf8')).toBe('old\n')
    const ok = AtomicFile.adopt(part, join(d, 'out.ndjson'))
    ok.stream.write('{"a":3}\n')
    await ok.commit()
    await ok.abort() // after a commit: nothing to undo
    expect(readFileSync(join(d, 'out.ndjson'), 'utf8')).toBe('{"a":1}\n{"a":3}\n')
    expect(existsSync(part)).toBe(false)
    expect(statSync(join(d, 'out.ndjson')).mode & 0o777).toBe(0o644 & ~process.umask())
  })

  it('refuses to adopt through a symlink', () => {
    const d = dir()
    writeFileSync(join(d, 'victim'), 'precious')
    symlinkSync(join(d, 'victim'), join(d, 'link'))
    expect(() => AtomicFile.adopt(join(d, 'link'), join(d, 'out'))).toThrow()
    expect(readFileSync(join(d, 'victim'), 'utf8')).toBe('precious')
  })

  it('stale temps of a killed writer are removed for their target only; nothing else in the folder', async () => {
    const d = dir()
    const names = [
      '.manifest.json.sfl-tmp-0123456789abcdef',
      '.manifest.json.sfl-tmp-fedcba9876543210',
      '.manifest.json.sfl-tmp-notatempname',
      '.data.csv.sfl-tmp-0123456789abcdef',
      'manifest.json',
    ]
    for (const n of names) writeFileSync(join(d, n), 'x')
    await removeStaleTemps(join(d, 'manifest.json'))
    expect(readdirSync(d).sort()).toEqual([
      '.data.csv.sfl-tmp-0123456789abcdef',
      '.manifest.json.sfl-tmp-notatempname',
      'manifest.json',
    ])
    await removeStaleTemps(join(d, 'missing-folder', 'x.csv')) // no folder: nothing to do
  })
})
