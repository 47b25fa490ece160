import {RecordRedactor, type Redacted} from '../../src/api/secrets.js'
import {RecordScanner, type Rejected} from '../../src/pipeline/records.js'
import {RecordStages} from '../../src/pipeline/stages.js'
import type {RecordView} from '../../src/pipeline/view.js'

/** What one body gave the records stage: the records' bytes (copies), the rejected ones, and how it ended. */
export interface Scanned {
  records: Buffer[]
  /** 1-based positions of `records` in the body. */
  index: number[]
  rejected: Rejected[]
  /** What `push` or `end` threw, if anything (the scan stops there). */
  error: unknown
}

/** Split `body` into chunks of `sizes` bytes (cycled). */
export function chunks(body: Buffer | string, sizes: readonly number[] = [1 << 30]): Buffer[] {
  const buf = typeof body === 'string' ? Buffer.from(body) : body
  const out: Buffer[] = []
  for (let i = 0, k = 0; i < buf.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length]!)
    out.push(buf.subarray(i, i + size))
    i += size
  }
  return out
}

/** Feed `body` to a scanner in chunks of `sizes` (cycled) and end it; what it gave, and what it threw. */
export function scanBody(
  body: Buffer | string,
  sizes: readonly number[] = [1 << 30],
  scanner = new RecordScanner(),
): Scanned {
  const out: Scanned = {records: [], index: [], rejected: [], error: undefined}
  try {
    for (const chunk of chunks(body, sizes)) {
      // a copy: the scanner reuses the buffers a record lies in
      const n = scanner.push(Buffer.from(chunk))
      for (let k = 0; k < n; k++) {
        out.records.push(Buffer.from(scanner.records[k]!))
        out.index.push(scanner.index[k]!)
      }
      out.rejected.push(...scanner.takeRejected())
    }
    scanner.end()
  } catch (error) {
    out.error = error
  }
  return out
}

/** The records of a body as text (throws what the scan threw). */
export function recordsOf(body: Buffer | string, sizes?: readonly number[]): string[] {
  const s = scanBody(body, sizes)
  if (s.error) throw s.error
  return s.records.map((r) => r.toString('utf8'))
}

/** A body holding `records` (JSON texts) the way the service sends them. */
export function envelope(...records: string[]): string {
  return `{"status":"success","data":[${records.join(',')}]}`
}

/**
 * Point `stages.view` at the record `text` (JSON text of one object), walked by the records stage as a
 * body would have it. Throws when the stage rejects it.
 */
export function viewOf(
  text: string,
  stages: RecordStages = new RecordStages({strict: false, apiKey: undefined}),
): RecordView {
  const scanner = stages.scanner()
  const n = scanner.push(Buffer.from(envelope(text)))
  scanner.end()
  const bad = scanner.takeRejected()[0]
  if (bad || n !== 1) throw new Error(`not one record: ${bad?.reason ?? n}`)
  const first = scanner.first[0]!
  stages.view.set(
    scanner.records[0]!,
    scanner.walk.entries,
    first,
    scanner.entriesEnd(0) - first,
    scanner.spaced[0] === 1,
  )
  return stages.view
}

/** A record as the redactor hands it on with no key to mask (tests of what renders or spools records). */
export function sealed<T>(value: T): Redacted<T> {
  return new RecordRedactor(undefined).parsed(value)
}

/** A record's bytes as the redactor hands them on with no key to mask. */
export function sealedBytes(bytes: Buffer): Redacted<Buffer> {
  return new RecordRedactor(undefined).record(bytes, false)
}
