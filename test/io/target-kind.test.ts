import {execFileSync} from 'node:child_process'
import {
  chownSync,
  closeSync,
  constants,
  lchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it, onTestFinished} from 'vitest'

import {LocalIoError, UsageError} from '../../src/errors.js'
import {AtomicFile, writeFileAtomic} from '../../src/io/atomic-file.js'
import {openOutput, StreamFileTarget, writeOutputFile} from '../../src/io/output.js'
import {assertWritableTarget} from '../../src/io/target-kind.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * The output gate's one decision of what a path is (src/io/target-kind.ts), and the checks at the moment
 * of writing: a rename never replaces a FIFO, device or folder that appeared since, and a stream target
 * never writes into a regular file swapped in for the FIFO it was.
 */
const IS_ROOT = process.getuid?.() === 0
const NOBODY = 65534

/** A FIFO with its reading end held open (unread: what is written fits the pipe's buffer). */
function fifoWithReader(path: string): number {
  execFileSync('mkfifo', [path])
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  onTestFinished(() => closeSync(fd))
  return fd
}

describe('what a path is, decided once', () => {
  it('a regular file, nothing yet, a link to a file or a dangling link: written atomically beside itself', async () => {
    const d = tempDir()
    writeFileSync(join(d, 'f'), 'x')
    symlinkSync(join(d, 'f'), join(d, 'link'))
    symlinkSync(join(d, 'nowhere'), join(d, 'dangling'))
    for (const name of ['f', 'new', 'link', 'dangling'])
      expect(await assertWritableTarget(join(d, name))).toEqual({kind: 'file'})
  })

  it("a FIFO is a stream; the user's own link to it is a stream reached through the link", async () => {
    const d = tempDir()
    execFileSync('mkfifo', [join(d, 'pipe')])
    symlinkSync(join(d, 'pipe'), join(d, 'mine'))
    expect(await assertWritableTarget(join(d, 'pipe'))).toEqual({kind: 'stream', viaLink: false})
    expect(await assertWritableTarget(join(d, 'mine'))).toEqual({kind: 'stream', viaLink: true})
  })

  it('a folder and a missing folder are refused with their usage line', async () => {
    const d = tempDir()
    await expect(assertWritableTarget(d, '--stats-json')).rejects.toThrow(
      new UsageError(`--stats-json ${d} is a folder; give a file name`),
    )
    await expect(assertWritableTarget(join(d, 'no', 'x.json'), '--stats-json')).rejects.toThrow(
      `--stats-json ${join(d, 'no', 'x.json')}: the folder ${join(d, 'no')} does not exist; create it first`,
    )
  })

  it.skipIf(!IS_ROOT)(
    "another user's symlink to a FIFO is refused, naming it (needs root to own a link as nobody)",
    async () => {
      const d = tempDir()
      execFileSync('mkfifo', [join(d, 'pipe')])
      symlinkSync(join(d, 'pipe'), join(d, 'theirs'))
      lchownSync(join(d, 'theirs'), NOBODY, NOBODY)
      await expect(assertWritableTarget(join(d, 'theirs'))).rejects.toThrow(
        `--out ${join(d, 'theirs')} is another user's symbolic link (uid ${NOBODY}) to a FIFO; sfl does not write through it: remove it or give another name`,
      )
    },
  )

  it.skipIf(!IS_ROOT)(
    "another user's FIFO (planted where sfl writes, as rejects.ndjson in a shared folder) is refused (needs root)",
    async () => {
      const d = tempDir()
      const fifo = join(d, 'rejects.ndjson')
      execFileSync('mkfifo', [fifo])
      chownSync(fifo, NOBODY, NOBODY)
      await expect(writeOutputFile(fifo, 'x\n')).rejects.toThrow(
        new UsageError(
          `--out ${fifo} is another user's FIFO (uid ${NOBODY}); sfl does not write into it: remove it or give another name`,
        ),
      )
      expect(lstatSync(fifo).isFIFO()).toBe(true)
    },
  )
})

describe('small whole files go through the same gate (writeOutputFile)', () => {
  it('a regular file is replaced whole, nothing left beside it', async () => {
    const d = tempDir()
    const out = join(d, 'stats.json')
    writeFileSync(out, 'old')
    await writeOutputFile(out, '{"new":1}\n')
    expect(readFileSync(out, 'utf8')).toBe('{"new":1}\n')
    expect(readdirSync(d)).toEqual(['stats.json'])
  })

  it('a FIFO is written into: the reader gets the bytes, it stays a FIFO', async () => {
    const d = tempDir()
    const fifo = join(d, 'pipe')
    const reader = fifoWithReader(fifo)
    await writeOutputFile(fifo, 'abc\n')
    const buf = Buffer.alloc(16)
    const n = (await import('node:fs')).readSync(reader, buf)
    expect(buf.subarray(0, n).toString()).toBe('abc\n')
    expect(lstatSync(fifo).isFIFO()).toBe(true)
    expect(readdirSync(d)).toEqual(['pipe'])
  })
})

describe('at the moment of writing', () => {
  it('a FIFO that appeared where the temp file was to be renamed is not replaced; the temp file goes', async () => {
    const d = tempDir()
    const out = join(d, 'out.csv')
    const f = await AtomicFile.create(out)
    f.stream.write('a,b\n')
    execFileSync('mkfifo', [out])
    await expect(f.commit()).rejects.toThrow(
      new LocalIoError(
        `refusing to replace ${out}: it became a FIFO while sfl was writing it (the new file was discarded); write elsewhere or run again`,
      ),
    )
    expect(lstatSync(out).isFIFO()).toBe(true)
    expect(readdirSync(d)).toEqual(['out.csv'])
  })

  it("a folder that appeared at a small file's target is not replaced either (writeFileAtomic)", async () => {
    const d = tempDir()
    const out = join(d, 'manifest.json')
    mkdirSync(out)
    await expect(writeFileAtomic(out, '{}')).rejects.toBeInstanceOf(LocalIoError)
    expect(lstatSync(out).isDirectory()).toBe(true)
    expect(readdirSync(d)).toEqual(['manifest.json'])
  })

  it('a regular file swapped in for the checked FIFO is never written into', async () => {
    const d = tempDir()
    const out = join(d, 'pipe')
    writeFileSync(out, 'precious')
    await expect(StreamFileTarget.create(out, undefined, () => undefined)).rejects.toThrow(
      `refusing to write into ${out}: it is now a file, not the FIFO or device it was when checked; run again`,
    )
    expect(readFileSync(out, 'utf8')).toBe('precious')
  })

  it('a symlink put where a checked FIFO was is not followed (O_NOFOLLOW)', async () => {
    const d = tempDir()
    writeFileSync(join(d, 'victim'), 'precious')
    symlinkSync(join(d, 'victim'), join(d, 'pipe'))
    await expect(StreamFileTarget.create(join(d, 'pipe'), undefined, () => undefined)).rejects.toBeInstanceOf(
      LocalIoError,
    )
    expect(readFileSync(join(d, 'victim'), 'utf8')).toBe('precious')
  })

  it('openOutput of a folder writes nothing in it or beside it (the kind is checked first)', async () => {
    const d = tempDir()
    mkdirSync(join(d, 'dir'))
    await expect(openOutput(join(d, 'dir'), () => undefined)).rejects.toBeInstanceOf(UsageError)
    expect(readdirSync(d)).toEqual(['dir'])
    expect(readdirSync(join(d, 'dir'))).toEqual([])
  })
})
