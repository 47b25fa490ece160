import {CheckpointError, NotFoundError} from '../errors.js'
import {stringValue} from '../json/values.js'
import {ESCAPED, STRING} from '../json/walk.js'
import type {LookupContext} from '../lookup/fetch-lookup.js'
import {fetchCounty, type CountyEnv, type PageSink} from '../pipeline/county.js'
import {IdSet} from '../pipeline/ids.js'
import type {PagePart} from '../pipeline/spool.js'
import {RecordStages} from '../pipeline/stages.js'
import type {RecordView} from '../pipeline/view.js'
import {
  firstStep,
  nextPage,
  pagesFrom,
  type CountyCost,
  type FirstStep,
  type LadderCost,
  type PlanFlag,
} from '../plan/cost.js'
import {apnHash, type CountyIndex, type Hit, type PageHit} from '../plan/county-index.js'
import type {RecordKeys} from '../plan/match-keys.js'
import {batchEvent, decodeEvent, type BatchEvent} from './events.js'
import type {RunState} from './run.js'

/**
 * The scan of one county for a batch (`lookup --input`, issue 33): the county-wide form of the endpoint
 * (spec 1: "leaving out the address returns all eligible records for the county") read by the export's
 * own stages (src/pipeline/county.ts: pages, the loop and origin checks, the redactor, records, checks,
 * the ids), with a sink that matches each record against the index of the batch's keys (src/plan/
 * county-index.ts) and keeps only the records that matched, until their page is whole. Before each page
 * after the first the cost rules (src/plan/cost.ts) say whether it is worth fetching.
 *
 * The checkpoint holds each whole page (where the scan continues, and the records it matched), so a rerun
 * neither fetches a finished page again nor loses a match; when the scan ends, the lookups it answered
 * are journaled as rows (`via: scan`) and then `scanned`. A scan that fails (a page refused, a broken
 * answer) ends there: its rows are looked up, as they would have been without it.
 */
type ScanPageEvent = Extract<BatchEvent, {t: 'scan'}>
type Rec = Record<string, unknown>

/** What one county's scan needs from its batch run. */
export interface ScanHost {
  deps: LookupContext
  run: RunState
  /** The batch run's record stages (strict as the run is; the key masked). */
  stages: RecordStages
  plan: PlanFlag
  ladder: LadderCost
  journalName: string
  /** The county's pages as a previous export's manifest recorded them (`--from`), when known. */
  knownPages?: number | undefined
  /** Lookup `key` is answered by these records of the scan: journal it. */
  settle(key: string, records: Rec[]): void
  /** A page of a scan is whole (progress). */
  onPage?: (() => void) | undefined
}

/** What a county's scan did, for the summary. */
export interface ScanReport {
  fips: string
  step: FirstStep
  /** Pages fetched, by this run and the earlier runs of its checkpoint. */
  pages: number
  /** The county's length, when known. */
  knownPages?: number | undefined
  /** Every page was read: each lookup with an exact match was answered by the scan. */
  whole: boolean
  /** Lookups the scan answered. */
  answered: number
  /** Why the scan ended early, when a page failed (its rows were looked up). */
  error?: string | undefined
}

export class CountyScan {
  private readonly pages: PagePart[] = []
  private next: string | undefined
  private knownPages: number | undefined
  private ended: {whole: boolean; error?: string | undefined} | undefined
  /** Where the scan's page events lie in the journal, in order. */
  private readonly events: Array<{offset: number; length: number}> = []
  private current: MatchSink | undefined
  private answered = 0

  constructor(
    readonly fips: string,
    private readonly index: CountyIndex,
  ) {}

  /** A page event of an earlier run (journal position), in order. */
  restorePage(e: ScanPageEvent, offset: number, length: number, journal: string): void {
    const hits: PageHit[] = e.hits.map((h) => {
      if (h.n >= this.index.size || this.index.keyOf(h.n) !== h.k)
        throw new CheckpointError(
          `the checkpoint ${journal} names a lookup its input does not have at that place; add --restart to discard it and start over`,
        )
      return {lookup: h.n, exact: h.x, id: recordId(h.r), apn: apnHash(text(h.r['APN']))}
    })
    this.index.count(hits)
    this.pages.push({n: e.n, records: 0, file: '', ...(e.url ? {url: e.url} : {})})
    this.next = e.next ?? undefined
    if (e.pages !== undefined) this.knownPages = e.pages
    this.events.push({offset, length})
  }

  /** The scan ended in an earlier run (its answers are journaled). */
  restoreEnd(e: {whole: boolean; error?: string | undefined}): void {
    this.ended = e
  }

  /** Will `run` fetch anything or settle anything? (A county it will not scan is looked up at once.) */
  wouldScan(host: ScanHost): boolean {
    if (this.ended) return false
    return this.pages.length > 0 || firstStep(host.plan, this.cost(host)) !== 'lookups'
  }

  /** Run what is left of the scan by the cost rules; returns what it did. Throws only what is not the county's. */
  async run(host: ScanHost): Promise<ScanReport> {
    const report = (step: FirstStep): ScanReport => ({
      fips: this.fips,
      step,
      pages: this.pages.length,
      knownPages: this.knownPages ?? host.knownPages,
      whole: this.ended?.whole ?? false,
      answered: this.answered,
      ...(this.ended?.error ? {error: this.ended.error} : {}),
    })
    if (this.ended) return report('scan')
    const step = this.pages.length > 0 ? 'scan' : firstStep(host.plan, this.cost(host))
    if (step === 'lookups') return report(step)
    if (this.pages.length === 0 || this.next !== undefined) {
      const outcome = await this.fetch(host)
      if (outcome === 'stopped') return report(step)
      if (outcome !== 'done') return (this.finish(host, false, outcome.error), report(step))
    }
    this.finish(host, this.next === undefined)
    return report(step)
  }

  private cost(host: ScanHost): CountyCost {
    const ix = this.index
    return {
      lookups: ix.replaceable,
      perLookup: host.ladder.perLookup(ix.open, ix.withUnit),
      pages: this.knownPages ?? host.knownPages,
    }
  }

  /** Fetch pages while the rules say so. 'stopped': the run stopped (a rerun continues the scan). */
  private async fetch(host: ScanHost): Promise<'done' | 'stopped' | {error: string}> {
    const {run} = host
    const unit = {fips: this.fips, pages: this.pages, next: this.next, ids: new IdSet()}
    try {
      await fetchCounty(
        unit,
        {...countyEnv(host.deps, host.stages, run.signal), throwIfStopped: () => run.throwIfStopped()},
        {
          stream: () => undefined,
          pageSink: () => (this.current = new MatchSink(this.index, host.stages)),
          more: (fetched) => nextPage(host.plan, fetched, this.cost(host)),
          onPage: async (part) => this.pageDone(host, unit, part),
        },
      )
      this.next = unit.next
      return 'done'
    } catch (error) {
      this.next = unit.next
      if (run.absorbStop(error)) return 'stopped'
      // the county-wide form found nothing (spec 7: 404): read whole, nothing matched
      if (error instanceof NotFoundError && this.pages.length === 0) return 'done'
      return {error: run.message(error)}
    }
  }

  /** A page is whole: count its hits and journal it (with where the scan goes on). */
  private async pageDone(
    host: ScanHost,
    unit: {next?: string | undefined; expected?: number | undefined},
    part: PagePart,
  ): Promise<void> {
    const sink = this.current!
    this.current = undefined
    if (part.n === 1)
      this.knownPages = pagesFrom({
        next: unit.next !== undefined,
        total: unit.expected ?? null,
        pageRecords: part.records + (part.duplicates ?? 0) + (part.rejected?.length ?? 0),
      })
    const counted = this.index.count(sink.hits)
    const at = host.run.journal.append({
      t: 'scan',
      u: this.fips,
      n: part.n,
      next: unit.next ?? null,
      ...(part.url ? {url: part.url} : {}),
      ...(part.n === 1 && this.knownPages !== undefined ? {pages: this.knownPages} : {}),
      hits: counted.map((h) => ({
        n: h.lookup,
        k: this.index.keyOf(h.lookup),
        x: h.exact,
        r: JSON.parse(sink.texts.get(h)!) as Rec,
      })),
    })
    this.events.push(at)
    host.onPage?.()
  }

  /**
   * The scan ended: each lookup its records answer (all of them, if the county was read whole; only a
   * property id's otherwise) is journaled with its records, in the order the scan met them; then the end.
   */
  private finish(host: ScanHost, whole: boolean, error?: string): void {
    const ix = this.index
    const gathering = new Map<number, Rec[]>()
    for (const {offset, length} of this.events) {
      const e = decodeEvent(batchEvent, host.run.journal.read(offset, length), host.journalName)
      if (e.t !== 'scan') continue
      for (const h of e.hits) {
        const tier = ix.answer(h.n, whole)
        if (tier === 'none' || ix.isDone(h.n) || (tier === 'exact') !== h.x) continue
        const records = gathering.get(h.n) ?? []
        records.push(h.r)
        if (records.length < ix.answerCount(h.n, whole)) {
          gathering.set(h.n, records)
          continue
        }
        gathering.delete(h.n)
        host.settle(h.k, records)
        ix.markDone(h.n)
        this.answered++
      }
    }
    this.ended = {whole, ...(error ? {error} : {})}
    host.run.journal.append({t: 'scanned', u: this.fips, whole, ...(error ? {error} : {})})
  }
}

/** What the dry run's probe saw of a county: its first page, and whether another was linked. */
export interface ProbeFinding {
  next: boolean
  /** X-Total-Count: the records the service says the county holds. */
  total: number | null
  /** Records on the first page (as sent). */
  pageRecords: number
}

/**
 * The dry run's one probe (`lookup --input FILE --dry-run`): the county-wide form's first page, read by the
 * export's stages like any page of a scan and kept by nobody; what it says of the county's length. A 404
 * is a county with no records in that form (one request, whole). Throws what the request threw otherwise.
 */
export async function probeCounty(
  ctx: LookupContext,
  fips: string,
  signal: AbortSignal,
): Promise<ProbeFinding> {
  const stages = new RecordStages({strict: false, apiKey: ctx.apiKey})
  const unit: {
    fips: string
    pages: PagePart[]
    next?: string | undefined
    expected?: number | undefined
    ids: IdSet
  } = {
    fips,
    pages: [],
    ids: new IdSet(),
  }
  try {
    await fetchCounty(
      unit,
      {...countyEnv(ctx, stages, signal), throwIfStopped: () => undefined},
      {
        stream: () => undefined,
        pageSink: () => ({
          record: () => undefined,
          close: async () => undefined,
          discard: async () => undefined,
        }),
        more: () => false,
        onPage: async () => undefined,
      },
    )
  } catch (error) {
    if (error instanceof NotFoundError) return {next: false, total: 0, pageRecords: 0}
    throw error
  }
  const first = unit.pages[0]
  return {
    next: unit.next !== undefined,
    total: unit.expected ?? null,
    pageRecords: (first?.records ?? 0) + (first?.duplicates ?? 0) + (first?.rejected?.length ?? 0),
  }
}

/** The county pipeline's environment for a scan: no part files (a page sink of the caller's takes the records). */
function countyEnv(
  ctx: LookupContext,
  stages: RecordStages,
  signal: AbortSignal,
): Omit<CountyEnv, 'throwIfStopped'> {
  return {
    client: ctx.client,
    scheduler: ctx.scheduler,
    baseUrl: ctx.baseUrl,
    stages,
    signal,
    spool: {
      partsDir: '',
      format: 'ndjson',
      encoder: undefined,
      layout: () => 0,
      columnsOf: () => new Int32Array(0),
    },
  }
}

/** One page's records matched against the index; only the records that matched are kept, until the page is whole. */
class MatchSink implements PageSink {
  readonly hits: PageHit[] = []
  /** Each hit's record as JSON text (a record that matched several lookups is one text). */
  readonly texts = new Map<Hit, string>()
  private readonly found: Hit[] = []
  private readonly ids: Record<'apn' | 'street' | 'city' | 'zip', number>

  constructor(
    private readonly index: CountyIndex,
    private readonly stages: RecordStages,
  ) {
    const id = (name: string) => stages.fields.idOf(name) ?? -1
    this.ids = {apn: id('APN'), street: id('StandardizeStreetAddress'), city: id('City'), zip: id('Zip')}
  }

  record(view: RecordView): undefined {
    const serviceId = this.stages.serviceId(view)
    const keys: RecordKeys = {
      id: serviceId === undefined ? undefined : String(serviceId),
      apn: stringAt(view, this.ids.apn),
      street: stringAt(view, this.ids.street),
      city: stringAt(view, this.ids.city),
      zip: stringAt(view, this.ids.zip),
    }
    this.found.length = 0
    if (this.index.match(keys, this.found) === 0) return undefined
    const text = view.bytes.toString('utf8')
    const apn = apnHash(keys.apn)
    for (const h of this.found) {
      const hit: PageHit = {...h, id: serviceId ?? 0, apn}
      this.hits.push(hit)
      this.texts.set(hit, text)
    }
    return undefined
  }

  async close(): Promise<void> {}

  async discard(): Promise<void> {
    this.hits.length = 0
    this.texts.clear()
  }
}

/** A string field of the record, decoded; undefined when absent or not a string. */
function stringAt(view: RecordView, id: number): string | undefined {
  const e = view.entry(id)
  if (e < 0 || view.kind(e) !== STRING) return undefined
  return stringValue(view.bytes, view.start(e), view.end(e), (view.flags(e) & ESCAPED) !== 0)
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined
}

function recordId(r: Rec): number {
  const v = r['ServicePropertyID']
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : 0
}
