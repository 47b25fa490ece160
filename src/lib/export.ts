import {join} from 'node:path'

import type {SpecialFinancingRecord} from '../api/record.js'
import {fipsProblem} from '../api/validate.js'
import {abortedBy, InterruptedError, NotFoundError, ServerError, UsageError} from '../errors.js'
import {readLines} from '../io/lines.js'
import {makeScratchDir, removeFile} from '../io/private-files.js'
import {parseWhere, type Where} from '../model/where.js'
import {cutOff, fetchCounty, type CountyUnit} from '../pipeline/county.js'
import {IdSet} from '../pipeline/ids.js'
import type {PagePart} from '../pipeline/spool.js'
import {RecordStages} from '../pipeline/stages.js'
import type {Core} from './core.js'

/** Where an export can go on from: after page `page` of county `fips`, at the service's next link. */
export interface ExportPosition {
  fips: string
  /** Pages taken so far. */
  page: number
  /** The next page's link; undefined when the county is complete. */
  next: string | undefined
}

/** What the records stage found in a page, beside its records. */
export interface PageReport {
  page: number
  records: number
  /** Records dropped as repeats of a ServicePropertyID the county already had (the first kept). */
  duplicates: number
  /** Records skipped: broken JSON, not UTF-8, over a cap, or (strict) breaking the spec's rules. */
  rejected: Array<{index: number; reason: string}>
  /** Records that break the spec's rules (handed over unless strict), by field. */
  violations: Record<string, number>
  /** Records fetched that `where` did not keep (not handed over); 0 without `where`. */
  filtered: number
  /** Give it as `from` to continue after this page. */
  position: ExportPosition
}

export type ExportItem = {kind: 'record'; record: SpecialFinancingRecord} | {kind: 'page'; page: PageReport}

/**
 * A county through the CLI's export pipeline (src/pipeline/county.ts: pages, records, checks, spool), for
 * a program: each page is spooled to a private temp folder and its records handed over only once the page
 * is whole, so memory stays flat for a county of any size and a page that fails is never seen in part.
 * While the reader reads a page, one more waits for it (spooled) and the next is fetched; a reader that
 * stops early stops the fetching. A county the service answers with 404 is empty (spec 7).
 */
export async function* exportCounty(
  core: Core,
  input: {
    fips: string
    from?: ExportPosition | undefined
    strict?: boolean | undefined
    where?: string | undefined
  },
  signal?: AbortSignal,
): AsyncGenerator<ExportItem> {
  if (typeof input.fips !== 'string')
    throw new UsageError(`fips must be a string; got a ${typeof input.fips}`)
  const problem = fipsProblem(input.fips)
  if (problem) throw new UsageError(`fips "${input.fips}" ${problem}`)
  // `county-export --where`'s grammar and checks (src/model/where.ts), before anything is sent
  const where = whereOf(input.where)
  if (signal?.aborted) throw abortedBy(signal)
  if (input.from) checkPosition(input.from, input.fips, core.baseUrl)
  if (input.from && input.from.next === undefined) return
  const scratch = makeScratchDir('sfl-export-')
  const dir = scratch.path
  const stop = new AbortController()
  const onAbort = () => stop.abort()
  signal?.addEventListener('abort', onAbort, {once: true})
  // each page with the next link as it stood when the page was whole: the fetching runs a page ahead of
  // the reader, so the unit's own `next` may already point further than the page handed over
  const pages = new Channel<{part: PagePart; next: string | undefined}>()
  const before = input.from?.page ?? 0
  const unit: CountyUnit = {fips: input.fips, pages: [], next: input.from?.next, ids: new IdSet()}
  const stages = new RecordStages({strict: input.strict === true, apiKey: core.apiKey, where})
  const producer = fetchCounty(
    unit,
    {
      client: core.client,
      scheduler: core.scheduler,
      baseUrl: core.baseUrl,
      stages,
      signal: stop.signal,
      throwIfStopped: () => {
        if (signal?.aborted) throw abortedBy(signal)
        if (stop.signal.aborted) throw new InterruptedError('the export was stopped')
      },
      spool: {
        partsDir: dir,
        format: 'ndjson',
        encoder: undefined,
        layout: () => 0,
        columnsOf: () => new Int32Array(0),
      },
    },
    {stream: () => undefined, onPage: (part) => pages.put({part, next: unit.next})},
  ).then(
    () => pages.close(),
    (error: unknown) => pages.fail(countyError(error, unit)),
  )
  try {
    for (let taken = await pages.take(); taken !== undefined; taken = await pages.take()) {
      const {part, next} = taken
      for await (const l of readLines(join(dir, part.file)))
        if (l.complete)
          yield {kind: 'record', record: JSON.parse(l.bytes.toString('utf8')) as SpecialFinancingRecord}
      await removeFile(join(dir, part.file))
      const page = before + part.n
      yield {
        kind: 'page',
        page: {
          page,
          records: part.records,
          duplicates: part.duplicates ?? 0,
          rejected: part.rejected ?? [],
          violations: part.violations ?? {},
          filtered: part.filtered ?? 0,
          position: {fips: input.fips, page, next},
        },
      }
    }
  } finally {
    // a reader that stops early (break, an error) stops the fetching too
    stop.abort()
    pages.close()
    await producer
    signal?.removeEventListener('abort', onAbort)
    await scratch.remove()
  }
}

/** The `where` option read as `county-export --where` is (the same parser, in the library's words). */
function whereOf(where: unknown): Where | undefined {
  if (where === undefined) return undefined
  if (typeof where !== 'string') throw new UsageError(`where must be a string; got a ${typeof where}`)
  return parseWhere(where, 'where')
}

/**
 * A position as this library hands it out (`page.position`): for this county, a page count, and a next link
 * on the service's own origin. A link elsewhere would be sent the API key (the client keeps the key to the
 * origin of the URL it is given), so a forged or mistyped position is refused before anything is sent.
 */
function checkPosition(from: ExportPosition, fips: string, baseUrl: string): void {
  if (from.fips !== fips) throw new UsageError(`from is a position of county ${from.fips}, not ${fips}`)
  if (!Number.isInteger(from.page) || from.page < 0)
    throw new UsageError('from.page must be a whole number of pages (as page.position gives it)')
  if (from.next === undefined) return
  let origin: string | undefined
  try {
    origin = new URL(from.next).origin
  } catch {
    origin = undefined
  }
  if (origin !== new URL(baseUrl).origin)
    throw new UsageError(
      "from.next is not a link of the service's own origin; give a position this library returned",
    )
}

/** The error a program sees for a county that ended badly: a 404 on the first page is no error (empty). */
function countyError(error: unknown, unit: CountyUnit): unknown {
  if (error instanceof NotFoundError && unit.pages.length === 0) return undefined
  const cut = unit.pages.length > 0 ? cutOff(error) : undefined
  return cut
    ? new ServerError(`${cut} (page ${unit.pages.length + 1} of county ${unit.fips})`, {cause: error})
    : error
}

/** One page at a time from the fetching to the reader: `put` waits until the reader took the page before. */
class Channel<T> {
  private items: T[] = []
  private done = false
  private error: unknown
  private wake: (() => void) | undefined
  private room: (() => void) | undefined

  async put(item: T): Promise<void> {
    while (this.items.length > 0 && !this.done) await new Promise<void>((r) => (this.room = r))
    if (this.done) return
    this.items.push(item)
    this.wake?.()
  }

  async take(): Promise<T | undefined> {
    for (;;) {
      if (this.items.length > 0) {
        const item = this.items.shift()!
        this.room?.()
        return item
      }
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- what the fetching threw, passed on as it was
      if (this.error !== undefined) throw this.error
      if (this.done) return undefined
      await new Promise<void>((r) => (this.wake = r))
    }
  }

  close(): void {
    this.done = true
    this.wake?.()
    this.room?.()
  }

  fail(error: unknown): void {
    if (error !== undefined) this.error = error
    this.close()
  }
}
