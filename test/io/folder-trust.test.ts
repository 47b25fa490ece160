import {chmodSync, chownSync, lchownSync, mkdirSync, readdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {LocalIoError, UsageError} from '../../src/errors.js'
import {enterPartitions, prepareOutDir} from '../../src/io/folder-trust.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * An --out-dir's folders (src/io/folder-trust.ts): created or entered only when they are real folders of
 * the user's (or root's) that others cannot write unless sticky; checked whole before a run, and each
 * partition again when a county's file is written.
 */
const IS_ROOT = process.getuid?.() === 0
const NOBODY = 65534
const ROOT_ONLY = IS_ROOT ? '' : ' (SKIPPED: needs root to make files of another user)'

describe('prepareOutDir', () => {
  it('makes a missing folder (only checks with --dry-run) and takes a sticky shared one', async () => {
    const d = tempDir()
    await prepareOutDir(join(d, 'plan'), false)
    expect(readdirSync(d)).toEqual([])
    await prepareOutDir(join(d, 'out'), true)
    expect(readdirSync(d)).toEqual(['out'])
    chmodSync(join(d, 'out'), 0o1777)
    await prepareOutDir(join(d, 'out'), true)
  })

  it('refuses a folder others may write (not sticky), naming the fix', async () => {
    const d = tempDir()
    mkdirSync(join(d, 'out'))
    chmodSync(join(d, 'out'), 0o777)
    await expect(prepareOutDir(join(d, 'out'), true)).rejects.toThrow(
      new UsageError(
        `--out-dir ${join(d, 'out')} is writable by other users (mode 777), who could swap the files sfl writes there; fix: chmod go-w ${join(d, 'out')} (or chmod +t for a shared folder)`,
      ),
    )
  })

  it("refuses a partition folder that is a symlink, or writable by others; the user's own link to DIR is fine", async () => {
    const d = tempDir()
    mkdirSync(join(d, 'real'))
    symlinkSync(join(d, 'real'), join(d, 'out'))
    await prepareOutDir(join(d, 'out'), true)
    mkdirSync(join(d, 'elsewhere'))
    symlinkSync(join(d, 'elsewhere'), join(d, 'real', 'state=CA'))
    await expect(prepareOutDir(join(d, 'out'), true)).rejects.toThrow(
      `--out-dir: the partition folder ${join(d, 'out', 'state=CA')} is a symbolic link, which sfl never writes through`,
    )
    const ca = join(d, 'real', 'state=TX')
    mkdirSync(join(ca, 'fips=48201'), {recursive: true})
    chmodSync(join(ca, 'fips=48201'), 0o777)
    await expect(prepareOutDir(join(d, 'real'), true)).rejects.toThrow(/state=CA is a symbolic link/)
  })

  it("leaves alone what is not a partition (a README, the user's own link named otherwise)", async () => {
    const d = tempDir()
    mkdirSync(join(d, 'out'))
    writeFileSync(join(d, 'out', 'README'), 'x')
    symlinkSync(d, join(d, 'out', 'latest'))
    await prepareOutDir(join(d, 'out'), true)
  })

  it.skipIf(!IS_ROOT)(`refuses a partition folder or a DIR link of another user${ROOT_ONLY}`, async () => {
    const d = tempDir()
    mkdirSync(join(d, 'out', 'state=CA'), {recursive: true})
    chownSync(join(d, 'out', 'state=CA'), NOBODY, NOBODY)
    await expect(prepareOutDir(join(d, 'out'), true)).rejects.toThrow(
      `--out-dir: the partition folder ${join(d, 'out', 'state=CA')} belongs to another user (uid ${NOBODY})`,
    )
    mkdirSync(join(d, 'real'))
    symlinkSync(join(d, 'real'), join(d, 'theirs'))
    lchownSync(join(d, 'theirs'), NOBODY, NOBODY)
    await expect(prepareOutDir(join(d, 'theirs'), true)).rejects.toThrow(
      `--out-dir ${join(d, 'theirs')} is another user's symbolic link (uid ${NOBODY})`,
    )
  })
})

describe('enterPartitions (a county file about to be written)', () => {
  it('creates state=XX/fips=NNNNN as real folders', async () => {
    const d = tempDir()
    await enterPartitions(d, 'state=CA/fips=06067/data.csv')
    expect(readdirSync(join(d, 'state=CA'))).toEqual(['fips=06067'])
  })

  it('a link planted after the run began stops it (exit 8) and nothing is made through it', async () => {
    const d = tempDir()
    const mine = join(d, 'mine')
    mkdirSync(mine)
    mkdirSync(join(d, 'out', 'state=CA'), {recursive: true})
    symlinkSync(mine, join(d, 'out', 'state=CA', 'fips=06067'))
    const error = await enterPartitions(join(d, 'out'), 'state=CA/fips=06067/data.csv').catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(LocalIoError)
    expect((error as Error).message).toMatch(/the partition folder .*fips=06067 is a symbolic link/)
    expect(readdirSync(mine)).toEqual([])
  })
})
