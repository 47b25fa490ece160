import {createWriteStream} from 'node:fs'
import {once} from 'node:events'

import type {HttpResponse} from '../api/client.js'
import {ShapeTracker} from '../render/columns.js'
import {DataScanner} from './data-scanner.js'
import {nextLink} from './link.js'

const NEWLINE = 0x0a

export interface SpoolResult {
  records: number
  next?: string | undefined
  shape: ShapeTracker
}

/**
 * Stream one county response (or page) into an NDJSON part file, with backpressure, in constant memory.
 * The part is opened afresh on every attempt, so a retried page never keeps rows of the broken one.
 */
export async function spoolResponse(res: HttpResponse, file: string): Promise<SpoolResult> {
  const out = createWriteStream(file, {flags: 'w'})
  const scanner = new DataScanner()
  const shape = new ShapeTracker()
  let records = 0
  try {
    for await (const chunk of res.body) {
      let ok = true
      for (const bytes of scanner.push(chunk)) {
        const rec = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>
        shape.observe(rec)
        // NDJSON needs one line per record: re-serialise only when the service pretty-printed it
        ok =
          (bytes.includes(NEWLINE)
            ? out.write(`${JSON.stringify(rec)}\n`)
            : out.write(Buffer.concat([bytes, Buffer.from('\n')]))) && ok
        records++
      }
      if (!ok) await once(out, 'drain')
    }
    scanner.end()
  } finally {
    out.end()
    await once(out, 'close')
  }
  return {records, next: nextLink(res.headers['link'], res.url), shape}
}
