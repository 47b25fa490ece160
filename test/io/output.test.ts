import {execFileSync} from 'node:child_process'
import {
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Writable} from 'node:stream'
import {setFlagsFromString} from 'node:v8'
import {runInNewContext} from 'node:vm'

import {describe, expect, it, onTestFinished} from 'vitest'

import {LocalIoError, OutputClosedError} from '../../src/errors.js'
import {localIoError} from '../../src/io/fs-errors.js'
import {FileTarget, StdoutTarget, StreamFileTarget} from '../../src/io/output.js'
import {RecordWriter} from '../../src/io/record-writer.js'

/** A stdout stand-in that fails every write with `code`. */
function failing(code: string): Writable {
  return new Writable({
    write(_chunk, _enc, cb) {
      cb(Object.assign(new Error(`${code}: failed`), {code}))
    },
  })
}

function collecting(): Writable & {text: string} {
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      w.text += chunk.toString()
      cb()
    },
  }) as Writable & {text: string}
  w.text = ''
  return w
}

describe('output targets', () => {
  it('a reader that closed stdout (EPIPE) stops the run as OutputClosedError, reported at once', async () => {
    const seen: Error[] = []
    const t = new StdoutTarget((e) => seen.push(e), failing('EPIPE'))
    t.write('x\n')
    await new Promise((r) => setImmediate(r))
    expect(seen[0]).toBeInstanceOf(OutputClosedError)
    await expect(t.commit()).rejects.toBeInstanceOf(OutputClosedError)
  })

  it('a full disk under stdout is a LocalIoError that names it', async () => {
    const seen: Error[] = []
    const t = new StdoutTarget((e) => seen.push(e), failing('ENOSPC'))
    t.write('x\n')
    await new Promise((r) => setImmediate(r))
    expect(seen[0]).toBeInstanceOf(LocalIoError)
    expect(seen[0]!.message).toBe(
      'the disk is full (ENOSPC) while writing to stdout; free some space or write elsewhere',
    )
  })

  it("stdout's error listeners are as they were after each run, committed or aborted (a process runs many)", async () => {
    const sink = collecting()
    const theirs = () => undefined
    sink.on('error', theirs)
    for (let run = 0; run < 12; run++) {
      const t = new StdoutTarget(() => undefined, sink)
      t.write('x\n')
      if (run % 2) await t.commit()
      else await t.abort()
      expect(sink.listeners('error')).toEqual([theirs])
    }
  })

  it('a file target replaces the file only on commit, and abort leaves the old one', async () => {
    const d = mkdtempSync(join(tmpdir(), 'sfl-output-'))
    const out = join(d, 'o.ndjson')
    writeFileSync(out, 'old\n')
    const a = await FileTarget.create(out, () => undefined)
    a.write('new\n')
    await a.abort()
    expect(readFileSync(out, 'utf8')).toBe('old\n')
    const b = await FileTarget.create(out, () => undefined)
    b.write('new\n')
    await b.drain()
    await b.commit()
    expect(readFileSync(out, 'utf8')).toBe('new\n')
    expect(readdirSync(d)).toEqual(['o.ndjson'])
  })
})

describe('the record writer', () => {
  const write = (format: 'csv' | 'ndjson' | 'json', records: string[], bom = false) => {
    const sink = collecting()
    const w = new RecordWriter(new StdoutTarget(() => undefined, sink), format, {header: ['a', 'b,c'], bom})
    for (const r of records) {
      if (format === 'csv') w.csv(r.split('|'))
      else w.json(r)
    }
    w.end()
    return sink.text
  }

  it('frames CSV (RFC 4180, CRLF, BOM on request), NDJSON and JSON', () => {
    expect(write('csv', ['1|x "y"'], true)).toBe('\ufeffa,"b,c"\r\n1,"x ""y"""\r\n')
    expect(write('ndjson', ['{"a":1}', '{"a":2}'])).toBe('{"a":1}\n{"a":2}\n')
    expect(write('json', ['{"a":1}', '{"a":2}'])).toBe('[\n{"a":1},\n{"a":2}\n]\n')
  })

  it('an empty JSON run is still one valid array', () => {
    expect(JSON.parse(write('json', []))).toEqual([])
  })
})

describe('file-system faults as one line', () => {
  it.each([
    ['ENOSPC', /^the disk is full \(ENOSPC\) while writing o\.csv; free some space/],
    ['EACCES', /^permission denied \(EACCES\) while writing o\.csv; check the folder's owner and mode$/],
    ['EROFS', /^read-only file system \(EROFS\) while writing o\.csv/],
    ['ELOOP', /^refusing to write through an existing file or symlink \(ELOOP\)/],
    ['EIO', /^the file system failed \(EIO\) while writing o\.csv$/],
  ])('%s', (code, message) => {
    const e = localIoError(Object.assign(new Error('raw'), {code}), 'writing', 'o.csv')
    expect(e).toBeInstanceOf(LocalIoError)
    expect(e.message).toMatch(message)
  })

  it('leaves other errors as they are', () => {
    const raw = new Error('boom')
    expect(localIoError(raw, 'writing', 'x')).toBe(raw)
  })
})

describe('--out to a device or FIFO (StreamFileTarget)', () => {
  it('closes its descriptor exactly once: nothing is left for the garbage collector to close again', async () => {
    // a dropped FileHandle whose descriptor the stream already closed is closed again when collected:
    // EBADF, which ends the process on Node 20 (it once crashed a test worker at random)
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const warnings: string[] = []
    const onWarning = (w: Error) => warnings.push(w.message)
    process.on('warning', onWarning)
    onTestFinished(() => void process.off('warning', onWarning))
    // a FIFO made here stands in for the device (never the machine's /dev/null: a regression to
    // temp-and-rename would replace it, and tests run as root); its reading end stays open, unread (the
    // 40 bytes fit the pipe's buffer)
    const dir = mkdtempSync(join(tmpdir(), 'sfl-stream-target-'))
    onTestFinished(() => rmSync(dir, {recursive: true, force: true}))
    const path = join(dir, 'device')
    execFileSync('mkfifo', [path])
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
    onTestFinished(() => closeSync(reader))
    for (let i = 0; i < 20; i++) {
      const target = await StreamFileTarget.create(path, undefined, () => undefined)
      target.write(Buffer.from('x\n'))
      await target.commit()
    }
    gc()
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
    expect(warnings.filter((m) => m.includes('garbage collection'))).toEqual([])
  })
})
