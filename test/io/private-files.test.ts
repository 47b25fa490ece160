import {
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'
import {Readable} from 'node:stream'

import {describe, expect, it} from 'vitest'

import {UsageError} from '../../src/errors.js'
import {removeTempFilesSync} from '../../src/io/atomic-file.js'
import {
  AppendFile,
  copyToScratch,
  makePrivateDir,
  makeScratchDir,
  statPrivateFile,
} from '../../src/io/private-files.js'
import {makePrivateDirSync, writeFileAtomicSync} from '../../src/io/private-sync.js'
import {tempDir} from '../helpers/tmp.js'

/** A run's private files (src/io/private-files.ts, private-sync.ts): 0700/0600, exclusive, never another's. */
const IS_ROOT = process.getuid?.() === 0
const NOBODY = 65534

describe('private folders and files', () => {
  it('a parts folder is made 0700; a symlink in its place is refused, naming the fix', async () => {
    const d = tempDir()
    await makePrivateDir(join(d, 'parts'), 'the parts folder')
    expect(lstatSync(join(d, 'parts')).mode & 0o777).toBe(0o700)
    mkdirSync(join(d, 'mine'))
    symlinkSync(join(d, 'mine'), join(d, 'planted'))
    await expect(makePrivateDir(join(d, 'planted'), 'the parts folder')).rejects.toThrow(
      new UsageError(
        `refusing to use the parts folder ${join(d, 'planted')}: it is a symbolic link, so another user could have made or changed it; remove it (rm -r ${join(d, 'planted')}) or write elsewhere, and run again`,
      ),
    )
  })

  it.skipIf(!IS_ROOT)('a checkpoint of another user is refused before it is read (needs root)', async () => {
    const d = tempDir()
    const cp = join(d, 'out.csv.sfl-checkpoint')
    writeFileSync(cp, '{"v":1}\n')
    chownSync(cp, NOBODY, NOBODY)
    await expect(statPrivateFile(cp, 'the checkpoint')).rejects.toThrow(
      `refusing to use the checkpoint ${cp}: it belongs to another user (uid ${NOBODY})`,
    )
    expect(await statPrivateFile(join(d, 'none'), 'the checkpoint')).toBeUndefined()
  })

  it('an append file is 0600, appended in order, cut back, and never opened through a link', () => {
    const d = tempDir()
    const f = AppendFile.open(join(d, 'j'), {fresh: true})
    f.write('abc\n')
    f.write(Buffer.from('xdefx'), 1, 3)
    f.truncate(6)
    f.close()
    expect(readFileSync(join(d, 'j'), 'utf8')).toBe('abc\nde')
    expect(lstatSync(join(d, 'j')).mode & 0o777).toBe(0o600)
    expect(() => AppendFile.open(join(d, 'j'), {fresh: true})).toThrow(/EEXIST/)
    writeFileSync(join(d, 'victim'), 'precious')
    symlinkSync(join(d, 'victim'), join(d, 'link'))
    expect(() => AppendFile.open(join(d, 'link'))).toThrow(/ELOOP/)
    expect(readFileSync(join(d, 'victim'), 'utf8')).toBe('precious')
  })

  it('a stdin copy is a 0600 file in a 0700 scratch folder, gone after its clean-up', async () => {
    const {path, cleanup} = await copyToScratch(Readable.from(['a,b\n', '1,2\n']), 'sfl-test-input-')
    expect(readFileSync(path, 'utf8')).toBe('a,b\n1,2\n')
    expect(lstatSync(path).mode & 0o777).toBe(0o600)
    expect(lstatSync(join(path, '..')).mode & 0o777).toBe(0o700)
    await cleanup()
    expect(() => lstatSync(join(path, '..'))).toThrow(/ENOENT/)
  })

  it("the code cache's folder: made 0700, refused when it is a link; its file written whole, no temp left", () => {
    const d = tempDir()
    expect(makePrivateDirSync(join(d, 'a', 'cache'), {recursive: true})).toBe(true)
    symlinkSync(join(d, 'a', 'cache'), join(d, 'link'))
    expect(makePrivateDirSync(join(d, 'link'))).toBe(false)
    writeFileAtomicSync(join(d, 'a', 'cache', 'x.v8cache'), Buffer.from('data'), {sync: false})
    expect(readdirSync(join(d, 'a', 'cache'))).toEqual(['x.v8cache'])
    expect(lstatSync(join(d, 'a', 'cache', 'x.v8cache')).mode & 0o777).toBe(0o600)
  })
})

describe('a run scratch folder', () => {
  it('is removed by an immediate exit (Ctrl-C) from the moment it exists, and by its own removal after', async () => {
    const a = makeScratchDir('sfl-test-scratch-')
    expect(lstatSync(a.path).mode & 0o777).toBe(0o700)
    writeFileSync(join(a.path, 'part'), 'x')
    // no await between making it and a Ctrl-C's clean-up: the clean-up already knows it
    removeTempFilesSync()
    expect(existsSync(a.path)).toBe(false)
    const b = makeScratchDir('sfl-test-scratch-')
    await b.remove()
    expect(existsSync(b.path)).toBe(false)
    // removed, it is no longer the clean-up's: a folder made later at that path is not touched
    mkdirSync(b.path, {mode: 0o700})
    removeTempFilesSync()
    expect(existsSync(b.path)).toBe(true)
    rmSync(b.path, {recursive: true})
  })
})
