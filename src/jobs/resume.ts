import {join} from 'node:path'

import {readCsv} from '../io/csv-reader.js'
import {readLines} from '../io/lines.js'
import type {RecordWriter} from '../io/record-writer.js'
import {FORMATS, type ExportFormat} from '../model/formats.js'
import type {CountyUnit} from '../pipeline/county.js'
import {IdSet} from '../pipeline/ids.js'
import {copyPage} from '../pipeline/sinks.js'
import type {RecordStages} from '../pipeline/stages.js'

/** The spooled pages of a unit not yet copied to a streaming stdout, copied now (in order). */
export async function copyUnitPages(
  u: CountyUnit & {flushed: number},
  dir: string,
  writer: RecordWriter,
  req: {format: ExportFormat},
  stages: RecordStages,
  layouts: ReadonlyArray<readonly string[]>,
): Promise<void> {
  const columns = FORMATS[req.format].spool === 'csv' ? stages.schema.names() : undefined
  for (; u.flushed < u.pages.length; u.flushed++)
    await copyPage(dir, u.pages[u.flushed]!, writer, columns, layouts)
}

/**
 * A resumed county goes on fetching: the ServicePropertyIDs its earlier pages took are read back from
 * their part files, so a record the service repeats on a later page is still written once. With --where
 * the part files hold the kept rows only: the ids of the records the filter dropped come from the
 * checkpoint's page events (`dropped`), so a later repeat of one is a duplicate, as in a run never
 * stopped (not filtered afresh, nor kept when it differs from its first copy and passes the filter).
 */
export async function rebuildIds(
  u: CountyUnit,
  dir: string,
  layouts: ReadonlyArray<readonly string[]>,
): Promise<void> {
  u.ids.begin()
  const take = (v: unknown) => {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,11}$/.test(v) ? Number(v) : NaN
    // the ids the stages took (src/pipeline/stages.ts serviceId); others were written without a check
    if (Number.isInteger(n) && n > 0 && n <= IdSet.MAX_ID) u.ids.add(n)
  }
  for (const p of u.pages) {
    for (const id of p.filteredIds ?? []) take(id)
    delete p.filteredIds
    if (!p.segments) {
      for await (const l of readLines(join(dir, p.file)))
        take((JSON.parse(l.bytes.toString('utf8')) as {ServicePropertyID?: unknown}).ServicePropertyID)
      continue
    }
    for (const seg of p.segments) {
      const at = layouts[seg.layout]!.indexOf('ServicePropertyID')
      if (at === -1) continue
      for await (const {fields} of readCsv(join(dir, seg.file))) take(fields[at])
    }
  }
}
